#!/bin/sh
# scripts/run-tests.sh BUILD [ASAN_BUILD [TSAN_BUILD]] — the whole suite.
#
# Starts the private database servers (scripts/test-servers.sh: PostgreSQL,
# MariaDB, PgBouncer in front of that PostgreSQL), sets up the ODBC
# drivers (scripts/odbc-setup.sh, where present), runs every test of BUILD
# against every backend (the failover, chaos and Galera tests start
# servers of their own) but the SQLite tests the ASan pass runs, then
# the unit tests and the SQLite integration tests of the ASan build, the unit tests and a contention test on SQLite
# and PostgreSQL and a few SQLite tests of worker threads and signals of
# the TSan build, and stops the servers.
set -eu
build=${1:-build}
asan=${2:-}
tsan=${3:-}
here=$(cd "$(dirname "$0")" && pwd)

trap 'sh "$here/test-servers.sh" stop' EXIT
sh "$here/test-servers.sh" start || {
	echo "run-tests: the test servers did not start (see above); no test was run" >&2
	exit 1
}
eval "$(sh "$here/test-servers.sh" env)"
if [ -f "$here/odbc-setup.sh" ]; then
	eval "$(sh "$here/odbc-setup.sh")"
fi

jobs=${SKED_TEST_JOBS:-4}
# under ASan/UBSan, every unit test, every fuzz target's seed corpus
# (UBSan found an overflow in the wake-up corpus that the plain replay
# passes) and the SQLite integration tests but those that are long by
# design and whose code the others run too: the
# contention and lanes drains (ThreadSanitizer runs them below), the
# windowed pipe: timings, the slow and hostile clients' soaks (their
# address-space cap means nothing beside ASan's shadow memory), the
# leader's take-overs and the per-second schedules
asan_skip='^sqlite/t_(contention|lanes|pipe_mux|hostile_soak|slow_clients|leader|cron_exactly_once|nodes)$'
# The SQLite integration tests that the ASan pass runs run only there:
# a test that passes under ASan/UBSan passes on its own, and running it
# twice cost about 5 of the suite's minutes. The other backends, and the
# SQLite tests ASan leaves out, run on the release build.
once=""
if [ -n "$asan" ]; then
	once=$(ctest --test-dir "$build" -N -R '^sqlite/' |
		sed -n 's/^ *Test *#[0-9]*: *\(sqlite\/[^ ]*\)$/\1/p' |
		grep -Ev "$asan_skip" | paste -sd'|' -)
fi
status=0
echo "== tests: $build"
if [ -n "$once" ]; then
	echo "(the SQLite tests of the ASan pass run there only)"
	ctest --test-dir "$build" --output-on-failure -j "$jobs" \
		-E "^($once)\$" || status=1
else
	ctest --test-dir "$build" --output-on-failure -j "$jobs" || status=1
fi
if [ -n "$asan" ]; then
	echo "== tests under AddressSanitizer/UBSan: $asan"
	SKED_TEST_SANITIZER=asan ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --test-dir "$asan" --output-on-failure -j "$jobs" \
		-R '^(unit/|sqlite/|fuzz/)' -E "$asan_skip" || status=1
fi
if [ -n "$tsan" ]; then
	echo "== tests under ThreadSanitizer: $tsan"
	# pg/t_lanes: SQLite runs one lane, so only a server runs the lane
	# threads and the room they share
	SKED_TEST_SANITIZER=tsan TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
		ctest --test-dir "$tsan" --output-on-failure -j "$jobs" \
		-R '^(unit/|sqlite/t_(contention|lanes|handler_escape|poison_results)$|pg/t_(contention|lanes)$)' || status=1
fi
exit $status
