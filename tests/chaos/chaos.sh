#!/bin/bash
# tests/chaos/chaos.sh — the guarantee under faults, on one backend.
#
#   SKED=… SKED_BACKEND=sqlite|pg|mariadb|pg-failover|galera [CHAOS_SECONDS=30] bash chaos.sh
#
# N worker processes drain tasks whose handler writes a line when each
# attempt starts and ends, while this driver
#   - kills a random worker with kill -9 every 2 s and starts another,
#   - restarts the database server once, a third of the way in,
#   - freezes it (SIGSTOP) once for longer than the lease, two thirds in,
#   - pg-failover: a primary with a synchronous standby (remote_apply),
#     workers on a multi-host URL; half way in the primary dies whole and
#     the standby is promoted (the restart and the freeze hit whichever
#     is primary then)
#   - galera: a three-node MariaDB Galera cluster, workers spread over
#     the three nodes (enqueuers and the verdict on node 1); a sixth of
#     the way in node 2 is frozen (SIGSTOP) past the lease while the
#     other two keep quorum, a third in node 3 is killed (kill -9), two
#     thirds in it is started again (the restart) and rejoins (IST, or
#     SST when the gap is too wide) while the run goes on; a
#     replacement worker goes to a node that is up
# (pg and mariadb: a server of the test's own; SQLite has no server: a
# process holding its write lock for longer than the lease stands in for
# the freeze). Enqueuers add work all along. Then a last worker drains
# what is left and the verdict is read from the handler's log, the
# driver's log and the database:
#   lost        tasks not succeeded at the end, and acknowledged enqueues
#               the database no longer has
#   overlaps    two attempts of one task running at the same time (an
#               attempt with no end ran until its worker was killed)
#   unexplained a task that ran to its end more often than its attempts
#               on record allow (a re-run is explained when the database
#               gave out a later attempt: the earlier lease was lost)
#   orphans     handler processes alive 2 s after their worker's kill -9
#   disagree    a succeeded run row with no end in the log, or an attempt
#               started in the log with no run row
# Each must be 0. The figures go to stderr and to $CHAOS_REPORT.
# the servers are the test's own: lib.sh's shared-server URLs are not
# needed (its cleanup finds nothing to drop at a closed port)
MODE=${SKED_BACKEND:-}
case "$MODE" in
pg-failover) export SKED_BACKEND=pg ;; # lib.sh's family: pg
galera) export SKED_BACKEND=mariadb ;; # and mariadb
esac
case "$MODE" in
pg | pg-failover) : "${SKED_TEST_PG_URL:=postgres://postgres@127.0.0.1:1/none}" ;;
mariadb | galera) : "${SKED_TEST_MY_URL:=mysql://sked@127.0.0.1:1/none}" ;;
esac
. "$(dirname "$0")/../integration/lib.sh"
case "$MODE" in
sqlite | pg | mariadb | pg-failover | galera) ;;
*) not_here "the chaos suite runs on sqlite, pg, mariadb, pg-failover and galera" ;;
esac
. "$(dirname "$0")/../integration/servers.sh"

SECS=${CHAOS_SECONDS:-30}
NW=${CHAOS_WORKERS:-4}
LEASE=3s
FREEZE=5 # seconds, longer than the lease

case "$MODE" in
pg)
	port=$(free_port)
	pg_new victim "$port"
	url="postgres://postgres@127.0.0.1:$port/sked_test?connect_timeout=2"
	;;
pg-failover)
	# a primary and a synchronous standby (remote_apply); half way
	# through, the primary dies whole and the standby is promoted
	ports=$(free_ports 2)
	port=${ports% *} sport=${ports#* }
	pg_new victim "$port"
	pg_standby standby "$sport" "$port"
	pg_sql "$port" "ALTER SYSTEM SET synchronous_standby_names = 'standby'" >/dev/null
	pg_sql "$port" "ALTER SYSTEM SET synchronous_commit = 'remote_apply'" >/dev/null
	pg_sql "$port" "SELECT pg_reload_conf()" >/dev/null
	sync_up() { [ "$(pg_sql "$port" "SELECT sync_state FROM pg_stat_replication")" = sync ]; }
	wait_for 20 sync_up || fail "the standby did not become synchronous"
	url="postgres://postgres@127.0.0.1:$port,127.0.0.1:$sport/sked_test?target_session_attrs=read-write&connect_timeout=2"
	;;
mariadb)
	port=$(free_port)
	my_new victim "$port"
	my_wait victim 60
	my_user victim
	url="mysql://sked:sked-test-pw@127.0.0.1:$port/sked_test"
	;;
