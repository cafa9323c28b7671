#!/bin/sh
# A task that runs longer than its lease is not taken over while its worker
# renews the lease: a second worker polling the same queue the whole time
# never runs it, and the task ends with exactly one run, succeeded.
# backends: strategies
. "$(dirname "$0")/lib.sh"
init_db

h=$(handler h.sh <<'H'
#!/bin/sh
echo "$SKED_TASK_ID $SKED_TASK_ATTEMPT $SKED_NODE_ID" >>"$1/ran"
sleep 6
H
)
id=$(sk enqueue long)
start_worker a --node-id a --lease 2s --poll 100ms --handler "long=$h $T"
a=$wpid
running() { [ "$(status_of "$id")" = 1 ]; }
wait_for 20 running || { cat "$T/a.log" >&2; fail "task did not start"; }

# b polls (and takes back expired leases) all the while; it waits for the
# running task and exits once the queue is empty.
start_worker b --node-id b --lease 2s --poll 100ms --handler "long=$h $T" --until-empty
wait_exit "$wpid" 30
[ "$wrc" = 0 ] || { cat "$T/b.log" >&2; fail "worker b exited $wrc"; }
kill -TERM "$a"
wait_exit "$a" 10

expect_eq "$(status_of "$id")" 2 "status"
expect_eq "$(sql "SELECT attempts FROM $ALL_TASKS a WHERE id = $id")" 1 "attempts"
expect_eq "$(sql "SELECT node_id, outcome FROM $ALL_RUNS runs WHERE task_id = $id" | tr '\t' ' ')" "a succeeded" "the one run"
expect_eq "$(cat "$T/ran")" "$id 1 a" "handler executions"
