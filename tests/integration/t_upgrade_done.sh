#!/bin/sh
# Upgrading to schema 4 moves the tasks that ended before it: a database
# at schema 3 whose task table holds succeeded, dead and cancelled tasks
# (as every version before 4 kept them) is migrated by `sked init`; the
# ended tasks are then in task_done with their ids, statuses, unique keys
# and runs, the live one stays, and show, list and stats see them as
# before; the key of an ended task is free (schema 10's live scope).
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

ok=$(sk enqueue job --payload ok --unique old-key)
dead=$(sk enqueue job --payload bad)
gone=$(sk enqueue job --payload x)
live=$(sk enqueue job --payload y --in 1h)

# back to schema 3's shape: no task_done, the ended-task index on task,
# ended tasks in task
sql "DROP TABLE {p}task_done" >/dev/null
# nor what schemas 7 and 9 added to task (dependencies, trace context)
sql "DROP TABLE {p}task_dep" >/dev/null
for c in dependents open_parents on_parent_failure result traceparent; do
	sql "ALTER TABLE {p}task DROP COLUMN $c" >/dev/null
done
# and what schema 8 added (the node's handler count)
sql "ALTER TABLE {p}node DROP COLUMN busy" >/dev/null
# nor what schema 9 added to queue_limit (pause)
sql "ALTER TABLE {p}queue_limit DROP COLUMN paused" >/dev/null
sql "CREATE INDEX {p}task_ended ON {p}task (status, finished_at)" >/dev/null
sql "UPDATE {p}task SET status = 2, attempts = 1, finished_at = updated_at WHERE id = $ok" >/dev/null
sql "UPDATE {p}task SET status = 3, attempts = 5, last_error = 'exit 3', finished_at = updated_at WHERE id = $dead" >/dev/null
sql "UPDATE {p}task SET status = 5, finished_at = updated_at WHERE id = $gone" >/dev/null
sql "INSERT INTO {p}run (task_id, attempt, node_id, started_at, finished_at, outcome) SELECT id, 1, 'n1', updated_at, updated_at, 'succeeded' FROM {p}task WHERE id = $ok" >/dev/null
# and what schemas 10 and 11 added
undo_steps_10_11
undo_step_12_progress
undo_step_16_hooks
undo_step_15_cron_weight
undo_step_14_events
undo_step_13_fair
sql "UPDATE {p}meta SET value = '3' WHERE name = 'schema_version'" >/dev/null
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE status IN (2, 3, 5)")" 3 "ended tasks in task before the upgrade"

expect_rc 0 sk init
expect_eq "$(sk --json info | json_get 'd["schema_version"] == d["schema_expected"]')" true "schema version after the upgrade"
expect_eq "$(where_of "$ok")" task_done "table of the succeeded task"
expect_eq "$(where_of "$dead")" task_done "table of the dead task"
expect_eq "$(where_of "$gone")" task_done "table of the cancelled task"
expect_eq "$(where_of "$live")" task "table of the pending task"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE status IN (2, 3, 5)")" 0 "ended tasks left in task"
expect_eq "$(status_of "$ok") $(status_of "$dead") $(status_of "$gone") $(status_of "$live")" "2 3 5 0" "statuses kept"
expect_eq "$(sql "SELECT last_error FROM {p}task_done WHERE id = $dead")" "exit 3" "the dead task's error kept"

# what users read sees them as before
sk --json show "$ok" >"$T/show.json"
expect_eq "$(json_get 'd["status"]' <"$T/show.json")" succeeded "show of a moved task"
expect_eq "$(json_get 'len(d["runs"])' <"$T/show.json")" 1 "runs of a moved task"
expect_eq "$(sk --json list | json_get '" ".join(str(t["id"]) for t in d)')" "$live $gone $dead $ok" "list after the upgrade"
expect_eq "$(sk --json list --status dead | json_get '[t["id"] for t in d]')" "[$dead]" "list --status dead"
expect_eq "$(sk --json stats | json_get '[d["total"][s] for s in ("pending", "succeeded", "dead", "cancelled")]')" "[1, 1, 1, 1]" "stats after the upgrade"
# the moved task keeps its key (find_unique sees it), but a key is held
# while its task is live (schema 10's default scope, docs/unique.md): an
# ended task's key is free, so the same key enqueues a new task
expect_eq "$(count "SELECT COUNT(*) FROM {p}task_done WHERE id = $ok AND unique_key = 'old-key'")" 1 "the moved task's unique key"
again=$(sk enqueue job --unique old-key 2>/dev/null) || fail "enqueue old-key again"
[ "$again" != "$ok" ] || fail "an ended task still holds its key after the upgrade"
# (gone again, so that the counts below are the upgrade's own)
sk cancel "$again" >/dev/null
sql "DELETE FROM {p}task_done WHERE id = $again" >/dev/null

# and the moved tasks can be steered: a retry brings the dead one back
expect_rc 0 sk retry "$dead"
expect_eq "$(where_of "$dead")" task "table of the retried task"
# a second init changes nothing
expect_rc 0 sk init
expect_eq "$(count "SELECT COUNT(*) FROM {p}task_done")" 2 "ended tasks after a second init"
