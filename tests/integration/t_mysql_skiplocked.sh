#!/bin/sh
# MariaDB, skip-locked: a claimer never waits on rows another claim holds.
#
# One session opens a claim transaction the way sked's claim does (READ
# COMMITTED, the dialect's SELECT … FOR UPDATE SKIP LOCKED on the due
# index, LIMIT 3) and holds it. While it holds, a worker must claim and run
# every other task at once, leave the three held ones alone, and the
# holder must have locked only its three rows: a claim that locked every
# due row it scanned (a filesort over status IN (0, 4)) would starve the
# worker, and one under REPEATABLE READ would take gap locks.
# backends: mariadb
. "$(dirname "$0")/lib.sh"
[ "$SKED_BACKEND" = mariadb ] || not_here "MariaDB skip-locked only (this is $SKED_BACKEND)"
init_db
sk info | grep -q "skip-locked" || skip "the server does not run skip-locked"

HOLD=12
for i in 1 2 3; do sk enqueue k --priority 10 >/dev/null; done
ids=$(sk enqueue k --lines - <<L
$(seq 1 40)
L
)
[ "$(echo "$ids" | wc -l)" = 40 ] || fail "enqueue --lines printed no 40 ids"
held=$(sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM $ALL_TASKS a WHERE priority = 10")

# the holder: sked's claim statement, then a sleep tagged with the prefix (the client strips comments)
sql "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED;
START TRANSACTION;
SELECT id FROM {p}task WHERE due_prio IS NOT NULL AND run_at <= UTC_TIMESTAMP(3)
 ORDER BY due_prio, run_at, id LIMIT 3 FOR UPDATE SKIP LOCKED;
SELECT SLEEP($HOLD) AS {p}hold;
COMMIT;" >"$T/holder.out" 2>&1 &
holder=$!

holding() {
	sql "SELECT trx_rows_locked FROM information_schema.INNODB_TRX
	     WHERE trx_query LIKE '%{p}hold%' AND trx_query NOT LIKE '%INNODB_TRX%'" | grep -q .
}
wait_for 10 holding || fail "the holding session never started"
locked=$(sql "SELECT trx_rows_locked FROM information_schema.INNODB_TRX
	WHERE trx_query LIKE '%{p}hold%' AND trx_query NOT LIKE '%INNODB_TRX%'")
note "the held claim of 3 rows locks $locked row(s) of 43 due"
[ "$locked" -le 6 ] || fail "a claim of 3 locked $locked rows: the due index does not bound the lock"

start=$(date +%s)
sk worker --handler k=/bin/true --concurrency 8 --until-empty --poll 100ms \
	--lease 30s >"$T/worker.out" 2>&1 &
worker=$!
done40() { [ "$(sql "SELECT COUNT(*) FROM $ALL_TASKS a WHERE status = 2")" = 40 ]; }
wait_for 8 done40 || fail "the worker did not drain the 40 free tasks while 3 were held"
took=$(($(date +%s) - start))
holding || fail "the holder finished before the worker (the test proves nothing)"
note "40 free tasks done in ${took}s while 3 were held"
expect_eq "$(sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM $ALL_TASKS a WHERE status = 0")" \
	"$held" "the held tasks are the ones left pending"

# once the holder commits, the worker takes the three and exits
wait "$holder" || { cat "$T/holder.out" >&2; fail "the holding session failed"; }
wait "$worker" || { cat "$T/worker.out" >&2; fail "the worker failed"; }
expect_eq "$(sql "SELECT COUNT(*) FROM $ALL_TASKS a WHERE status = 2")" 43 "all tasks done"
expect_eq "$(sql "SELECT COUNT(*) FROM $ALL_RUNS runs")" 43 "one run per task"
