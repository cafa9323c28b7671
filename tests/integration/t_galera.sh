#!/bin/sh
# t_galera — (mariadb) a three-node MariaDB Galera cluster of the test's
# own on loopback (galera-4, rsync state transfer). SKIP LOCKED locks are
# local to a node, so workers on different nodes can claim the same row;
# one commit then fails certification and the client sees a deadlock
# (1213), which sked turns into a clean retry of the claim. Proven here:
# workers spread over the three nodes drain every task and no attempt of
# a task runs to its end twice (overlaps are the chaos suite's); one node is
# killed (kill -9) mid-run and the other two carry on (its worker's tasks
# come back after the lease). Certification conflicts are counted, and the
# cost against one plain server is measured (no-op tasks per second).
# backends: mariadb
# cluster: three MariaDB servers
. "$(dirname "$0")/lib.sh"
case "$SKED_BACKEND" in
mariadb) ;;
*) not_here "Galera is MariaDB's" ;;
esac
. "$(dirname "$0")/servers.sh"

N=${SKED_GALERA_TASKS:-1500}
ready() { gal_ready "$@"; }
size() { gal_size "$@"; }
gal_up
my_user n1
url() { eval "echo mysql://sked:sked-test-pw@127.0.0.1:\$P$1/sked_test"; }
for i in 1 2 3; do
	printf '[sked]\ndatabase = %s\nprefix = %s\n' "$(url $i)" "$PREFIX" >"$T/n$i.conf"
done
cp "$T/n1.conf" "$T/sked.conf"
init_db
# every table sked makes has a primary key (Galera replicates by it)
nopk=$(my_sql "$P1" "SELECT COUNT(*) FROM information_schema.tables t WHERE t.table_schema = 'sked_test' AND t.table_name LIKE '${PREFIX}%' AND NOT EXISTS (SELECT 1 FROM information_schema.table_constraints c WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name AND c.constraint_type = 'PRIMARY KEY')")
expect_eq "$nopk" 0 "sked tables without a primary key"

cert() { # certification failures and brute-force aborts, all live nodes
	s=0
	for i in "$@"; do
		for v in wsrep_local_cert_failures wsrep_local_bf_aborts; do
			s=$((s + $(my_root "n$i" "SHOW GLOBAL STATUS LIKE '$v'" | cut -f2)))
		done
	done
	echo $s
}

# ---- the cost: no-op tasks through three nodes, one worker on each ----
drain_noop() { # name config...
	nm=$1
	shift
	seq 1 "$N" | sk enqueue noop --lines - >/dev/null
	t0=$(now_ms)
	k=0
	for u in "$@"; do
		k=$((k + 1))
		SKED_CONFIG=$u "$SKED" worker --node-id "$nm$k" --concurrency 8 \
			--builtin-noop noop --until-empty >"$T/$nm$k.log" 2>&1 &
		eval "np$k=\$!"
	done
	for j in $(seq 1 $k); do eval "wait_exit \$np$j 300"; [ "$wrc" = 0 ] || { cat "$T/$nm$j.log" >&2; fail "$nm worker $j exited $wrc"; }; done
	echo $(( N * 1000 / ($(now_ms) - t0 + 1) ))
}

c0=$(cert 1 2 3)
rate3=$(drain_noop g "$T/n1.conf" "$T/n2.conf" "$T/n3.conf")
c1=$(cert 1 2 3)
# the same on one plain server of the test's own, same settings
sp=$(free_port)
my_new single "$sp" --binlog-format=ROW --innodb-autoinc-lock-mode=2
my_wait single 60
my_user single
printf '[sked]\ndatabase = mysql://sked:sked-test-pw@127.0.0.1:%s/sked_test\nprefix = %s\n' "$sp" "$PREFIX" >"$T/single.conf"
SKED_CONFIG=$T/single.conf sk init >/dev/null
cp "$T/single.conf" "$T/sked.conf"
rate1=$(drain_noop s "$T/single.conf" "$T/single.conf" "$T/single.conf")
cp "$T/n1.conf" "$T/sked.conf"
note "galera cost: $rate3 no-op tasks/s over three nodes (a worker on each, $((c1 - c0)) certification conflicts) against $rate1/s on one server (three workers)"
echo "galera noop_3nodes=$rate3 noop_single=$rate1 cert_conflicts=$((c1 - c0))" >>"${SKED_GALERA_REPORT:-/dev/null}"

