#!/bin/sh
# Quiet when idle (docs/design.md, "Quiet when idle"): on PostgreSQL, with
# LISTEN/NOTIFY, an idle worker that does not lead runs at most 0.2
# statements a second, heartbeat included (it used to run about 5.8: a
# claim every second, the lease reaper's and the schedules' reads, the
# queue list, beats), and a lone task enqueued then is still picked up in
# milliseconds. The statements are counted from the worker's own trace
# (SKED_TRACE_SQL=1) over a minute, with the default lease and poll.
# backends: pg
. "$(dirname "$0")/lib.sh"
case "$SKED_BACKEND" in
pg) ;;
*) not_here "the bound is for workers woken by LISTEN/NOTIFY (PostgreSQL)" ;;
esac
init_db

h=$(handler h.sh <<'H'
#!/bin/sh
: >"$1.$SKED_TASK_ID"
H
)
# the leader first: it runs the cluster's chores, so the second does not
SKED_LOG=info start_worker lead --node-id quiet-lead --handler "x=$h $T/done"
leads() { grep -q "leads the cluster's chores (leader lock" "$T/lead.log"; }
wait_for 20 leads || { cat "$T/lead.log" >&2; fail "the first worker does not lead"; }
SKED_TRACE_SQL=1 SKED_LOG=debug start_worker quiet --node-id quiet-b --handler "x=$h $T/done"
q=$wpid
# past its start (schema check, registration, LISTEN, first claim)
sleep 8
from=$(grep -c 'sql\[' "$T/quiet.log" || true)
sleep 60
to=$(grep -c 'sql\[' "$T/quiet.log" || true)
n=$((to - from))
note "idle non-leader: $n statements in 60 s: $(tail -n +1 "$T/quiet.log" | grep 'sql\[' | tail -n "$n" | sed 's/.*sql\[[-0-9]*\]: //' | cut -c1-40 | sort | uniq -c | tr '\n' ';')"
[ "$n" -le 12 ] || fail "an idle worker ran $n statements in 60 s (at most 12: 0.2/s)"
grep -q "leads the cluster's chores (leader lock" "$T/quiet.log" &&
	fail "the second worker took the lead from a live leader"

# a lone task: picked up at once by a notification, not a poll
kill -TERM "$(cat "$T/lead.pid")"
wait_exit "$(cat "$T/lead.pid")" 30
for i in 1 2 3; do
	t0=$(now_ms)
	id=$(sk enqueue x)
	while [ ! -e "$T/done.$id" ]; do
		[ $(($(now_ms) - t0)) -lt 5000 ] || fail "task $id not picked up within 5 s"
		sleep 0.01
	done
	note "lone task $i picked up and run after $(($(now_ms) - t0)) ms"
	sleep 0.5
done
kill -TERM "$q"
wait_exit "$q" 30
expect_eq "$wrc" 0 "the quiet worker's exit status"
