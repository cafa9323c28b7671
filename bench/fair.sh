#!/usr/bin/env bash
# bench/fair.sh — what a fair queue buys a small tenant behind a big one,
# and what it costs a drain, fair against unfair in one session.
#
# Layer: a script around `sked` (enqueue --lines, queue set --fair, worker
# --builtin-noop: the bench's in-process no-op handler, so the drain
# measures the claim, not handler processes) and the database's own
# client, which reads the start times sked recorded on the ended rows.
#
# For each mode (unfair, fair), on fresh tables (a prefix of its own):
# BIG tasks of concurrency key "big", then SMALL of key "small", in one
# queue; then W workers of T threads drain it (--until-empty). Printed:
#   ahead     tasks of the big tenant started before the small tenant's
#             first (by started_at)
#   first_ms  ms from the drain's first start to the small tenant's first
#   last_ms   the same to its last
#   drain_s   wall time of the drain (workers started to all exited)
#   tasks/s   (BIG + SMALL) / drain_s
#
#   DB=postgres://… bench/fair.sh      # PostgreSQL (psql)
#   DB=sqlite:/tmp/f.db bench/fair.sh  # SQLite (sqlite3)
#   DB=mysql://… bench/fair.sh         # MariaDB/MySQL (mysql)
# Variables: SKED (build/sked), BIG (100000), SMALL (10), W (2), T (10),
# RUNS (1: each mode RUNS times, alternating), MODES ("unfair fair"; also
# "limited": a queue with a concurrency limit it never reaches, which takes
# the same limited claim path as a fair one without the fair order).
set -euo pipefail
SKED=${SKED:-build/sked}
DB=${DB:?set DB to a database URL}
BIG=${BIG:-100000}
SMALL=${SMALL:-10}
W=${W:-2}
T=${T:-10}
RUNS=${RUNS:-1}
MODES=${MODES:-unfair fair}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sql() { # one query, one tab-separated row out
	case $DB in
	postgres*) psql -X -q -t -A -F $'\t' "$DB" -c "$1" ;;
	sqlite*)
		f=${DB#sqlite:}
		f=${f#//}
		sqlite3 -separator $'\t' "$f" "$1"
		;;
	mysql* | mariadb*)
		u=${DB#*://}
		cred=${u%%@*}
		hp=${u#*@}
		hp=${hp%%/*}
		db=${u##*/}
		db=${db%%\?*}
		mysql -N -B -u "${cred%%:*}" -p"${cred#*:}" -h "${hp%%:*}" \
			-P "${hp##*:}" "$db" -e "$1" 2>/dev/null
		;;
	esac
}
ms() { # a timestamp column as epoch ms in this database
	case $DB in
	postgres*) echo "(extract(epoch from $1) * 1000)::bigint" ;;
	sqlite*) echo "$1" ;; # sked stores epoch ms on SQLite
	*) echo "CAST(unix_timestamp($1) * 1000 AS SIGNED)" ;;
	esac
}

lines() { awk -v w="$1" -v n="$2" 'BEGIN { for (i = 0; i < n; i++) print w }'; }

one() {
	mode=$1
	p="fb${mode:0:1}$$_${2}_"
	printf '[sked]\nprefix = %s\n' "$p" >"$tmp/cfg"
	s() { "$SKED" --db "$DB" --config "$tmp/cfg" "$@"; }
	s init >/dev/null
	case $mode in
	fair) s queue set t --fair on >/dev/null ;;
	limited) s queue set t --concurrency 1000000 >/dev/null ;;
	esac
	lines big "$BIG" | s enqueue job --queue t --concurrency-key big \
		--lines - >/dev/null
	lines small "$SMALL" | s enqueue job --queue t \
		--concurrency-key small --lines - >/dev/null
	t0=$(date +%s%N)
	pids=()
	for i in $(seq 1 "$W"); do
		s worker --node-id "b$i" --concurrency "$T" --builtin-noop job \
			--until-empty >"$tmp/w$i.log" 2>&1 &
		pids+=($!)
	done
	for q in "${pids[@]}"; do wait "$q"; done
	t1=$(date +%s%N)
	st=$(ms started_at)
	row=$(sql "SELECT (SELECT COUNT(*) FROM ${p}task_done WHERE concurrency_key = 'big' AND $st < (SELECT MIN($st) FROM ${p}task_done WHERE concurrency_key = 'small')), (SELECT MIN($st) FROM ${p}task_done WHERE concurrency_key = 'small') - (SELECT MIN($st) FROM ${p}task_done), (SELECT MAX($st) FROM ${p}task_done WHERE concurrency_key = 'small') - (SELECT MIN($st) FROM ${p}task_done), (SELECT COUNT(*) FROM ${p}task_done WHERE status = 2)")
	read -r ahead first last done <<<"$row"
	drain=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
	rate=$(awk -v n="$((BIG + SMALL))" -v d="$drain" 'BEGIN { printf "%.0f", n / d }')
	printf '%-7s %8s %9s %9s %8s %8s %9s\n' "$mode" "$ahead" "$first" \
		"$last" "$drain" "$rate" "$done"
}

echo "# BIG=$BIG SMALL=$SMALL W=$W T=$T on ${DB%%:*}"
printf '%-7s %8s %9s %9s %8s %8s %9s\n' mode ahead first_ms last_ms drain_s \
	tasks/s succeeded
for r in $(seq 1 "$RUNS"); do
	for m in $MODES; do one "$m" "$r"; done
done
