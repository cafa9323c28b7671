# scripts/serverlib.sh — the one place that knows how to start and stop
# the database servers sked's tests use (sourced, POSIX sh).
#
# Layer: test tooling. Two users: scripts/test-servers.sh (the shared
# servers of `make test` and the README: one PostgreSQL, one MariaDB, a
# PgBouncer) and tests/integration/servers.sh (servers of one test's own:
# failover, Galera, chaos, fleet, Patroni). Every function takes the
# server's folder and port; it prints one line on stderr and returns
# non-zero when something fails, and the caller decides whether that is
# an exit, a test failure or a skip. Nothing here listens beyond
# 127.0.0.1.
#
#   sv_pg_bin                       PostgreSQL's bin folder (newest)
#   sv_as_pg CMD...                 run as 'postgres' when root
#   sv_pg_init DIR                  initdb into DIR/data (once)
#   sv_pg_start DIR PORT [OPT...]   start it (OPTs go to postgres: -c k=v)
#   sv_pg_stop DIR [MODE]           pg_ctl stop (fast by default)
#   sv_pg_pid DIR                   the postmaster's pid
#   sv_pg_kill DIR                  kill -9 the whole server at once
#   sv_pg_promote DIR               promote a standby, wait until primary
#   sv_pg_standby DIR NAME FROM_PORT   pg_basebackup a streaming standby
#   sv_pg_createdb PORT DB          CREATE DATABASE unless it exists
#   sv_my_install DIR [USER]        mariadb-install-db into DIR/data (once)
#   sv_my_start DIR PORT POOL USER [ARG...]  mariadbd in the background
#   sv_my_ping DIR                  it answers on its socket
#   sv_my_wait DIR SECONDS          until it answers
#   sv_my_user DIR                  the 'sked' user and sked_test database
#   sv_pgb_start DIR PORT PG_PORT [KEY=VALUE...]  PgBouncer, transaction
#                                   pooling, in front of that server
#   sv_pgb_stop DIR
#   sv_kill_server DATADIR PID      kill -9 PID only while it is that server
#   sv_etcd_start DIR CLIENT PEER   a one-member etcd (v3 API)
#   sv_patroni_node DIR NAME PG REST ETCD SCOPE   one Patroni-run node
#   sv_haproxy_start DIR PORT CHECKS  HAProxy sending PORT to the node whose
#                                   Patroni REST API says primary; CHECKS is
#                                   "pgport:restport ..."
#   sv_pid_alive FILE               the pid in FILE runs

sv_pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

# PostgreSQL will not run as root: as root, it runs as 'postgres'.
sv_as_pg() {
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

sv_pg_init() { # DIR
	[ -n "$(sv_pg_bin)" ] || { echo "PostgreSQL is not installed" >&2; return 1; }
	mkdir -p "$1"
	chmod 755 "$1"
	if [ "$(id -u)" = 0 ]; then chown postgres "$1"; fi
	[ -f "$1/data/PG_VERSION" ] && return 0
	sv_as_pg "$(sv_pg_bin)/initdb" -D "$1/data" -A trust -U postgres \
		--locale=C -E UTF8 >"$1/initdb.log" 2>&1 ||
		{ echo "initdb failed (see $1/initdb.log)" >&2; return 1; }
}

sv_pg_running() { sv_as_pg "$(sv_pg_bin)/pg_ctl" -D "$1/data" status >/dev/null 2>&1; }

sv_pg_start() { # DIR PORT [postgres options...]
	_d=$1 _p=$2
	shift 2
	sv_as_pg "$(sv_pg_bin)/pg_ctl" -D "$_d/data" -l "$_d/server.log" -w -t 60 \
		-o "-c listen_addresses=127.0.0.1 -p $_p -k $_d $*" start >/dev/null || {
		tail -n 20 "$_d/server.log" >&2
		echo "PostgreSQL did not start on port $_p (see $_d/server.log)" >&2
		return 1
	}
}

sv_pg_stop() { # DIR [MODE]
	[ -n "$(sv_pg_bin)" ] && [ -f "$1/data/PG_VERSION" ] || return 0
	sv_as_pg "$(sv_pg_bin)/pg_ctl" -D "$1/data" -m "${2:-fast}" -w stop >/dev/null 2>&1 || true
}

sv_pg_pid() { head -n 1 "$1/data/postmaster.pid"; }

sv_pg_kill() { # DIR: the whole server at once, as when its machine dies
	_p=$(sv_pg_pid "$1") || return 1
	kill -STOP "$_p"
	for _c in $(pgrep -P "$_p"); do kill -9 "$_c" 2>/dev/null || true; done
	kill -9 "$_p"
	_i=0
	while kill -0 "$_p" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -lt 100 ] || { echo "the postmaster in $1 did not die" >&2; return 1; }
		sleep 0.05
	done
}

