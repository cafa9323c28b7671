#!/bin/sh
# Nodes: `sked nodes` shows a running worker, alive, under its id; a second
# worker with the same --node-id refuses to start (one line, exit 65)
# while the first is alive; after a clean stop the row is gone and the id
# can be used again. `nodes` tells tasks in a handler (running) from tasks
# held ahead of a free thread (held): a node of 4 slots once showed
# "running 8", its prefetched tasks counted as running.
# backends: engines
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

# running and held: one slot, three held ahead as told (--prefetch 3) while
# the slot's task runs; held tasks go back within 2 s (docs/design.md,
# "Prefetch"), so sample while they are held. Each heartbeat (lease / 3)
# writes how many handlers run.
slow=$(handler slow.sh <<'H'
#!/bin/sh
i=0
while [ ! -e "$1/stop" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
H
)
seq 1 4 | sk enqueue slow --lines - >/dev/null
hport=$(free_port)
start_worker c --node-id node-c --handler "slow=$slow $T" --poll 100ms --lease 2s \
	--concurrency 1 --prefetch 3 --http "127.0.0.1:$hport"
c=$wpid
: >"$T/samples"
: >"$T/msamples"
i=0
while [ $i -lt 15 ]; do
	sk --json nodes | python3 -c '
import json, sys
for n in json.load(sys.stdin):
    if n["id"] == "node-c":
        print(n["running"], n["held"], n["slots"])' >>"$T/samples"
	# the worker's own gauges, live: slots busy (a handler runs), held
	curl -s -m 5 "http://127.0.0.1:$hport/metrics" 2>/dev/null | awk '
		/^sked_worker_slots\{state="busy"\}/ { b = $2 }
		/^sked_worker_tasks_held_ahead / { h = $2 }
		END { if (b != "") print b, h }' >>"$T/msamples"
	i=$((i + 1))
	sleep 0.1
done
note "node-c /metrics (busy held): $(sort "$T/msamples" | uniq -c | tr '\n' ';')"
awk '$1 > 1 { bad = 1 } END { exit bad }' "$T/msamples" ||
	fail "/metrics showed more slots busy than there are: $(sort -u "$T/msamples" | tr '\n' ';')"
grep -q '^1 [1-9]' "$T/msamples" ||
	fail "/metrics never showed one busy slot and tasks held ahead: $(sort -u "$T/msamples" | tr '\n' ';')"
note "node-c (running held slots): $(sort "$T/samples" | uniq -c | tr '\n' ';')"
awk '$1 > $3 { bad = 1 } END { exit bad }' "$T/samples" ||
	fail "nodes showed more running than slots: $(sort -u "$T/samples" | tr '\n' ';')"
grep -q '^1 [1-9][0-9]* 1$' "$T/samples" ||
	fail "nodes never showed one running and the rest held: $(sort -u "$T/samples" | tr '\n' ';')"
touch "$T/stop"
kill -TERM "$c"
wait_exit "$c" 30
