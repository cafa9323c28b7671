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
#   pat_up                    etcd, three PostgreSQL nodes under Patroni and
#                             HAProxy in front (ports: SKED_TEST_PATRONI_PORTS,
#                             the first of nine, else free ones); sets
#                             HP (HAProxy's port), PG1..3, R1..3 (REST)
#   pat_leader, pat_members   the leader's name; "name role state" lines
#   pat_ctl ARGS...           patronictl on this cluster
#   pat_kill I                kill -9 node I whole: Patroni and its server
#   srv_stop_all              stop everything started here (on EXIT)

# The starting and stopping itself is scripts/serverlib.sh's, the one
# server-starter library (shared with scripts/test-servers.sh); this file
# gives it the test's folder, turns its errors into fail or skip, and
# kills what the test started when it ends.
. "$(dirname "$0")/../../scripts/serverlib.sh"
pg_bin() { sv_pg_bin; }

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
as_pg() { sv_as_pg "$@"; }

pg_start_dir() { # NAME PORT [-c k=v]...
	_n=$1
	_port=$2
	shift 2
	sv_pg_start "$SRV/$_n" "$_port" -c max_connections=200 -c fsync=off "$@" ||
		fail "PostgreSQL $_n did not start on port $_port (see $SRV/$_n/server.log)"
	echo "$_n $_port" >>"$SRV/pg.list"
}

pg_new() { # NAME PORT [-c k=v]...
	[ -n "$(pg_bin)" ] || skip "PostgreSQL server binaries are not installed"
	sv_pg_init "$SRV/$1" || fail "initdb for $1 failed (see $SRV/$1/initdb.log)"
	pg_start_dir "$@"
	pg_sql_db "$2" postgres "CREATE DATABASE sked_test" >/dev/null
}

pg_standby() { # NAME PORT FROM_PORT
	sv_pg_standby "$SRV/$1" "$1" "$3" || fail "pg_basebackup for $1 failed (see $SRV/$1/basebackup.log)"
	pg_start_dir "$1" "$2"
}

pg_pid() { sv_pg_pid "$SRV/$1"; }
pg_kill() { sv_pg_kill "$SRV/$1" || fail "postmaster of $1 did not die"; }

# the standby's WAL receiver, to hold back replication for a while
pg_walreceiver() { pgrep -P "$(pg_pid "$1")" -f 'walreceiver'; }

pg_promote() { sv_pg_promote "$SRV/$1" || fail "promote of $1 failed"; }

pg_sql_db() { psql -X -q -At -F '	' -h 127.0.0.1 -p "$1" -U postgres -d "$2" -c "$3"; }
pg_sql() { pg_sql_db "$1" sked_test "$(printf '%s' "$2" | sed "s/{p}/$PREFIX/g")"; }

my_new() { # NAME PORT [mariadbd args]...
	command -v mariadb-install-db >/dev/null || skip "MariaDB server is not installed"
	sv_my_install "$SRV/$1" || fail "mariadb-install-db for $1 failed (see $SRV/$1/install.log)"
	my_start "$@"
}

my_start() { # NAME PORT [args]
	_n=$1
	_port=$2
	shift 2
	sv_my_start "$SRV/$_n" "$_port" 64M "$(id -un)" "$@"
	echo "$_n $_port" >>"$SRV/my.list"
}

my_wait() { sv_my_wait "$SRV/$1" "$2" || fail "MariaDB $1 did not start (see $SRV/$1/server.log)"; }

my_root() { mariadb --no-defaults --socket="$SRV/$1/sock" -uroot -N -B -e "$2"; }

