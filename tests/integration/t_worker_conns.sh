#!/bin/sh
# Connections follow the work (docs/design.md, "Connections"): an idle
# worker holds two connections; --max-connections N caps a worker while
# it drains a backlog; and a worker that the server lets have only two
# connections (a role's CONNECTION LIMIT, PostgreSQL) runs every task
# once without exiting, where it used to exit at start ("cannot open a
# claim connection (lane 1 of 2): too many connections for role"); and
# on SQLite, a worker started while another process holds the write lock
# waits for it.
# Connections are counted on PostgreSQL (pg_stat_activity, by the node id
# each connection is named after); elsewhere the drains still run.
# backends: engines pgbouncer
. "$(dirname "$0")/lib.sh"
init_db

h=$(handler h.sh <<'H'
#!/bin/sh
echo "$SKED_TASK_ID" >>"$1/ran.$SKED_TASK_ID"
H
)
conns() {
	sql "SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = '$1'"
}
# sample NODE FILE: the node's connections every 50 ms until $T/stop
sample() {
	while [ ! -e "$T/stop" ]; do
		conns "$1" >>"$2" 2>/dev/null || true
		sleep 0.05
	done
}
# ran_once N: N tasks ran, each exactly once
ran_once() {
	expect_eq "$(ls "$T" | grep -c '^ran\.')" "$1" "tasks that ran"
	twice=$(for f in "$T"/ran.*; do [ "$(wc -l <"$f")" = 1 ] || echo "$f"; done)
	[ -z "$twice" ] || fail "tasks that ran more than once: $twice"
}
pg=0
[ "$(family)" = pg ] && [ "$SKED_BACKEND" = pg ] && pg=1

# 1. idle: two connections at most
start_worker idle --node-id conns-idle --handler "x=$h $T" --concurrency 4 \
	--poll 100ms --lease 20s
idle=$wpid
registered() { [ "$(count "SELECT COUNT(*) FROM {p}node WHERE id = 'conns-idle'")" = 1 ]; }
wait_for 10 registered || { cat "$T/idle.log" >&2; fail "the worker did not register"; }
if [ $pg = 1 ]; then
	sleep 3
	n=$(conns conns-idle)
	note "idle worker: $n connection(s)"
	[ "$n" -le 2 ] || fail "an idle worker holds $n connections (at most 2)"
fi

# 2. a backlog under --max-connections 3: never more than 3; every task
# once; back to two once the backlog is gone (after CONN_IDLE_MS, 10 s)
seq 1 400 | sk enqueue x --lines - >/dev/null
start_worker capped --node-id conns-capped --handler "x=$h $T" \
	--concurrency 8 --lanes 4 --max-connections 3 --poll 100ms --lease 20s
capped=$wpid
[ $pg = 1 ] && { sample conns-capped "$T/capped.n" & sampler=$!; }
drained() { [ "$(count "SELECT COUNT(*) FROM {p}task")" = 0 ]; }
wait_for 180 drained || { cat "$T/capped.log" >&2; fail "the backlog was not drained"; }
touch "$T/stop"
[ $pg = 1 ] && wait "$sampler"
ran_once 400
if [ $pg = 1 ]; then
	most=$(sort -n "$T/capped.n" | tail -1)
	note "capped worker: at most $most connection(s) while draining"
	[ "$most" -le 3 ] || fail "--max-connections 3: $most connections"
	back() { [ "$(conns conns-capped)" -le 2 ] && [ "$(conns conns-idle)" -le 2 ]; }
	wait_for 20 back || fail "connections after the backlog: $(conns conns-capped) (at most 2)"
fi
kill -0 "$idle" || fail "the idle worker exited"
kill -0 "$capped" || fail "the capped worker exited"
kill -TERM "$idle" "$capped"
wait_exit "$idle" 20
expect_eq "$wrc" 0 "idle worker's exit status"
wait_exit "$capped" 20
expect_eq "$wrc" 0 "capped worker's exit status"

# 3. SQLite: a worker that starts while another process holds the file's
# write lock (here for 3 s, against a busy wait of 0.5 s) waits for it
# and runs its task, where it used to exit ("cannot register the node:
# sqlite: database is locked")
if [ "$(family)" = sqlite ]; then
	rm -f "$T"/ran.*
	sk enqueue x >/dev/null
	{
		printf 'BEGIN IMMEDIATE;\nSELECT 1;\n'
		sleep 3
		printf 'ROLLBACK;\n'
	} | sqlite3 -batch "$T/sked.db" >/dev/null &
	holder=$!
	sleep 0.5
	export SKED_SQLITE_BUSY_MS=500
	start_worker busy --node-id conns-busy --handler "x=$h $T" --poll 100ms --until-empty
	unset SKED_SQLITE_BUSY_MS
	wait_exit "$wpid" 30
	[ "$wrc" = 0 ] || { cat "$T/busy.log" >&2; fail "a worker started beside a held write lock exited $wrc"; }
	wait "$holder" || true
	grep -q "waiting for the database" "$T/busy.log" ||
		{ cat "$T/busy.log" >&2; fail "the worker did not say it waits for the database"; }
	ran_once 1
fi

# 4. a role that may open two connections only (PostgreSQL)
[ $pg = 1 ] || exit 0
rm -f "$T"/ran.* "$T/stop"
role="${PREFIX}two"
sql "DROP ROLE IF EXISTS $role" >/dev/null 2>&1 || true
sql "CREATE ROLE $role LOGIN CONNECTION LIMIT 2 IN ROLE postgres" >/dev/null
two=""
trap 'rc=$?; set +e; [ -z "$two" ] || kill -9 "$two" 2>/dev/null || true; sql "DROP ROLE IF EXISTS $role" >/dev/null 2>&1 || true; (exit $rc); cleanup' EXIT
url=$(echo "$SKED_TEST_PG_URL" | sed "s|//[^@]*@|//$role@|")
seq 1 300 | sk enqueue x --lines - >/dev/null
SKED_DATABASE_URL=$url "$SKED" worker --node-id conns-two --handler "x=$h $T" \
	--concurrency 8 --poll 100ms --lease 20s >"$T/two.log" 2>&1 &
two=$!
wait_for 180 drained || { cat "$T/two.log" >&2; fail "the role-limited worker did not drain"; }
kill -0 "$two" || { cat "$T/two.log" >&2; fail "the role-limited worker exited"; }
ran_once 300
n=$(grep -c "cannot open the .* connection" "$T/two.log" || true)
note "role-limited worker: $n refusal line(s) logged"
[ "$n" -ge 1 ] || fail "no refusal logged (was the role's limit in force?)"
[ "$n" -le 3 ] || fail "the refusal was logged $n times (once until a connection opens again)"
kill -TERM "$two"
wait "$two" || fail "the role-limited worker exited $? on TERM"
