#!/bin/sh
# Operator commands: `stats` shows how long the oldest due task of each
# queue has waited (and null/"-" when none is due); `nodes --prune` removes
# the row a worker killed with SIGKILL left behind once it is older than
# --older-than, and keeps the row of a live worker.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db
sk enqueue job --queue waiting >/dev/null
sk enqueue job --queue later --in 1h >/dev/null
sleep 1.2
sk --json stats >"$T/stats.json"
age=$(json_get '[q["oldest_due_ms"] for q in d["queues"] if q["queue"] == "waiting"][0]' <"$T/stats.json")
[ "$age" -ge 1000 ] && [ "$age" -lt 120000 ] || fail "oldest_due_ms of 'waiting' is $age"
# nothing due: null in JSON, as the text says "-" (once 0: issue 36)
expect_eq "$(json_get '[q["oldest_due_ms"] for q in d["queues"] if q["queue"] == "later"][0]' <"$T/stats.json")" null \
	"oldest_due_ms of a queue with nothing due"
expect_eq "$(sk stats | awk '$1 == "later" { print $(NF - 1) }')" - "the text's oldest_due of a queue with nothing due"
expect_eq "$(json_get 'd["total"]["oldest_due_ms"] >= 1000' <"$T/stats.json")" true "the total's oldest due"
sk stats | grep -q 'oldest_due' || fail "stats has no oldest_due column"

h=$(handler ok.sh <<'H'
#!/bin/sh
exit 0
H
)
start_worker dead --queues nothing --node-id gone-node --handler "job=$h" --poll 100ms --lease 1s
dead=$wpid
registered() { [ "$(count "SELECT COUNT(*) FROM {p}node WHERE id = 'gone-node'")" = 1 ]; }
wait_for 10 registered || fail "the first worker did not register"
kill -9 "$dead"
wait_exit "$dead" 10
start_worker live --queues nothing --node-id live-node --handler "job=$h" --poll 100ms --lease 1500ms
live=$wpid
registered2() { [ "$(count "SELECT COUNT(*) FROM {p}node WHERE id = 'live-node'")" = 1 ]; }
wait_for 10 registered2 || fail "the second worker did not register"
sleep 2.5
expect_eq "$(count "SELECT COUNT(*) FROM {p}node WHERE id = 'gone-node'")" 1 "the killed node's row before pruning"
sk --json nodes --prune --older-than 2s >"$T/prune.json"
expect_eq "$(json_get 'd["removed"]' <"$T/prune.json")" 1 "nodes removed"
expect_eq "$(count "SELECT COUNT(*) FROM {p}node WHERE id = 'gone-node'")" 0 "the killed node's row after pruning"
expect_eq "$(count "SELECT COUNT(*) FROM {p}node WHERE id = 'live-node'")" 1 "the live node's row"
expect_rc 64 sk nodes --prune --older-than soon
stderr_one_line "$T/err"
kill -TERM "$live"
wait_exit "$live" 10
expect_eq "$wrc" 0 "the live worker's exit status"
