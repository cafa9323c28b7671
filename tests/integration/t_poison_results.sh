#!/bin/sh
# What a handler says can never stop a worker. Each of these once made
# the database refuse the whole finish batch, so that the worker retried
# it forever (tasks stuck running, nothing else claimed):
#   - a program that prints \377 (invalid UTF-8 in the output tail);
#   - an HTTP body over 4 KiB cut inside a character at byte 4096;
#   - a pipe: line that is not JSON, quoted in the error cut at 120 bytes
#     inside a character;
#   - a pipe: reply with "retry_in_ms": 9223372036854775807;
#   - an HTTP 429 with Retry-After: 10000000000000 (seconds);
#   - an HTTP 429 with Retry-After: 9223372036854775807, once a signed
#     overflow (UBSan) where the seconds became milliseconds.
# Every task must be recorded, the ordinary ones beside them must
# succeed, the worker must stop by itself (--until-empty), and the
# handlers' retry delays must stay within --retry-max.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

bad=$(handler bad.sh <<'H'
#!/bin/sh
printf 'bad \377\n'
printf 'and \376 on stderr\n' >&2
H
)
good=$(handler good.sh <<'H'
#!/bin/sh
echo fine
H
)
pipe=$(handler pipe.py <<'H'
#!/usr/bin/env python3
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m["payload"] == "retry":
        r = {"id": m["id"], "ok": False, "error": "later",
             "retry_in_ms": 9223372036854775807}
        print(json.dumps(r), flush=True)
    else:
        # not JSON: quoted in the error, cut at 120 bytes, inside the
        # two-byte character that starts at byte 119
        print("x" * 74 + "\u00e9" * 40, flush=True)
H
)
if "$SKED" info 2>/dev/null | grep -qi 'http handlers.*yes\|libcurl'; then have_http=1; fi
python3 "$(dirname "$0")/../tools/http_endpoint.py" "$T/port" "$T/req" &
wait_for 10 test -s "$T/port" || fail "the test's HTTP server did not start"
base="http://127.0.0.1:$(cat "$T/port")"

b1=$(sk enqueue bad --max-attempts 1)
p1=$(sk enqueue pipekind --payload retry --max-attempts 2)
p2=$(sk enqueue pipekind --payload quote --max-attempts 1)
h1=$(sk enqueue cut --max-attempts 1)
h2=$(sk enqueue huge --max-attempts 2)
h3=$(sk enqueue max --max-attempts 2)
goods=""
for i in 1 2 3 4 5 6; do goods="$goods $(sk enqueue good)"; done

# --retry-max 1h: the handlers' delays (Retry-After, retry_in_ms) are
# capped there. The worker must record all twelve and then stop at once
# when told; a wedged one keeps them running and takes ~50 s to stop.
"$SKED" worker --handler "bad=$bad" --handler "good=$good" \
	--handler "pipekind=pipe:$pipe" --handler "cut=$base/cut" \
	--handler "huge=$base/huge" --handler "max=$base/max" --retry-max 1h --poll 100ms \
	2>"$T/w.log" &
wk=$!
settled() {
	[ "$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE status IN (0, 1)")" = 0 ]
}
wait_for 30 settled || {
	tail -n 20 "$T/w.log" >&2
	fail "tasks still pending or running after 30 s: the worker wedged"
}
kill_child TERM "$wk"
wait_exit "$wk" 15
expect_eq "$wrc" 0 "the worker's exit status"

for id in $goods; do
	expect_eq "$(status_of "$id")" 2 "ordinary task $id beside the poisoned ones"
done
expect_eq "$(status_of "$b1")" 2 "the program that printed \\377 (succeeded)"
expect_eq "$(status_of "$h1")" 2 "the HTTP handler whose body was cut in a character (succeeded)"
expect_eq "$(status_of "$p2")" 3 "the pipe: task answered with a line that is not JSON (dead)"
expect_eq "$(status_of "$p1")" 4 "the pipe: task asking for a retry in INT64_MAX ms (waiting)"
expect_eq "$(status_of "$h2")" 4 "the HTTP task with Retry-After 10^13 s (waiting)"
expect_eq "$(status_of "$h3")" 4 "the HTTP task with Retry-After INT64_MAX s (waiting)"

# the recorded values are text: the output keeps what it could
sk show "$b1" | grep -q 'bad' || fail "show $b1 lost the output"
sk --json show "$h1" | python3 -c '
import json, sys
t = json.load(sys.stdin)
out = t["runs"][0]["output"]
assert out.startswith("a" * 100), out[:20]
assert len(out.encode()) <= 4096, len(out.encode())
' || fail "the cut HTTP body was not recorded as text of at most 4096 bytes"
sk --json show "$p2" | grep -q 'not a JSON object' || fail "the pipe: error was not recorded"

# the delays are capped at --retry-max (1 h), not years ahead
for id in $p1 $h2 $h3; do
	c=$(count "SELECT COUNT(*) FROM {p}task WHERE id = $id AND run_at < $(
		case "$(family)" in
		sqlite) echo "(CAST(strftime('%s','now') AS INTEGER) * 1000 + 3700000)" ;;
		pg) echo "now() + interval '3700 seconds'" ;;
		*) echo "UTC_TIMESTAMP(3) + INTERVAL 3700 SECOND" ;;
		esac)")
	expect_eq "$c" 1 "task $id's retry is within --retry-max"
done
echo "ok: $SKED_BACKEND: poisoned results"