sv_pg_promote() {
	sv_as_pg "$(sv_pg_bin)/pg_ctl" -D "$1/data" -w -t 60 promote >/dev/null ||
		{ echo "promote of $1 failed" >&2; return 1; }
}

sv_pg_standby() { # DIR NAME FROM_PORT
	mkdir -p "$1"
	if [ "$(id -u)" = 0 ]; then chown postgres "$1"; fi
	sv_as_pg "$(sv_pg_bin)/pg_basebackup" -h 127.0.0.1 -p "$3" -U postgres \
		-D "$1/data" -R -X stream -c fast \
		-d "application_name=$2" >"$1/basebackup.log" 2>&1 ||
		{ echo "pg_basebackup for $2 failed (see $1/basebackup.log)" >&2; return 1; }
	# the standby names itself to the primary (synchronous_standby_names)
	echo "primary_conninfo = 'host=127.0.0.1 port=$3 user=postgres application_name=$2'" \
		>>"$1/data/postgresql.auto.conf"
}

sv_pg_createdb() { # PORT DB
	_q="psql -X -q -At -h 127.0.0.1 -p $1 -U postgres -d postgres"
	$_q -c "SELECT 1 FROM pg_database WHERE datname = '$2'" | grep -q 1 ||
		$_q -c "CREATE DATABASE $2"
}

# Every MariaDB here has a tmpdir of its own: a starting mariadbd deletes
# every "#sql*" file in its tmpdir, and with /tmp shared it deleted the
# temporary tables of another test's mariadb-install-db in mid-bootstrap
# ("Unknown table 'mysql.tmp_user_sys'").
sv_my_install() { # DIR [USER]
	command -v mariadb-install-db >/dev/null ||
		{ echo "MariaDB is not installed" >&2; return 1; }
	_u=${2:-$(id -un)}
	mkdir -p "$1/tmp"
	[ "$_u" = "$(id -un)" ] || chown "$_u" "$1" "$1/tmp"
	[ -d "$1/data/mysql" ] && return 0
	_run=""
	[ "$_u" = "$(id -un)" ] || _run="runuser -u $_u --"
	$_run mariadb-install-db --no-defaults --datadir="$1/data" \
		--tmpdir="$1/tmp" --user="$_u" --auth-root-authentication-method=normal \
		--skip-test-db >"$1/install.log" 2>&1 ||
		{ echo "mariadb-install-db failed (see $1/install.log)" >&2; return 1; }
}

# sv_my_start DIR PORT POOL USER [ARG...]: in the background; the pid
# goes to DIR/mysqld.pid (the server's own pid file is DIR/pid). ARGs come
# last and win (--max-connections=N, wsrep options); the user is a
# parameter because mariadbd keeps the first --user it is given.
sv_my_start() {
	_d=$1 _p=$2 _pool=$3 _u=${4:-$(id -un)}
	shift 4
	mkdir -p "$_d/tmp"
	/usr/sbin/mariadbd --no-defaults --datadir="$_d/data" --socket="$_d/sock" \
		--tmpdir="$_d/tmp" --port="$_p" --bind-address=127.0.0.1 --pid-file="$_d/pid" \
		--user="$_u" --max-connections=300 --innodb-buffer-pool-size="$_pool" \
		--log-error="$_d/server.log" "$@" >/dev/null 2>&1 &
	echo "$!" >"$_d/mysqld.pid"
}

sv_my_ping() { mariadb-admin --no-defaults --socket="$1/sock" -uroot ping >/dev/null 2>&1; }

sv_my_wait() { # DIR SECONDS
	_i=0
	until sv_my_ping "$1"; do
		_i=$((_i + 1))
		[ $_i -lt $(($2 * 5)) ] || {
			tail -n 20 "$1/server.log" >&2
			echo "MariaDB did not start (see $1/server.log)" >&2
			return 1
		}
		sleep 0.2
	done
}

