#!/bin/sh
# worker --until-empty returns (exit 0) once nothing is due, running or
# waiting to retry — and a task delayed an hour does not keep it waiting.
# backends: engines pgbouncer
. "$(dirname "$0")/lib.sh"
init_db

h=$(handler h.sh <<'H'
#!/bin/sh
[ "$SKED_TASK_ATTEMPT" = 1 ] && [ "$(cat)" = flaky ] && exit 1
exit 0
H
)
# an empty queue: returns at once
start_worker empty --handler "job=$h" --until-empty --poll 100ms --lease 5s
wait_exit "$wpid" 10
expect_eq "$wrc" 0 "exit status on an empty queue"

later=$(sk enqueue job --in 1h)
for i in 1 2 3; do sk enqueue job >/dev/null; done
flaky=$(sk enqueue job --payload flaky)
start_worker w --handler "job=$h" --until-empty --retry-base 500ms --poll 100ms --lease 5s
wait_exit "$wpid" 30
expect_eq "$wrc" 0 "exit status"
# it waited for the retry of the flaky task (status 4 counts as work)
expect_eq "$(status_of "$flaky")" 2 "the flaky task after --until-empty"
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE status = 2")" 4 "succeeded tasks"
# and did not wait for (or run) the delayed one
expect_eq "$(status_of "$later")" 0 "the delayed task"
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_RUNS runs WHERE task_id = $later")" 0 "runs of the delayed task"
