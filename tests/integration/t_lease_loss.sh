#!/bin/sh
# A worker that cannot renew its lease stops its handler before the lease
# can run out, so an expired lease never means two copies of a task at
# once. Renewals are blocked from outside: on SQLite another process holds
# the database's write lock; on a server, another session holds the task's
# row lock. After the block is lifted the task is finished exactly once
# (by the same worker or another), and the stopped attempt stays on record.
# backends: engines pgbouncer
. "$(dirname "$0")/lib.sh"
init_db

# Attempt 1 would run 8 s and then leave a "done" marker; later attempts
# finish at once. It ignores SIGTERM (as does its sleep), so only SIGKILL
# stops it: the worker must send that in time too.
h=$(handler h.sh <<'H'
#!/bin/sh
trap '' TERM
echo $$ >"$1/pid.$SKED_TASK_ATTEMPT"
[ "$SKED_TASK_ATTEMPT" = 1 ] && sleep 8
echo "$SKED_TASK_ATTEMPT" >>"$1/done"
H
)
id=$(sk enqueue job)
start_worker a --node-id a --lease 2s --poll 200ms --handler "job=$h $T"
a=$wpid
wait_for 20 test -s "$T/pid.1" || { cat "$T/a.log" >&2; fail "handler did not start"; }
hpid=$(cat "$T/pid.1")

# Hold the block for 5 s, longer than the 2 s lease; print "held" once it
# is in place.
hold=5
case "$(family)" in
sqlite)
	python3 - "$T/sked.db" $hold >"$T/hold.out" 2>&1 <<'PY' &
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], timeout=10, isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
time.sleep(float(sys.argv[2]))
c.execute("COMMIT")
PY
	;;
pg)
	psql -X -q -At "$SKED_TEST_PG_URL" >"$T/hold.out" 2>&1 <<SQL &
BEGIN;
SELECT id FROM ${PREFIX}task WHERE id = $id FOR UPDATE;
\echo held
SELECT pg_sleep($hold);
COMMIT;
SQL
	;;
mariadb)
	# --unbuffered: "held" must show while the lock is held, not at exit
	mariadb --no-defaults --unbuffered -N -B -h 127.0.0.1 \
		-P "$(echo "$SKED_TEST_MY_URL" | sed 's|.*:\([0-9]*\)/.*|\1|')" \
		-u sked -psked-test-pw sked_test >"$T/hold.out" 2>&1 <<SQL &
BEGIN;
SELECT id FROM ${PREFIX}task WHERE id = $id FOR UPDATE;
SELECT 'held';
SELECT SLEEP($hold);
COMMIT;
SQL
	;;
esac
holder=$!
end=$(($(now_ms) + 10000))
until grep -q held "$T/hold.out"; do
	[ "$(now_ms)" -lt "$end" ] || { cat "$T/hold.out" >&2; fail "could not block renewals"; }
	sleep 0.05
done
held=$(now_ms)

# The last renewal happened before the block, so the lease ends at most
# 2 s after it: by then the handler must be gone.
alive() {
	kill -0 "$hpid" 2>/dev/null || return 1
	case "$(ps -o stat= -p "$hpid" 2>/dev/null)" in Z*) return 1 ;; esac
}
# the clock is read before each look: a look that finds the handler
# alive proves it ran at that time or later (on a loaded machine the
# look itself, a ps, can take 100 ms, and reading the clock after it
# blamed the handler for the look's own delay)
while :; do
	t=$(now_ms)
	alive || break
	[ "$t" -lt $((held + 2000)) ] || {
		cat "$T/a.log" >&2
		fail "handler still running 2 s after renewals were blocked (lease 2s)"
	}
	sleep 0.05
done
note "handler stopped $(($(now_ms) - held)) ms after the block (lease 2000 ms)"

wait_exit "$holder" 20
kill -TERM "$a"
wait_exit "$a" 30
[ "$wrc" = 0 ] || { cat "$T/a.log" >&2; fail "worker a exited $wrc"; }

start_worker b --node-id b --lease 5s --poll 100ms --handler "job=$h $T" --until-empty
wait_exit "$wpid" 30
[ "$wrc" = 0 ] || { cat "$T/b.log" >&2; fail "worker b exited $wrc"; }

expect_eq "$(status_of "$id")" 2 "status"
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_RUNS runs WHERE task_id = $id AND outcome = 'succeeded'")" 1 "succeeded runs"
# The stopped attempt is on record: as failed (the worker recorded it
# first) or as lease-expired (taken back first), then maybe also as the
# worker's late result. Never as succeeded.
[ "$(count "SELECT COUNT(*) FROM $ALL_RUNS runs WHERE task_id = $id AND attempt = 1 AND node_id = 'a' AND outcome IN ('failed', 'lease-expired')")" -ge 1 ] ||
	fail "the stopped attempt is not on record: $(sql "SELECT attempt, outcome FROM $ALL_RUNS runs WHERE task_id = $id")"
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_RUNS runs WHERE task_id = $id AND attempt = 1 AND outcome NOT IN ('failed', 'lease-expired', 'late')")" 0 "other records of the stopped attempt"
# The stopped attempt never reached its end; one later attempt did.
expect_eq "$(cat "$T/done")" 2 "handler runs that completed"