sv_my_user() { # DIR: the sked user and database, as the tests expect
	mariadb --no-defaults --socket="$1/sock" -uroot -e "
		CREATE DATABASE IF NOT EXISTS sked_test CHARACTER SET utf8mb4;
		CREATE USER IF NOT EXISTS 'sked'@'127.0.0.1' IDENTIFIED BY 'sked-test-pw';
		CREATE USER IF NOT EXISTS 'sked'@'localhost' IDENTIFIED BY 'sked-test-pw';
		GRANT ALL ON *.* TO 'sked'@'127.0.0.1' WITH GRANT OPTION;
		GRANT ALL ON *.* TO 'sked'@'localhost' WITH GRANT OPTION;"
}

# sv_pgb_start DIR PORT PG_PORT [KEY=VALUE...]: PgBouncer in transaction
# pooling (a server session per transaction, so nothing a session holds
# survives between transactions); KEY=VALUE lines override the defaults.
sv_pgb_start() {
	_pgb=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)
	[ -x "$_pgb" ] || { echo "PgBouncer is not installed" >&2; return 1; }
	_d=$1 _p=$2 _pg=$3
	shift 3
	mkdir -p "$_d"
	chmod 755 "$_d"
	if [ "$(id -u)" = 0 ]; then chown postgres "$_d"; fi
	{
		printf '[databases]\n* = host=127.0.0.1 port=%s\n[pgbouncer]\n' "$_pg"
		printf 'listen_addr = 127.0.0.1\nlisten_port = %s\nunix_socket_dir = %s\n' "$_p" "$_d"
		printf 'auth_type = trust\nauth_file = %s/users.txt\nadmin_users = postgres\n' "$_d"
		printf 'pool_mode = transaction\nmax_client_conn = 2000\ndefault_pool_size = 40\n'
		printf 'max_db_connections = 80\nserver_reset_query =\n'
		printf 'logfile = %s/pgbouncer.log\npidfile = %s/pgbouncer.pid\n' "$_d" "$_d"
		for _kv in "$@"; do printf '%s = %s\n' "${_kv%%=*}" "${_kv#*=}"; done
	} >"$_d/pgbouncer.ini"
	echo '"postgres" ""' >"$_d/users.txt"
	if ! sv_pid_alive "$_d/pgbouncer.pid"; then
		rm -f "$_d/pgbouncer.pid"
		sv_as_pg "$_pgb" -d "$_d/pgbouncer.ini" >"$_d/start.log" 2>&1 ||
			{ echo "PgBouncer did not start: $(tail -n 1 "$_d/start.log")" >&2; return 1; }
	fi
	_i=0
	until psql -X -q -At "postgres://postgres@127.0.0.1:$_p/sked_test" \
		-c 'SELECT 1' >/dev/null 2>&1; do
		_i=$((_i + 1))
		[ $_i -lt 60 ] || { echo "PgBouncer does not answer; see $_d/pgbouncer.log" >&2; return 1; }
		sleep 0.5
	done
}

sv_pgb_stop() {
	[ -f "$1/pgbouncer.pid" ] || return 0
	kill "$(cat "$1/pgbouncer.pid")" 2>/dev/null || true
}

sv_pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# sv_kill_server DATADIR PID: kill -9 PID only while its command line
# names DATADIR. The pid file of a server a test killed stays behind, and
# on a busy machine its number soon belongs to another process: another
# test's worker was killed so at a test's exit.
sv_kill_server() {
	[ -n "$2" ] && [ -r "/proc/$2/cmdline" ] || return 0
	case "$(tr '\0' ' ' 2>/dev/null <"/proc/$2/cmdline")" in
	*"$1"*) kill -9 "$2" 2>/dev/null || true ;;
	esac
}

# ---- Patroni: etcd, PostgreSQL nodes run by Patroni, HAProxy ----
# Patroni's own defaults are kept (maximum_lag_on_failover 1 MB, pg_rewind
# off, replication slots, its PostgreSQL parameters); the stack sets what a
# node must be told (where it is, its DCS, its users), a shorter ttl and
# loop (defaults 30 s and 10 s) so a dead primary's leader key runs out in
# seconds, and synchronous_mode: with Patroni's default asynchronous
# replication a primary killed -9 takes acknowledged commits with it
# (tests/integration/t_pg_failover.sh shows it), and an operator who
# wants no task lost runs synchronous mode.

