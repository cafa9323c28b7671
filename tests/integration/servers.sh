# tests/integration/servers.sh — private database servers for one test,
# sourced after lib.sh by the tests that break servers on purpose
# (t_pg_failover, t_galera, tests/chaos). Each server lives in the test's
# own folder, listens on a free loopback port and is killed when the test
# ends; the shared test servers are never touched.
#
#   srv_dir                   the folder for this test's servers
#   pg_new NAME PORT [-c k=v]...   initdb + start a PostgreSQL primary
#   pg_standby NAME PORT FROM_PORT  pg_basebackup a streaming standby
#   pg_kill NAME              kill -9 the postmaster (a crash: no shutdown)
#   pg_promote NAME           pg_ctl promote, waits until it is primary
#   pg_walreceiver NAME       the pid of a standby's WAL receiver
#   pg_sql PORT QUERY         psql on that server's sked_test database
#   my_new NAME PORT [ARG]... a MariaDB server (mariadb-install-db)
#   my_sql PORT QUERY         mariadb client on it
#   gal_init                  ports for a three-node Galera cluster: client
#                             ports P1..P3 (and group, IST, SST ports)
#   gal_node I [ARG]...       start Galera node I (1..3; node 1 of a new
#                             cluster with --wsrep-new-cluster); again
#                             after a kill, it rejoins (IST or SST)
#   gal_ready I, gal_size I   wsrep_ready is ON; wsrep_cluster_size
#   gal_up                    gal_init, then start all three nodes and wait
#                             until they form one cluster
#   gal_logs                  the nodes' log lines that say why, on stderr
#   srv_stop_all              stop everything started here (on EXIT)

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

# PostgreSQL will not run as root: as root, servers run as 'postgres' in
# a folder that user can reach.
if [ "$(id -u)" = 0 ]; then
	SRV=$(mktemp -d /tmp/sked-srv.XXXXXX)
	chmod 755 "$SRV"
else
	SRV="$T/srv"
	mkdir -p "$SRV"
fi
srv_dir() { echo "$SRV"; }
as_pg() {
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_start_dir() { # NAME PORT [-c k=v]...
	_n=$1
	_d=$(srv_dir)/$1
	_port=$2
	shift 2
	as_pg "$(pg_bin)/pg_ctl" -D "$_d/data" -l "$_d/server.log" -w -t 60 \
		-o "-c listen_addresses=127.0.0.1 -p $_port -k $_d -c max_connections=200 -c fsync=off $*" \
		start >/dev/null || { cat "$_d/server.log" >&2; fail "PostgreSQL $_n did not start on port $_port (see $_d/server.log)"; }
	echo "$_n $_port" >>"$(srv_dir)/pg.list"
}

pg_new() { # NAME PORT [-c k=v]...
	[ -n "$(pg_bin)" ] || skip "PostgreSQL server binaries are not installed"
	d=$(srv_dir)/$1
	mkdir -p "$d"
	[ "$(id -u)" = 0 ] && chown postgres "$d"
	as_pg "$(pg_bin)/initdb" -D "$d/data" -A trust -U postgres --locale=C \
		-E UTF8 >"$d/initdb.log" 2>&1 || fail "initdb for $1 failed (see $d/initdb.log)"
	pg_start_dir "$@"
	pg_sql_db "$2" postgres "CREATE DATABASE sked_test" >/dev/null
}

pg_standby() { # NAME PORT FROM_PORT
	d=$(srv_dir)/$1
	mkdir -p "$d"
	[ "$(id -u)" = 0 ] && chown postgres "$d"
	as_pg "$(pg_bin)/pg_basebackup" -h 127.0.0.1 -p "$3" -U postgres \
		-D "$d/data" -R -X stream -c fast \
		-d "application_name=$1" >"$d/basebackup.log" 2>&1 ||
		fail "pg_basebackup for $1 failed (see $d/basebackup.log)"
	# the standby names itself to the primary (synchronous_standby_names)
	echo "primary_conninfo = 'host=127.0.0.1 port=$3 user=postgres application_name=$1'" \
		>>"$d/data/postgresql.auto.conf"
	pg_start_dir "$1" "$2"
}

pg_pid() { head -n 1 "$(srv_dir)/$1/data/postmaster.pid"; }

pg_kill() { # the whole server at once, as when its machine dies
	p=$(pg_pid "$1")
	kill -STOP "$p"
	for c in $(pgrep -P "$p"); do kill -9 "$c" 2>/dev/null || true; done
	kill -9 "$p"
	i=0
	while kill -0 "$p" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "postmaster of $1 did not die"
		sleep 0.05
	done
}

# the standby's WAL receiver, to hold back replication for a while
pg_walreceiver() { pgrep -P "$(pg_pid "$1")" -f 'walreceiver'; }

pg_promote() {
	as_pg "$(pg_bin)/pg_ctl" -D "$(srv_dir)/$1/data" -w -t 60 promote >/dev/null ||
		fail "promote of $1 failed"
}

pg_sql_db() { psql -X -q -At -F '	' -h 127.0.0.1 -p "$1" -U postgres -d "$2" -c "$3"; }
pg_sql() { pg_sql_db "$1" sked_test "$(printf '%s' "$2" | sed "s/{p}/$PREFIX/g")"; }

# Every MariaDB here has a tmpdir of its own: a starting mariadbd deletes
# every "#sql*" file in its tmpdir, and with /tmp shared it deleted the
# temporary tables of another test's mariadb-install-db in mid-bootstrap
# ("Unknown table 'mysql.tmp_user_sys'").
my_new() { # NAME PORT [mariadbd args]...
	command -v mariadb-install-db >/dev/null || skip "MariaDB server is not installed"
	name=$1
	d=$(srv_dir)/$1
	mkdir -p "$d/tmp"
	user=$(id -un)
	[ -d "$d/data/mysql" ] || mariadb-install-db --no-defaults --datadir="$d/data" \
		--tmpdir="$d/tmp" --user="$user" --auth-root-authentication-method=normal \
		--skip-test-db >"$d/install.log" 2>&1 || fail "mariadb-install-db for $name failed (see $d/install.log)"
	my_start "$@"
}

my_start() { # NAME PORT [args]
	_n=$1
	_d=$(srv_dir)/$1
	_port=$2
	shift 2
	mkdir -p "$_d/tmp"
	/usr/sbin/mariadbd --no-defaults --datadir="$_d/data" --socket="$_d/sock" \
		--tmpdir="$_d/tmp" --port="$_port" --bind-address=127.0.0.1 --pid-file="$_d/pid" \
		--user="$(id -un)" --max-connections=300 --innodb-buffer-pool-size=64M \
		--log-error="$_d/server.log" "$@" >/dev/null 2>&1 &
	echo "$!" >"$_d/mysqld.pid"
	echo "$_n $_port" >>"$(srv_dir)/my.list"
}

my_wait() { # NAME SECONDS: until it answers and is ready
	d=$(srv_dir)/$1
	i=0
	until mariadb-admin --no-defaults --socket="$d/sock" -uroot ping >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt $(($2 * 5)) ] || { tail -n 20 "$d/server.log" >&2; fail "MariaDB $1 did not start (see $d/server.log)"; }
		sleep 0.2
	done
}

