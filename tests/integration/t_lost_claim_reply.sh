#!/bin/sh
# A claim that commits while its reply is lost (the connection breaks
# between the server's commit and the worker's read) must not leave its
# tasks held forever. The worker talks to its server through a proxy that
# swallows the claim's answer once; the worker must notice that the
# claim's outcome is unknown, find the tasks the database says it holds
# with no job here, and give them back at once, unstarted (no run row,
# attempt returned). With --until-empty it then runs the task once and
# exits. Before the fix the tasks stayed running, their lease renewed by
# the heartbeat for the worker's whole life, and --until-empty never
# returned.
# backends: pg pgbouncer mariadb
. "$(dirname "$0")/lib.sh"
case "$SKED_BACKEND" in
pg) mode=this ;;     # one statement: its answer comes after the commit
# through PgBouncer in transaction pooling: the proxy sits between the
# worker and PgBouncer, so the lost answer is lost on the client's side
# of the pooler, as when a worker's link to its PgBouncer breaks; the
# claim is the same one autocommit statement, its server connection back
# in the pool before the answer is lost
pgbouncer) mode=this ;;
# the lock reads the rows, an UPDATE claims them, then COMMIT: lose
# COMMIT's answer
mariadb) mode=commit ;;
*) not_here "the lost reply is staged through a TCP proxy on pg and mariadb" ;;
esac
init_db

tport=$(echo "$URL" | sed 's|.*:\([0-9][0-9]*\)/.*|\1|')
port=$(free_port)
python3 "$(dirname "$0")/../tools/lossy_proxy.py" "$port" 127.0.0.1 "$tport" \
	LOSTREPLY-7f3a "$mode" "$T/proxy.ready" >"$T/proxy.log" 2>&1 &
wait_for 10 test -e "$T/proxy.ready" || fail "the proxy did not start"
sed "s|:$tport/|:$port/|" "$T/sked.conf" >"$T/proxied.conf"
grep -q ":$port/" "$T/proxied.conf" || fail "could not point the worker at the proxy"

h=$(handler h.sh <<'H'
#!/bin/sh
echo "$SKED_TASK_ID $SKED_TASK_ATTEMPT" >>"$1/ran"
H
)
id=$(sk enqueue job --payload LOSTREPLY-7f3a)
other=$(sk enqueue job --payload plain)

# A long lease: without the fix nothing but the lease could free the task,
# and it would be renewed anyway.
SKED_CONFIG="$T/proxied.conf" start_worker w --node-id lossy --lease 60s \
	--poll 200ms --until-empty --handler "job=$h $T"
wait_exit "$wpid" 45
cat "$T/w.log" >&2
grep -q fired "$T/proxy.log" || fail "the proxy never lost a claim's reply"
[ "$wrc" = 0 ] || fail "worker exited $wrc"

expect_eq "$(status_of "$id")" 2 "status of the task whose claim reply was lost"
expect_eq "$(status_of "$other")" 2 "status of the other task"
expect_eq "$(grep -c "^$id " "$T/ran")" 1 "handler runs of the task"
# the lost claim never reached a handler: its attempt went back and no run
# row stands for it; the run that did happen is attempt 1
expect_eq "$(sql "SELECT attempt, outcome FROM $ALL_RUNS runs WHERE task_id = $id")" "1	succeeded" "runs of the task"
expect_eq "$(sql "SELECT attempts FROM $ALL_TASKS a WHERE id = $id")" 1 "attempts of the task"
grep -q "never reached it (the claim's reply was lost): given back" "$T/w.log" ||
	fail "the worker did not say it gave the task back"
