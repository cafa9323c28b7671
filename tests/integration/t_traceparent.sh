#!/bin/sh
# Trace context (issue 29): enqueue --traceparent TP (or TRACEPARENT from
# the environment) stores a W3C trace context on the task; show, show
# --json and list --json print it, while the task is live and once it has
# ended (the move to task_done keeps it, and so does a retry back);
# handlers receive it: TRACEPARENT for a program, a "traceparent" field
# for pipe:, the traceparent header for http://. A task without one gets
# none, even from a worker that has TRACEPARENT in its own environment.
# A value that is not a W3C trace context is one line and exit 65, and
# nothing is enqueued.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

tp=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
tp2=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00
worker_tp=00-11111111111111111111111111111111-2222222222222222-01

# refused: one line, 65, nothing enqueued
for bad in "" "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01" \
	"00-00000000000000000000000000000000-00f067aa0ba902b7-01" \
	"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01" \
	"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" \
	"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x" \
	"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7"; do
	expect_rc 65 sk enqueue prog --traceparent "$bad"
	stderr_one_line "$T/err"
done
TRACEPARENT=junk expect_rc 65 sk enqueue prog
stderr_one_line "$T/err"
grep -q "traceparent 'junk'" "$T/err" || fail "the refusal does not name the value: $(cat "$T/err")"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task")" 0 "tasks after refused trace contexts"

# stored: from the flag, from the environment (the flag wins), none
a=$(sk enqueue prog --traceparent "$tp")
b=$(TRACEPARENT=$tp2 sk enqueue prog)
c=$(TRACEPARENT=$tp2 sk enqueue prog --traceparent "$tp")
d=$(sk enqueue prog)
tp_of() { sk --json show "$1" | json_get 'd["traceparent"]'; }
expect_eq "$(tp_of "$a")" "$tp" "show --json: from --traceparent"
expect_eq "$(tp_of "$b")" "$tp2" "show --json: from TRACEPARENT"
expect_eq "$(tp_of "$c")" "$tp" "show --json: --traceparent over TRACEPARENT"
expect_eq "$(tp_of "$d")" null "show --json: none"
sk show "$a" | grep -q "^  traceparent  $tp\$" || fail "show does not print the trace context"
expect_eq "$(sk --json list | json_get "[t['traceparent'] for t in d if t['id'] == $a][0]")" "$tp" "list --json"
# many at once (--lines): each task keeps it
printf 'x\ny\n' | sk enqueue lined --lines - --traceparent "$tp2" >"$T/lined"
for id in $(cat "$T/lined"); do
	expect_eq "$(tp_of "$id")" "$tp2" "task $id of --lines"
done

# handlers: a program, pipe: and http://
p=$(handler prog.sh <<'H'
#!/bin/sh
echo "$SKED_TASK_ID ${TRACEPARENT-unset}" >>"$1/prog.out"
H
)
pp=$(handler pipe.py <<'H'
#!/usr/bin/env python3
import json, sys
out = open(sys.argv[1] + "/pipe.out", "a")
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    out.write("%d %s\n" % (m["id"], m.get("traceparent", "unset")))
    out.flush()
    print(json.dumps({"id": m["id"], "ok": True}), flush=True)
H
)
python3 "$(dirname "$0")/../tools/http_endpoint.py" "$T/port" "$T/req" &
wait_for 10 test -s "$T/port" || fail "the test's HTTP server did not start"
pa=$(sk enqueue piped --traceparent "$tp")
pn=$(sk enqueue piped)
ha=$(sk enqueue hooked --traceparent "$tp2")
hn=$(sk enqueue hooked)
TRACEPARENT=$worker_tp start_worker w --node-id w --concurrency 2 --poll 100ms --until-empty \
	--handler "prog=$p $T" --handler "lined=$p $T" --handler "piped=pipe:$pp $T" \
	--handler "hooked=http://127.0.0.1:$(cat "$T/port")/ok"
wait_exit "$wpid" 120
[ "$wrc" = 0 ] || { cat "$T/w.log" >&2; fail "the worker exited $wrc"; }
got() { awk -v id="$2" '$1 == id { print $2 }' "$T/$1"; }
expect_eq "$(got prog.out "$a")" "$tp" "TRACEPARENT of a program handler"
expect_eq "$(got prog.out "$b")" "$tp2" "TRACEPARENT (enqueued from the environment)"
expect_eq "$(got prog.out "$d")" unset "a task without one: no TRACEPARENT, not the worker's"
expect_eq "$(got pipe.out "$pa")" "$tp" "the pipe: message's traceparent"
expect_eq "$(got pipe.out "$pn")" unset "a pipe: message without one"
hdr() { grep "\"sked-task-id\": \"$1\"" "$T/req" | head -n 1 | json_get 'd.get("traceparent")'; }
expect_eq "$(hdr "$ha")" "$tp2" "the traceparent header of an HTTP handler"
expect_eq "$(hdr "$hn")" null "an HTTP request without one"

# ended tasks keep it (task_done), and a retry back keeps it too
expect_eq "$(status_of "$a")" 2 "task $a succeeded"
expect_eq "$(tp_of "$a")" "$tp" "show --json of a succeeded task"
expect_eq "$(tp_of "$d")" null "show --json of a succeeded task without one"
e=$(sk enqueue prog --traceparent "$tp" --in 1h)
sk cancel "$e" >/dev/null
expect_eq "$(tp_of "$e")" "$tp" "show --json of a cancelled task"
sk retry "$e" >/dev/null
expect_eq "$(status_of "$e")" 0 "the cancelled task is pending again"
expect_eq "$(tp_of "$e")" "$tp" "show --json after a retry"

# the dashboard's task page shows it
if command -v curl >/dev/null; then
	start_dashboard dash
	curl -s -m 10 "$base/task/$a" >"$T/task.html"
	grep -q "$tp" "$T/task.html" || fail "the dashboard's task page does not show the trace context"
	kill_child TERM "$dpid"
fi
