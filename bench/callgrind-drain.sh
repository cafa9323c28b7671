#!/bin/sh
# bench/callgrind-drain.sh — a worker's instructions per no-op task, by
# callgrind, for one sked binary and one backend.
#
# Layer: a benchmark helper (not run by the tests). For each N in $NS it
# makes a fresh SQLite file (or, for another backend, a fresh table prefix
# on $DB), enqueues N no-op tasks in one transaction (`enqueue --lines`),
# then drains them with one `sked worker --builtin-noop … --until-empty`
# under `valgrind --tool=callgrind`, and prints the whole process's
# instruction count. The slope between the smallest and largest N is the
# cost of a task with start-up taken out; callgrind gives the same count
# for the same binary and input however loaded the machine is, so builds
# can be compared across sessions (docs/performance.md, "SQLite's
# instructions per task").
#
#   bench/callgrind-drain.sh [SKED] [DB]
#   SKED=build/sked DB=sqlite:/tmp/cg.db NS="2000 6000" bench/callgrind-drain.sh
#
# SKED   the binary (default build/sked)
# DB     sqlite:PATH (default sqlite:/tmp/sked-cg-$$.db; the file and its
#        -wal/-shm are removed before each run) or a server URL (each
#        run then uses its own prefix cgN_RANDOM_)
# NS     the task counts (default "2000 6000")
# CONC   the worker's --concurrency (default 10)
# KEEP   a folder to keep the callgrind outputs in (cg-N.out), for
#        callgrind_annotate; default: a temporary folder, removed
# EXTRA  more arguments for the worker (e.g. "--prefetch off")
set -eu

SKED=${1:-${SKED:-build/sked}}
DB=${2:-${DB:-sqlite:/tmp/sked-cg-$$.db}}
NS=${NS:-2000 6000}
CONC=${CONC:-10}
EXTRA=${EXTRA:-}

command -v valgrind >/dev/null 2>&1 || {
	echo "callgrind-drain.sh: valgrind is not installed" >&2
	exit 69
}
[ -x "$SKED" ] || {
	echo "callgrind-drain.sh: no sked binary at '$SKED'" >&2
	exit 66
}

if [ -n "${KEEP:-}" ]; then
	OUT=$KEEP
	mkdir -p "$OUT"
else
	OUT=$(mktemp -d /tmp/sked-cg.XXXXXX)
	trap 'rm -rf "$OUT"' EXIT
fi

case $DB in
sqlite:*) FILE=${DB#sqlite:} ;;
*) FILE= ;;
esac

first_n='' first_ir='' last_n='' last_ir=''
for n in $NS; do
	if [ -n "$FILE" ]; then
		rm -f "$FILE" "$FILE-wal" "$FILE-shm"
	fi
	# a table prefix of the run's own, in a config file (the prefix is
	# a setting, not a flag)
	printf '[sked]\ndatabase = %s\nprefix = cg%s_%s_\n' "$DB" "$n" \
		"$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')" >"$OUT/sked-$n.conf"
	SKED_CONFIG=$OUT/sked-$n.conf
	export SKED_CONFIG
	"$SKED" init >"$OUT/init-$n.log" 2>&1 || {
		echo "callgrind-drain.sh: sked init failed for N=$n:" >&2
		cat "$OUT/init-$n.log" >&2
		exit 70
	}
	seq 1 "$n" | "$SKED" enqueue bench.noop --queue bench --lines - >/dev/null
	# EXTRA is split on blanks on purpose
	# shellcheck disable=SC2086
	valgrind --tool=callgrind --callgrind-out-file="$OUT/cg-$n.out" \
		"$SKED" worker --builtin-noop bench.noop --queues bench \
		--concurrency "$CONC" --until-empty $EXTRA \
		>"$OUT/worker-$n.log" 2>&1 || {
		echo "callgrind-drain.sh: the worker failed for N=$n:" >&2
		tail -5 "$OUT/worker-$n.log" >&2
		exit 70
	}
	# every task must have run once and succeeded, or the count means
	# something else
	grep -q "stopped: $n claimed, $n succeeded" "$OUT/worker-$n.log" || {
		echo "callgrind-drain.sh: N=$n did not drain cleanly:" >&2
		grep 'stopped' "$OUT/worker-$n.log" >&2 || tail -3 "$OUT/worker-$n.log" >&2
		exit 70
	}
	ir=$(sed -n 's/^summary: *//p' "$OUT/cg-$n.out")
	printf 'N=%s instructions=%s per-task(whole run)=%s\n' "$n" "$ir" \
		$((ir / n))
	[ -n "$first_n" ] || { first_n=$n first_ir=$ir; }
	last_n=$n last_ir=$ir
	[ -z "$FILE" ] || rm -f "$FILE" "$FILE-wal" "$FILE-shm"
done
if [ "$last_n" != "$first_n" ]; then
	printf 'slope: %s instructions/task (N %s..%s)\n' \
		$(((last_ir - first_ir) / (last_n - first_n))) "$first_n" "$last_n"
fi
