#!/bin/sh
# Wake-up across processes: an idle worker whose poll interval is a minute
# picks up tasks that another process enqueues at once, task after task.
# On PostgreSQL the enqueue's NOTIFY wakes it; on SQLite, which sends
# nothing, the worker watches the database's WAL, which every commit of
# every process appends to. Backends without either only poll: not here.
#
# A worker wakes at least once a second anyway (its schedule tick), so a
# worker that is not woken still picks a task up after half a second on
# average: six tasks take about 3 s in all that way, against tens of
# milliseconds each when woken. The test asks for less than 1.5 s in all,
# which a polling worker meets about once in fifty runs.
# backends: sqlite sqlite-optimistic pg pg-optimistic
. "$(dirname "$0")/lib.sh"
case "$SKED_BACKEND" in
sqlite | sqlite-optimistic | pg | pg-optimistic) ;;
*) not_here "workers on $SKED_BACKEND wake by polling only" ;;
esac
init_db

h=$(handler h.sh <<'H'
#!/bin/sh
: >"$1.$SKED_TASK_ID"
H
)
start_worker w --handler "tick=$h $T/done" --concurrency 2 --poll 60s
w=$wpid
# idle: registered, and past its first (empty) claim
registered() { [ "$(count "SELECT COUNT(*) FROM {p}node")" -ge 1 ]; }
wait_for 20 registered || fail "the worker did not register"
sleep 1

total=0
for i in 1 2 3 4 5 6; do
	id=$(sk enqueue tick --payload "p$i")
	t0=$(now_ms)
	while [ ! -e "$T/done.$id" ]; do
		kill -0 "$w" 2>/dev/null || { cat "$T/w.log" >&2; fail "the worker died"; }
		[ $(($(now_ms) - t0)) -lt 5000 ] ||
			fail "task $i ($id) not picked up within 5 s"
		sleep 0.02
	done
	took=$(($(now_ms) - t0))
	note "task $i picked up after $took ms"
	total=$((total + took))
	sleep 0.3
done
[ "$total" -lt 1500 ] ||
	fail "six tasks took $total ms in all to be picked up: the worker was not woken (it polls once a minute)"

kill -TERM "$w"
wait_exit "$w" 30
expect_eq "$wrc" 0 "the worker's exit status"