galera)
	gal_up
	my_user n1
	for i in 1 2 3; do
		eval "printf '[sked]\ndatabase = mysql://sked:sked-test-pw@127.0.0.1:%s/sked_test\nprefix = %s\n' \$P$i \$PREFIX" >"$T/n$i.conf"
	done
	port=$P1
	url="mysql://sked:sked-test-pw@127.0.0.1:$port/sked_test"
	;;
sqlite) url="sqlite:$T/sked.db" ;;
esac
cat >"$T/sked.conf" <<CONF
[sked]
database = $url
prefix = $PREFIX
CONF
init_db

# the handler: one line at the start and one at the end of each attempt
# (task, attempt, node, pid, local ms); most are short, one in ten
# outlives the lease and must be renewed
# An attempt stopped early (kill -9 of its worker, a lease it could not
# renew) writes no end: the long ones leave the time of their last tick
# (every 100 ms) in a file of their own, so its end is known to 100 ms.
h=$(handler h.sh <<'H'
#!/bin/sh
log=$1
node=$2
echo "S $SKED_TASK_ID $SKED_TASK_ATTEMPT $node $$ $(date +%s%3N)" >>"$log"
case $((SKED_TASK_ID % 10)) in
0)
	i=0
	while [ $i -lt 40 ]; do
		date +%s%3N >"${log}.alive.$SKED_TASK_ID.$SKED_TASK_ATTEMPT.$$"
		sleep 0.1
		i=$((i + 1))
	done
	;;
*) sleep 0.0$((SKED_TASK_ID % 9 + 1)) ;;
esac
echo "E $SKED_TASK_ID $SKED_TASK_ATTEMPT $node $$ $(date +%s%3N)" >>"$log"
H
)
LOG=$T/attempts
DLOG=$T/driver
: >"$LOG"
: >"$DLOG"
dlog() { echo "$* $(now_ms)" >>"$DLOG"; }

nodes=0
start_one() {
	nodes=$((nodes + 1))
	n="c$nodes"
	conf=$T/sked.conf
	if [ "$MODE" = galera ]; then
		# round robin over the Galera nodes that are up
		k=$((nodes % 3 + 1))
		[ ! -f "$T/down.$k" ] || k=$((k % 3 + 1))
		[ ! -f "$T/down.$k" ] || k=$((k % 3 + 1))
		conf=$T/n$k.conf
		n="c$nodes-n$k"
	fi
	SKED_CONFIG=$conf start_worker "$n" --node-id "$n" --concurrency 4 --lease $LEASE \
		--poll 200ms --wait-db 60s --handler "work=$h $LOG $n"
	echo "$wpid $n" >>"$T/live"
	dlog "start $n $wpid"
}
: >"$T/live"
for i in $(seq 1 "$NW"); do start_one; done

# enqueuers: CHAOS_RATE tasks every second, each batch in one
# transaction; attempts without limit (a task killed five times in a row
# would otherwise end dead, by design, and that is not what is judged)
RATE=${CHAOS_RATE:-25}
(
	while [ ! -f "$T/stop" ]; do
		seq 1 "$RATE" | sk enqueue work --max-attempts 1000 --lines - \
			>>"$T/enq.ids" 2>>"$T/enq.err" || true
		sleep 1
	done
) &
enq=$!

