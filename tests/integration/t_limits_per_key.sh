#!/bin/sh
# --per-key 1 makes each concurrency key a mutex across the cluster: 300
# tasks over 10 keys, drained by 4 workers of 8 slots, never run two of
# one key at once (checked from the handler's own log) and all finish.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

h=$(handler h.sh <<'H'
#!/bin/sh
k=$(cat)
echo "S $(date +%s%N) $k $SKED_TASK_ID" >>"$1/events"
sleep 0.01
echo "E $(date +%s%N) $k $SKED_TASK_ID" >>"$1/events"
H
)
sk queue set keyed --per-key 1
# one enqueue per key, its 30 tasks in one transaction; the payload names
# the key so that the handler can log it
for k in 0 1 2 3 4 5 6 7 8 9; do
	yes "k$k" | head -30 | sk enqueue job --queue keyed \
		--concurrency-key "k$k" --lines - >/dev/null
done

pids=""
for i in 1 2 3 4; do
	start_worker w$i --node-id w$i --concurrency 8 --poll 100ms \
		--handler "job=$h $T" --until-empty
	pids="$pids $wpid"
done
for p in $pids; do
	wait_exit "$p" 120
	[ "$wrc" = 0 ] || { cat "$T"/w*.log >&2; fail "a worker exited $wrc"; }
done

expect_eq "$(awk '$1 == "E" { print $4 }' "$T/events" | sort -u | wc -l | tr -d ' ')" 300 "tasks run to their end"
expect_eq "$(awk '$1 == "S"' "$T/events" | wc -l | tr -d ' ')" 300 "starts (no task ran twice)"
# per key: the most running at once (an end sorts before a start at the
# same instant)
worst=$(awk '{ print $3, $2, ($1 == "S" ? 1 : 0) }' "$T/events" |
	sort -k1,1 -k2,2n -k3,3n |
	awk '$1 != k { k = $1; n = 0 } { if ($3 == 1) { n++; if (n > m) m = n } else n-- } END { print m + 0 }')
expect_eq "$worst" 1 "most tasks of one key running at once"
# and the keys did run side by side
all=$(awk '{ print $2, ($1 == "S" ? 1 : 0) }' "$T/events" | sort -k1,1n -k2,2n |
	awk '{ if ($2 == 1) { n++; if (n > m) m = n } else n-- } END { print m + 0 }')
note "most running at once over all keys: $all"
[ "$all" -ge 2 ] || fail "keys never ran side by side ($all)"
