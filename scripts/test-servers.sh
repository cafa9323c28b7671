#!/bin/sh
# scripts/test-servers.sh — private PostgreSQL and MariaDB servers for tests.
#
# Layer: test tooling, a command over scripts/serverlib.sh (the one
# server-starter library, shared with tests/integration/servers.sh).
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

here=$(cd "$(dirname "$0")" && pwd)
. "$here/serverlib.sh"

start_pg() {
	mkdir -p "$DIR"
	chmod 755 "$DIR"
	sv_pg_init "$DIR/pg" || return 1
	if ! sv_pg_running "$DIR/pg"; then
		sv_pg_start "$DIR/pg" "$PG_PORT" -c max_connections=300 || return 1
	fi
	sv_pg_createdb "$PG_PORT" sked_test
	echo "test-servers: PostgreSQL up on 127.0.0.1:$PG_PORT" >&2
}

stop_pg() { sv_pg_stop "$DIR/pg"; }

# PgBouncer 1.18 in transaction pooling: a server session per
# transaction, so nothing a session holds survives between transactions.
start_pgbouncer() {
	sv_pgb_start "$DIR/pgbouncer" "$PGB_PORT" "$PG_PORT" || return 1
	echo "test-servers: PgBouncer (transaction pooling) up on 127.0.0.1:$PGB_PORT" >&2
}

stop_pgbouncer() { sv_pgb_stop "$DIR/pgbouncer"; }

start_mariadb() {
	mkdir -p "$DIR/my"
	sv_my_install "$DIR/my" || return 1
	if ! sv_my_ping "$DIR/my"; then
		sv_my_start "$DIR/my" "$MY_PORT" 256M "$(id -un)"
		sv_my_wait "$DIR/my" 60 || return 1
	fi
	sv_my_user "$DIR/my"
	echo "test-servers: MariaDB up on 127.0.0.1:$MY_PORT" >&2
}

stop_mariadb() {
	[ -S "$DIR/my/sock" ] || return 0
	mariadb-admin --no-defaults --socket="$DIR/my/sock" -uroot shutdown >/dev/null 2>&1 || true
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