my_root() { mariadb --no-defaults --socket="$(srv_dir)/$1/sock" -uroot -N -B -e "$2"; }

my_user() { # NAME: the sked user and database, as on the shared server
	my_root "$1" "CREATE DATABASE IF NOT EXISTS sked_test CHARACTER SET utf8mb4;
		CREATE USER IF NOT EXISTS 'sked'@'127.0.0.1' IDENTIFIED BY 'sked-test-pw';
		GRANT ALL ON *.* TO 'sked'@'127.0.0.1';"
}

my_sql() {
	mariadb --no-defaults -N -B -h 127.0.0.1 -P "$1" -u sked -psked-test-pw sked_test \
		-e "$(printf '%s' "$2" | sed "s/{p}/$PREFIX/g")"
}

# ---- MariaDB Galera: three nodes on loopback (galera-4, rsync SST) ----
gal_init() {
	[ -f /usr/lib/galera/libgalera_smm.so ] || skip "galera-4 is not installed"
	command -v rsync >/dev/null || skip "rsync (Galera's state transfer) is not installed"
	# mariadbd refuses nothing as root, but rsync's daemon drops to
	# nobody: as root the nodes run as 'mysql' in folders that user owns
	gal_runas=$(id -un)
	if [ "$(id -u)" = 0 ] && id mysql >/dev/null 2>&1; then gal_runas=mysql; fi
	# twelve ports from one call: no two alike (client, group, IST, SST)
	# shellcheck disable=SC2046 # the ports, split on purpose
	set -- $(free_ports 12)
	for i in 1 2 3; do
		eval "P$i=$1 G$i=$2 I$i=$3 S$i=$4"
		shift 4
	done
	gcomm="gcomm://127.0.0.1:$G1,127.0.0.1:$G2,127.0.0.1:$G3"
}
gal_node() { # I [args]: start node I
	i=$1
	shift
	eval "p=\$P$i g=\$G$i ist=\$I$i sst=\$S$i"
	d="$SRV/n$i"
	if [ ! -d "$d/data/mysql" ]; then
		mkdir -p "$d/tmp"
		chown "$gal_runas" "$d" "$d/tmp"
		runuser -u "$gal_runas" -- mariadb-install-db --no-defaults --datadir="$d/data" \
			--tmpdir="$d/tmp" --user="$gal_runas" --auth-root-authentication-method=normal \
			--skip-test-db >"$d/install.log" 2>&1 ||
			fail "mariadb-install-db for node $i failed (see $d/install.log)"
	fi
	/usr/sbin/mariadbd --no-defaults --datadir="$d/data" --socket="$d/sock" \
		--tmpdir="$d/tmp" --port="$p" --bind-address=127.0.0.1 --pid-file="$d/pid" \
		--user="$gal_runas" \
		--log-error="$d/server.log" --innodb-buffer-pool-size=64M \
		--max-connections=300 --binlog-format=ROW --innodb-autoinc-lock-mode=2 \
		--wsrep-on=ON --wsrep-provider=/usr/lib/galera/libgalera_smm.so \
		--wsrep-cluster-name="sked$PREFIX" --wsrep-cluster-address="$gcomm" \
		--wsrep-node-name="n$i" --wsrep-node-address="127.0.0.1:$g" \
		--wsrep-node-incoming-address="127.0.0.1:$p" \
		--wsrep-provider-options="gmcast.listen_addr=tcp://127.0.0.1:$g;ist.recv_addr=127.0.0.1:$ist;gcache.size=32M" \
		--wsrep-sst-method=rsync --wsrep-sst-receive-address="127.0.0.1:$sst" \
		"$@" >/dev/null 2>&1 &
	echo "$!" >"$d/mysqld.pid"
	echo "n$i $p" >>"$SRV/my.list"
}
gal_ready() { [ "$(my_root "n$1" "SHOW STATUS LIKE 'wsrep_ready'" 2>/dev/null | cut -f2)" = ON ]; }
gal_size() { my_root "n$1" "SHOW STATUS LIKE 'wsrep_cluster_size'" 2>/dev/null | cut -f2; }
gal_all3() { [ "$(gal_size 1)" = 3 ] && gal_ready 2 && gal_ready 3; }
gal_up() {
	gal_init
	gal_node 1 --wsrep-new-cluster
	wait_for 60 gal_ready 1 || { gal_logs; fail "Galera node 1 did not bootstrap the cluster"; }
	gal_node 2
	gal_node 3
	wait_for 120 gal_all3 || { gal_logs; fail "the Galera cluster did not reach three nodes"; }
}
# gal_logs: each node's last log lines on stderr, for a cluster that did
# not form (CI keeps no server folder)
gal_logs() {
	for f in "$SRV"/n*/server.log "$SRV"/n*/install.log; do
		[ -f "$f" ] || continue
		echo "--- ${f#"$SRV"/}" >&2
		grep -E 'ERROR|Aborting|signal|WSREP: (Member|Shifting|State transfer|SST)' "$f" | tail -n 12 >&2
	done
}

