#!/bin/sh
# bench/fleet.sh — what a fleet of idle workers costs PostgreSQL, and what
# one enqueue costs with the fleet listening (issue 34's targets).
#
# Layer: benchmark (never run by `make test`). Starts a PostgreSQL of its
# own (scripts/serverlib.sh) with pg_stat_statements on 127.0.0.1, then
# for each fleet size W:
#   - W workers (`--concurrency 1`, the built-in no-op handler), started
#     and left idle; how many came up and stayed up;
#   - idle, over FLEET_IDLE_S seconds: statements per worker per second
#     (pg_stat_statements' calls, the bench's own reads left out) and
#     transactions (pg_stat_database), the server's CPU (utime + stime of
#     the postmaster and every backend, from /proc, as % of one core),
#     and connections (pg_stat_activity, by the nodes' application_name:
#     total and the most any one worker holds; and every client session,
#     which also counts those a worker opens without its node's name);
#   - FLEET_LONE lone tasks enqueued one at a time, FLEET_LONE_GAP apart:
#     statements per enqueued task beyond the idle rate (the enqueue
#     command's own included), pick-up latency p50/p99 from the run
#     records (started_at - created_at, one clock: the server's);
#   - a drain of FLEET_DRAIN tasks enqueued at once: tasks per second
#     until none is left, and the connections at the peak.
#
#   SKED=build/sked bench/fleet.sh [W...]          (default: 50 200 500)
#
# Env: FLEET_PG_PORT (57050), FLEET_DIR (/tmp/sked-fleet-bench),
# FLEET_IDLE_S (20), FLEET_LONE (40), FLEET_LONE_GAP (0.5), FLEET_DRAIN
# (5000), FLEET_POLL (none: the worker's default), FLEET_ARGS (more
# worker flags), FLEET_SETTLE_LOAD (2: the load average the idle and
# lone phases wait for after a fleet's start, at most 120 s). One line per size, then a markdown table on stdout;
# progress on stderr. Figures go to docs/performance.md with the date, the
# build and the machine's load.
set -eu
SKED=${SKED:-build/sked}
case "$SKED" in /*) ;; *) SKED=$PWD/$SKED ;; esac
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../scripts/serverlib.sh"
PORT=${FLEET_PG_PORT:-57050}
DIR=${FLEET_DIR:-/tmp/sked-fleet-bench}
IDLE_S=${FLEET_IDLE_S:-20}
LONE=${FLEET_LONE:-40}
GAP=${FLEET_LONE_GAP:-0.5}
DRAIN=${FLEET_DRAIN:-5000}
SETTLE=${FLEET_SETTLE_LOAD:-2}
sizes=${*:-50 200 500}
say() { echo "fleet: $*" >&2; }

rm -rf "$DIR"
mkdir -p "$DIR"
chmod 755 "$DIR"
sv_pg_init "$DIR/pg"
sv_pg_start "$DIR/pg" "$PORT" -c max_connections=1500 -c fsync=off \
	-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all \
	-c pg_stat_statements.max=10000
sv_pg_createdb "$PORT" sked_bench
pids=""
stop_all() {
	for p in $pids; do kill -9 "$p" 2>/dev/null || true; done
	sv_pg_stop "$DIR/pg" immediate
}
trap stop_all EXIT
URL="postgres://postgres@127.0.0.1:$PORT/sked_bench"
# every read of the bench carries the mark fleet_probe, so that the
# statement counts leave them out (and nothing else)
q() { psql -X -q -At -F ' ' "$URL" -c "/* fleet_probe */ $1"; }
q "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null
pm=$(sv_pg_pid "$DIR/pg")
tck=$(getconf CLK_TCK)

