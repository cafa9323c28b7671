#!/usr/bin/env bash
# bench/compare.sh — sked beside its peers, on the same PostgreSQL server
# in the same session, printed as one side-by-side table.
#
# Layer: a script around two programs that do the measuring: `sked bench`
# (cli/cmd_bench.c) and the peers harness (/work/shared/peers/run.sh, which
# also starts the PostgreSQL server on 127.0.0.1:55432). This script only
# prepares a fresh database per run, repeats, takes medians and prints.
#
#   bench/compare.sh                     # everything (about 10 minutes)
#   RUN_PEERS=0 bench/compare.sh         # reuse the newest peers results
#   RUNS=1 N=2000 PILEUP=0 CEILING=0 RUN_PEERS=0 bench/compare.sh   # quick
#
# Variables: SKED (the binary; default build-bench/sked), N (20000), RUNS
# (3), C ("10 50": W=1 worker with T=C threads), LAT_N (300), LAT_RATE
# (100), LAT_C (10), PILEUP (200000 finished rows before a second run; 0:
# skip), RUN_PEERS (1), CEILING (1), SQLITE (1), MY_URL (MariaDB; empty:
# skip), MY_N (2000 tasks on MariaDB), QUIET_WAIT_S (20), PEERS (the harness folder), OUT (results folder).
# Each sked run writes one JSON document to $OUT/sked-<stamp>.jsonl.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
SKED=${SKED:-$ROOT/build-bench/sked}
PEERS=${PEERS:-$ROOT/../shared/peers}
N=${N:-20000}
RUNS=${RUNS:-3}
C=${C:-10 50}
LAT_N=${LAT_N:-300}
LAT_RATE=${LAT_RATE:-100}
LAT_C=${LAT_C:-10}
PILEUP=${PILEUP:-200000}
RUN_PEERS=${RUN_PEERS:-1}
CEILING=${CEILING:-1}
SQLITE=${SQLITE:-1}
MY_URL=${MY_URL:-mysql://sked:sked-test-pw@127.0.0.1:53307/sked_test}
# MariaDB drains at a few hundred tasks/s today (docs/performance.md)
MY_N=${MY_N:-2000}
PG=postgres://postgres@127.0.0.1:55432
DB=sked_bench
OUT=${OUT:-/tmp/sked-bench}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
JL=$OUT/sked-$STAMP.jsonl
mkdir -p "$OUT"
export SKED_LOG=${SKED_LOG:-warn}

say() { echo "[compare] $*" >&2; }
[ -x "$SKED" ] || { say "no sked binary at $SKED (set SKED)"; exit 1; }

# Wait (up to 20 s) for the machine to be quiet, as the peers harness does.
quiet() {
	local i a b c d busy
	for i in $(seq 1 "${QUIET_WAIT_S:-20}"); do
		read -r _ a b c d _ </proc/stat
		sleep 1
		read -r _ a2 b2 c2 d2 _ </proc/stat
		busy=$(((a2 + b2 + c2 - a - b - c) * 100 / (a2 + b2 + c2 + d2 - a - b - c - d + 1)))
		[ "$busy" -lt 25 ] && return 0
	done
	say "machine still ${busy}% busy; measuring anyway"
}

fresh_pg() {
	psql -X -q "$PG/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" \
		-c "CREATE DATABASE $DB" >/dev/null
}

# run LABEL SKED-ARGS...: one JSON document, tagged, appended to $JL
run() {
	local label=$1
	shift
	quiet
	"$SKED" --json "$@" | jq -c --arg l "$label" '. + {label: $l}' >>"$JL"
	tail -1 "$JL" | jq -r '"[compare] \(.label): \(.throughput.tasks_per_s|floor) tasks/s, enqueue \(.enqueue.tasks_per_s|floor)/s" + (if .latency then ", p50 \(.latency.p50_ms) ms" else "" end)' >&2
}

median() { sort -g | awk '{a[NR]=$1} END{if (NR==0) print "-"; else print a[int((NR+1)/2)]}'; }
# fig LABEL JQ-PATH: the median over the runs with that label
fig() { jq -r --arg l "$1" "select(.label==\$l) | $2" "$JL" | median; }

# ---- the peers ----
if [ "$RUN_PEERS" = 1 ]; then
	say "peers: $PEERS/run.sh (about 5 minutes)"
	N=$N RUNS=$RUNS C="$C" LAT_N=$LAT_N LAT_RATE=$LAT_RATE LAT_C=$LAT_C \
		"$PEERS/run.sh" >&2
fi
"$PEERS/run.sh" start >/dev/null
PR=$(ls -t "${PEERS_WORKDIR:-/tmp/sked-peers}"/results/*.txt 2>/dev/null | head -1 || true)

# ---- sked on PostgreSQL ----
for c in $C; do
	for r in $(seq 1 "$RUNS"); do
		fresh_pg
		lat=0
		[ "$c" = "$LAT_C" ] && lat=$LAT_N
		say "sked pg c=$c run $r/$RUNS"
		run "pg-c$c" --db "$PG/$DB" bench --tasks "$N" --batch "$N" \
			--workers 1 --threads "$c" --latency-tasks "$lat" \
			--rate "$LAT_RATE" --latency-threads "$LAT_C"
	done
done
if [ "$PILEUP" -gt 0 ]; then
	fresh_pg
	say "sked pg: $PILEUP tasks to pile up finished rows"
	run "pg-pile-fill" --db "$PG/$DB" bench --prefix skpile_ \
		--tasks "$PILEUP" --batch 20000 --threads "$LAT_C" --latency-tasks 0
	for r in $(seq 1 "$RUNS"); do
		run "pg-pile-c$LAT_C" --db "$PG/$DB" bench --prefix skpile_ \
			--tasks "$N" --batch "$N" --threads "$LAT_C" --latency-tasks 0
	done
fi

# ---- sked on SQLite and MariaDB ----
if [ "$SQLITE" = 1 ]; then
	T=$(mktemp -d)
	for c in $C; do
		for r in $(seq 1 "$RUNS"); do
			rm -f "$T"/b.db*
			lat=0
			[ "$c" = "$LAT_C" ] && lat=$LAT_N
			run "sqlite-c$c" --db "sqlite:$T/b.db" bench --tasks "$N" \
				--batch "$N" --threads "$c" --latency-tasks "$lat" \
				--rate "$LAT_RATE" --latency-threads "$LAT_C" --poll 10ms
		done
	done
	rm -rf "$T"
fi
MY_OK=0
if [ -n "$MY_URL" ] && "$SKED" --db "$MY_URL" info >/dev/null 2>&1; then
	MY_OK=1
	for c in $C; do
		for r in $(seq 1 "$RUNS"); do
			lat=0
			[ "$c" = "$LAT_C" ] && lat=$LAT_N
			run "mariadb-c$c" --db "$MY_URL" bench --tasks "$MY_N" \
				--batch "$MY_N" --threads "$c" --latency-tasks "$lat" \
				--rate "$LAT_RATE" --latency-threads "$LAT_C" --poll 10ms
		done
	done
	# the bench leaves its tables (a fresh prefix each run): drop them
	eval "$(echo "$MY_URL" | sed -E 's|mysql://([^:]*):([^@]*)@([^:]*):([0-9]*)/(.*)|MU=\1 MP=\2 MH=\3 MPORT=\4 MD=\5|')"
	for p in $(jq -r 'select(.label|startswith("mariadb")) | .settings.prefix' "$JL"); do
		for t in run task node schedule lock meta; do
			mariadb --no-defaults -h "$MH" -P "$MPORT" -u "$MU" -p"$MP" "$MD" \
				-e "DROP TABLE IF EXISTS ${p}$t" 2>/dev/null || true
		done
	done
else
	say "MariaDB at $MY_URL not reachable or not built: skipped"
fi

# ---- the ceiling ----
CEIL=""
if [ "$CEILING" = 1 ]; then
	quiet
	CEIL=$("$PEERS/ceiling.sh" 2>/dev/null | tr '\n' ' ')
fi
psql -X -q "$PG/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null || true

# ---- the table ----
peer() { # peer NAME TEST C FIELD from the peers' median lines
	[ -n "$PR" ] || { echo "-"; return; }
	grep "^peer=$1 test=$2 c=$3 " "$PR" | tr ' ' '\n' | sed -n "s/^$4=//p" | head -1 | grep . || echo "-"
}
peer_enq() { # the peers' median enqueue over their c=10 throughput runs
	local f=${PR%.txt}.jsonl
	[ -f "$f" ] || { echo "-"; return; }
	jq -r --arg p "$1" 'select(.peer==$p and .test=="throughput" and (.discarded|not) and .c==10) | .enqueue_jobs_per_s' "$f" 2>/dev/null | median
}
c1=$(echo "$C" | awk '{print $1}')
c2=$(echo "$C" | awk '{print $2}')
r0() { awk '{ if ($1 == "-") print "-"; else printf "%.0f\n", $1 }'; }
r2() { awk '{ if ($1 == "-") print "-"; else printf "%.2f\n", $1 }'; }

echo
echo "sked $("$SKED" --version | awk '{print $2}') vs peers, PostgreSQL at $PG, N=$N, medians of $RUNS runs, $(date -u +%FT%TZ)"
echo "peers results: ${PR:-none}; sked results: $JL"
echo
echo "| system | throughput c=$c1 (tasks/s) | throughput c=$c2 (tasks/s) | bulk enqueue (tasks/s) | latency p50 / p95 / p99 (ms) |"
echo "| --- | --- | --- | --- | --- |"
row_sked() { # LABEL-PREFIX NAME
	local a b e p50 p95 p99
	a=$(fig "$1-c$c1" .throughput.tasks_per_s | r0)
	b=$(fig "$1-c$c2" .throughput.tasks_per_s | r0)
	e=$(fig "$1-c$c1" .enqueue.tasks_per_s | r0)
	p50=$(fig "$1-c$LAT_C" .latency.p50_ms | r2)
	p95=$(fig "$1-c$LAT_C" .latency.p95_ms | r2)
	p99=$(fig "$1-c$LAT_C" .latency.p99_ms | r2)
	echo "| $2 | $a | $b | $e | $p50 / $p95 / $p99 |"
}
row_sked pg "**sked** (PostgreSQL)"
for p in graphile-worker pg-boss bullmq bullmq-pg; do
	echo "| $p | $(peer $p throughput "$c1" jobs_per_s) | $(peer $p throughput "$c2" jobs_per_s) | $(peer_enq $p | r0) | $(peer $p latency "$LAT_C" p50_ms) / $(peer $p latency "$LAT_C" p95_ms) / $(peer $p latency "$LAT_C" p99_ms) |"
done
[ "$SQLITE" = 1 ] && row_sked sqlite "sked (SQLite, poll 10ms)"
[ "$MY_OK" = 1 ] && row_sked mariadb "sked (MariaDB, poll 10ms)"
echo
gw=$(peer graphile-worker throughput "$c1" jobs_per_s)
sk=$(fig "pg-c$c1" .throughput.tasks_per_s | r0)
[ "$gw" != "-" ] && [ "$sk" != "-" ] &&
	echo "sked / graphile-worker at c=$c1: $(echo "scale=2; $sk / $gw" | bc | sed "s/^\./0./") (target: 2.00 or more)"
if [ "$PILEUP" -gt 0 ]; then
	echo "sked c=$LAT_C with $PILEUP finished rows already in the table: $(fig "pg-pile-c$LAT_C" .throughput.tasks_per_s | r0) tasks/s (fresh table: $(fig "pg-c$LAT_C" .throughput.tasks_per_s | r0))"
fi
if [ -n "$CEIL" ]; then
	echo "ceiling.sh: $CEIL"
	cu=$(echo "$CEIL" | tr ' ' '\n' | sed -n 's/^tasks_per_s=//p' | head -1)
	[ -n "$cu" ] && [ "$sk" != "-" ] &&
		echo "sked c=$c1 / ceiling (update variant): $(echo "scale=3; $sk / $cu" | bc | sed "s/^\./0./")"
fi
