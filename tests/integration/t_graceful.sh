#!/bin/sh
# SIGTERM stops a worker gracefully: it claims nothing more, lets running
# tasks finish within --grace (recorded succeeded), gives the rest back
# (pending again, a "released" run on record; the attempt keeps its
# number), removes its node row and
# exits 0 soon after the grace period; another worker then finishes what
# was given back.
# backends: engines pgbouncer
. "$(dirname "$0")/lib.sh"
init_db

# long: runs until killed, unless $T/fast exists (the second worker's turn).
long=$(handler long.sh <<'H'
#!/bin/sh
touch "$1/started.$SKED_TASK_ID"
[ -e "$1/fast" ] && exit 0
exec sleep 60
H
)
# short: finishes as soon as the test says go (after SIGTERM).
short=$(handler short.sh <<'H'
#!/bin/sh
touch "$1/started.$SKED_TASK_ID"
i=0
while [ ! -e "$1/go" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
echo "finished after go"
H
)
l1=$(sk enqueue long)
l2=$(sk enqueue long)
s1=$(sk enqueue short)

start_worker w1 --node-id graceful --concurrency 4 --grace 1s --lease 5s \
	--poll 100ms --handler "long=$long $T" --handler "short=$short $T"
w1=$wpid
started() { [ -e "$T/started.$l1" ] && [ -e "$T/started.$l2" ] && [ -e "$T/started.$s1" ]; }
wait_for 20 started || { cat "$T/w1.log" >&2; fail "tasks did not start"; }
expect_eq "$(count "SELECT COUNT(*) FROM {p}node WHERE id = 'graceful'")" 1 "node row while running"

t0=$(date +%s)
kill -TERM "$w1"
touch "$T/go"
# A task enqueued now must not be claimed by a stopping worker.
late=$(sk enqueue short)
wait_exit "$w1" 10
t1=$(date +%s)
[ "$wrc" = 0 ] || { cat "$T/w1.log" >&2; fail "worker exited $wrc after SIGTERM"; }
# grace 1 s, plus the handler's stop and the bookkeeping; whole seconds,
# with room for a loaded machine (6 s seen through PgBouncer beside
# three other tests)
[ $((t1 - t0)) -le 8 ] || fail "worker took $((t1 - t0)) s to stop with --grace 1s"

expect_eq "$(status_of "$s1")" 2 "task that finished within the grace period"
expect_eq "$(sql "SELECT outcome FROM $ALL_RUNS runs WHERE task_id = $s1")" succeeded "run of the task finished within grace"
for id in $l1 $l2; do
	expect_eq "$(status_of "$id")" 0 "status of given-back task $id"
	expect_eq "$(sql "SELECT outcome FROM $ALL_RUNS runs WHERE task_id = $id")" released "run of given-back task $id"
	# the stopped attempt keeps its number (one run row per attempt) and
	# costs no retry: the budget grows by one
	expect_eq "$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE id = $id AND lease_until IS NULL AND attempts = 1 AND max_attempts = 6")" 1 "lease cleared, attempt kept and budget raised on task $id"
done
expect_eq "$(status_of "$late")" 0 "task enqueued after SIGTERM (not claimed)"
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_RUNS runs WHERE task_id = $late")" 0 "runs of the task enqueued after SIGTERM"
expect_eq "$(count "SELECT COUNT(*) FROM {p}node WHERE id = 'graceful'")" 0 "node rows after a graceful stop"

# Another worker finishes what was given back.
touch "$T/fast"
sk worker --node-id second --lease 5s --poll 100ms --until-empty \
	--handler "long=$long $T" --handler "short=$short $T" 2>"$T/w2.log" ||
	{ cat "$T/w2.log" >&2; fail "second worker failed"; }
for id in $l1 $l2; do
	expect_eq "$(status_of "$id")" 2 "given-back task $id after the second worker"
	expect_eq "$(sql "SELECT attempt, outcome FROM $ALL_RUNS runs WHERE task_id = $id AND node_id = 'second'")" "2	succeeded" "second worker's run of $id"
	expect_eq "$(count "SELECT COUNT(*) FROM (SELECT attempt FROM $ALL_RUNS runs WHERE task_id = $id GROUP BY attempt HAVING COUNT(*) > 1) d")" 0 "attempts of $id with two run rows"
done
expect_eq "$(status_of "$late")" 2 "late task after the second worker"

# With --prefetch, tasks claimed ahead but not yet started are given back
# at once on SIGTERM: the grace period is for tasks under way, not for
# starting queued ones. One slot, three more prefetched.
rm -f "$T/fast" "$T/go"
p1=$(sk enqueue short --queue pf)
p2=$(sk enqueue short --queue pf)
p3=$(sk enqueue short --queue pf)
p4=$(sk enqueue short --queue pf)
SKED_LOG=info start_worker w3 --node-id prefetching --queues pf --concurrency 1 \
	--prefetch 3 --grace 10s --lease 5s --poll 100ms \
	--handler "short=$short $T"
w3=$wpid
held() { [ "$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE queue = 'pf' AND status = 1")" = 4 ]; }
wait_for 20 held || { cat "$T/w3.log" >&2; fail "the prefetching worker did not claim 4 tasks"; }
# claimed is not started: on a loaded machine the one slot's handler may
# not be running yet, and a SIGTERM then rightly gives back all four
pf_started() { n=0; for id in $p1 $p2 $p3 $p4; do [ ! -e "$T/started.$id" ] || n=$((n + 1)); done; echo $n; }
one_started() { [ "$(pf_started)" -ge 1 ]; }
wait_for 20 one_started || { cat "$T/w3.log" >&2; fail "the prefetching worker started no task"; }
kill -TERM "$w3"
# the running task may end only once the worker has taken in the SIGTERM
# (it says so after the queued ones are marked): a loaded machine can
# take longer to deliver a signal than a handler takes to see "go"
stopping() { grep -q "stopping: " "$T/w3.log"; }
wait_for 10 stopping || { cat "$T/w3.log" >&2; fail "the prefetching worker did not say it was stopping"; }
touch "$T/go"
wait_exit "$w3" 15
[ "$wrc" = 0 ] || { cat "$T/w3.log" >&2; fail "prefetching worker exited $wrc"; }
expect_eq "$(pf_started)" 1 "prefetch: handlers started with one slot"
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE queue = 'pf' AND status = 2")" 1 "prefetch: the one task under way finished"
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE queue = 'pf' AND status = 0 AND attempts = 0")" 3 "prefetch: queued tasks given back untouched"
# they never reached a handler: their attempt went back and no run is
# recorded (a run row stands for an attempt that ran)
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_RUNS r JOIN {p}task t ON t.id = r.task_id WHERE t.queue = 'pf' AND t.status = 0")" 0 "prefetch: runs of the tasks given back unstarted"