# server_ticks: CPU ticks of the postmaster, its live backends, and the
# backends it has reaped (cutime + cstime of the postmaster)
server_ticks() {
	{
		awk '{ print $14 + $15 + $16 + $17 }' "/proc/$pm/stat"
		for c in $(pgrep -P "$pm"); do
			awk '{ print $14 + $15 }' "/proc/$c/stat" 2>/dev/null || true
		done
	} | awk '{ s += $1 } END { print s + 0 }'
}
# statements run by anyone but this bench's own reads
stmts() { q "SELECT COALESCE(sum(calls), 0) FROM pg_stat_statements WHERE query NOT LIKE '%fleet_probe%'"; }
xacts() { q "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = 'sked_bench'"; }
# snap NAME: keep every statement's calls so far; delta NAME N: the
# statements run since, per N, most first (the breakdown behind a figure)
snap() {
	q "DROP TABLE IF EXISTS $1; CREATE TABLE $1 AS SELECT queryid, calls FROM pg_stat_statements WHERE query NOT LIKE '%fleet_probe%'" >/dev/null
}
delta() {
	q "SELECT round((s.calls - COALESCE(b.calls, 0))::numeric / $2, 2) || ' ' || regexp_replace(left(s.query, 48), '\s+', ' ', 'g') FROM pg_stat_statements s LEFT JOIN $1 b USING (queryid) WHERE s.query NOT LIKE '%fleet_probe%' AND s.calls > COALESCE(b.calls, 0) ORDER BY s.calls - COALESCE(b.calls, 0) DESC LIMIT 8" | paste -sd';'
}
now_ms() { date +%s%3N; }