cur=victim # the server the restart and the freeze hit
server_restart() {
	dlog "restart"
	case "$MODE" in
	pg | pg-failover)
		as_pg "$(pg_bin)/pg_ctl" -D "$SRV/$cur/data" -m immediate -w stop >/dev/null 2>&1 || true
		sleep 1
		pg_start_dir "$cur" "$port"
		;;
	mariadb)
		kill -9 "$(cat "$SRV/victim/mysqld.pid")"
		sleep 1
		my_start victim "$port"
		my_wait victim 60
		;;
	galera) # node 3, killed before, starts again and rejoins
		gal_node 3
		(gal_synced 3) &
		rejoin=$!
		;;
	sqlite) ;; # no server
	esac
	dlog "restarted"
}
gal_kill() {
	touch "$T/down.$1"
	kill -9 "$(cat "$SRV/n$1/mysqld.pid")"
	wait "$(cat "$SRV/n$1/mysqld.pid")" 2>/dev/null || true
	dlog "node-killed n$1"
}
gal_synced() { # in the background: wait until node I has rejoined
	j=0
	until gal_ready "$1"; do
		j=$((j + 1))
		[ $j -lt 900 ] || { dlog "node-stuck n$1"; exit 1; }
		sleep 0.2
	done
	rm -f "$T/down.$1"
	how=SST
	grep -q "IST received" "$SRV/n$1/server.log" && how=IST
	dlog "node-rejoined n$1 $how"
}
failover() { # the primary dies whole, the standby takes over
	dlog "failover"
	pg_kill victim
	pg_promote standby
	# from here on the standby is the server: restart and freeze act on it
	cur=standby
	port=$sport
	dlog "promoted"
}
server_freeze() {
	dlog "freeze"
	case "$MODE" in
	pg | pg-failover)
		pm=$(pg_pid "$cur")
		kill -STOP "$pm" $(pgrep -P "$pm")
		sleep $FREEZE
		kill -CONT "$pm" $(pgrep -P "$pm")
		;;
	mariadb)
		kill -STOP "$(cat "$SRV/victim/mysqld.pid")"
		sleep $FREEZE
		kill -CONT "$(cat "$SRV/victim/mysqld.pid")"
		;;
	galera)
		kill -STOP "$(cat "$SRV/n2/mysqld.pid")"
		sleep $FREEZE
		kill -CONT "$(cat "$SRV/n2/mysqld.pid")"
		;;
	sqlite)
		sqlite3 "$T/sked.db" ".timeout 10000" "BEGIN IMMEDIATE; SELECT 1;" ".shell sleep $FREEZE" "COMMIT;" >/dev/null 2>&1 || true
		;;
	esac
	dlog "thawed"
}

# every 2 s a random worker dies; its handlers must die with it
orphans=0
kills=0
end=$(($(date +%s) + SECS))
restarted=0
frozen=0
failed_over=0
rejoined=0
t0=$(date +%s)
while [ "$(date +%s)" -lt "$end" ]; do
	sleep 2
	el=$(($(date +%s) - t0))
	if [ "$MODE" = galera ]; then
		# node 2 frozen while three are up (two keep quorum), then node
		# 3 killed, later started again: it rejoins while the run goes
		# on (the restart)
		if [ $frozen = 0 ] && [ $el -ge $((SECS / 6)) ]; then
			server_freeze
			frozen=1
		fi
		if [ $failed_over = 0 ] && [ $el -ge $((SECS / 3)) ]; then
			gal_kill 3
			failed_over=1
		fi
		if [ $restarted = 0 ] && [ $el -ge $((SECS * 2 / 3)) ]; then
			server_restart
			restarted=1
		fi
	else
		if [ $restarted = 0 ] && [ $el -ge $((SECS / 3)) ]; then
			server_restart
			restarted=1
		fi
		if [ "$MODE" = pg-failover ] && [ $failed_over = 0 ] && [ $el -ge $((SECS / 2)) ]; then
			failover
			failed_over=1
		fi
		if [ $frozen = 0 ] && [ $el -ge $((SECS * 2 / 3)) ]; then
			server_freeze
			frozen=1
		fi
	fi
	nlive=$(wc -l <"$T/live")
	pick=$(( $(od -An -N2 -tu2 /dev/urandom) % nlive + 1 ))
	set -- $(sed -n "${pick}p" "$T/live")
	vp=$1
	vn=$2
	# a worker that exited by itself may be gone: its pid is no longer ours
	kill_child 9 "$vp"
	wait "$vp" 2>/dev/null || true
	dlog "kill $vn $vp"
	kills=$((kills + 1))
	sed -i "${pick}d" "$T/live"
	start_one
	# a handler of that node still alive 2 s later is an orphan
	(
		sleep 2
		if pgrep -f "h.sh $LOG $vn\$" >/dev/null; then echo "$vn" >>"$T/orphans"; fi
	) &
