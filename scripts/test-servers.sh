#!/bin/sh
# scripts/test-servers.sh — private PostgreSQL and MariaDB servers for tests.
#
#   scripts/test-servers.sh start [pg|mariadb]...   start (default: both)
#   scripts/test-servers.sh stop                    stop both
#   scripts/test-servers.sh env                     print the URLs as exports
#
# Each server is a local instance on loopback with its own data folder,
# port and socket under $SKED_TEST_DIR (default: .sked-test in the
# current folder), so it never touches a system instance. Data survives a
# stop; `rm -rf .sked-test` starts afresh.
set -eu

# The servers' folder: .sked-test here, unless PostgreSQL's own user (we
# run initdb as 'postgres' when root) cannot reach this folder; then a
# folder of our own under /tmp.
default_dir() {
	if [ "$(id -u)" = 0 ] && id postgres >/dev/null 2>&1 &&
		! runuser -u postgres -- test -x "$PWD" 2>/dev/null; then
		echo "/tmp/sked-test-$(printf '%s' "$PWD" | cksum | cut -d' ' -f1)"
	else
		echo "$PWD/.sked-test"
	fi
}
DIR=${SKED_TEST_DIR:-$(default_dir)}
PG_PORT=${SKED_TEST_PG_PORT:-55433}
MY_PORT=${SKED_TEST_MY_PORT:-53307}
PG_URL="postgres://postgres@127.0.0.1:$PG_PORT/sked_test"
MY_URL="mysql://sked:sked-test-pw@127.0.0.1:$MY_PORT/sked_test"

as_pg() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

pg_bin() {
	ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

start_pg() {
	bin=$(pg_bin)
	[ -n "$bin" ] || { echo "test-servers: PostgreSQL is not installed" >&2; return 1; }
	mkdir -p "$DIR/pg"
	chmod 755 "$DIR" "$DIR/pg"
	[ "$(id -u)" = 0 ] && chown postgres "$DIR/pg"
	if [ ! -f "$DIR/pg/data/PG_VERSION" ]; then
		as_pg "$bin/initdb" -D "$DIR/pg/data" -A trust -U postgres \
			--locale=C -E UTF8 >"$DIR/pg/initdb.log" 2>&1
	fi
	if ! as_pg "$bin/pg_ctl" -D "$DIR/pg/data" status >/dev/null 2>&1; then
		as_pg "$bin/pg_ctl" -D "$DIR/pg/data" -l "$DIR/pg/server.log" -w \
			-t 60 -o "-c listen_addresses=127.0.0.1 -p $PG_PORT \
			-k $DIR/pg -c max_connections=300" start >/dev/null
	fi
	"$bin/psql" -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres \
		-tAc "SELECT 1 FROM pg_database WHERE datname = 'sked_test'" |
		grep -q 1 ||
		"$bin/psql" -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres \
			-c "CREATE DATABASE sked_test"
	echo "test-servers: PostgreSQL up on 127.0.0.1:$PG_PORT" >&2
}

stop_pg() {
	bin=$(pg_bin)
	[ -n "$bin" ] && [ -f "$DIR/pg/data/PG_VERSION" ] || return 0
	as_pg "$bin/pg_ctl" -D "$DIR/pg/data" -m fast -w stop >/dev/null 2>&1 || true
}

my_admin() {
	mariadb-admin --no-defaults --socket="$DIR/my/sock" -uroot "$@"
}

start_mariadb() {
	command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] ||
		{ echo "test-servers: MariaDB is not installed" >&2; return 1; }
	mkdir -p "$DIR/my"
	user=$(id -un)
	if [ ! -d "$DIR/my/data/mysql" ]; then
		mariadb-install-db --no-defaults --datadir="$DIR/my/data" \
			--user="$user" --auth-root-authentication-method=normal \
			--skip-test-db >"$DIR/my/install.log" 2>&1
	fi
	if ! my_admin ping >/dev/null 2>&1; then
		/usr/sbin/mariadbd --no-defaults --datadir="$DIR/my/data" \
			--socket="$DIR/my/sock" --port="$MY_PORT" \
			--bind-address=127.0.0.1 --pid-file="$DIR/my/pid" \
			--user="$user" --max-connections=300 \
			--innodb-buffer-pool-size=256M \
			--log-error="$DIR/my/server.log" >/dev/null 2>&1 &
		i=0
		until my_admin ping >/dev/null 2>&1; do
			i=$((i + 1))
			[ $i -lt 120 ] || { echo "test-servers: MariaDB did not start; see $DIR/my/server.log" >&2; return 1; }
			sleep 0.5
		done
	fi
	mariadb --no-defaults --socket="$DIR/my/sock" -uroot -e "
		CREATE DATABASE IF NOT EXISTS sked_test CHARACTER SET utf8mb4;
		CREATE USER IF NOT EXISTS 'sked'@'127.0.0.1' IDENTIFIED BY 'sked-test-pw';
		CREATE USER IF NOT EXISTS 'sked'@'localhost' IDENTIFIED BY 'sked-test-pw';
		GRANT ALL ON *.* TO 'sked'@'127.0.0.1';
		GRANT ALL ON *.* TO 'sked'@'localhost';"
	echo "test-servers: MariaDB up on 127.0.0.1:$MY_PORT" >&2
}

stop_mariadb() {
	[ -S "$DIR/my/sock" ] || return 0
	my_admin shutdown >/dev/null 2>&1 || true
}

cmd=${1:-}
[ $# -gt 0 ] && shift
which=${*:-pg mariadb}
case "$cmd" in
start)
	for s in $which; do
		case "$s" in
		pg) start_pg ;;
		mariadb) start_mariadb ;;
		*) echo "test-servers: unknown server '$s'" >&2; exit 64 ;;
		esac
	done
	;;
stop)
	stop_pg
	stop_mariadb
	;;
env)
	echo "export SKED_TEST_PG_URL='$PG_URL'"
	echo "export SKED_TEST_MY_URL='$MY_URL'"
	echo "export SKED_TEST_DIR='$DIR'"
	;;
*)
	echo "usage: $0 start [pg|mariadb]... | stop | env" >&2
	exit 64
	;;
esac
