#!/usr/bin/env bash
# bench/compare.sh — sked beside its peers, on the same PostgreSQL server
# in the same session, printed as one side-by-side table.
#
# Layer: a script around two programs that do the measuring: `sked bench`
# (cli/bench/cmd_bench.c) and the peers harness ($SKED_PEERS_DIR/run.sh, which
# also starts the PostgreSQL server on 127.0.0.1:55432, and ceiling.sh).
# This script only prepares a fresh database per run, repeats, takes
# medians and prints.
#
#   bench/compare.sh                 # everything, medians of 3 (30-40 min)
#   QUICK=1 bench/compare.sh         # try it out: N=2000, 1 run (3-4 min)
#   RUN_PEERS=0 bench/compare.sh     # reuse the newest peers results
#   PEERS="graphile-worker pg-boss bullmq bullmq-pg" bench/compare.sh
#   DEPS=1 bench/compare.sh          # dependencies only (below)
#
# What it measures, in one session:
#   - the peers (PEERS, passed through to the harness as its peer list);
#   - sked on PostgreSQL, default worker: W=1 process of c threads for each
#     c in C, bulk enqueue, pick-up latency at LAT_C, each worker's RSS;
#   - ceiling.sh's two figures (finish updates in place; finish deletes
#     and writes history), and contract.sh's (what each promise costs at
#     the SQL level), with sked's ratio to the variant that keeps what
#     sked keeps (no-run: the ended row records the attempt that ended
#     the task, schema 5);
#   - the pile-up: PILEUP tasks (1,000,000) pushed through one table by
#     sked itself (enqueue + drain, so ended tasks sit wherever sked's data
#     model puts them), then every c in C again on that table, against
#     the fresh-table figures of the same session; no VACUUM by hand;
#   - the backlog: BACKLOG tasks (1,000,000) delayed a day in a queue of
#     their own (`enqueue --lines --in 1d`), vacuumed and analyzed as
#     autovacuum would leave them, then every c in C drained beside them
#     on the same tables, against the fresh-table figures: what tasks
#     waiting for later cost a drain of due ones;
#   - sked on SQLite (1 process × c threads; and 1 × 16 against 4 × 4
#     processes) and on MariaDB.
#
# Variables (full / QUICK=1): SKED (the binary; build-bench/sked), N
# (20000 / 2000), RUNS (3 / 1), C ("10 50"), LAT_N (300 / 50), LAT_RATE
# (100), LAT_C (10), PILEUP (1000000 / 20000; 0: skip), PILE_FILL_C (50:
# threads of the worker that fills), RUN_PEERS (1), PEERS ("graphile-worker
# pg-boss"), CEILING (1), CEIL_SECS (10 / 2), CEIL_ROWS (3000000 / 400000:
# more than a variant can drain in CEIL_SECS, or its claims come back empty),
# SQLITE (1), MY_URL (MariaDB; empty: skip), MY_N (N), MY_POLL (10ms),
# QUIET_WAIT_S (20 / 5), SKED_PEERS_DIR (the harness folder), OUT (results
# folder), CONTRACT (1), CONTRACT_VARIANTS ("no-run full"), CONTRACT_CLIENTS
# (2), PG_DATA (the peers server's data folder, for its CPU: /tmp/peers-pg/
# data). Each sked run writes one JSON document to $OUT/sked-<stamp>.jsonl,
# and its summary line gives the CPU split of the drain: the worker, the
# database server (when it runs on this machine) and the rest; and on
# PostgreSQL the share of the drain in which the server waited for the
# worker, no session of it running a statement or holding a transaction
# (bench/pg-idle.sh samples pg_stat_activity every 10 ms).
#
# DEPS=1: the dependency patterns instead of everything above. The peers
# harness runs TESTS=deps for DEPS_PEERS ("pg-boss bullmq"), then
# `sked bench --pattern P` for each pattern on the same PostgreSQL (a
# fresh database per run), on SQLite and on MariaDB (MY_URL), and one
# table prints pattern x system: jobs/s and dep_wait p50 / p99. Variables:
# PATTERNS ("baseline fanout fanin chain layered"), DEPS_N (10000 / 2000),
# CHAIN_L (1000 / 200), DEPS_C (10: threads of the one worker process),
# RUNS, RUN_PEERS, SQLITE, MY_URL as above.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
say() { echo "[compare] $*" >&2; }

QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
	d_n=2000 d_runs=1 d_lat=50 d_pile=20000 d_csecs=2 d_crows=400000 d_quiet=5
	d_backlog=20000
