#!/bin/sh
# pipe: handlers: long-lived processes, one task per line in, one answer
# per line out. Checked here: every task of a drain by two workers is
# answered exactly once and by few processes (not one per task); an
# answer with ok false fails the attempt with the handler's error and its
# retry delay; a malformed line, an id that is not a number, a process
# that dies and a task past its timeout each fail only that attempt, and the
# next task gets a fresh process; stderr reaches the run record; a worker
# killed with kill -9 leaves no handler process behind; a handler that
# cannot run is refused at start (exit 78). An answer for an id not in
# flight (a second answer) is logged with that id and ignored: it once
# failed the next, innocent task. A flood of stderr logs 200 lines a task
# and counts the rest; control characters are escaped in the text log.
# backends: sqlite pg
. "$(dirname "$0")/lib.sh"
init_db

h=$(handler ph.py <<'H'
#!/usr/bin/env python3
# test handler: behaviour chosen by the payload; marker pipe-h-test
import json, os, sys, time
log = sys.argv[1]
with open(log + "/pids", "a") as f:
    f.write(f"{os.getpid()}\n")
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    p = m["payload"]
    if p == "garbage":
        print("this is not json", flush=True)
        continue
    if p == "wrongid":
        print(json.dumps({"id": m["id"] + 1000, "ok": True}), flush=True)
        print(json.dumps({"id": m["id"], "ok": True}), flush=True)
        continue
    if p == "badid":
        print(json.dumps({"id": "x", "ok": True}), flush=True)
        continue
    if p == "twice":
        # the second answer comes while sked runs the next task
        print(json.dumps({"id": m["id"], "ok": True}), flush=True)
        time.sleep(0.5)
        print(json.dumps({"id": m["id"], "ok": True}), flush=True)
        continue
    if p == "flood":
        for i in range(5000):
            print(f"flood line {i}", file=sys.stderr)
        sys.stderr.flush()
    if p == "crash":
        sys.exit(3)
    if p == "sleep":
        time.sleep(30)
    if p == "noisy":
        print("a line for the log", file=sys.stderr, flush=True)
        print("paint \x1b[31mred\r\x07 over", file=sys.stderr, flush=True)
    with open(log + "/ran", "a") as f:
        f.write(f"{m['id']} {m['attempt']} {os.getpid()}\n")
    if p == "fail":
        print(json.dumps({"id": m["id"], "ok": False, "error": "boom",
                          "retry_in_ms": 600000}), flush=True)
        continue
    print(json.dumps({"id": m["id"], "ok": True}), flush=True)
H
)

# 1. exactly once, by long-lived processes
seq 1 300 | sed 's/^/n/' | sk enqueue job --lines - >/dev/null
start_worker a --node-id a --concurrency 4 --poll 100ms --until-empty --handler "job=pipe:$h $T"
a=$wpid
start_worker b --node-id b --concurrency 4 --poll 100ms --until-empty --handler "job=pipe:$h $T"
b=$wpid
wait_exit "$a" 120
[ "$wrc" = 0 ] || { cat "$T/a.log" >&2; fail "worker a exited $wrc"; }
wait_exit "$b" 120
[ "$wrc" = 0 ] || { cat "$T/b.log" >&2; fail "worker b exited $wrc"; }
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE status = 2")" 300 "succeeded tasks"
expect_eq "$(cut -d' ' -f1 "$T/ran" | sort -u | wc -l)" 300 "distinct tasks the handlers ran"
expect_eq "$(wc -l <"$T/ran")" 300 "handler runs"
procs=$(sort -u "$T/pids" | wc -l)
[ "$procs" -le 8 ] || fail "$procs handler processes for 300 tasks on 8 slots"
note "300 tasks by $procs pipe processes"

# 2. the faults, one task each, then a plain task that must succeed
: >"$T/ran"
: >"$T/pids"
# the timeout on a kind of its own: a task after a fault waits for a
# fresh process, whose start counts against the task's timeout, and on a
# loaded machine a python start took longer than 2 s
cat >>"$T/sked.conf" <<CONF
[handler.job]
command = pipe:$h $T
[handler.slow]
command = pipe:$h $T
timeout = 5s
CONF
for p in fail garbage wrongid badid crash noisy twice aftertwice flood; do
	sk enqueue job --payload "$p" --max-attempts 1 >"$T/id.$p"
done
sk enqueue slow --payload sleep --max-attempts 1 >"$T/id.sleep"
# after the timeout, a task of that kind gets a fresh process
after=$(sk enqueue slow --payload fine)
ok=$(sk enqueue job --payload fine)
SKED_LOG=info start_worker c --node-id c --concurrency 1 --poll 100ms --until-empty
wait_exit "$wpid" 90
[ "$wrc" = 0 ] || { cat "$T/c.log" >&2; fail "worker c exited $wrc"; }
err_of() { sql "SELECT error FROM $ALL_RUNS runs WHERE task_id = $(cat "$T/id.$1")"; }
expect_eq "$(err_of fail)" boom "error of a task answered ok false"
case "$(err_of garbage)" in *"not a JSON object"*) ;; *) fail "malformed line: $(err_of garbage)" ;; esac
# an answer for an id not in flight is logged, named and ignored
expect_eq "$(status_of "$(cat "$T/id.wrongid")")" 2 "a task whose handler first answered another id"
grep -q "answered for id $(($(cat "$T/id.wrongid") + 1000)), which is not in flight; ignored" "$T/c.log" ||
	fail "the answer for another id is not logged with that id"