done
touch "$T/stop"
wait "$enq" 2>/dev/null || true
if [ "$MODE" = galera ] && [ -n "${rejoin:-}" ]; then
	wait "$rejoin" || fail "Galera node 3 did not rejoin within 3 minutes (see $SRV/n3/server.log)"
fi
dlog "drain"
# the survivors stop cleanly; one more drains what is left
while read -r p n; do kill -TERM "$p" 2>/dev/null || true; done <"$T/live"
while read -r p n; do wait_exit "$p" 60; done <"$T/live"
start_worker drain --node-id drain --concurrency 8 --lease $LEASE --poll 200ms \
	--until-empty --handler "work=$h $LOG drain"
wait_exit "$wpid" 300
[ "$wrc" = 0 ] || { tail -n 20 "$T/drain.log" >&2; fail "the last worker exited $wrc"; }
sleep 2.5 # the last orphan checks
orphans=$(cat "$T/orphans" 2>/dev/null | wc -l | tr -d ' ')

# ---- the verdict ----
q() {
	case "$MODE" in
	pg | pg-failover) pg_sql "$port" "$1" ;;
	mariadb) my_sql "$port" "$1" ;;
	galera) my_sql "$P1" "SET SESSION wsrep_sync_wait = 1; $1" ;;
	sqlite) sql "$1" ;;
	esac
}
tasks=$(q "SELECT COUNT(*) FROM $ALL_TASKS a")
lost=$(q "SELECT COUNT(*) FROM $ALL_TASKS a WHERE status <> 2")
# and acknowledged enqueues the database no longer has
q "SELECT id FROM $ALL_TASKS a" | sort -n >"$T/db.ids"
sort -n "$T/enq.ids" | grep -v '^$' >"$T/acked.ids" || true
vanished=$(comm -23 "$T/acked.ids" "$T/db.ids" | wc -l | tr -d ' ')
lost=$((lost + vanished))
q "SELECT id, attempts FROM $ALL_TASKS a" >"$T/db.tasks"
q "SELECT task_id, attempt, outcome FROM $ALL_RUNS r" >"$T/db.runs"
set -- $(python3 - "$LOG" "$DLOG" "$T/db.tasks" "$T/db.runs" <<'PY'
import sys, collections
log, dlog, dbt, dbr = sys.argv[1:5]
kill_at = {}
for l in open(dlog):
    f = l.split()
    if f[0] == "kill":
        kill_at[f[1]] = int(f[-1])
# (task, attempt, pid) -> [start ms, node, end ms or None]
att = {}
ends = collections.Counter()
for l in open(log):
    f = l.split()
    if len(f) != 6:
        continue  # a line cut short by a kill
    k = (int(f[1]), int(f[2]), int(f[4]))
    if f[0] == "S":
        att[k] = [int(f[5]), f[3], None]
    elif k in att:
        att[k][2] = int(f[5])
        ends[(k[0], k[1])] += 1
attempts = {}
for l in open(dbt):
    i, a = l.split()
    attempts[int(i)] = int(a)
runs = collections.defaultdict(list)
for l in open(dbr):
    t, a, o = l.rstrip("\n").split("\t")
    runs[(int(t), int(a))].append(o)
# overlaps: the intervals of one task, by start; an attempt with no end
# ran until its worker was killed (or, when it was not, is judged by its
# start alone)
import glob, os
alive = {}
for f in glob.glob(log + ".alive.*"):
    t, a, p = f.rsplit(".", 3)[1:]
    try:
        alive[(int(t), int(a), int(p))] = int(open(f).read().strip() or 0)
    except ValueError:
        pass  # cut short by a kill
bytask = collections.defaultdict(list)
for (t, a, p), (st, n, e) in att.items():
    if e is None:
        # stopped early: by its last tick (long ones), or within the
        # 100 ms a short one sleeps, and never after its worker's death
        e = max(st, alive.get((t, a, p), st)) + 150
        if n in kill_at and kill_at[n] >= st:
            e = min(e, kill_at[n] + 50)
    bytask[t].append((st, e, a))
overlaps = 0
overlapping = set()
for t, iv in bytask.items():
    iv.sort()
    for (s1, e1, a1), (s2, e2, a2) in zip(iv, iv[1:]):
        if s2 < e1:
            overlaps += 1
            overlapping.add(t)
# completions beyond the attempts the database gave out
unexplained = 0
extra = 0
per_task = collections.Counter()
for (t, a), c in ends.items():
    per_task[t] += c
    if c > 1:
        unexplained += c - 1  # one attempt number ran to its end twice
for t, c in per_task.items():
    if c > 1:
        extra += c - 1
# run rows against the log
disagree = 0
odd = set()
for (t, a), os_ in runs.items():
    if "succeeded" in os_ and ends[(t, a)] == 0:
        disagree += 1
        odd.add(t)
for (t, a, p) in att:
    if (t, a) not in runs:
        disagree += 1
        odd.add(t)
with open(dbt + ".odd", "w") as f:
    f.write("".join("%d\n" % t for t in sorted(odd)))
with open(dbt + ".overlap", "w") as f:
    f.write("".join("%d\n" % t for t in sorted(overlapping)))
print(overlaps, unexplained, extra, disagree, len(att))
PY
)
overlaps=$1 unexplained=$2 extra=$3 disagree=$4 attempts=$5
# what the database and the handler's log hold of each task that
# disagrees, while its servers still run: the evidence a failure needs
for t in $(head -n 5 "$T/db.tasks.odd") $(head -n 5 "$T/db.tasks.overlap"); do
	note "disagreeing or overlapping task $t: the log's lines, the task row, its runs"
	awk -v t="$t" '$2 == t' "$LOG" >&2
	grep -H "task $t " "$T"/*.log >&2 || true
	q "SELECT id, status, attempts, max_attempts, node_id, last_error FROM $ALL_TASKS a WHERE id = $t" >&2 || true
	q "SELECT id, attempt, node_id, started_at, finished_at, outcome, error FROM $ALL_RUNS r WHERE task_id = $t ORDER BY attempt" >&2 || true
done
restarts=$(grep -c '^restarted' "$DLOG")
freezes=$(grep -c '^thawed' "$DLOG" || true)
failovers=$(grep -c '^promoted' "$DLOG" || true)
node_kills=$(grep -c '^node-killed' "$DLOG" || true)
# how each node came back, and how long it took from its start
rejoins=$(awk '$1 == "restart" { t = $2 } $1 == "node-rejoined" { printf "%s%s:%s:%.1fs", (n++ ? "," : ""), $2, $3, ($4 - t) / 1000 } END { if (!n) printf "0" }' "$DLOG")
extra_fig=""
[ "$MODE" != galera ] || extra_fig=" node_kills=$node_kills rejoins=$rejoins"
line="chaos $MODE ${SECS}s: tasks=$tasks attempts=$attempts kills=$kills restarts=$restarts freezes=$freezes failovers=$failovers$extra_fig lost=$lost overlaps=$overlaps explained_duplicates=$extra unexplained=$unexplained orphans=$orphans disagree=$disagree"
note "$line"
[ -n "${CHAOS_REPORT:-}" ] && echo "$line" >>"$CHAOS_REPORT"
expect_eq "$lost" 0 "tasks lost"
expect_eq "$overlaps" 0 "overlapping attempts"
expect_eq "$unexplained" 0 "completions no lost lease explains"
expect_eq "$orphans" 0 "handlers alive after their worker's kill -9"
expect_eq "$disagree" 0 "run records that disagree with the handler's log"
[ "$tasks" -gt 0 ] || fail "no tasks ran"
