#!/bin/sh
# Multiplexed pipe: handlers: a handler whose hello announces a window
# gets up to that many tasks at once on one process, shared by the
# worker's slots, and answers them by id in any order. Checked here: one
# process serves 8 slots with 8 tasks in flight; answers out of order go
# to their own tasks (results by id); a task past its timeout gets
# {"cancel": id}, fails alone, and the tasks beside it finish on the same
# process (so does a task cancelled by a user), while a handler that does not stop it within 2 s is killed and
# only the tasks it had in flight fail (and are retried on a new
# process); a process that dies mid-window fails exactly its tasks in
# flight and the next ones get a new process; a handler whose stdout is
# closed, or that floods it with stray answers and hellos (logged within
# bounds), wedges no other kind; without a window a process takes one task
# at a time (the old behaviour); a bad window (0, negative, huge, not a
# number) is named in one log line and bounded.
# backends: sqlite pg
. "$(dirname "$0")/lib.sh"
# the handlers say `#!/usr/bin/env python3`, Debian's interpreter (lib.sh
# puts /usr/bin first): a first process that has not said its window
# within 5 s makes the worker start another
case "$SKED_BACKEND" in
sqlite | pg | mariadb) ;;
*) not_here "the pipe: processes do not depend on the backend: sqlite, pg and mariadb check them" ;;
esac
init_db

# ARGS: the test folder, the window (a JSON value, or "none"). The
# payload says what to do; files in the folder say what it did.
h=$(handler mux.py <<'H'
#!/usr/bin/env python3
# test handler for t_pipe_mux: marker pipe-mux-test
import asyncio, json, os, sys
d, window = sys.argv[1], sys.argv[2]
pid = os.getpid()
def note(name, text):
    with open(os.path.join(d, name), "a") as f:
        f.write(text + "\n")
note("pids", str(pid))
def send(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()
if window != "none":
    sys.stdout.write('{"hello":"mux.py","version":1,"window":%s}\n' % window)
    sys.stdout.flush()
inflight = {}  # id -> its asyncio task (None: it ignores cancels)
most = 0
async def run(m):
    global most
    i, p, att = m["id"], m["payload"], m["attempt"]
    note("got", f"{i} {att} {pid}")
    most = max(most, len(inflight))
    note("most", f"{pid} {most}")
    try:
        if att >= 2:
            pass  # a retry: done at once
        elif p.startswith("sleep:"):
            await asyncio.sleep(int(p[6:]) / 1000)
        elif p == "stoppable":
            await asyncio.sleep(60)
        elif p == "hang":
            inflight[i] = None  # a cancel finds nothing to stop
            await asyncio.sleep(60)
        elif p == "waitcancel":
            for _ in range(600):
                if os.path.exists(os.path.join(d, "cancelled")):
                    break
                await asyncio.sleep(0.05)
        elif p.startswith("die:"):
            for _ in range(400):
                if len(inflight) >= int(p[4:]):
                    break
                await asyncio.sleep(0.05)
            note("dying", " ".join(str(k) for k in sorted(inflight)))
            os._exit(3)
        elif p == "floodout":
            hello = '{"hello":"mux.py","version":1,"window":%s}\n' % window
            for k in range(20000):
                sys.stdout.write('{"id":%d,"ok":true}\n' % (10**9 + k) + hello)
            sys.stdout.flush()
        elif p == "closeout":
            os.close(1)
            await asyncio.sleep(60)
    except asyncio.CancelledError:
        note("cancelled", str(i))
        inflight.pop(i, None)
        send({"id": i, "ok": False, "error": "stopped"})
        return
    inflight.pop(i, None)
    note("order", str(i))
    note("ran", f"{i} {att} {pid}")
    send({"id": i, "ok": True, "result": str(i)})
async def main():
    loop = asyncio.get_running_loop()
    r = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(r), sys.stdin)
    while line := await r.readline():
        m = json.loads(line)
        if "cancel" in m:
            t = inflight.get(m["cancel"])
            if t:
                t.cancel()
            continue
        if "id" in m:
            inflight[m["id"]] = asyncio.create_task(run(m))
asyncio.run(main())
H
)

