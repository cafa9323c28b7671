#!/bin/sh
# http:// handlers against a real local HTTP server: 2xx is success (the
# payload and the Sked-Task-* headers arrive, the Authorization header
# comes from the worker's environment, connections are reused); 500 fails
# the attempt with its status line and the body's tail; 429 with
# Retry-After (seconds) and 503 with Retry-After (a date) retry after that
# delay; a slow endpoint is cut off at the kind's timeout; a refused
# connection fails with curl's words; 200 tasks by two workers run once.
# backends: sqlite
. "$(dirname "$0")/lib.sh"
init_db
python3 "$(dirname "$0")/../tools/http_endpoint.py" "$T/port" "$T/req" &
wait_for 10 test -s "$T/port" || fail "the test's HTTP server did not start"
base="http://127.0.0.1:$(cat "$T/port")"
export SKED_HTTP_AUTHORIZATION="Bearer general-token"
export SKED_HTTP_AUTHORIZATION_HOOK="Bearer hook-token"

ok=$(sk enqueue hook --payload '{"n":1}')
bad=$(sk enqueue broken --payload 'plain text' --max-attempts 1)
retry=$(sk enqueue again --payload x --max-attempts 3)
later=$(sk enqueue later --payload x --max-attempts 3)
slow=$(sk enqueue slow --payload x --max-attempts 1)
refused=$(sk enqueue nobody --payload x --max-attempts 1)
cat >>"$T/sked.conf" <<CONF
[handler.slow]
command = $base/slow
timeout = 1s
CONF
start_worker w --node-id w --concurrency 2 --poll 100ms --retry-max 3h \
	--handler "hook=$base/ok" --handler "broken=$base/fail" \
	--handler "again=$base/retry" --handler "later=$base/later" \
	--handler "nobody=http://127.0.0.1:1/x"
settled() {
	[ "$(status_of "$ok")" = 2 ] && [ "$(status_of "$bad")" = 3 ] &&
		[ "$(status_of "$retry")" = 4 ] && [ "$(status_of "$later")" = 4 ] &&
		[ "$(status_of "$slow")" = 3 ] && [ "$(status_of "$refused")" = 3 ]
}
wait_for 40 settled || {
	cat "$T/w.log" >&2
	fail "tasks did not settle: $(sql "SELECT id, kind, status, last_error FROM $ALL_TASKS a")"
}
kill -TERM "$wpid"
wait_exit "$wpid" 20

# what the endpoint saw for the task that succeeded
rec=$(grep '"/ok"' "$T/req" | head -n 1)
field() { printf '%s' "$rec" | json_get "d.get('$1')"; }
expect_eq "$(field body)" '{"n":1}' "payload posted"
expect_eq "$(field sked-task-id)" "$ok" "Sked-Task-Id"
expect_eq "$(field sked-task-kind)" hook "Sked-Task-Kind"
expect_eq "$(field sked-task-queue)" default "Sked-Task-Queue"
expect_eq "$(field sked-task-attempt)" 1 "Sked-Task-Attempt"
expect_eq "$(field auth)" "Bearer hook-token" "Authorization for kind hook"
expect_eq "$(field type)" application/json "Content-Type of a JSON payload"
rec=$(grep '"/fail"' "$T/req" | head -n 1)
expect_eq "$(field auth)" "Bearer general-token" "Authorization for other kinds"

err() { sql "SELECT error FROM $ALL_RUNS runs WHERE task_id = $1 ORDER BY attempt LIMIT 1"; }
expect_eq "$(err "$bad")" "HTTP 500 Internal Server Error" "error of a 500"
expect_eq "$(sql "SELECT output FROM $ALL_RUNS runs WHERE task_id = $bad")" "it broke" "body tail of a 500"
case "$(err "$retry")" in "HTTP 429"*) ;; *) fail "429: $(err "$retry")" ;; esac
case "$(err "$later")" in "HTTP 503"*) ;; *) fail "503: $(err "$later")" ;; esac
case "$(err "$slow")" in *"timed out"*) ;; *) fail "slow: $(err "$slow")" ;; esac
case "$(err "$refused")" in "HTTP request failed: "*) ;; *) fail "refused: $(err "$refused")" ;; esac
# Retry-After, not the backoff (1 s base): about an hour and two hours,
# both within this worker's --retry-max of 3 h (t_poison_results checks
# that a longer Retry-After is cut to --retry-max)
ahead() {
	case "$(family)" in
	sqlite) sql "SELECT (run_at - CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)) / 1000 FROM $ALL_TASKS a WHERE id = $1" ;;
	pg) sql "SELECT extract(epoch FROM run_at - now())::bigint FROM $ALL_TASKS a WHERE id = $1" ;;
	*) sql "SELECT TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), run_at) FROM $ALL_TASKS a WHERE id = $1" ;;
	esac
}
a=$(ahead "$retry")
[ "$a" -gt 3000 ] && [ "$a" -le 3600 ] || fail "429 retry in $a s, Retry-After said 3600"
a=$(ahead "$later")
[ "$a" -gt 6000 ] && [ "$a" -le 7200 ] || fail "503 retry in $a s, Retry-After said 2 h"

# 200 tasks by two workers: each posted once (a queue of their own: the
# tasks waiting to retry above would keep --until-empty waiting)
: >"$T/req"
seq 1 200 | sk enqueue bulk --queue bulk --lines - >/dev/null
start_worker a --node-id a --queues bulk --concurrency 4 --poll 100ms --until-empty --handler "bulk=$base/ok"
wa=$wpid
start_worker b --node-id b --queues bulk --concurrency 4 --poll 100ms --until-empty --handler "bulk=$base/ok"
wait_exit "$wa" 60
wait_exit "$wpid" 60
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE kind = 'bulk' AND status = 2")" 200 "bulk tasks succeeded"
expect_eq "$(python3 -c 'import json,sys; print(len({json.loads(l)["sked-task-id"] for l in open(sys.argv[1])}))' "$T/req")" 200 "distinct tasks posted"
expect_eq "$(wc -l <"$T/req")" 200 "requests"
# kept-alive connections: far fewer client ports than requests
ports=$(python3 -c 'import json,sys; print(len({json.loads(l)["conn"] for l in open(sys.argv[1])}))' "$T/req")
[ "$ports" -le 16 ] || fail "$ports connections for 200 requests on 8 slots"
note "200 requests over $ports connections"
