#!/bin/sh
# Retention: `sked prune` removes ended tasks (and their runs) older than
# an age or than each status's retention, never a task that is pending,
# running or waiting; a pruned task's unique key can be used again; bad
# input is refused; and a running worker prunes by itself with the ages of
# the config file's [retention].
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

h=$(handler h.sh <<'H'
#!/bin/sh
[ "$(cat)" = bad ] && exit 3
exit 0
H
)
s1=$(sk enqueue job --payload ok)
s2=$(sk enqueue job --payload ok)
s3=$(sk enqueue job --payload ok)
d1=$(sk enqueue job --payload bad --max-attempts 1)
d2=$(sk enqueue job --payload bad --max-attempts 1)
u=$(sk enqueue job --payload ok --unique key-1)
sk worker --handler "job=$h" --until-empty --poll 100ms 2>"$T/w.log" ||
	{ cat "$T/w.log" >&2; fail "worker failed"; }
c1=$(sk enqueue job --payload ok)
sk cancel "$c1" >/dev/null
p1=$(sk enqueue job --payload ok)
# ended tasks are in task_done (schema 4), the hot table holds the live one
expect_eq "$(count "SELECT COUNT(*) FROM {p}task_done WHERE status IN (2, 3, 5)")" 7 "ended tasks"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task")" 1 "live tasks"

# age them as if they had ended days ago
ago() { # DAYS ID...
	days=$1
	shift
	for id in "$@"; do
		case "$(family)" in
		sqlite) sql "UPDATE {p}task_done SET finished_at = finished_at - $days * 86400000 WHERE id = $id" ;;
		pg) sql "UPDATE {p}task_done SET finished_at = finished_at - interval '$days days' WHERE id = $id" ;;
		*) sql "UPDATE {p}task_done SET finished_at = finished_at - INTERVAL $days DAY WHERE id = $id" ;;
		esac
	done
}
ago 10 "$s1" "$s2" "$d1" "$u"
ago 40 "$d2" "$c1"

# an age and a status
expect_rc 0 sk --json prune --older-than 9d --status succeeded
expect_eq "$(json_get 'd["removed"]' <"$T/out")" 3 "removed: old succeeded tasks"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task_done WHERE id IN ($s1, $s2, $u)")" 0 "old succeeded tasks left"
expect_eq "$(where_of "$s1")" none "a pruned task, in either table"
expect_rc 65 sk show "$s1"
stderr_one_line "$T/err"
grep -q "pruned" "$T/err" || fail "show of a pruned task does not say it may have been pruned: $(cat "$T/err")"
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_RUNS runs WHERE task_id IN ($s1, $s2, $u)")" 0 "runs of pruned tasks"
expect_eq "$(status_of "$s3")" 2 "a recent succeeded task"
expect_eq "$(status_of "$d1")" 3 "a dead task, not asked for"

# each status's retention (defaults: succeeded 7d, dead and cancelled 30d)
expect_rc 0 sk prune
expect_eq "$(cat "$T/out")" "2 task(s) removed" "default retention"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task_done WHERE id IN ($d2, $c1)")" 0 "month-old dead and cancelled tasks"
expect_eq "$(status_of "$d1")" 3 "a dead task 10 days old (kept a month)"
expect_eq "$(status_of "$p1")" 0 "a pending task"
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_RUNS runs WHERE task_id = $d1")" 1 "runs of a kept task"

# nothing but ended tasks, whatever the age
expect_rc 0 sk prune --older-than 0s
expect_eq "$(status_of "$p1")" 0 "a pending task after prune --older-than 0s"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task_done")" 0 "ended tasks after prune --older-than 0s"

# a pruned task's unique key is free again
again=$(sk enqueue job --payload ok --unique key-1)
[ "$again" != "$u" ] || fail "the unique key of a pruned task still names it"

# bad input
expect_rc 64 sk prune --status pending
stderr_one_line "$T/err"
expect_rc 64 sk prune --older-than soon
stderr_one_line "$T/err"

# a dead task retried before the prune is back in the hot table: neither
# it nor its runs are pruned, however old its end was
d3=$(sk enqueue job --queue q3 --payload bad --max-attempts 1)
sk worker --queues q3 --handler "job=$h" --until-empty --poll 100ms 2>/dev/null
expect_eq "$(status_of "$d3")" 3 "a task that failed its only attempt"
ago 40 "$d3"
expect_rc 0 sk retry "$d3"
expect_eq "$(where_of "$d3")" task "table of a retried dead task"
expect_rc 0 sk prune --older-than 0s
expect_eq "$(status_of "$d3")" 0 "a retried task after prune"
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_RUNS runs WHERE task_id = $d3")" 1 "runs of a retried task after prune"

# the worker's own pruner, with the config's [retention]
sk cancel "$p1" >/dev/null
sk cancel "$again" >/dev/null
n=$(count "SELECT (SELECT COUNT(*) FROM {p}task) + (SELECT COUNT(*) FROM {p}task_done)")
cat >>"$T/sked.conf" <<CONF
[retention]
succeeded = forever
dead = forever
cancelled = 1s
CONF
SKED_LOG=info start_worker p --node-id pruner --handler "job=$h" --poll 100ms
gone() { [ "$(count "SELECT COUNT(*) FROM {p}task_done WHERE status = 5")" = 0 ]; }
wait_for 30 gone || { cat "$T/p.log" >&2; fail "the worker did not prune cancelled tasks"; }
kill -TERM "$wpid"
wait_exit "$wpid" 20
grep -q "pruner: removed" "$T/p.log" || fail "the worker did not say it pruned"
expect_eq "$(count "SELECT (SELECT COUNT(*) FROM {p}task) + (SELECT COUNT(*) FROM {p}task_done)")" $((n - 2)) "tasks left after the worker pruned"