# ---- exactly once over three nodes, one of them killed mid-run ----
h=$(handler h.sh <<'H'
#!/bin/sh
echo "S $SKED_TASK_ID $SKED_TASK_ATTEMPT $$ $(date +%s%3N)" >>"$1/attempts"
sleep 0.02
echo "E $SKED_TASK_ID $SKED_TASK_ATTEMPT $$ $(date +%s%3N)" >>"$1/attempts"
H
)
: >"$T/attempts"
seq 1 "$N" | sk enqueue work --lines - >/dev/null
for i in 1 2 3; do
	SKED_CONFIG=$T/n$i.conf start_worker "w$i" --node-id "w$i" --concurrency 4 \
		--lease 3s --poll 100ms --until-empty --handler "work=$h $T"
	eval "wp$i=\$wpid"
done
third() { [ "$(grep -c '^E' "$T/attempts")" -ge $((N / 3)) ]; }
wait_for 120 third || fail "the drain did not get going"
c2=$(cert 1 2)
kill -9 "$(cat "$SRV/n3/mysqld.pid")"
note "node 3 killed after $(grep -c '^E' "$T/attempts") attempts"
for i in 1 2; do
	eval "wait_exit \$wp$i 300"
	[ "$wrc" = 0 ] || { tail -n 20 "$T/w$i.log" >&2; fail "worker $i exited $wrc"; }
done
# the worker of the dead node cannot reach anything: it stops its
# handlers before its lease ends, and is stopped here
kill_child 9 "$wp3"
wait "$wp3" 2>/dev/null || true
c3=$(cert 1 2)
expect_eq "$(my_sql "$P1" "SELECT COUNT(*) FROM $ALL_TASKS a WHERE kind = 'work' AND status <> 2")" 0 "tasks not succeeded after the drain"
expect_eq "$(my_sql "$P2" "SELECT COUNT(*) FROM $ALL_TASKS a WHERE kind = 'work' AND status = 2")" "$N" "succeeded tasks seen on node 2"
# one end per (task, attempt): no claim ran twice
set -- $(awk '$1 == "E" { e[$2 " " $3]++ } $1 == "S" { s[$2]++ }
	END { for (k in e) if (e[k] > 1) d += e[k] - 1; for (k in s) if (s[k] > 1) r += s[k] - 1; print d + 0, r + 0 }' "$T/attempts")
expect_eq "$1" 0 "attempts that ran to their end twice"
note "galera: $N tasks over three nodes, node 3 killed mid-run: $1 duplicate ends, $2 re-started attempts (leases of the dead node's worker), $((c3 - c2 + c1 - c0)) certification conflicts retried"
echo "galera tasks=$N dup_ends=$1 restarted=$2 cert_conflicts_drain=$((c3 - c2))" >>"${SKED_GALERA_REPORT:-/dev/null}"

# ---- a node outside the primary component: a worker waits for it ----
# Node 2 dies too: node 1 is left with half of the last primary
# component, so it leaves it and answers every statement with 1047. A
# worker started against it waits, saying so, instead of exiting; once
# the node is a primary component again (bootstrapped by hand, as an
# operator would) the worker starts and runs what it is given.
kill -9 "$(cat "$SRV/n2/mysqld.pid")"
cstat() { my_root n1 "SHOW GLOBAL STATUS LIKE 'wsrep_cluster_status'" 2>/dev/null | cut -f2; }
nonprim() { [ "$(cstat)" = non-Primary ]; }
wait_for 60 nonprim || fail "node 1 did not leave the primary component when node 2 died (status $(cstat))"
SKED_CONFIG=$T/n1.conf start_worker np --node-id np --concurrency 2 --lease 3s \
	--poll 100ms --handler "work=$h $T"
npid=$wpid
sleep 3
kill -0 "$npid" 2>/dev/null || { cat "$T/np.log" >&2; fail "a worker started against a node outside the primary component exited"; }
grep -q 'waiting for it' "$T/np.log" || { cat "$T/np.log" >&2; fail "the waiting worker did not say that it waits"; }
my_root n1 "SET GLOBAL wsrep_provider_options = 'pc.bootstrap=YES'"
wait_for 60 ready 1 || fail "node 1 did not become a primary component again"
id=$(SKED_CONFIG=$T/n1.conf sk enqueue work --payload 'after the wait')
done_np() { [ "$(my_sql "$P1" "SELECT COUNT(*) FROM {p}task_done WHERE id = $id AND status = 2")" = 1 ]; }
wait_for 60 done_np || { cat "$T/np.log" >&2; fail "the worker that waited for node 1 did not run task $id"; }
grep -q 'answers: starting' "$T/np.log" || { cat "$T/np.log" >&2; fail "the worker did not say that the database answers"; }
kill -TERM "$npid"
wait_exit "$npid" 30
expect_eq "$wrc" 0 "exit of the worker that waited for its database"
note "galera: a worker started against a node outside the primary component waited for it and ran its task once the node was primary again"