procs() { sort -u "$T/pids" | wc -l; }
most() { sort -k2 -n "$T/most" | tail -1 | cut -d' ' -f2; }
fresh() { rm -f "$T/pids" "$T/most" "$T/got" "$T/ran" "$T/order" "$T/cancelled" "$T/dying"; }
err_of() { sql "SELECT error FROM $ALL_RUNS runs WHERE task_id = $1 AND attempt = ${2:-1}"; }
result_of() { sk --json show "$1" | json_get 'd["result"]'; }
succeeded() { count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE kind = '$1' AND status = 2"; }
drain() { # NAME WINDOW KIND WORKER-ARGS...: a worker until the queue is empty
	name=$1 window=$2 kind=$3
	shift 3
	SKED_LOG=info start_worker "$name" --node-id "$name" --poll 100ms \
		--retry-base 100ms --until-empty --handler "$kind=pipe:$h $T $window" "$@"
	wait_exit "$wpid" 120
	[ "$wrc" = 0 ] || { cat "$T/$name.log" >&2; fail "worker $name exited $wrc"; }
}

# 1. one process for 8 slots, 8 tasks in flight on it, each result its own
fresh
seq 1 16 | sed 's/.*/sleep:1000/' | sk enqueue one --lines - >/dev/null
drain w1 8 one --concurrency 8
expect_eq "$(succeeded one)" 16 "tasks of a window-8 handler"
expect_eq "$(procs)" 1 "processes for 8 slots with window 8"
expect_eq "$(most)" 8 "tasks in flight at once on that process"
grep -q "pipe handler one (pid [0-9]*) takes 8 task(s) at once" "$T/w1.log" ||
	fail "the window is not logged: $(grep 'pipe handler' "$T/w1.log" | head -3)"
for id in $(sql "SELECT id FROM $ALL_TASKS a WHERE kind = 'one'"); do
	expect_eq "$(result_of "$id")" "$id" "result of task $id"
done

# 2. answers out of order: the earlier task sleeps longer
fresh
for ms in 4000 3000 2000 500; do sk enqueue ooo --payload "sleep:$ms" >>"$T/ooo.ids"; done
drain w2 4 ooo --concurrency 4
expect_eq "$(procs)" 1 "processes for the out-of-order tasks"
for id in $(cat "$T/ooo.ids"); do
	expect_eq "$(status_of "$id")" 2 "status of task $id"
	expect_eq "$(result_of "$id")" "$id" "result of task $id (answered out of order)"
done
[ "$(cat "$T/order")" != "$(cat "$T/ooo.ids")" ] || fail "the answers came in order: nothing was checked"
expect_eq "$(head -1 "$T/order")" "$(tail -1 "$T/ooo.ids")" "the first answer (the shortest sleep, sent last)"

# 3. a timeout: {"cancel": id} to a handler that stops the task; the
# tasks beside it go on, on the same process
fresh
stop=$(sk enqueue slow --payload stoppable --max-attempts 1)
SKED_LOG=info start_worker w3 --node-id w3 --poll 100ms --retry-base 100ms --concurrency 4 \
	--timeout 6s --handler "slow=pipe:$h $T 4"
w3=$wpid
wait_for 30 grep -q "^$stop " "$T/got" || { cat "$T/w3.log" >&2; fail "the stoppable task did not start"; }
sleep 2 # their deadlines come well after the first one's
a=$(sk enqueue slow --payload waitcancel --max-attempts 1)
b=$(sk enqueue slow --payload waitcancel --max-attempts 1)
settled() { [ "$(status_of "$stop")" = 3 ] && [ "$(status_of "$a")" = 2 ] && [ "$(status_of "$b")" = 2 ]; }
wait_for 60 settled || { cat "$T/w3.log" >&2; fail "after the timeout: $(status_of "$stop") $(status_of "$a") $(status_of "$b")"; }
expect_eq "$(err_of "$stop")" "timed out after 6000 ms" "error of the task past its timeout"
expect_eq "$(cat "$T/cancelled")" "$stop" "the task the handler was told to cancel"
expect_eq "$(procs)" 1 "processes after a cancelled task (none killed)"
grep -q "answered task $stop after its cancel; ignored" "$T/w3.log" || fail "the late answer is not logged"
kill_child TERM "$w3"
wait_exit "$w3" 30

# ... and to one that does not stop it: killed 2 s later, failing only
# the tasks it had in flight, which are retried on a new process
# (the tasks beside it start 5 s later: the kill, 12 s after the first
# one started, comes well before their own timeouts)
fresh
hang=$(sk enqueue slow --payload hang --max-attempts 1)
SKED_LOG=info start_worker w3 --node-id w3b --poll 100ms --retry-base 100ms --concurrency 4 \
	--timeout 10s --lease 5s --handler "slow=pipe:$h $T 4"
w3=$wpid
wait_for 30 grep -q "^$hang " "$T/got" || { cat "$T/w3.log" >&2; fail "the hanging task did not start"; }
sleep 5
c=$(sk enqueue slow --payload sleep:60000 --max-attempts 2)
d=$(sk enqueue slow --payload sleep:60000 --max-attempts 2)
settled() { [ "$(status_of "$hang")" = 3 ] && [ "$(status_of "$c")" = 2 ] && [ "$(status_of "$d")" = 2 ]; }
wait_for 60 settled || { cat "$T/w3.log" >&2; fail "after the kill: $(status_of "$hang") $(status_of "$c") $(status_of "$d")"; }
# a cancel by a user (seen at the next renewal) is a {"cancel": id} too:
# that task ends cancelled, the one beside it finishes, nothing is killed
before=$(procs)
u=$(sk enqueue slow --payload stoppable --max-attempts 1)
v=$(sk enqueue slow --payload sleep:6000 --max-attempts 1)
started() { grep -q "^$u " "$T/got" && grep -q "^$v " "$T/got"; }
wait_for 30 started || { cat "$T/w3.log" >&2; fail "the tasks to cancel beside did not start"; }
sk cancel "$u" >/dev/null
wait_for 30 grep -qx "$u" "$T/cancelled" || { cat "$T/w3.log" >&2; fail "the handler was not told to cancel task $u"; }
settled() { [ "$(status_of "$u")" = 5 ] && [ "$(status_of "$v")" = 2 ]; }
wait_for 30 settled || { cat "$T/w3.log" >&2; fail "after the cancel: $(status_of "$u") $(status_of "$v")"; }
expect_eq "$(procs)" "$before" "processes after a task cancelled by a user (none killed)"
[ "$(grep "^$u " "$T/got" | cut -d' ' -f3)" = "$(grep "^$v " "$T/ran" | cut -d' ' -f3)" ] ||
	fail "the cancelled task and the one beside it ran on different processes"
kill_child TERM "$w3"
wait_exit "$w3" 30
expect_eq "$(err_of "$hang")" "timed out after 10000 ms" "error of the task that did not stop"
for id in $c $d; do
	expect_eq "$(err_of "$id")" "the pipe handler process was killed: task $hang did not stop within 2000 ms of its cancel" \
		"error of task $id, in flight beside it"
done
hangpid=$(grep "^$hang " "$T/got" | cut -d' ' -f3)
for id in $c $d; do
	[ "$(grep "^$id 1 " "$T/got" | cut -d' ' -f3)" = "$hangpid" ] || fail "task $id was not in flight beside the hanging one"
	[ "$(grep "^$id 2 " "$T/ran" | cut -d' ' -f3)" != "$hangpid" ] || fail "task $id was retried on the killed process"
done

# 4. a process that dies with 4 tasks in flight fails exactly those; the
# next tasks get a new process
fresh
for i in 1 2 3; do sk enqueue mid --payload sleep:60000 --max-attempts 2 >/dev/null; done
sk enqueue mid --payload die:4 --max-attempts 1 >"$T/die.id"
SKED_LOG=info start_worker w4 --node-id w4 --poll 100ms --retry-base 100ms --concurrency 4 \
	--handler "mid=pipe:$h $T 4"
w4=$wpid
wait_for 60 test -s "$T/dying" || { cat "$T/w4.log" >&2; fail "the process did not die"; }
e=$(sk enqueue mid --payload sleep:10 --max-attempts 1)
f=$(sk enqueue mid --payload sleep:10 --max-attempts 1)
settled() { [ "$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE kind = 'mid' AND status IN (2, 3)")" = 6 ]; }
wait_for 60 settled || { cat "$T/w4.log" >&2; fail "tasks of the dead process did not settle"; }
kill_child TERM "$w4"
wait_exit "$w4" 30
failed=$(sql "SELECT task_id FROM $ALL_RUNS runs WHERE attempt = 1 AND error LIKE 'the pipe handler process exited before it answered task %' ORDER BY task_id" | tr '\n' ' ' | sed 's/ $//')
expect_eq "$failed" "$(cat "$T/dying")" "the tasks failed by the death: those it had in flight"
for id in $(cat "$T/dying"); do
	expect_eq "$(err_of "$id")" "the pipe handler process exited before it answered task $id" "error of task $id"
done
expect_eq "$(succeeded mid)" 5 "tasks of the kind that succeeded (all but the one that died)"
expect_eq "$(status_of "$e")$(status_of "$f")" 22 "tasks after the death"
expect_eq "$(procs)" 2 "processes: the dead one and its successor"

# 5. a process that closes its stdout fails its own task, one that floods
# it with stray answers and hellos is logged within bounds, and neither
# wedges another kind
fresh
mute=$(sk enqueue mute --payload closeout --max-attempts 1)
flood=$(sk enqueue other --payload floodout --max-attempts 1)
seq 1 8 | sed 's/.*/sleep:100/' | sk enqueue other --lines - >/dev/null
SKED_LOG=info start_worker w5 --node-id w5 --poll 100ms --concurrency 4 --until-empty \
	--handler "mute=pipe:$h $T 4" --handler "other=pipe:$h $T 4"
wait_exit "$wpid" 60
[ "$wrc" = 0 ] || { cat "$T/w5.log" >&2; fail "worker w5 exited $wrc"; }
expect_eq "$(succeeded other)" 9 "tasks of the other kind"
n=$(grep -c "which is not in flight; ignored" "$T/w5.log" || true)
[ "$n" -le 100 ] || fail "$n stray answers logged: at most 100 a process"
[ "$n" -ge 1 ] || fail "no stray answer logged"
expect_eq "$(grep -c "pipe handler other (pid [0-9]*) takes 4 task(s) at once" "$T/w5.log")" 1 \
	"window lines logged for the other kind's one process (the flood repeats its hello)"
expect_eq "$(err_of "$mute")" "the pipe handler process closed its stdout" "error of the task whose process closed stdout"

# 6. no window: one task at a time a process, as before
fresh
seq 1 8 | sed 's/.*/sleep:500/' | sk enqueue old --lines - >/dev/null
drain w6 none old --concurrency 4
expect_eq "$(succeeded old)" 8 "tasks of a handler without a window"
expect_eq "$(most)" 1 "tasks in flight at once on a process without a window"
[ "$(procs)" -ge 2 ] || fail "$(procs) process(es) for 4 slots without a window"
if grep -q "task(s) at once" "$T/w6.log"; then fail "a window was logged for a handler without one"; fi

# 7. bad windows: one log line each, a bound
n=0
for w in 0 -3 '"8"' 2.5 100000000000; do
	n=$((n + 1))
	fresh
	seq 1 4 | sed 's/.*/sleep:300/' | sk enqueue "bad$n" --lines - >/dev/null
	drain "w7$n" "$w" "bad$n" --concurrency 2
	expect_eq "$(succeeded "bad$n")" 4 "tasks of a handler announcing window $w"
	case "$w" in
	100000000000)
		grep -q "pipe handler bad$n (pid [0-9]*) announced window $w, over the bound of 1024; it gets 1024 at most" "$T/w7$n.log" ||
			fail "no log line for window $w: $(grep 'pipe handler' "$T/w7$n.log")"
		expect_eq "$(procs)" 1 "processes for window $w"
		;;
	0 | -3)
		grep -q "pipe handler bad$n (pid [0-9]*) announced window $w, which is not positive; it gets one task at a time" "$T/w7$n.log" ||
			fail "no log line for window $w: $(grep 'pipe handler' "$T/w7$n.log")"
		expect_eq "$(most)" 1 "tasks in flight at once with window $w"
		;;
	*)
		grep -q "pipe handler bad$n (pid [0-9]*) announced a window that is not a whole number; it gets one task at a time" "$T/w7$n.log" ||
			fail "no log line for window $w: $(grep 'pipe handler' "$T/w7$n.log")"
		expect_eq "$(most)" 1 "tasks in flight at once with window $w"
		;;
	esac
done
