#!/bin/sh
# A worker killed with kill -9 in the middle of its tasks loses nothing:
# its handler programs die with it (they never outlive their worker), the
# tasks come back when the lease runs out, another worker finishes each of
# them, and the killed attempts stay on record as "lease-expired".
# backends: strategies pgbouncer
. "$(dirname "$0")/lib.sh"
init_db

# Attempt 1 announces itself with its pid, then becomes a long sleep (exec:
# the pid that the worker spawned is the one that sleeps). Later attempts
# finish at once.
h=$(handler h.sh <<'H'
#!/bin/sh
if [ "$SKED_TASK_ATTEMPT" = 1 ]; then
	echo $$ >"$1/started.$SKED_TASK_ID"
	exec sleep 60
fi
echo "$SKED_TASK_ID $SKED_TASK_ATTEMPT" >>"$1/done"
H
)
n=3
for i in 1 2 3; do sk enqueue slow --payload "$i" >/dev/null; done

start_worker w1 --node-id victim --concurrency $n --lease 2s --poll 100ms \
	--handler "slow=$h $T"
victim=$wpid
all_started() { [ "$(ls "$T" | grep -c '^started\.')" = $n ]; }
wait_for 20 all_started || { cat "$T/w1.log" >&2; fail "handlers did not start"; }
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE status = 1")" $n "running tasks"

kill -9 "$victim"
wait "$victim" 2>/dev/null || true

# The handlers must die with their worker (PR_SET_PDEATHSIG).
handlers_gone() {
	for f in "$T"/started.*; do
		p=$(cat "$f")
		if kill -0 "$p" 2>/dev/null; then
			case "$(ps -o stat= -p "$p" 2>/dev/null)" in Z*) ;; *) return 1 ;; esac
		fi
	done
}
wait_for 5 handlers_gone || fail "a handler outlived its kill -9'd worker"

# The tasks are still "running" under a dead node until the lease runs out;
# a second worker takes them back and finishes them.
start_worker w2 --node-id rescuer --concurrency $n --lease 5s --poll 100ms \
	--handler "slow=$h $T" --until-empty
wait_exit "$wpid" 60
[ "$wrc" = 0 ] || { cat "$T/w2.log" >&2; fail "second worker exited $wrc"; }

expect_eq "$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE status = 2")" $n "succeeded tasks"
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE attempts = 2")" $n "tasks with 2 attempts"
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_RUNS runs WHERE attempt = 1 AND outcome = 'lease-expired' AND node_id = 'victim'")" $n "killed attempts recorded as lease-expired"
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_RUNS runs WHERE attempt = 2 AND outcome = 'succeeded' AND node_id = 'rescuer'")" $n "second attempts succeeded on the rescuer"
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_RUNS runs")" $((n * 2)) "run records"
# Attempt 1 never got to its end; attempt 2 ran once per task.
expect_eq "$(wc -l <"$T/done" | tr -d ' ')" $n "completed handler runs"
expect_eq "$(awk '$2 != 2' "$T/done" | wc -l | tr -d ' ')" 0 "completed runs that were not attempt 2"
