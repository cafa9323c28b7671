#!/bin/sh
# Failed attempts are retried with backoff and every attempt is recorded:
# a handler that always fails is retried (run_at moves forward by the
# backoff, each run keeps its exit code, error and output) and ends dead
# after max attempts; a handler that fails once and then succeeds ends
# succeeded with two runs.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

bad=$(handler bad.sh <<'H'
#!/bin/sh
echo "boom attempt $SKED_TASK_ATTEMPT" >&2
exit 3
H
)
flaky=$(handler flaky.sh <<'H'
#!/bin/sh
[ "$SKED_TASK_ATTEMPT" -ge 2 ] && { echo "fine now"; exit 0; }
echo "not yet" >&2
exit 7
H
)

dead=$(sk enqueue bad --max-attempts 3)
ok=$(sk enqueue flaky --max-attempts 3)
sk worker --handler "bad=$bad" --handler "flaky=$flaky" --retry-base 100ms \
	--poll 100ms --lease 5s --until-empty 2>"$T/w.log" ||
	{ cat "$T/w.log" >&2; fail "worker failed"; }

# The always-failing task: dead after 3 recorded, failed attempts.
expect_eq "$(status_of "$dead")" 3 "status of the failing task (dead)"
expect_eq "$(sql "SELECT attempts FROM $ALL_TASKS a WHERE id = $dead")" 3 "attempts of the failing task"
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_RUNS runs WHERE task_id = $dead AND outcome = 'failed' AND exit_code = 3")" 3 "failed runs with exit code 3"
for a in 1 2 3; do
	sql "SELECT output FROM $ALL_RUNS runs WHERE task_id = $dead AND attempt = $a" |
		grep -q "boom attempt $a" || fail "attempt $a's output was not recorded"
	sql "SELECT error FROM $ALL_RUNS runs WHERE task_id = $dead AND attempt = $a" |
		grep -q "3" || fail "attempt $a's error does not name exit status 3"
done
[ -n "$(sql "SELECT last_error FROM $ALL_TASKS a WHERE id = $dead")" ] || fail "dead task has no last_error"
sk show "$dead" | grep -q dead || fail "show does not say dead"

# Backoff: each retry started after the previous attempt ended plus at
# least half the backoff (equal jitter: base/2 for attempt 1, base for 2).
# The retry's time is set by the finish's first statement and the run's
# finished_at by the next one, a few milliseconds later on a slow build
# (ASan, a loaded machine: 8 ms seen): 20 ms are allowed for that, still
# far from a retry that did not wait.
sk --json show "$dead" | python3 -c '
import json, sys, datetime
def t(s): return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ")
runs = sorted(json.load(sys.stdin)["runs"], key=lambda r: r["attempt"])
for prev, nxt, least in zip(runs, runs[1:], (0.05, 0.1)):
    gap = (t(nxt["started_at"]) - t(prev["finished_at"])).total_seconds()
    if gap < least - 0.02:
        sys.exit("attempt %d started %.3f s after attempt %d ended; backoff is at least %.2f s" % (nxt["attempt"], gap, prev["attempt"], least))
' || fail "retries did not wait for their backoff"

# The flaky task: one failure, then success.
expect_eq "$(status_of "$ok")" 2 "status of the flaky task (succeeded)"
expect_eq "$(sql "SELECT attempt, outcome, exit_code FROM $ALL_RUNS runs WHERE task_id = $ok ORDER BY attempt" | tr '\t\n' ' ,')" \
	"1 failed 7,2 succeeded 0," "runs of the flaky task"

# While waiting to retry, run_at is in the future and nobody claims it.
late=$(sk enqueue bad --max-attempts 2)
start_worker w --handler "bad=$bad" --retry-base 20s --poll 100ms --lease 5s
in_retry() { [ "$(status_of "$late")" = 4 ]; }
wait_for 20 in_retry || { cat "$T/w.log" >&2; fail "failed task did not wait to retry"; }
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE id = $late AND run_at > updated_at")" 1 "run_at moved past the failure"
sleep 1
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_RUNS runs WHERE task_id = $late")" 1 "runs while waiting 10+ s to retry"
expect_eq "$(status_of "$late")" 4 "status while waiting"
kill -TERM "$wpid"
wait_exit "$wpid" 10
expect_eq "$wrc" 0 "worker exit status after SIGTERM"
