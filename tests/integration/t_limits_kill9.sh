#!/bin/sh
# A worker killed with kill -9 while it holds all of a queue's limited
# slots does not lower the capacity for good: its tasks count against the
# limit until their leases run out (nobody else may start one of the
# queue's tasks meanwhile), then the reaper takes them back and another
# worker runs the queue at its full limit again.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

# attempt 1 of the first two tasks hangs; every other run takes 0.3 s
h=$(handler h.sh <<'H'
#!/bin/sh
if [ "$SKED_TASK_ATTEMPT" = 1 ] && [ -e "$1/hang" ]; then
	echo "$SKED_TASK_ID" >>"$1/hung"
	exec sleep 60
fi
echo "S $(date +%s%3N) $SKED_TASK_ID" >>"$1/events"
sleep 0.3
echo "E $(date +%s%3N) $SKED_TASK_ID" >>"$1/events"
H
)
touch "$T/hang"
sk queue set capped --concurrency 2
seq 1 2 | sk enqueue job --queue capped --lines - >/dev/null

start_worker victim --node-id victim --concurrency 8 --lease 2s \
	--poll 100ms --handler "job=$h $T"
victim=$wpid
two_hung() { [ "$(wc -l <"$T/hung" 2>/dev/null || echo 0)" -ge 2 ]; }
wait_for 20 two_hung || { cat "$T/victim.log" >&2; fail "the victim did not take both slots"; }
rm -f "$T/hang"
seq 3 8 | sk enqueue job --queue capped --lines - >/dev/null
kill -9 "$victim"
wait "$victim" 2>/dev/null || true
killed=$(now_ms)

start_worker rescuer --node-id rescuer --concurrency 8 --lease 5s \
	--poll 100ms --handler "job=$h $T" --until-empty
wait_exit "$wpid" 60
[ "$wrc" = 0 ] || { cat "$T/rescuer.log" >&2; fail "the rescuer exited $wrc"; }

expect_eq "$(awk '$1 == "E"' "$T/events" | wc -l | tr -d ' ')" 8 "tasks run to their end after the kill"
first=$(awk '$1 == "S" { print $2 }' "$T/events" | sort -n | head -1)
note "first start $((first - killed)) ms after the kill (lease 2 s)"
# the dead worker's slots were still held while its leases ran (renewed
# every lease/3 at most, so they ran out at least 1.3 s after the kill)
[ $((first - killed)) -ge 1000 ] || fail "a task started $((first - killed)) ms after the kill: the dead worker's slots were not counted"
most=$(awk '{ print $2, ($1 == "S" ? 1 : 0) }' "$T/events" | sort -k1,1n -k2,2n |
	awk '{ if ($2 == 1) { n++; if (n > m) m = n } else n-- } END { print m + 0 }')
expect_eq "$most" 2 "most running at once after the leases ran out (the full limit)"
