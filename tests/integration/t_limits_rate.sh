#!/bin/sh
# --rate 20/1s: no window of one second holds more than 20 task starts.
# The limit is judged at claim time; a run's start is when its handler
# started (docs/design.md, "Prefetch"), which trails the claim by the
# moment the task waits for a thread. So two workers of 20 slots (a
# window's claims never wait for a thread) drain 60 instant tasks, and
# every window [s, s + 700 ms) that begins at a start s, on the database
# clock (the runs' started_at), holds at most 20: the 300 ms spare is
# for a handler's start trailing its claim on a loaded machine (100 ms
# was not enough: 22 starts in 900 ms once at a load average above 30,
# the claims themselves within the limit). Only the
# rate holds the tasks back; the drain must take at least two windows.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

h=$(handler h.sh <<'H'
#!/bin/sh
exit 0
H
)
sk queue set paced --rate 20/1s
seq 1 60 | sk enqueue job --queue paced --lines - >/dev/null
t0=$(now_ms)
pids=""
for i in 1 2; do
	start_worker w$i --node-id w$i --concurrency 20 --poll 50ms \
		--handler "job=$h" --until-empty
	pids="$pids $wpid"
done
for p in $pids; do
	wait_exit "$p" 60
	[ "$wrc" = 0 ] || { cat "$T"/w*.log >&2; fail "a worker exited $wrc"; }
done
took=$(($(now_ms) - t0))

case "$(family)" in
sqlite) ms="started_at" ;;
pg) ms="(floor(extract(epoch FROM started_at) * 1000))::bigint" ;;
*) ms="(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', started_at) DIV 1000)" ;;
esac
sql "SELECT $ms FROM $ALL_RUNS runs WHERE outcome = 'succeeded' ORDER BY 1" >"$T/starts"
expect_eq "$(wc -l <"$T/starts" | tr -d ' ')" 60 "attempts recorded"
worst=$(awk '{ s[NR] = $1 } END {
	j = 1
	for (i = 1; i <= NR; i++) {
		while (s[j] < s[i]) j++
		k = i; while (k <= NR && s[k] < s[i] + 700) k++
		if (k - i > m) m = k - i
	}
	print m + 0 }' "$T/starts")
note "most starts in one 700 ms window: $worst; 60 tasks took $took ms"
[ "$worst" -le 20 ] || fail "$worst starts in one 700 ms window, limit 20"
[ "$worst" -ge 10 ] || fail "at most $worst starts in a window: the rate held far below its limit"
[ "$took" -ge 2000 ] || fail "60 starts at 20/s took only $took ms"