sv_etcd_start() { # DIR CLIENT_PORT PEER_PORT
	command -v etcd >/dev/null || { echo "etcd is not installed" >&2; return 1; }
	mkdir -p "$1"
	# from a subshell, as Patroni below: not a job of the caller's shell
	(etcd --name sked-etcd --data-dir "$1/data" \
		--listen-client-urls "http://127.0.0.1:$2" \
		--advertise-client-urls "http://127.0.0.1:$2" \
		--listen-peer-urls "http://127.0.0.1:$3" \
		--initial-advertise-peer-urls "http://127.0.0.1:$3" \
		--initial-cluster "sked-etcd=http://127.0.0.1:$3" \
		--listen-metrics-urls "" >"$1/etcd.log" 2>&1 &
	echo "$!" >"$1/etcd.pid")
	_i=0
	until ETCDCTL_API=3 etcdctl --endpoints "127.0.0.1:$2" endpoint health >/dev/null 2>&1; do
		_i=$((_i + 1))
		[ $_i -lt 100 ] || { tail -n 20 "$1/etcd.log" >&2; echo "etcd did not start (see $1/etcd.log)" >&2; return 1; }
		sleep 0.2
	done
}

# sv_patroni_node DIR NAME PG_PORT REST_PORT ETCD_PORT SCOPE [TTL LOOP]
sv_patroni_node() {
	command -v patroni >/dev/null || { echo "Patroni is not installed" >&2; return 1; }
	_d=$1
	mkdir -p "$_d"
	chmod 755 "$_d"
	if [ "$(id -u)" = 0 ]; then chown postgres "$_d"; fi
	cat >"$_d/patroni.yml" <<YML
scope: $6
name: $2
restapi:
  listen: 127.0.0.1:$4
  connect_address: 127.0.0.1:$4
etcd3:
  host: 127.0.0.1:$5
bootstrap:
  dcs:
    ttl: ${7:-10}
    loop_wait: ${8:-2}
    retry_timeout: ${8:-2}
    synchronous_mode: true
  initdb:
  - encoding: UTF8
  - locale: C
  pg_hba:
  - local all all trust
  - host all all 127.0.0.1/32 trust
  - host replication all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:$3
  connect_address: 127.0.0.1:$3
  data_dir: $_d/data
  bin_dir: $(sv_pg_bin)
  pgpass: $_d/pgpass
  authentication:
    superuser:
      username: postgres
    replication:
      username: postgres
  parameters:
    unix_socket_directories: $_d
    fsync: 'off'
YML
	if [ "$(id -u)" = 0 ]; then chown postgres "$_d/patroni.yml"; fi
	# setpriv execs (runuser would fork): the pid kept is Patroni's own.
	# Started from a subshell: not a job of the caller's shell, which
	# would report its kill -9 on stderr.
	if [ "$(id -u)" = 0 ]; then
		(setpriv --reuid=postgres --regid=postgres --init-groups \
			env HOME="$_d" patroni "$_d/patroni.yml" >"$_d/patroni.log" 2>&1 &
		echo "$!" >"$_d/patroni.pid")
	else
		(patroni "$_d/patroni.yml" >"$_d/patroni.log" 2>&1 &
		echo "$!" >"$_d/patroni.pid")
	fi
}

# sv_haproxy_start DIR PORT "PGPORT:RESTPORT ...": one frontend that
# sends every connection to the node whose REST API answers 200 on
# /primary (Patroni's documented health check), and closes connections to
# a node that stops being it.
sv_haproxy_start() {
	command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ] ||
		{ echo "HAProxy is not installed" >&2; return 1; }
	_hp=$(command -v haproxy || echo /usr/sbin/haproxy)
	mkdir -p "$1"
	{
		printf 'global\n  maxconn 4000\n  pidfile %s/haproxy.pid\n' "$1"
		printf 'defaults\n  mode tcp\n  timeout connect 2s\n  timeout client 30m\n  timeout server 30m\n  timeout check 1s\n'
		printf 'listen primary\n  bind 127.0.0.1:%s\n  option httpchk GET /primary\n  http-check expect status 200\n' "$2"
		printf '  default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions\n'
		_n=0
		for _pr in $3; do
			_n=$((_n + 1))
			printf '  server n%s 127.0.0.1:%s maxconn 1000 check port %s\n' "$_n" "${_pr%%:*}" "${_pr#*:}"
		done
	} >"$1/haproxy.cfg"
	("$_hp" -q -f "$1/haproxy.cfg" >"$1/haproxy.log" 2>&1 &
	echo "$!" >"$1/haproxy.run.pid")
	sleep 0.3
	kill -0 "$(cat "$1/haproxy.run.pid")" 2>/dev/null ||
		{ cat "$1/haproxy.log" >&2; echo "HAProxy did not start (see $1/haproxy.log)" >&2; return 1; }
}
