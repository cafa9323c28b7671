#!/bin/sh
# A task's own timeout (enqueue --timeout D, docs/handlers.md): its
# handler is stopped after D although its kind has no timeout, and after
# the kind's when that is shorter; the attempt's error says it timed out.
# Bad durations are one line and exit 64.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

h=$(handler slow.sh <<'H'
#!/bin/sh
sleep 30
H
)
error_of() { sql "SELECT last_error FROM {p}task_done WHERE id = $1"; }

# the task's own, shorter than none
a=$(sk enqueue slow --queue a --timeout 1s --max-attempts 1)
t0=$(now_ms)
sk worker --queues a --handler "slow=$h" --until-empty --poll 50ms --lease 10s
took=$(($(now_ms) - t0))
expect_eq "$(status_of "$a")" 3 "status of a task past its own timeout"
error_of "$a" | grep -q "timed out" || fail "its error: $(error_of "$a")"
[ "$took" -lt 20000 ] || fail "the handler ran $took ms past a 1 s timeout"

# the kind's (the worker's --timeout), shorter than the task's own
b=$(sk enqueue slow --queue b --timeout 1h --max-attempts 1)
t0=$(now_ms)
sk worker --queues b --handler "slow=$h" --timeout 1s --until-empty --poll 50ms --lease 10s
took=$(($(now_ms) - t0))
expect_eq "$(status_of "$b")" 3 "status of a task past its kind's timeout"
[ "$took" -lt 20000 ] || fail "a task's own timeout lengthened its kind's ($took ms)"

expect_rc 64 sk enqueue slow --timeout 0s
expect_rc 64 sk enqueue slow --timeout soon
