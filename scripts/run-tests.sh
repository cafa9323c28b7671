#!/bin/sh
# scripts/run-tests.sh BUILD [ASAN_BUILD [TSAN_BUILD]] — the whole suite.
#
# Starts the private database servers (scripts/test-servers.sh: PostgreSQL,
# MariaDB, PgBouncer in front of that PostgreSQL), sets up the ODBC
# drivers (scripts/odbc-setup.sh, where present), runs every test of BUILD
# against every backend (the failover, chaos and Galera tests start
# servers of their own), then the unit tests and the SQLite integration
# tests of the ASan build, the unit tests and a contention test on SQLite
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
# under ASan/UBSan, every unit test and the SQLite integration tests but
# those that are long by design and whose code the others run too: the
# contention and lanes drains (ThreadSanitizer runs them below), the
# windowed pipe: timings, the slow and hostile clients' soaks (their
# address-space cap means nothing beside ASan's shadow memory), the
# leader's take-overs and the per-second schedules
asan_skip='^sqlite/t_(contention|lanes|pipe_mux|hostile_soak|slow_clients|leader|cron_exactly_once|nodes)$'
status=0
echo "== tests: $build"
ctest --test-dir "$build" --output-on-failure -j "$jobs" || status=1
if [ -n "$asan" ]; then
	echo "== tests under AddressSanitizer/UBSan: $asan"
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --test-dir "$asan" --output-on-failure -j "$jobs" \
		-R '^(unit/|sqlite/)' -E "$asan_skip" || status=1
fi
if [ -n "$tsan" ]; then
	echo "== tests under ThreadSanitizer: $tsan"
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
		ctest --test-dir "$tsan" --output-on-failure -j "$jobs" \
		-R '^(unit/|sqlite/t_(contention|lanes|handler_escape|poison_results)$|pg/t_contention$)' || status=1
fi
exit $status
