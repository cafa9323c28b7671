#!/bin/sh
# A queue's --concurrency holds across the cluster: 4 worker processes of
# 8 slots each (two serve only the limited queue, two serve every queue)
# never run more than 3 of its tasks at once, checked from the handler's
# own start and end log, not from sked's tables. Tasks of an unlimited
# queue beside it are not held back by it.
# backends: strategies
. "$(dirname "$0")/lib.sh"
init_db

h=$(handler h.sh <<'H'
#!/bin/sh
echo "S $(date +%s%N) $SKED_TASK_QUEUE $SKED_TASK_ID" >>"$1/events"
sleep 0.2
echo "E $(date +%s%N) $SKED_TASK_QUEUE $SKED_TASK_ID" >>"$1/events"
H
)
sk queue set lim --concurrency 3
seq 1 30 | sk enqueue job --queue lim --lines - >/dev/null
seq 1 16 | sk enqueue job --queue free --lines - >/dev/null

pids=""
for i in 1 2 3 4; do
	q=""
	[ $i -le 2 ] && q="--queues lim"
	start_worker w$i --node-id w$i --concurrency 8 --poll 100ms $q \
		--handler "job=$h $T" --until-empty
	pids="$pids $wpid"
done
for p in $pids; do
	wait_exit "$p" 60
	[ "$wrc" = 0 ] || { cat "$T"/w*.log >&2; fail "a worker exited $wrc"; }
done

# the most tasks of queue $1 running at once, from the handler's log
# (an end sorts before a start at the same instant: the slot was free)
most() {
	awk -v q="$1" '$3 == q { print $2, ($1 == "S" ? 1 : 0) }' "$T/events" |
		sort -k1,1n -k2,2n |
		awk '{ if ($2 == 1) { n++; if (n > m) m = n } else n-- } END { print m + 0 }'
}
expect_eq "$(grep -c '^E .* lim ' "$T/events")" 30 "limited tasks run to their end"
expect_eq "$(grep -c '^E .* free ' "$T/events")" 16 "unlimited tasks run to their end"
lim=$(most lim)
free=$(most free)
note "most running at once: lim $lim (limit 3), free $free"
[ "$lim" -le 3 ] || fail "$lim tasks of a queue limited to 3 ran at once"
[ "$lim" -ge 2 ] || fail "the limited queue never ran 2 at once ($lim): the limit is not what holds it"
[ "$free" -gt 3 ] || fail "the unlimited queue ran at most $free at once: the limit leaked onto it"

# what queue ls says about it
sk queue ls --json >"$T/ls.json"
expect_eq "$(json_get '[q for q in d if q["queue"] == "lim"][0]["concurrency"]' <"$T/ls.json")" 3 "queue ls: the limit"
expect_eq "$(json_get '[q for q in d if q["queue"] == "lim"][0]["running"]' <"$T/ls.json")" 0 "queue ls: running now"
