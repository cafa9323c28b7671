#!/bin/sh
# Nodes: `sked nodes` shows a running worker, alive, under its id; a second
# worker with the same --node-id refuses to start (one line, exit 65)
# while the first is alive; after a clean stop the row is gone and the id
# can be used again.
. "$(dirname "$0")/lib.sh"
init_db

h=$(handler h.sh <<'H'
#!/bin/sh
exit 0
H
)
start_worker a --node-id node-a --handler "job=$h" --poll 100ms --lease 3s --concurrency 3
a=$wpid
registered() { [ "$(count "SELECT COUNT(*) FROM {p}node WHERE id = 'node-a'")" = 1 ]; }
wait_for 10 registered || { cat "$T/a.log" >&2; fail "the worker did not register"; }

sk nodes | grep -q "node-a" || fail "sked nodes does not list node-a"
sk --json nodes >"$T/nodes.json"
expect_eq "$(json_get '[n["alive"] for n in d if n["id"] == "node-a"][0]' <"$T/nodes.json")" true "node-a alive"
expect_eq "$(json_get '[n["pid"] for n in d if n["id"] == "node-a"][0]' <"$T/nodes.json")" "$a" "node-a pid"
expect_eq "$(json_get '[n["slots"] for n in d if n["id"] == "node-a"][0]' <"$T/nodes.json")" 3 "node-a slots"

expect_rc 65 sk worker --node-id node-a --handler "job=$h" --poll 100ms --lease 3s
stderr_one_line "$T/err"
grep -q "node-a" "$T/err" || fail "the refusal does not name the node id"
kill -0 "$a" || fail "the first worker died"
expect_eq "$(count "SELECT COUNT(*) FROM {p}node")" 1 "node rows"

kill -TERM "$a"
wait_exit "$a" 10
expect_eq "$wrc" 0 "first worker's exit status"
expect_eq "$(count "SELECT COUNT(*) FROM {p}node")" 0 "node rows after a clean stop"
start_worker b --node-id node-a --handler "job=$h" --until-empty --poll 100ms --lease 3s
wait_exit "$wpid" 10
expect_eq "$wrc" 0 "a worker reusing a stopped node's id"