# kill_server DATADIR PID: kill -9 PID only while its command line names
# DATADIR. The pid file of a server the test killed stays behind, and on
# a busy machine its number soon belongs to another process: another
# test's worker was killed so at this test's exit.
kill_server() {
	[ -n "$2" ] && [ -r "/proc/$2/cmdline" ] || return 0
	case "$(tr '\0' ' ' <"/proc/$2/cmdline" 2>/dev/null)" in
	*"$1"*) kill -9 "$2" 2>/dev/null || true ;;
	esac
}

srv_stop_all() {
	[ -n "${SRV:-}" ] || return 0
	if [ -f "$SRV/pg.list" ]; then
		while read -r n p; do
			f="$SRV/$n/data/postmaster.pid"
			if [ -f "$f" ]; then kill_server "$SRV/$n/data" "$(head -n 1 "$f")"; fi
		done <"$SRV/pg.list"
	fi
	if [ -f "$SRV/my.list" ]; then
		while read -r n p; do
			f="$SRV/$n/mysqld.pid"
			if [ -f "$f" ]; then kill_server "$SRV/$n/data" "$(cat "$f")"; fi
		done <"$SRV/my.list"
	fi
	sleep 0.3
	# a passing test leaves nothing; a failing one keeps the logs in $T
	case "$SRV" in "$T"/*) ;; *) cp -r "$SRV" "$T/srv" 2>/dev/null; rm -rf "$SRV" ;; esac
	return 0
}
# lib.sh's cleanup reads the test's exit status: keep it
trap 'rc=$?; srv_stop_all; (exit $rc); cleanup' EXIT
