#!/bin/sh
# Dependencies across processes (docs/workflows.md): a chain, a fan-out,
# a fan-in and a layered DAG drained by three workers, one of them
# killed with -9 while it runs tasks. Checked from the handlers' own
# start and end records (tests/tools/dag_check.py): every task ended,
# once, and none started before each of its parents had ended.
# backends: strategies pgbouncer
. "$(dirname "$0")/lib.sh"
init_db

h=$(handler h.sh <<'H'
#!/bin/bash
echo "S $SKED_TASK_ID $(date +%s%N) $PPID" >>"$1/log"
sleep "0.0$((RANDOM % 8))"
echo "E $SKED_TASK_ID $(date +%s%N) $PPID" >>"$1/log"
H
)
en() { sk enqueue w "$@"; }
# chain of 12
prev=$(en)
n=1
for i in $(seq 2 12); do prev=$(en --after "$prev"); n=$((n + 1)); done
# fan-out 1 -> 30 (--lines: every line gets the parent)
root=$(en)
seq 30 | sk enqueue w --lines - --after "$root" >/dev/null
n=$((n + 31))
# fan-in 30 -> 1
ids=$(seq 30 | sk enqueue w --lines - | paste -sd, -)
en --after "$ids" >/dev/null
n=$((n + 31))
# layered: 5 layers of 8, each task after 3 of the layer above
layer=$(seq 8 | sk enqueue w --lines - | paste -sd' ' -)
n=$((n + 8))
for l in 2 3 4 5; do
	set -- $layer
	next=""
	for j in 1 2 3 4 5 6 7 8; do
		a=$(eval echo "\${$(((j - 1) % 8 + 1))}")
		b=$(eval echo "\${$((j % 8 + 1))}")
		c=$(eval echo "\${$(((j + 2) % 8 + 1))}")
		next="$next $(en --after "$a,$b,$c")"
		n=$((n + 1))
	done
	layer=$next
done
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE status = 6")" \
	$((11 + 30 + 1 + 32)) "blocked tasks before any worker"
# what an operator reads agrees: stats --json and the dashboard's Queues row
expect_eq "$("$SKED" stats --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["total"]["blocked"])')" \
	$((11 + 30 + 1 + 32)) "blocked tasks in stats --json"
if command -v curl >/dev/null; then
	start_dashboard dash
	curl -s -m 10 -o "$T/overview.html" "$base/"
	expect_eq "$(sed -n 's/.*status=blocked">\([0-9]*\)<.*/\1/p' "$T/overview.html")" \
		$((11 + 30 + 1 + 32)) "blocked tasks in the dashboard's Queues table"
	# a blocked task's page links its parents and says what it waits for;
	# a parent's page links it among its children
	child=$(count "SELECT MIN(child_id) FROM {p}task_dep")
	np=$(count "SELECT COUNT(*) FROM {p}task_dep WHERE child_id = $child")
	curl -s -m 10 -o "$T/child.html" "$base/task/$child"
	grep -q "Waits for $np of its $np parents" "$T/child.html" ||
		fail "the blocked task's page does not say it waits for its $np parents"
	for pid in $(sql "SELECT parent_id FROM {p}task_dep WHERE child_id = $child"); do
		grep -q "href=\"/task/$pid\"" "$T/child.html" ||
			fail "the blocked task's page does not link its parent $pid"
		curl -s -m 10 -o "$T/parent.html" "$base/task/$pid"
		sed -n '/id="children"/,$p' "$T/parent.html" | grep -q "href=\"/task/$child\"" ||
			fail "parent $pid's page does not link its child $child"
	done
	kill_child 15 "$dpid"
fi

for w in 1 2 3; do
	start_worker w$w --concurrency 4 --lease 2s --poll 100ms --handler "w=$h $T"
done
victim=$wpid
wait_for 30 grep -q " $victim\$" "$T/log" || fail "the third worker ran nothing"
kill -9 "$victim"
wait "$victim" 2>/dev/null || true
all_done() { [ "$(count "SELECT COUNT(*) FROM {p}task_done WHERE status = 2")" = $n ]; }
wait_for 120 all_done || {
	tail -5 "$T"/w1.log >&2
	fail "$(count "SELECT COUNT(*) FROM {p}task_done WHERE status = 2") of $n tasks succeeded"
}
for w in 1 2; do kill_child TERM "$(cat "$T/w$w.pid")"; wait_exit "$(cat "$T/w$w.pid")" 60; done
sql "SELECT parent_id, child_id FROM {p}task_dep" >"$T/edges"
python3 "$(dirname "$0")/../tools/dag_check.py" "$T/log" "$T/edges" $n "$victim" ||
	fail "the graph ran out of order"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task")" 0 "tasks left live"
