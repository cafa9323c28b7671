#!/bin/sh
# A fair queue takes its tasks round-robin across concurrency keys: a big
# tenant enqueues 150 tasks, then a small tenant 5; three worker
# processes of 4 slots (no prefetch, so a claim is at most 4 tasks) start
# all 5 of the small tenant's tasks among the first 24 handler starts
# (two claims per worker), by the handlers' own start log. With the queue
# unfair the same run starts them only behind the big tenant's backlog,
# which shows the check can fail. Every task starts exactly once, and a
# fair queue with --per-key 2 never runs three of one key at once. A bad
# --fair value is a usage error (64), a bad queue name bad data (65); the
# config file's [queue.NAME] fair = on is set when a worker starts, and
# fair = yes is a config error (78).
# backends: strategies
. "$(dirname "$0")/lib.sh"
init_db

h=$(handler h.sh <<'H'
#!/bin/sh
k=$(cat)
echo "S $(date +%s%N) $k $SKED_TASK_ID" >>"$1/events"
sleep 0.005
echo "E $(date +%s%N) $k $SKED_TASK_ID" >>"$1/events"
H
)

BIG=150
BOUND=24 # 3 workers x 4 slots x 2 claims each

# one run: the big tenant's tasks, then the small tenant's, drained by
# three workers (one serves every queue, two only this one); sets
# $last, the place of the small tenant's last start in the start log
run() {
	q=$1
	rm -f "$T/events"
	yes big | head -$BIG | sk enqueue job --queue "$q" \
		--concurrency-key big --lines - >/dev/null
	yes small | head -5 | sk enqueue job --queue "$q" \
		--concurrency-key small --lines - >/dev/null
	pids=""
	for i in 1 2 3; do
		qs="--queues $q"
		[ $i = 1 ] && qs=""
		start_worker "$q$i" --node-id "$q$i" --concurrency 4 \
			--prefetch off --poll 100ms $qs \
			--handler "job=$h $T" --until-empty
		pids="$pids $wpid"
	done
	for p in $pids; do
		wait_exit "$p" 180
		[ "$wrc" = 0 ] || { cat "$T"/"$q"*.log >&2; fail "a worker exited $wrc"; }
	done
	n=$((BIG + 5))
	expect_eq "$(awk '$1 == "S"' "$T/events" | wc -l | tr -d ' ')" $n "$q: starts (no task ran twice)"
	expect_eq "$(awk '$1 == "S" { print $4 }' "$T/events" | sort -u | wc -l | tr -d ' ')" $n "$q: distinct tasks started"
	expect_eq "$(awk '$1 == "E" { print $4 }' "$T/events" | sort -u | wc -l | tr -d ' ')" $n "$q: tasks run to their end"
	last=$(awk '$1 == "S" { i++; if ($3 == "small") l = i } END { print l + 0 }' "$T/events")
}

expect_rc 64 sk queue set fq --fair maybe
expect_rc 65 sk queue set 'no spaces' --fair on
sk queue set fq --fair on >"$T/set.out"
expect_eq "$(cat "$T/set.out")" "set queue fq: fair on" "queue set --fair confirms"
sk queue ls --json >"$T/ls.json"
expect_eq "$(json_get '[q for q in d if q["queue"] == "fq"][0]["fair"]' <"$T/ls.json")" true "queue ls --json: fair"
run fq
note "fair: the small tenant's last task was start $last of $((BIG + 5))"
[ "$last" -ge 5 ] || fail "the small tenant's tasks were not all started"
[ "$last" -le $BOUND ] || fail "fair queue: the small tenant's last task started at $last, past $BOUND (one batch of claims)"

run uq
note "unfair: the small tenant's last task was start $last of $((BIG + 5))"
[ "$last" -gt $((BIG / 2)) ] || fail "unfair queue: the small tenant's last task started at $last: the measure cannot tell fair from unfair"

# fair with a per-key limit: both hold
sk queue set pq --fair on --per-key 2 >/dev/null
rm -f "$T/events"
for k in a b c; do
	yes "$k" | head -20 | sk enqueue job --queue pq --concurrency-key "$k" \
		--lines - >/dev/null
done
yes none | head -10 | sk enqueue job --queue pq --lines - >/dev/null
pids=""
for i in 1 2 3; do
	start_worker "pq$i" --node-id "pq$i" --concurrency 4 --poll 100ms \
		--queues pq --handler "job=$h $T" --until-empty
	pids="$pids $wpid"
done
for p in $pids; do
	wait_exit "$p" 180
	[ "$wrc" = 0 ] || { cat "$T"/pq*.log >&2; fail "a worker exited $wrc"; }
done
expect_eq "$(awk '$1 == "S"' "$T/events" | wc -l | tr -d ' ')" 70 "per-key: starts (no task ran twice)"
expect_eq "$(awk '$1 == "E" { print $4 }' "$T/events" | sort -u | wc -l | tr -d ' ')" 70 "per-key: tasks run to their end"
worst=$(awk '$3 != "none" { print $3, $2, ($1 == "S" ? 1 : 0) }' "$T/events" |
	sort -k1,1 -k2,2n -k3,3n |
	awk '$1 != k { k = $1; n = 0 } { if ($3 == 1) { n++; if (n > m) m = n } else n-- } END { print m + 0 }')
note "per-key 2: most of one key running at once: $worst"
[ "$worst" -le 2 ] || fail "a fair queue with --per-key 2 ran $worst of one key at once"

# the config file's [queue.NAME] fair = on, set when a worker starts;
# a value that is neither on nor off is a config error (78)
cp "$SKED_CONFIG" "$T/fair.conf"
printf '[queue.cq]\nfair = on\n' >>"$T/fair.conf"
SKED_CONFIG="$T/fair.conf" "$SKED" worker --node-id cfg --handler "job=$h $T" \
	--until-empty >"$T/cfg.log" 2>&1 ||
	{ cat "$T/cfg.log" >&2; fail "worker with [queue.cq] fair = on failed"; }
sk queue ls --json >"$T/ls.json"
expect_eq "$(json_get '[q for q in d if q["queue"] == "cq"][0]["fair"]' <"$T/ls.json")" true "[queue.cq] fair = on"
cp "$SKED_CONFIG" "$T/bad.conf"
printf '[queue.cq]\nfair = yes\n' >>"$T/bad.conf"
expect_rc 78 env SKED_CONFIG="$T/bad.conf" "$SKED" queue ls
stderr_one_line "$T/err"

# off again: the row goes, the queue is claimed as before
sk queue set fq --fair off >/dev/null
sk queue ls --json >"$T/ls.json"
expect_eq "$(json_get 'len([q for q in d if q["queue"] == "fq"])' <"$T/ls.json")" 0 "fair off and no limits: no row"
