#!/bin/sh
# scripts/test-servers.sh — private PostgreSQL and MariaDB servers for tests.
#
#   scripts/test-servers.sh start [pg|mariadb|pgbouncer]...
#                                   start (default: all three)
#   scripts/test-servers.sh stop    stop them all
#   scripts/test-servers.sh env     print the URLs as exports
#
# pgbouncer is PgBouncer in transaction pooling in front of the pg server
# (the `pgbouncer` test backend); it needs pg.
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
PGB_PORT=${SKED_TEST_PGB_PORT:-56432}
PGB_URL="postgres://postgres@127.0.0.1:$PGB_PORT/sked_test?sked_pooling=transaction"

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

# PgBouncer 1.18 in transaction pooling: a server session per
# transaction, so nothing a session holds survives between transactions.
start_pgbouncer() {
	command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] ||
		{ echo "test-servers: PgBouncer is not installed" >&2; return 1; }
	pgb=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)
	d="$DIR/pgbouncer"
	mkdir -p "$d"
	chmod 755 "$DIR" "$d"
	[ "$(id -u)" = 0 ] && chown postgres "$d"
	cat >"$d/pgbouncer.ini" <<INI
[databases]
* = host=127.0.0.1 port=$PG_PORT
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $PGB_PORT
unix_socket_dir = $d
auth_type = trust
auth_file = $d/users.txt
admin_users = postgres
pool_mode = transaction
max_client_conn = 2000
default_pool_size = 40
max_db_connections = 80
server_reset_query =
logfile = $d/pgbouncer.log
pidfile = $d/pgbouncer.pid
INI
	echo '"postgres" ""' >"$d/users.txt"
	if [ -f "$d/pgbouncer.pid" ] && kill -0 "$(cat "$d/pgbouncer.pid")" 2>/dev/null; then
		:
	else
		rm -f "$d/pgbouncer.pid"
		as_pg "$pgb" -d "$d/pgbouncer.ini" >"$d/start.log" 2>&1 || {
			echo "test-servers: PgBouncer did not start: $(tail -n 1 "$d/start.log")" >&2
			return 1
		}
	fi
	i=0
	until psql -X -q -At "postgres://postgres@127.0.0.1:$PGB_PORT/sked_test" \
		-c 'SELECT 1' >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 60 ] || { echo "test-servers: PgBouncer does not answer; see $d/pgbouncer.log" >&2; return 1; }
		sleep 0.5
	done
	echo "test-servers: PgBouncer (transaction pooling) up on 127.0.0.1:$PGB_PORT" >&2
}

stop_pgbouncer() {
	f="$DIR/pgbouncer/pgbouncer.pid"
	[ -f "$f" ] || return 0
	kill "$(cat "$f")" 2>/dev/null || true
}

my_admin() {
	mariadb-admin --no-defaults --socket="$DIR/my/sock" -uroot "$@"
}

start_mariadb() {
	command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] ||
		{ echo "test-servers: MariaDB is not installed" >&2; return 1; }
	# a tmpdir of its own: a starting mariadbd deletes "#sql*" files in
	# its tmpdir, and the tests start servers of their own
	mkdir -p "$DIR/my/tmp"
	user=$(id -un)
	if [ ! -d "$DIR/my/data/mysql" ]; then
		mariadb-install-db --no-defaults --datadir="$DIR/my/data" \
			--tmpdir="$DIR/my/tmp" --user="$user" --auth-root-authentication-method=normal \
			--skip-test-db >"$DIR/my/install.log" 2>&1
	fi
	if ! my_admin ping >/dev/null 2>&1; then
		/usr/sbin/mariadbd --no-defaults --datadir="$DIR/my/data" \
			--socket="$DIR/my/sock" --tmpdir="$DIR/my/tmp" --port="$MY_PORT" \
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
		GRANT ALL ON *.* TO 'sked'@'127.0.0.1' WITH GRANT OPTION;
		GRANT ALL ON *.* TO 'sked'@'localhost' WITH GRANT OPTION;"
	echo "test-servers: MariaDB up on 127.0.0.1:$MY_PORT" >&2
}

stop_mariadb() {
	[ -S "$DIR/my/sock" ] || return 0
	my_admin shutdown >/dev/null 2>&1 || true
}

cmd=${1:-}
[ $# -gt 0 ] && shift
which=${*:-pg mariadb pgbouncer}
case "$cmd" in
start)
	for s in $which; do
		case "$s" in
		pg) start_pg ;;
		mariadb) start_mariadb ;;
		pgbouncer) start_pgbouncer ;;
		*) echo "test-servers: unknown server '$s'" >&2; exit 64 ;;
		esac
	done
	;;
stop)
	stop_pgbouncer
	stop_pg
	stop_mariadb
	;;
env)
	echo "export SKED_TEST_PG_URL='$PG_URL'"
	echo "export SKED_TEST_MY_URL='$MY_URL'"
	echo "export SKED_TEST_PGB_URL='$PGB_URL'"
	echo "export SKED_TEST_DIR='$DIR'"
	;;
*)
	echo "usage: $0 start [pg|mariadb|pgbouncer]... | stop | env" >&2
	exit 64
	;;
esac
