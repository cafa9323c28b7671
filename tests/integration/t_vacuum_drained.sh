#!/bin/sh
# A drain leaves its hot table clean. On PostgreSQL a worker vacuums the
# task table itself after every 5,000 tasks it ends, paced (at most
# every twenty times as long as its last vacuum took), so a burst used to
# leave its last dead rows behind: after a million tasks through one
# table, 989,125 dead row versions, and the next drain of 20,000 ran at
# 16,926 tasks/s against 30,095 on a fresh table (docs/performance.md,
# "Ended tasks piling up"). Now a drain (--until-empty) vacuums as it ends
# when it has ended 500 tasks or more since its last vacuum. Here one
# drain of 4,000 tasks must be followed by a vacuum of the task table
# that ended after the last task did; before this change there was none
# (the paced vacuum waits for 5,000). 4,000, not more: with 6,000 the
# paced vacuum could land within the last 500 tasks, and then the drain
# rightly has too little churn left to vacuum again (seen once in CI).
# backends: pg
. "$(dirname "$0")/lib.sh"
init_db

n=4000
seq 1 $n | sk enqueue noop --lines - >/dev/null
start_worker a --node-id a --concurrency 10 --poll 100ms \
	--builtin-noop noop --until-empty
wait_exit "$wpid" 300
[ "$wrc" = 0 ] || { cat "$T/a.log" >&2; fail "the worker exited $wrc"; }
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE status = 2")" $n "tasks succeeded"

# PostgreSQL sets last_vacuum when a manual VACUUM ends, in shared
# memory: no statistics flush to wait for
after=$(sql "SELECT COALESCE(s.last_vacuum >= (SELECT MAX(finished_at) FROM {p}task_done), false)
	FROM pg_stat_user_tables s WHERE s.relid = '{p}task'::regclass")
[ "$after" = t ] || {
	sql "SELECT last_vacuum, vacuum_count, n_dead_tup FROM pg_stat_user_tables WHERE relid = '{p}task'::regclass" >&2
	sql "SELECT MAX(finished_at) FROM {p}task_done" >&2
	fail "no vacuum of the task table after the drain's last task ended"
}
echo ok