my_user() { # NAME: the sked user and database, as on the shared server
	sv_my_user "$SRV/$1" || fail "could not make the sked user on $1"
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
	sv_my_install "$d" "$gal_runas" || fail "mariadb-install-db for node $i failed (see $d/install.log)"
	sv_my_start "$d" "$p" 64M "$gal_runas" \
		--binlog-format=ROW --innodb-autoinc-lock-mode=2 \
		--wsrep-on=ON --wsrep-provider=/usr/lib/galera/libgalera_smm.so \
		--wsrep-cluster-name="sked$PREFIX" --wsrep-cluster-address="$gcomm" \
		--wsrep-node-name="n$i" --wsrep-node-address="127.0.0.1:$g" \
		--wsrep-node-incoming-address="127.0.0.1:$p" \
		--wsrep-provider-options="gmcast.listen_addr=tcp://127.0.0.1:$g;ist.recv_addr=127.0.0.1:$ist;gcache.size=32M" \
		--wsrep-sst-method=rsync --wsrep-sst-receive-address="127.0.0.1:$sst" \
		"$@"
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

# kill_server DATADIR PID: kill -9 PID only while it is that server
# (a stored pid soon names another process on a busy machine)
kill_server() { sv_kill_server "$@"; }

# ---- Patroni: etcd, three PostgreSQL nodes, HAProxy (serverlib.sh) ----
# srv_track PIDFILE: a process to kill -9 at the end, while its command
# line still names this test's folder
srv_track() { echo "$1" >>"$SRV/proc.list"; }
pat_up() {
	for b in patroni patronictl etcd etcdctl; do
		command -v $b >/dev/null || skip "$b is not installed (scripts/deps.sh test)"
	done
	[ -x /usr/sbin/haproxy ] || command -v haproxy >/dev/null || skip "haproxy is not installed (scripts/deps.sh test)"
	if [ -n "${SKED_TEST_PATRONI_PORTS:-}" ]; then
		# shellcheck disable=SC2046 # the ports, split on purpose
		set -- $(seq "$SKED_TEST_PATRONI_PORTS" $((SKED_TEST_PATRONI_PORTS + 8)))
	else
		# shellcheck disable=SC2046
		set -- $(free_ports 9)
	fi
	EC=$1 EP=$2 PG1=$3 R1=$4 PG2=$5 R2=$6 PG3=$7 R3=$8 HP=$9
	PAT_SCOPE="sked$PREFIX"
	sv_etcd_start "$SRV/etcd" "$EC" "$EP" || fail "etcd did not start on port $EC"
	srv_track "$SRV/etcd/etcd.pid"
	for i in 1 2 3; do
		eval "sv_patroni_node \"\$SRV/pn$i\" pn$i \$PG$i \$R$i $EC $PAT_SCOPE"
		srv_track "$SRV/pn$i/patroni.pid"
		eval "echo \"pn$i \$PG$i\"" >>"$SRV/pg.list"
	done
	pat_ready() { [ "$(pat_members | grep -c ' running$')" = 3 ] && [ -n "$(pat_leader)" ]; }
	wait_for 120 pat_ready || { pat_logs; fail "the Patroni cluster did not reach a leader and two running replicas: $(pat_members | tr '\n' ';')"; }
	sv_haproxy_start "$SRV/haproxy" "$HP" "$PG1:$R1 $PG2:$R2 $PG3:$R3" || fail "HAProxy did not start on port $HP"
	srv_track "$SRV/haproxy/haproxy.run.pid"
	# HAProxy takes every server for up until its checks say otherwise:
	# six connections in a row (two rounds over three nodes) must all
	# reach the primary
	hp_primary() {
		for _k in 1 2 3 4 5 6; do
			[ "$(pg_sql_db "$HP" postgres 'SELECT pg_is_in_recovery()')" = f ] || return 1
		done
	}
	wait_for 30 hp_primary || fail "HAProxy does not lead to the primary on port $HP"
	pg_sql_db "$HP" postgres "CREATE DATABASE sked_test" >/dev/null
}
# "name role state" per member, from the first REST API that answers
pat_members() {
	for r in $R1 $R2 $R3; do
		curl -s -m 2 "http://127.0.0.1:$r/cluster" 2>/dev/null | python3 -c '
import json, sys
for m in json.load(sys.stdin)["members"]:
    print(m["name"], m["role"], m["state"])' 2>/dev/null && return 0
	done
	return 1
}
pat_leader() { pat_members | awk '$2 == "leader" && $3 == "running" { print $1 }'; }
pat_ctl() { patronictl -c "$SRV/pn1/patroni.yml" "$@"; }
pat_kill() { # I: the node's machine dies: Patroni and its server at once
	kill -STOP "$(cat "$SRV/pn$1/patroni.pid")" 2>/dev/null || true
	sv_pg_kill "$SRV/pn$1" || fail "the server of node $1 did not die"
	kill_server "$SRV/pn$1" "$(cat "$SRV/pn$1/patroni.pid")"
}
pat_logs() {
	for f in "$SRV"/pn*/patroni.log "$SRV"/etcd/etcd.log; do
		[ -f "$f" ] || continue
		echo "--- ${f#"$SRV"/}" >&2
		tail -n 15 "$f" >&2
	done
}

srv_stop_all() {
	[ -n "${SRV:-}" ] || return 0
	# Patroni first: it would start its server again
	if [ -f "$SRV/proc.list" ]; then
		while read -r f; do
			[ -f "$f" ] && kill_server "$SRV" "$(cat "$f")"
		done <"$SRV/proc.list"
	fi
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
# lib.sh's cleanup reads the test's exit status: keep it. set +e first:
# under set -e a failed test's (exit 1) ended the trap before cleanup,
# and its workers lived on, holding ctest's pipe until the test's bound
trap 'rc=$?; set +e; srv_stop_all; (exit $rc); cleanup' EXIT
