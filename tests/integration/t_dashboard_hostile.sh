#!/bin/sh
# `sked dashboard` against hostile input. Credentials: the password (or
# token) alone must have 8 characters, 4 of them different, no blanks (an
# auth file `administrator:` or `administrator:x` was once accepted, the
# user name counted; eight spaces and `aaaaaaaa` later), and an
# address beyond loopback needs --auth. Redirects after a POST go to a
# path of this dashboard only: `back=/%09/evil.example` once answered
# `Location: /<TAB>/evil.example`, which a browser follows to the other
# host. CSRF tokens belong to a browser's session (a cookie) and rotate
# (--csrf-rotate), and bad form input is answered 400 with the reason,
# not 503.
# The dashboard's code does not depend on the backend: sqlite only.
# backends: sqlite
. "$(dirname "$0")/lib.sh"
case "$SKED_BACKEND" in sqlite) ;; *) not_here "the dashboard's checks do not depend on the backend" ;; esac
command -v curl >/dev/null || skip "curl is not installed"
init_db
sk cron add nightly "0 3 * * *" report >/dev/null

# weak credentials: refused at start, one line, exit 64, never echoed
umask 077
# (eight spaces, eight of one letter and a blank inside were taken before
# the rule counted different characters)
for weak in "administrator:" "administrator:x" "administrator:1234567" \
	":long-enough-pw" "short" "admin:        " "admin:aaaaaaaa" \
	"admin:two words" "aaaaaaaaaaaa"; do
	printf '%s\n' "$weak" >"$T/auth"
	expect_rc 64 timeout 20 "$SKED" dashboard --listen "0.0.0.0:$(free_port)" --auth "file:$T/auth"
	stderr_one_line "$T/err"
	grep -q 'dashboard --auth' "$T/err" || fail "the refusal of '$weak' does not name --auth: $(cat "$T/err")"
done
export SKED_TEST_WEAK=administrator:
expect_rc 64 timeout 20 "$SKED" dashboard --auth env:SKED_TEST_WEAK
# no auth at all beyond loopback
expect_rc 64 timeout 20 "$SKED" dashboard --listen "0.0.0.0:$(free_port)"
grep -q 'without --auth' "$T/err" || fail "the refusal does not say --auth is needed"

# a good password: 8 characters of its own, whatever the user name
printf 'ab:12345678\n' >"$T/auth"
port=$(free_port)
"$SKED" dashboard --listen "127.0.0.1:$port" --auth "file:$T/auth" >"$T/d.log" 2>&1 &
dpid=$!
base="http://127.0.0.1:$port"
up() { curl -s -o /dev/null "$base/healthz"; }
wait_for 10 up || { cat "$T/d.log" >&2; fail "the dashboard did not start"; }
jar="$T/cookies"
get() { curl -s -b "$jar" -c "$jar" -u ab:12345678 -o "$T/page" -D "$T/headers" -w '%{http_code}' -m 10 "$@" || true; }
expect_eq "$(get "$base/schedules")" 200 "the schedules page with the password"
csrf=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$T/page" | head -1)
[ -n "$csrf" ] || fail "no CSRF token on the schedules page"

# open redirects: each lands on / of this dashboard
for back in '/%09/evil.example' '/%0a/evil.example' '/%0d%0a/evil.example' \
	'//evil.example' '/%5C/evil.example' '/%5C%5Cevil.example' \
	'https://evil.example/' '/%2F/evil.example' '/%00/evil.example' \
	'/tasks/%09/evil.example' '/.%2F%2Fevil.example'; do
	expect_eq "$(get -d "csrf=$csrf&back=$back" "$base/tasks/retry")" 303 "POST with back=$back"
	loc=$(sed -n 's/^Location: *//Ip' "$T/headers" | tr -d '\r')
	case "$loc" in
	"/?done=none&n=0") ;;
	*) fail "back=$back led to '$(printf '%s' "$loc" | od -c | head -2)'" ;;
	esac
done
# a path of its own is kept
expect_eq "$(get -d "csrf=$csrf&back=/task/12" "$base/tasks/retry")" 303 "POST with back=/task/12"
loc=$(sed -n 's/^Location: *//Ip' "$T/headers" | tr -d '\r')
expect_eq "$loc" "/task/12?done=none&n=0" "the redirect to a page of its own"

