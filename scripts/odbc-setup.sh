#!/bin/sh
# scripts/odbc-setup.sh — ODBC drivers for the odbc-* test backends.
#
# Prints `export …` lines (and nothing else) on stdout for
# scripts/run-tests.sh to eval:
#   SKED_TEST_ODBC=1                 when unixODBC is usable
#   SKED_TEST_ODBC_SQLITE_DRIVER     the registered SQLite 3 driver name
#   SKED_TEST_ODBC_PG                a psqlODBC connection string for the
#                                    private PostgreSQL server
#   SKED_TEST_ODBC_MY                a MariaDB Connector/ODBC connection
#                                    string for the private MariaDB server
# A driver that is not installed leaves its export out (the backend then
# skips, and fails in CI). A driver whose library is installed but not
# registered in odbcinst.ini is registered with odbcinst (needs write
# access to it; otherwise it is reported and left out). Safe to run again:
# a registered driver is left as it is. Diagnostics go to stderr.
#
# Ports and passwords follow scripts/test-servers.sh.
set -u

PG_PORT=${SKED_TEST_PG_PORT:-55433}
MY_PORT=${SKED_TEST_MY_PORT:-53307}

say() { echo "odbc-setup: $*" >&2; }

command -v odbcinst >/dev/null 2>&1 || {
	say "unixODBC's odbcinst is not installed: no ODBC backends"
	exit 0
}

# The driver folder unixODBC packages use on this machine.
libdirs="/usr/lib/$(uname -m)-linux-gnu/odbc /usr/lib/odbc /usr/lib64 /usr/local/lib"

find_lib() {
	for d in $libdirs; do
		[ -e "$d/$1" ] && { echo "$d/$1"; return 0; }
	done
	return 1
}

registered() {
	odbcinst -q -d 2>/dev/null | tr -d '[]' | grep -qx "$1"
}

# ensure NAME LIBRARY: print NAME when the driver is (or becomes)
# registered with an installed library.
ensure() {
	name=$1 lib=$2
	if registered "$name"; then
		echo "$name"
		return 0
	fi
	path=$(find_lib "$lib") || { say "driver '$name' ($lib) is not installed"; return 1; }
	tmp=$(mktemp)
	printf '[%s]\nDescription=%s (registered by sked odbc-setup)\nDriver=%s\n' \
		"$name" "$name" "$path" >"$tmp"
	if odbcinst -i -d -f "$tmp" >/dev/null 2>&1; then
		say "registered driver '$name' ($path)"
		rm -f "$tmp"
		echo "$name"
		return 0
	fi
	rm -f "$tmp"
	say "cannot register driver '$name' (no write access to $(odbcinst -j 2>/dev/null | sed -n 's/^DRIVERS\.*: //p'))"
	return 1
}

any=0
if lite=$(ensure SQLite3 libsqlite3odbc.so); then
	echo "export SKED_TEST_ODBC_SQLITE_DRIVER='$lite'"
	any=1
fi
if pgd=$(ensure "PostgreSQL Unicode" psqlodbcw.so); then
	# UseServerSidePrepare: statements are prepared once on the server.
	echo "export SKED_TEST_ODBC_PG='Driver={$pgd};Server=127.0.0.1;Port=$PG_PORT;Database=sked_test;Uid=postgres;Pwd=;UseServerSidePrepare=1'"
	any=1
fi
if myd=$(ensure "MariaDB Unicode" libmaodbc.so); then
	echo "export SKED_TEST_ODBC_MY='Driver={$myd};Server=127.0.0.1;Port=$MY_PORT;Database=sked_test;Uid=sked;Pwd=sked-test-pw;Charset=utf8mb4'"
	any=1
fi
if [ $any = 1 ]; then
	echo "export SKED_TEST_ODBC=1"
else
	say "no ODBC driver available"
fi
