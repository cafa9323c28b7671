#!/bin/sh
# scripts/repeat-tests.sh N [BUILD ASAN_BUILD TSAN_BUILD] — the whole suite
# (scripts/run-tests.sh: every backend, then the sanitizer builds) N times
# in a row on the builds as they are, to find tests that fail only now and
# then. It does not build: run `make build asan tsan` first, and do not
# rebuild while it runs. Each run's output goes to $REPEAT_DIR/runK.log
# (default repeat-tests/), one line per run to $REPEAT_DIR/summary.txt,
# and a failing run's failed tests are listed there. It goes on after a
# failure (the count of runs in a row that passed is what it reports);
# REPEAT_STOP=1 stops at the first. SKED_TEST_JOBS is passed on.
set -u
n=${1:?usage: repeat-tests.sh N [BUILD ASAN_BUILD TSAN_BUILD]}
build=${2:-build}
asan=${3:-build-asan}
tsan=${4:-build-tsan}
here=$(cd "$(dirname "$0")" && pwd)
out=${REPEAT_DIR:-repeat-tests}
mkdir -p "$out"
commit=$(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo '?')
echo "# $(date -u +%FT%TZ) $n runs of $commit, SKED_TEST_JOBS=${SKED_TEST_JOBS:-2}" >>"$out/summary.txt"
streak=0
best=0
i=1
while [ "$i" -le "$n" ]; do
	t0=$(date +%s)
	sh "$here/run-tests.sh" "$build" "$asan" "$tsan" >"$out/run$i.log" 2>&1
	rc=$?
	secs=$(($(date +%s) - t0))
	if [ "$rc" = 0 ]; then
		streak=$((streak + 1))
		[ "$streak" -gt "$best" ] && best=$streak
		echo "run $i: passed in ${secs}s ($streak in a row)" >>"$out/summary.txt"
	else
		streak=0
		failed=$(grep -E '^[[:space:]]+[0-9]+ - .*\((Failed|Timeout|Exception|SEGFAULT|Not Run)\)' "$out/run$i.log" |
			sed 's/^[[:space:]]*[0-9]* - //' | tr '\n' ' ')
		echo "run $i: FAILED in ${secs}s: ${failed:-see run$i.log}" >>"$out/summary.txt"
		[ "${REPEAT_STOP:-0}" = 1 ] && break
	fi
	i=$((i + 1))
done
echo "# longest streak: $best of $((i > n ? n : i)) run(s)" >>"$out/summary.txt"
tail -n 1 "$out/summary.txt"
[ "$streak" = "$n" ]