# CSRF tokens belong to a session: once one token served every client of
# the process. Another session's token, or a token without its cookie, is
# refused; two sessions get two tokens.
post_as() { # JAR DATA: POST with that cookie jar
	curl -s -b "$1" -c "$1" -u ab:12345678 -o /dev/null -w '%{http_code}' -m 10 \
		-d "$2" "$base/schedules/pause" || true
}
jar2="$T/cookies2"
curl -s -c "$jar2" -u ab:12345678 -o "$T/page2" -m 10 "$base/schedules"
csrf2=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$T/page2" | head -1)
[ -n "$csrf2" ] && [ "$csrf2" != "$csrf" ] || fail "two sessions got the same token '$csrf'"
grep -q 'sked_session' "$jar2" || fail "no session cookie was set"
grep -qi 'HttpOnly' "$T/headers" 2>/dev/null || true
expect_eq "$(post_as "$jar2" "name=nightly&csrf=$csrf")" 403 "POST with another session's token"
expect_eq "$(post_as /dev/null "name=nightly&csrf=$csrf")" 403 "POST with a token and no session cookie"
expect_eq "$(post_as "$jar2" "name=nightly&csrf=$csrf2")" 303 "POST with its own session's token"
expect_eq "$(count "SELECT COUNT(*) FROM {p}schedule WHERE name = 'nightly' AND enabled = 0")" 1 "paused by the good POST"
get "$base/" >/dev/null
sed -n 's/^Set-Cookie: *//Ip' "$T/headers" | grep -q . && fail "a known session got a new cookie"
# a scraper of /metrics gets no session (it would push out people's)
curl -s -u ab:12345678 -D "$T/mh" -o /dev/null -m 10 "$base/metrics"
grep -qi '^Set-Cookie' "$T/mh" && fail "/metrics opened a session"

# bad form input: 400 with the reason (once 503, as if the database failed)
expect_eq "$(get -d "csrf=$csrf&scope=filter&queue=no%20such%20queue!&status=dead" "$base/tasks/retry")" 400 "retry by a filter with a bad queue name"
grep -q 'queue' "$T/page" || fail "the 400 page does not give the reason: $(head -c 300 "$T/page")"
expect_eq "$(get -d "csrf=$csrf&scope=filter&since=soon&status=dead" "$base/tasks/retry")" 400 "retry by a filter with a bad window"
expect_eq "$(get -d "csrf=$csrf&older_than=yesterday" "$base/nodes/prune")" 400 "prune with a bad duration"
expect_eq "$(get -d "csrf=$csrf&name=bad%20name!" "$base/schedules/pause")" 400 "pause a schedule with a bad name"
expect_eq "$(get -d "csrf=$csrf&scope=filter&status=zombie" "$base/tasks/retry")" 400 "retry by a filter with a bad status"

kill_child TERM "$dpid"
wait_exit "$dpid" 10
expect_eq "$wrc" 0 "the dashboard's exit status"

# tokens rotate: with --csrf-rotate 2s a session's token changes after 2 s;
# the one before still posts (a page loaded just before the change), the
# one before that is refused
expect_rc 64 timeout 20 "$SKED" dashboard --csrf-rotate 100ms
expect_rc 64 timeout 20 "$SKED" dashboard --csrf-rotate soon
port=$(free_port)
"$SKED" dashboard --listen "127.0.0.1:$port" --auth "file:$T/auth" --csrf-rotate 2s >"$T/d2.log" 2>&1 &
dpid=$!
base="http://127.0.0.1:$port"
wait_for 10 up || { cat "$T/d2.log" >&2; fail "the dashboard did not start"; }
rm -f "$jar"
token() { get "$base/schedules" >/dev/null; sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$T/page" | head -1; }
t1=$(token)
expect_eq "$(token)" "$t1" "the token within its period"
sleep 2.5
t2=$(token)
[ -n "$t2" ] && [ "$t2" != "$t1" ] || fail "the token did not change after --csrf-rotate ($t1, $t2)"
expect_eq "$(get -d "name=nightly&csrf=$t1" "$base/schedules/resume")" 303 "POST with the previous token"
sleep 2.5
t3=$(token)
[ -n "$t3" ] && [ "$t3" != "$t2" ] || fail "the token did not change a second time ($t2, $t3)"
expect_eq "$(get -d "name=nightly&csrf=$t1" "$base/schedules/resume")" 403 "POST with a token two changes old"
expect_eq "$(get -d "name=nightly&csrf=$t3" "$base/schedules/resume")" 303 "POST with the current token"
kill_child TERM "$dpid"
wait_exit "$dpid" 10
echo "ok: $SKED_BACKEND: hostile dashboard input"