case "$(err_of badid)" in *"id that is not a number"*) ;; *) fail "bad id: $(err_of badid)" ;; esac
# a handler that answers twice fails no innocent task
expect_eq "$(status_of "$(cat "$T/id.twice")")" 2 "the task answered twice"
expect_eq "$(status_of "$(cat "$T/id.aftertwice")")" 2 "the task after one answered twice"
grep -q "answered for id $(cat "$T/id.twice"), which is not in flight" "$T/c.log" ||
	fail "the second answer is not logged with its id"
# a flood of stderr: 200 lines logged, the rest counted
n=$(grep -c "flood line" "$T/c.log" || true)
[ "$n" -le 200 ] || fail "$n of 5000 flooded stderr lines were logged"
grep -q "$(cat "$T/id.flood") (job): 4800 more stderr line(s)" "$T/c.log" ||
	fail "the dropped stderr lines are not counted: $(grep "more stderr" "$T/c.log")"
expect_eq "$(status_of "$(cat "$T/id.flood")")" 2 "the task that flooded stderr"
# control characters are escaped in the text log
grep -q 'paint \\x1b\[31mred \\x07 over' "$T/c.log" || fail "the escape sequence is not escaped in the log: $(grep paint "$T/c.log" | od -c | head -3)"
if grep -q "$(printf '\033')" "$T/c.log"; then fail "a raw ESC reached the log"; fi
case "$(err_of crash)" in *"exited before it answered"*) ;; *) fail "crash: $(err_of crash)" ;; esac
case "$(err_of sleep)" in *"timed out"*) ;; *) fail "timeout: $(err_of sleep)" ;; esac
expect_eq "$(status_of "$(cat "$T/id.noisy")")" 2 "status of the task that wrote to stderr"
case "$(sql "SELECT output FROM $ALL_RUNS runs WHERE task_id = $(cat "$T/id.noisy")")" in
*"a line for the log"*) ;;
*) fail "stderr of the handler is not in the run record" ;;
esac
grep -q "a line for the log" "$T/c.log" || fail "stderr of the handler is not in the worker's log"
expect_eq "$(status_of "$ok")" 2 "a plain task after the faults"
expect_eq "$(status_of "$after")" 2 "a task of the timed-out kind after the timeout"
# three faults killed job's process, each later task got a new one (4),
# and the task after the timeout ran in a new one of its kind's (the
# killed one may have been stopped before it wrote its pid)
[ "$(sort -u "$T/pids" | wc -l)" -ge 5 ] || fail "processes were not restarted after faults: $(sort -u "$T/pids" | wc -l)"

# 3. ok false with retry_in_ms: the handler's delay, not the backoff
sk enqueue job --payload fail --max-attempts 3 >"$T/id.retry"
start_worker d --node-id d --concurrency 1 --poll 100ms
waiting_retry() { [ "$(status_of "$(cat "$T/id.retry")")" = 4 ]; }
wait_for 30 waiting_retry || { cat "$T/d.log" >&2; fail "no retry"; }
kill -TERM "$wpid"
wait_exit "$wpid" 20
case "$(family)" in
sqlite) left=$(sql "SELECT run_at - CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) FROM $ALL_TASKS a WHERE id = $(cat "$T/id.retry")") ;;
pg) left=$(sql "SELECT (extract(epoch FROM run_at - now()) * 1000)::bigint FROM $ALL_TASKS a WHERE id = $(cat "$T/id.retry")") ;;
*) left=$(sql "SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(3), run_at) DIV 1000 FROM $ALL_TASKS a WHERE id = $(cat "$T/id.retry")") ;;
esac
[ "$left" -gt 500000 ] || fail "retry in $left ms, the handler asked for 600000"

# 4. kill -9 of a worker leaves no handler process
sk enqueue job --payload sleep >/dev/null
: >"$T/pids"
start_worker e --node-id e --concurrency 2 --poll 100ms
wait_for 20 test -s "$T/pids" || { cat "$T/e.log" >&2; fail "no handler process started"; }
kill -9 "$wpid"
wait_exit "$wpid" 10
gone() {
	for p in $(cat "$T/pids"); do
		kill -0 "$p" 2>/dev/null || continue
		case "$(ps -o stat= -p "$p" 2>/dev/null)" in Z*) ;; *) return 1 ;; esac
	done
}
wait_for 5 gone || fail "a pipe handler process outlived its worker's kill -9"

# 5. a handler that cannot run is refused at start
expect_rc 78 sk worker --until-empty --handler "job=pipe:$T/no-such-program"
stderr_one_line "$T/err"
expect_rc 78 sk worker --until-empty --handler "job=$T/no-such-program"
stderr_one_line "$T/err"