else
	d_n=20000 d_runs=3 d_lat=300 d_pile=1000000 d_csecs=10 d_crows=3000000 d_quiet=20
	d_backlog=1000000
fi
SKED=${SKED:-$ROOT/build-bench/sked}
SKED_PEERS_DIR=${SKED_PEERS_DIR:-$ROOT/../shared/peers}
# PEERS is the harness's own variable: the list of peers it runs
PEERS=${PEERS:-graphile-worker pg-boss}
if [ -d "$PEERS" ]; then
	say "PEERS is the list of peers now (as in the harness); the folder is SKED_PEERS_DIR"
	exit 64
fi
N=${N:-$d_n}
RUNS=${RUNS:-$d_runs}
C=${C:-10 50}
LAT_N=${LAT_N:-$d_lat}
LAT_RATE=${LAT_RATE:-100}
LAT_C=${LAT_C:-10}
PILEUP=${PILEUP:-$d_pile}
PILE_FILL_C=${PILE_FILL_C:-50}
BACKLOG=${BACKLOG:-$d_backlog}
RUN_PEERS=${RUN_PEERS:-1}
CEILING=${CEILING:-1}
CEIL_SECS=${CEIL_SECS:-$d_csecs}
CEIL_ROWS=${CEIL_ROWS:-$d_crows}
CONTRACT=${CONTRACT:-1}
CONTRACT_VARIANTS=${CONTRACT_VARIANTS:-no-run full}
CONTRACT_CLIENTS=${CONTRACT_CLIENTS:-2}
PG_DATA=${PG_DATA:-/tmp/peers-pg/data}
SQLITE=${SQLITE:-1}
MY_URL=${MY_URL-mysql://sked:sked-test-pw@127.0.0.1:53307/sked_test}
MY_N=${MY_N:-$N}
MY_POLL=${MY_POLL:-10ms}
export QUIET_WAIT_S=${QUIET_WAIT_S:-$d_quiet}
PG=postgres://postgres@127.0.0.1:55432
DB=sked_bench
OUT=${OUT:-/tmp/sked-bench}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
JL=$OUT/sked-$STAMP.jsonl
mkdir -p "$OUT"
: >"$JL"
export SKED_LOG=${SKED_LOG:-warn}
T0=$SECONDS

[ -x "$SKED" ] || { say "no sked binary at $SKED (set SKED)"; exit 1; }
[ -x "$SKED_PEERS_DIR/run.sh" ] || { say "no peers harness at $SKED_PEERS_DIR (set SKED_PEERS_DIR)"; exit 1; }
c1=$(echo "$C" | awk '{print $1}')
c2=$(echo "$C" | awk '{print $NF}')

# Wait (up to QUIET_WAIT_S) for the machine to be quiet, as the peers
# harness does.
quiet() {
	local i a b c d a2 b2 c2 d2 busy=0
	for i in $(seq 1 "$QUIET_WAIT_S"); do
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

# The pid of the database server a URL names, when it runs on this
# machine (its CPU is then measured during each drain): the peers'
# PostgreSQL from its postmaster.pid, MariaDB from its listening port.
server_pid() {
	case "$1" in
	postgres*) head -1 "$PG_DATA/postmaster.pid" 2>/dev/null || true ;;
	mysql* | mariadb*)
		local port=${1##*:}
		port=${port%%/*}
		ss -ltnpH "sport = :$port" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1 || true
		;;
	esac
}

# run LABEL SKED-ARGS...: one JSON document, tagged, appended to $JL. A
# run that fails is reported and left out (its figures show as "-").
run() {
	local label=$1 doc url=""
	shift
	quiet
	[ "$1" = --db ] && url=$2
	# on PostgreSQL, how long the server waits for the worker's sessions
	# during the drain (bench/pg-idle.sh: pg_stat_activity every 10 ms)
	local sampler="" samples="$OUT/samples.$$"
	case "$url" in postgres*) sampler=$("$HERE/pg-idle.sh" start "$url" "$samples") ;; esac
	if ! doc=$(SKED_BENCH_SERVER_PID=$(server_pid "$url") "$SKED" --json "$@"); then
		[ -z "$sampler" ] || "$HERE/pg-idle.sh" stop "$url" "$sampler"
		say "$label: FAILED (sked $*)"
		return 0
	fi
	local waits=""
	if [ -n "$sampler" ]; then
		"$HERE/pg-idle.sh" stop "$url" "$sampler"
		# none idle active in_tx samples
		waits=$("$HERE/pg-idle.sh" share "$samples" \
			"$(echo "$doc" | jq '.throughput.drain_start_unix_ms // 0')" \
			"$(echo "$doc" | jq '.throughput.drain_end_unix_ms // 0')")
		rm -f "$samples"
	fi
	echo "$doc" | jq -c --arg l "$label" --arg w "$waits" '. + {label: $l}
		| if ($w | split(" ") | .[0]) as $n | ($n != null and $n != "" and $n != "-") then
			.throughput += {server_waits_pct: ($w | split(" ") | .[0] | tonumber),
			                sessions_idle_pct: ($w | split(" ") | .[1] | tonumber),
			                wait_samples: ($w | split(" ") | .[4] | tonumber)}
		  else . end' >>"$JL"
	tail -1 "$JL" | jq -r '.throughput as $t | "[compare] \(.label): \($t.tasks_per_s|floor) tasks/s, enqueue \(.enqueue.tasks_per_s|floor)/s, worker RSS \($t.worker_max_rss_kb) kB, CPU of the machine: worker \($t.worker_cpu_pct|floor)%, server \(if $t.server_cpu_pct then ($t.server_cpu_pct|floor|tostring) + "%" else "-" end), other \(if $t.server_cpu_pct then (($t.machine_cpu_pct - $t.worker_cpu_pct - $t.server_cpu_pct)|floor|tostring) + "%" else "-" end) (\($t.machine_cpu_pct|floor)% busy)" + (if $t.server_waits_pct then ", server waiting for the worker \($t.server_waits_pct)% of the drain (\($t.wait_samples) samples)" else "" end) + (if .latency then ", p50 \(.latency.p50_ms) ms" else "" end)' >&2
}

median() { sort -g | awk '{a[NR]=$1} END{if (NR==0) print "-"; else print a[int((NR+1)/2)]}'; }
# fig LABEL JQ-PATH: the median over the runs with that label
fig() { jq -r --arg l "$1" "select(.label==\$l) | $2" "$JL" | median; }
r0() { awk '{ if ($1 == "-" || $1 == "") print "-"; else printf "%.0f\n", $1 }'; }
r2() { awk '{ if ($1 == "-" || $1 == "") print "-"; else printf "%.2f\n", $1 }'; }
# ratio A B: A / B to two places, or "-"
ratio() {
	if [ "$1" = "-" ] || [ "$2" = "-" ] || [ -z "$1" ] || [ -z "$2" ] || [ "$2" = 0 ]; then
		echo "-"
	else
		awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f\n", a / b}'
	fi
}

# ---- DEPS=1: the dependency patterns, then exit ----
if [ "${DEPS:-0}" = 1 ]; then
	PATTERNS=${PATTERNS:-baseline fanout fanin chain layered}
	[ "$QUICK" = 1 ] && d_dn=2000 d_cl=200 || d_dn=10000 d_cl=1000
	DEPS_N=${DEPS_N:-$d_dn} CHAIN_L=${CHAIN_L:-$d_cl} DEPS_C=${DEPS_C:-10}
	DPEERS=${DEPS_PEERS:-pg-boss bullmq}
	if [ "$RUN_PEERS" = 1 ]; then
		say "peers ($DPEERS) TESTS=deps: $SKED_PEERS_DIR/run.sh"
		PEERS="$DPEERS" TESTS=deps PATTERNS="$PATTERNS" DEPS_N=$DEPS_N \
			CHAIN_L=$CHAIN_L DEPS_C=$DEPS_C RUNS=$RUNS \
			"$SKED_PEERS_DIR/run.sh" >&2
	fi
	"$SKED_PEERS_DIR/run.sh" start >/dev/null
	PR=$(grep -l ' test=deps ' "${PEERS_WORKDIR:-/tmp/sked-peers}"/results/*.txt 2>/dev/null | xargs -r ls -t | head -1 || true)
	# run_deps LABEL URL PATTERN [SKED-ARGS]: one JSON document to $JL
	run_deps() {
		local label=$1 url=$2 pat=$3 doc
		shift 3
		quiet
		if ! doc=$(SKED_BENCH_SERVER_PID=$(server_pid "$url") "$SKED" --json --db "$url" \
			bench --pattern "$pat" --tasks "$DEPS_N" --chain-length "$CHAIN_L" \
			--batch "$DEPS_N" --workers 1 --threads "$DEPS_C" "$@"); then
			say "$label $pat: FAILED"
			return 0
		fi
		echo "$doc" | jq -c --arg l "$label-$pat" '. + {label: $l}' >>"$JL"
		tail -1 "$JL" | jq -r '.deps as $d | .throughput as $t | "[compare] \(.label): \($d.jobs_per_s|floor) jobs/s, \($d.ms_per_level*10|floor/10) ms/level, dep_wait p50 \($d.dep_wait_p50_ms // "-") p99 \($d.dep_wait_p99_ms // "-") ms, graph enqueue \($d.graph_enqueue_ms|floor) ms, violations \($d.violations); CPU: machine \($t.machine_cpu_pct|floor)%, worker \($t.worker_cpu_pct|floor)%, server \(if $t.server_cpu_pct then ($t.server_cpu_pct|floor|tostring) + "%" else "-" end)"' >&2
	}
	for pat in $PATTERNS; do
		for r in $(seq 1 "$RUNS"); do
			fresh_pg
			say "sked pg --pattern $pat run $r/$RUNS"
			run_deps pg "$PG/$DB" "$pat"
		done
	done
	psql -X -q "$PG/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null || true
	if [ "$SQLITE" = 1 ]; then
		T=$(mktemp -d)
		for pat in $PATTERNS; do
			for r in $(seq 1 "$RUNS"); do
				rm -f "$T"/b.db*
				say "sked sqlite --pattern $pat run $r/$RUNS"
				run_deps sqlite "sqlite:$T/b.db" "$pat"
			done
		done
		rm -rf "$T"
	fi
	MY_OK=0
	if [ -n "$MY_URL" ]; then
		for pat in $PATTERNS; do
			for r in $(seq 1 "$RUNS"); do
				say "sked mariadb --pattern $pat run $r/$RUNS"
				run_deps mariadb "$MY_URL" "$pat" --poll "$MY_POLL"
			done
		done
		[ -n "$(jq -r 'select(.label|startswith("mariadb-")) | .label' "$JL")" ] && MY_OK=1
	fi
	pd() { # peer PATTERN FIELD, from the harness's median lines
		[ -n "$PR" ] || { echo "-"; return; }
		local l
		l=$(grep "^peer=$1 test=deps pattern=$2 " "$PR" | head -1)
		case "$l" in *status=unsupported*) echo "n/a"; return ;; *status=*) echo "$l" | grep -o 'status=[a-z]*' | cut -d= -f2; return ;; esac
		echo "$l" | tr ' ' '\n' | sed -n "s/^$3=//p" | head -1 | grep . || echo "-"
	}
	peer_ver() { # the version the harness's header names, if any
		[ -n "$PR" ] || return 0
		grep -m1 -o "$1[@ ][0-9][0-9.]*" "$PR" 2>/dev/null | head -1 | sed 's/.*[@ ]/ /' || true
	}
	cell_peer() { # PEER PATTERN
		local j
		j=$(pd "$1" "$2" jobs_per_s)
		case "$j" in n/a | timeout | failed | -) echo "$j"; return ;; esac
		[ "$2" = baseline ] && { echo "$j"; return; }
		echo "$j ($(pd "$1" "$2" dep_wait_p50_ms) / $(pd "$1" "$2" dep_wait_p99_ms))"
	}
	cell_sked() { # LABEL PATTERN
		local j
		j=$(fig "$1-$2" .deps.jobs_per_s | r0)
		[ "$j" = - ] || [ "$2" = baseline ] && { echo "$j"; return; }
		echo "$j ($(fig "$1-$2" .deps.dep_wait_p50_ms | r2) / $(fig "$1-$2" .deps.dep_wait_p99_ms | r2))"
	}
	echo
	echo "sked $("$SKED" --version | awk '{print $2}') dependency patterns vs peers, PostgreSQL at $PG, N=$DEPS_N, chain L=$CHAIN_L, c=$DEPS_C (one worker process), medians of $RUNS run(s)$([ "$QUICK" = 1 ] && echo ", QUICK mode: a try-out"), $(date -u +%FT%TZ), $(((SECONDS - T0) / 60)) min"
	echo "peers results: ${PR:-none}; sked results: $JL"
	echo "cells: jobs/s (dep_wait p50 / p99 ms); n/a: the library cannot express the pattern"
	echo
	hdr="| pattern | **sked** (PostgreSQL)"
	sep="| --- | ---"
	for p in $DPEERS; do hdr="$hdr | $p$(peer_ver "$p")"; sep="$sep | ---"; done
	[ "$SQLITE" = 1 ] && hdr="$hdr | sked SQLite" && sep="$sep | ---"
	[ "$MY_OK" = 1 ] && hdr="$hdr | sked MariaDB" && sep="$sep | ---"
	echo "$hdr |"
	echo "$sep |"
	for pat in $PATTERNS; do
		row="| $pat | $(cell_sked pg "$pat")"
		for p in $DPEERS; do row="$row | $(cell_peer "$p" "$pat")"; done
		[ "$SQLITE" = 1 ] && row="$row | $(cell_sked sqlite "$pat")"
		[ "$MY_OK" = 1 ] && row="$row | $(cell_sked mariadb "$pat")"
		echo "$row |"
	done
	echo
	base=$(fig pg-baseline .deps.jobs_per_s | r0)
	for pat in fanout fanin layered; do
		case " $PATTERNS " in *" $pat "*) echo "sked pg $pat / sked pg baseline: $(ratio "$(fig "pg-$pat" .deps.jobs_per_s | r0)" "$base") (target >= 0.8)" ;; esac
	done
	case " $PATTERNS " in *" chain "*) echo "sked pg chain: $(fig pg-chain .deps.jobs_per_s | r0) links/s (target >= 2500)" ;; esac
	viol=$(jq -s '[.[] | .deps.violations] | add // 0' "$JL")
	echo "sked violations over all runs: $viol"
	for l in $(jq -r .label "$JL" | awk '!seen[$0]++'); do
		echo "CPU during the drain, $l (medians): machine $(fig "$l" .throughput.machine_cpu_pct | r0)%, worker $(fig "$l" .throughput.worker_cpu_pct | r0)%, server $(fig "$l" '(.throughput.server_cpu_pct // "-")' | r0)%"
	done
	exit 0
fi

# ---- the peers ----
if [ "$RUN_PEERS" = 1 ]; then
	say "peers ($PEERS): $SKED_PEERS_DIR/run.sh"
	PEERS="$PEERS" N=$N RUNS=$RUNS C="$C" LAT_N=$LAT_N LAT_RATE=$LAT_RATE \
		LAT_C=$LAT_C "$SKED_PEERS_DIR/run.sh" >&2
fi
"$SKED_PEERS_DIR/run.sh" start >/dev/null
PR=$(ls -t "${PEERS_WORKDIR:-/tmp/sked-peers}"/results/*.txt 2>/dev/null | head -1 || true)

# ---- sked on PostgreSQL, fresh tables ----
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

# ---- the ceiling (right after, same server) ----
CEIL_U=- CEIL_D=-
if [ "$CEILING" = 1 ]; then
	quiet
	say "ceiling.sh (${CEIL_SECS}s per variant, $CEIL_ROWS rows)"
	CEIL=$(SECS=$CEIL_SECS ROWS=$CEIL_ROWS "$SKED_PEERS_DIR/ceiling.sh" 2>/dev/null || true)
	CEIL_U=$(echo "$CEIL" | sed -n 's/^variant=update .*tasks_per_s=\([0-9]*\).*/\1/p' | head -1)
	CEIL_D=$(echo "$CEIL" | sed -n 's/^variant=delete .*tasks_per_s=\([0-9]*\).*/\1/p' | head -1)
	CEIL_U=${CEIL_U:--} CEIL_D=${CEIL_D:--}
	say "ceiling: update $CEIL_U, delete $CEIL_D tasks/s"
fi

# ---- the contract: what each promise costs at the SQL level ----
CON_NORUN=- CON_FULL=-
if [ "$CONTRACT" = 1 ] && [ -x "$SKED_PEERS_DIR/contract.sh" ]; then
	quiet
	say "contract.sh ($CONTRACT_VARIANTS, $CONTRACT_CLIENTS client(s), ${CEIL_SECS}s each)"
	CON=$(VARIANTS=$CONTRACT_VARIANTS CLIENTS=$CONTRACT_CLIENTS SECS=$CEIL_SECS ROWS=$CEIL_ROWS "$SKED_PEERS_DIR/contract.sh" 2>/dev/null || true)
	CON_NORUN=$(echo "$CON" | sed -n 's/^variant=no-run .*tasks_per_s=\([0-9]*\).*/\1/p' | head -1)
	CON_FULL=$(echo "$CON" | sed -n 's/^variant=full .*tasks_per_s=\([0-9]*\).*/\1/p' | head -1)
	CON_NORUN=${CON_NORUN:--} CON_FULL=${CON_FULL:--}
	say "contract: no-run $CON_NORUN, full $CON_FULL tasks/s"
fi

# tables_size PREFIX: what the tables of that prefix hold on disk
tables_size() {
	psql -X -At "$PG/$DB" -c "SELECT pg_size_pretty(sum(pg_total_relation_size(oid))) FROM pg_class WHERE relkind = 'r' AND left(relname, length('$1')) = '$1'" 2>/dev/null || echo -
}
# drains_on PREFIX LABEL WHAT: every c of C, RUNS times, on the tables of
# PREFIX as they are
drains_on() {
	local c r
	for c in $C; do
		for r in $(seq 1 "$RUNS"); do
			say "sked pg $3 c=$c run $r/$RUNS"
			run "$2-c$c" --db "$PG/$DB" bench --prefix "$1" \
				--tasks "$N" --batch "$N" --threads "$c" --latency-tasks 0
		done
	done
}

# ---- the pile-up: PILEUP tasks ended by sked itself, then again ----
PILE_SIZE=-
if [ "$PILEUP" -gt 0 ]; then
	fresh_pg
	say "sked pg: $PILEUP tasks through one table (prefix skpile_, $PILE_FILL_C threads)"
	run "pg-pile-fill" --db "$PG/$DB" bench --prefix skpile_ \
		--tasks "$PILEUP" --batch 20000 --threads "$PILE_FILL_C" \
		--latency-tasks 0 --timeout 60m
	PILE_SIZE=$(tables_size skpile_)
	say "sked pg: the pile-up's tables hold $PILE_SIZE"
	drains_on skpile_ pg-pile "after the pile-up"
fi

# ---- the backlog: BACKLOG tasks waiting for tomorrow, then drains ----
BACKLOG_SIZE=-
if [ "$BACKLOG" -gt 0 ]; then
	fresh_pg
	bconf=$(mktemp)
	printf '[sked]\nprefix = skwait_\n' >"$bconf"
	say "sked pg: $BACKLOG tasks delayed a day (prefix skwait_, queue cold)"
	"$SKED" --db "$PG/$DB" --config "$bconf" init >/dev/null
	seq 1 "$BACKLOG" | "$SKED" --db "$PG/$DB" --config "$bconf" \
		enqueue later --lines - --queue cold --in 1d >/dev/null
	rm -f "$bconf"
	# the state autovacuum leaves a table that has held them a while:
	# visibility map set, statistics that show them (a plan costed from
	# those statistics is what a worker meets in production)
	psql -X -q "$PG/$DB" -c "VACUUM ANALYZE skwait_task" >/dev/null
	BACKLOG_SIZE=$(tables_size skwait_)
	say "sked pg: the backlog's tables hold $BACKLOG_SIZE"
	drains_on skwait_ pg-backlog "beside the backlog"
fi
psql -X -q "$PG/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null || true

# ---- sked on SQLite ----
if [ "$SQLITE" = 1 ]; then
	T=$(mktemp -d)
	for c in $C; do
		for r in $(seq 1 "$RUNS"); do
			rm -f "$T"/b.db*
			lat=0
			[ "$c" = "$LAT_C" ] && lat=$LAT_N
			say "sked sqlite c=$c run $r/$RUNS"
			run "sqlite-c$c" --db "sqlite:$T/b.db" bench --tasks "$N" \
				--batch "$N" --threads "$c" --latency-tasks "$lat" \
				--rate "$LAT_RATE" --latency-threads "$LAT_C"
		done
	done
	# processes sharing one file: one of 16 threads against four of 4
	for r in $(seq 1 "$RUNS"); do
		for wt in 1x16 4x4; do
			rm -f "$T"/b.db*
			say "sked sqlite $wt run $r/$RUNS"
			run "sqlite-$wt" --db "sqlite:$T/b.db" bench --tasks "$N" \
				--batch "$N" --workers "${wt%x*}" --threads "${wt#*x}" \
				--latency-tasks 0
		done
	done
	rm -rf "$T"
fi

# ---- sked on MariaDB ----
MY_OK=0
MU="" MP="" MH="" MPORT="" MD=""
[ -n "$MY_URL" ] &&
	eval "$(echo "$MY_URL" | sed -E 's|mysql://([^:]*):([^@]*)@([^:/]*):([0-9]*)/(.*)|MU=\1 MP=\2 MH=\3 MPORT=\4 MD=\5|')"
my() { MYSQL_PWD=$MP mariadb --no-defaults -h "$MH" -P "$MPORT" -u "$MU" "$MD" "$@"; }
if [ -n "$MD" ] && my -e "SELECT 1" >/dev/null 2>&1; then
	MY_OK=1
	for c in $C; do
		for r in $(seq 1 "$RUNS"); do
			lat=0
			[ "$c" = "$LAT_C" ] && lat=$LAT_N
			say "sked mariadb c=$c run $r/$RUNS"
			run "mariadb-c$c" --db "$MY_URL" bench --tasks "$MY_N" \
				--batch "$MY_N" --threads "$c" --latency-tasks "$lat" \
				--rate "$LAT_RATE" --latency-threads "$LAT_C" --poll "$MY_POLL"
		done
	done
	# the bench leaves its tables (a fresh prefix each run): drop them all
	for p in $(jq -r 'select(.label|startswith("mariadb")) | .settings.prefix' "$JL"); do
		{
			echo "SET FOREIGN_KEY_CHECKS = 0;"
			my -N -e "SELECT CONCAT('DROP TABLE IF EXISTS \`', table_name, '\`;') FROM information_schema.tables WHERE table_schema = DATABASE() AND LEFT(table_name, LENGTH('$p')) = '$p'"
		} | my 2>/dev/null || true
	done
	[ -n "$(fig "mariadb-c$c1" .throughput.tasks_per_s | grep -v '^-$')" ] || MY_OK=0
else
	say "MariaDB at ${MY_URL:-(none)} not reachable (or no mariadb client): skipped"
fi

# ---- the table ----
peer() { # peer NAME TEST C FIELD from the peers' median lines
	[ -n "$PR" ] || { echo "-"; return; }
	grep "^peer=$1 test=$2 c=$3 " "$PR" | tr ' ' '\n' | sed -n "s/^$4=//p" | head -1 | grep . || echo "-"
}
peer_enq() { # the peers' median enqueue over their c=c1 throughput runs
	local f=${PR%.txt}.jsonl
	[ -f "$f" ] || { echo "-"; return; }
	jq -r --arg p "$1" --argjson c "$c1" 'select(.peer==$p and .test=="throughput" and (.discarded|not) and .c==$c) | .enqueue_jobs_per_s' "$f" 2>/dev/null | median
}
peer_ver() { # the version the harness's header names, if any
	[ -n "$PR" ] || return 0
	grep -m1 -o "$1[@ ][0-9][0-9.]*" "$PR" 2>/dev/null | head -1 | sed 's/.*[@ ]/ /' || true
}
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

sk1=$(fig "pg-c$c1" .throughput.tasks_per_s | r0)
sk2=$(fig "pg-c$c2" .throughput.tasks_per_s | r0)
pl1=$(fig "pg-pile-c$c1" .throughput.tasks_per_s | r0)
pl2=$(fig "pg-pile-c$c2" .throughput.tasks_per_s | r0)
bl1=$(fig "pg-backlog-c$c1" .throughput.tasks_per_s | r0)
bl2=$(fig "pg-backlog-c$c2" .throughput.tasks_per_s | r0)
gw1=$(peer graphile-worker throughput "$c1" jobs_per_s)
gw2=$(peer graphile-worker throughput "$c2" jobs_per_s)
rss=$(fig "pg-c$c2" .throughput.worker_max_rss_kb | r0)

echo
echo "sked $("$SKED" --version | awk '{print $2}') vs peers, PostgreSQL at $PG, N=$N, medians of $RUNS run(s)$([ "$QUICK" = 1 ] && echo ", QUICK mode: a try-out, not a measurement"), $(date -u +%FT%TZ), $(((SECONDS - T0) / 60)) min"
echo "peers results: ${PR:-none}; sked results: $JL"
echo
echo "| system | throughput c=$c1 (tasks/s) | throughput c=$c2 (tasks/s) | bulk enqueue (tasks/s) | latency p50 / p95 / p99 (ms) |"
echo "| --- | --- | --- | --- | --- |"
row_sked pg "**sked** (default worker, 1 process)"
for p in $PEERS; do
	echo "| $p$(peer_ver "$p") | $(peer "$p" throughput "$c1" jobs_per_s) | $(peer "$p" throughput "$c2" jobs_per_s) | $(peer_enq "$p" | r0) | $(peer "$p" latency "$LAT_C" p50_ms) / $(peer "$p" latency "$LAT_C" p95_ms) / $(peer "$p" latency "$LAT_C" p99_ms) |"
done
[ "$CEILING" = 1 ] &&
	echo "| raw SQL ceiling (\`ceiling.sh\`, no worker) | update in place $CEIL_U · delete + history $CEIL_D | | | |"
[ "$CONTRACT" = 1 ] &&
	echo "| SQL contract (\`contract.sh\`, no worker, $CONTRACT_CLIENTS clients) | no-run (what sked keeps) $CON_NORUN · full (a run row too) $CON_FULL | | | |"
[ "$PILEUP" -gt 0 ] &&
	echo "| sked after $PILEUP ended tasks ($PILE_SIZE of tables, no manual VACUUM) | $pl1 | $pl2 | | |"
[ "$BACKLOG" -gt 0 ] &&
	echo "| sked beside $BACKLOG tasks delayed a day ($BACKLOG_SIZE of tables) | $bl1 | $bl2 | | |"
[ "$SQLITE" = 1 ] && row_sked sqlite "sked on SQLite $(sqlite3 --version 2>/dev/null | awk '{print $1}') (1 process; default poll, woken by the WAL)"
[ "$MY_OK" = 1 ] && row_sked mariadb "sked on MariaDB (--poll $MY_POLL, N=$MY_N)"
echo
if [ "$SQLITE" = 1 ]; then
	a=$(fig sqlite-1x16 .throughput.tasks_per_s | r0)
	b=$(fig sqlite-4x4 .throughput.tasks_per_s | r0)
	echo "| SQLite, one file, N=$N | 1 process × 16 threads | 4 processes × 4 threads | 4×4 / 1×16 (target ≥ 1) |"
	echo "| --- | --- | --- | --- |"
	echo "| tasks/s | $a | $b | $(ratio "$b" "$a") |"
	echo
fi
echo "sked / graphile-worker: c=$c1 $(ratio "$sk1" "$gw1"), c=$c2 $(ratio "$sk2" "$gw2") (issue 41's target ≥ 1.6)"
if [ "$CEILING" = 1 ]; then
	best=$sk2
	[ "$sk1" != "-" ] && [ "$sk2" != "-" ] && [ "$sk1" -gt "$sk2" ] && best=$sk1
	echo "sked's best / ceiling: update $(ratio "$best" "$CEIL_U"), delete + history $(ratio "$best" "$CEIL_D") (target ≥ 0.8 for sked's finish style)"
fi
if [ "$CONTRACT" = 1 ]; then
	best=$sk2
	[ "$sk1" != "-" ] && [ "$sk2" != "-" ] && [ "$sk1" -gt "$sk2" ] && best=$sk1
	echo "sked's best / contract.sh no-run (the variant that keeps what sked keeps): $(ratio "$best" "$CON_NORUN") (issue 41's target ≥ 0.6)"
fi
[ "$PILEUP" -gt 0 ] &&
	echo "after $PILEUP ended tasks / fresh table: c=$c1 $(ratio "$pl1" "$sk1"), c=$c2 $(ratio "$pl2" "$sk2") (target ≥ 0.95)"
[ "$BACKLOG" -gt 0 ] &&
	echo "beside $BACKLOG delayed tasks / fresh table: c=$c1 $(ratio "$bl1" "$sk1"), c=$c2 $(ratio "$bl2" "$sk2") (target ≥ 0.95)"
if [ "$MY_OK" = 1 ]; then
	m1=$(fig "mariadb-c$c1" .throughput.tasks_per_s | r0)
	m2=$(fig "mariadb-c$c2" .throughput.tasks_per_s | r0)
	echo "MariaDB / issue 10's baseline (3535, 10166): c=$c1 $(ratio "$m1" 3535), c=$c2 $(ratio "$m2" 10166) (target ≥ 3)"
fi
cpu_split() { # LABEL: the median CPU split of its runs, and how long the server waited
	echo "worker $(fig "$1" .throughput.worker_cpu_pct | r0)%, server $(fig "$1" '(.throughput.server_cpu_pct // "-")' | r0)%, other $(fig "$1" 'if .throughput.server_cpu_pct then .throughput.machine_cpu_pct - .throughput.worker_cpu_pct - .throughput.server_cpu_pct else "-" end' | r0)% of the machine; the server waiting for the worker $(fig "$1" '(.throughput.server_waits_pct // "-")' | r0)% of the drain"
}
for l in $(jq -r .label "$JL" | awk '!seen[$0]++'); do
	echo "CPU during the drain, $l (medians): $(cpu_split "$l")"
done
echo "worker RSS, $c2 slots (PostgreSQL): $([ "$rss" = - ] && echo - || awk -v k="$rss" 'BEGIN{printf "%.1f MB", k / 1024}') (target < 16 MB)"
