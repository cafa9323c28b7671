#!/bin/sh
# scripts/run-tests.sh BUILD [ASAN_BUILD] — the whole suite.
#
# Starts the private database servers (scripts/test-servers.sh), sets up
# the ODBC drivers (scripts/odbc-setup.sh, where present), runs every test
# of BUILD against every backend, then the unit tests and the SQLite
# integration tests of the sanitizer build, and stops the servers.
set -eu
build=${1:-build}
asan=${2:-}
here=$(cd "$(dirname "$0")" && pwd)

sh "$here/test-servers.sh" start
trap 'sh "$here/test-servers.sh" stop' EXIT
eval "$(sh "$here/test-servers.sh" env)"
if [ -f "$here/odbc-setup.sh" ]; then
	eval "$(sh "$here/odbc-setup.sh")"
fi

jobs=${SKED_TEST_JOBS:-2}
status=0
echo "== tests: $build"
ctest --test-dir "$build" --output-on-failure -j "$jobs" || status=1
if [ -n "$asan" ]; then
	echo "== tests under AddressSanitizer/UBSan: $asan"
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --test-dir "$asan" --output-on-failure -j "$jobs" \
		-R '^(unit/|sqlite/)' || status=1
fi
exit $status