out="$DIR/results"
: >"$out"
for W in $sizes; do
	prefix="fb$(od -An -N3 -tx1 /dev/urandom | tr -d ' ')_"
	conf="$DIR/$prefix.conf"
	printf '[sked]\ndatabase = %s\nprefix = %s\n' "$URL" "$prefix" >"$conf"
	SKED_CONFIG=$conf "$SKED" init >/dev/null 2>&1
	say "W=$W: starting $W workers ($prefix)"
	pids=""
	t0=$(now_ms)
	i=0
	while [ $i -lt "$W" ]; do
		i=$((i + 1))
		# shellcheck disable=SC2086 # FLEET_ARGS: flags, split on purpose
		SKED_CONFIG=$conf SKED_LOG=warn "$SKED" worker --node-id "${prefix}w$i" \
			--concurrency 1 --builtin-noop lone ${FLEET_POLL:+--poll $FLEET_POLL} \
			${FLEET_ARGS:-} >"$DIR/${prefix}w$i.log" 2>&1 &
		pids="$pids $!"
	done
	nodes() { q "SELECT count(*) FROM ${prefix}node"; }
	end=$(($(date +%s) + 300))
	until [ "$(nodes)" -ge "$W" ] || [ "$(date +%s)" -ge $end ]; do sleep 1; done
	up_ms=$(($(now_ms) - t0))
	alive=0
	for p in $pids; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
	say "W=$W: $(nodes) registered, $alive running after $up_ms ms"
	# a fleet's start loads this machine for a while (each worker reads
	# the schema, registers, beats): measure once the 1-minute load
	# average is back under FLEET_SETTLE_LOAD, or after 120 s
	sleep 5
	end=$(($(date +%s) + 120))
	while [ "$(date +%s)" -lt $end ] &&
		awk -v m="$SETTLE" '{ exit !($1 > m) }' /proc/loadavg; do
		sleep 2
	done
	say "W=$W: load average $(cut -d' ' -f1-3 /proc/loadavg) when measured"

	# ---- idle ----
	s0=$(stmts) x0=$(xacts) c0=$(server_ticks) m0=$(now_ms)
	sleep "$IDLE_S"
	s1=$(stmts) x1=$(xacts) c1=$(server_ticks) m1=$(now_ms)
	# shellcheck disable=SC2046 # two numbers, split on purpose
	set -- $(q "SELECT COALESCE(sum(n), 0), COALESCE(max(n), 0) FROM (SELECT application_name, count(*) AS n FROM pg_stat_activity WHERE application_name LIKE '${prefix}w%' GROUP BY application_name) s")
	conns=$1 conns_max=$2
	# every client session on the database but this probe: also those a
	# worker opens without its node's name (the CLI's own)
	conns_all=$(q "SELECT count(*) - 1 FROM pg_stat_activity WHERE datname = 'sked_bench' AND backend_type = 'client backend'")
	# per worker that runs: with a server too slow to accept them all,
	# some may have given up
	idle_s=$(awk -v d=$((s1 - s0)) -v w="$alive" -v ms=$((m1 - m0)) 'BEGIN { printf "%.3f", d / w / (ms / 1000) }')
	idle_x=$(awk -v d=$((x1 - x0)) -v w="$alive" -v ms=$((m1 - m0)) 'BEGIN { printf "%.3f", d / w / (ms / 1000) }')
	cpu=$(awk -v d=$((c1 - c0)) -v t="$tck" -v ms=$((m1 - m0)) 'BEGIN { printf "%.1f", 100 * d / t / (ms / 1000) }')
	idle_rate=$(awk -v d=$((s1 - s0)) -v ms=$((m1 - m0)) 'BEGIN { print d / (ms / 1000) }')
	say "W=$W idle: $idle_s statements ($idle_x transactions) per worker per second, server CPU $cpu % of a core, $conns named connections (max $conns_max per worker), $conns_all sessions in all"

	# ---- lone tasks ----
	snap fleet_probe_lone
	s0=$(stmts) m0=$(now_ms)
	j=0
	while [ $j -lt "$LONE" ]; do
		j=$((j + 1))
		SKED_CONFIG=$conf "$SKED" enqueue lone --payload "$j" >/dev/null
		sleep "$GAP"
	done
	sleep 2
	s1=$(stmts) m1=$(now_ms)
	per_task=$(awk -v d=$((s1 - s0)) -v r="$idle_rate" -v ms=$((m1 - m0)) -v n="$LONE" \
		'BEGIN { printf "%.1f", (d - r * ms / 1000) / n }')
	lat=$(q "SELECT round(percentile_disc(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 1), round(percentile_disc(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 1), count(*) FROM (SELECT extract(epoch FROM d.started_at - d.created_at) * 1000 AS ms FROM ${prefix}task_done d WHERE d.kind = 'lone') s")
	set -- $lat
	p50=$1 p99=$2 picked=$3
	say "W=$W lone: $per_task statements per enqueued task, pick-up p50 $p50 ms, p99 $p99 ms ($picked of $LONE)"
	say "W=$W lone: what ran, per enqueued task (idle rate not taken out): $(delta fleet_probe_lone "$LONE")"

	# ---- drain ----
	seq 1 "$DRAIN" | SKED_CONFIG=$conf "$SKED" enqueue lone --lines - >/dev/null
	t0=$(now_ms)
	peak=0
	end=$(($(date +%s) + 300))
	while :; do
		left=$(q "SELECT count(*) FROM ${prefix}task WHERE kind = 'lone'")
		c=$(q "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE '${prefix}w%'")
		[ "$c" -gt "$peak" ] && peak=$c
		[ "$left" = 0 ] && break
		[ "$(date +%s)" -lt $end ] || break
		sleep 0.2
	done
	dms=$(($(now_ms) - t0))
	rate=$(awk -v n="$DRAIN" -v ms="$dms" -v l="$left" 'BEGIN { printf "%.0f", (n - l) / (ms / 1000) }')
	say "W=$W drain: $rate tasks/s ($DRAIN tasks, $left left, $dms ms), peak $peak connections"

	alive2=0
	for p in $pids; do kill -0 "$p" 2>/dev/null && alive2=$((alive2 + 1)); done
	echo "$W $alive $up_ms $idle_s $idle_x $cpu $conns $conns_max $per_task $p50 $p99 $rate $peak $alive2 $conns_all" >>"$out"
	for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done
	for p in $pids; do wait "$p" 2>/dev/null || true; done
	pids=""
done

echo "| workers | running (start, end) | idle stmts/worker/s | idle xacts/worker/s | server CPU idle | connections idle: named (max/worker), all | stmts per lone task | pick-up p50 | p99 | drain tasks/s | named connections in drain |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
while read -r W alive up idle_s idle_x cpu conns cmax per p50 p99 rate peak alive2 call; do
	echo "| $W | $alive, $alive2 | $idle_s | $idle_x | $cpu % | $conns ($cmax), $call | $per | $p50 ms | $p99 ms | $rate | $peak |"
done <"$out"
