#!/bin/sh
# Upgrading to schema 5 keeps every recorded attempt: a database at
# schema 4 whose ended tasks have their whole history in run rows (as
# schema 4 kept it: a succeeded task, one that failed and then succeeded,
# a dead one after three failures, a cancelled one that never ran) is
# migrated by `sked init`. show --json then lists each attempt once, in
# order, with its outcome, exit code, error and output; a retry of the
# dead task keeps them; after the upgrade, the attempt that ends a task
# is recorded on its ended row and not in a run row, and show lists it
# like the others; prune removes both.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

flaky=$(handler flaky.sh <<'H'
#!/bin/sh
echo "try $SKED_TASK_ATTEMPT"
[ "$SKED_TASK_ATTEMPT" -ge 2 ] && exit 0
exit 7
H
)
bad=$(handler bad.sh <<'H'
#!/bin/sh
echo "boom $SKED_TASK_ATTEMPT" >&2
exit 3
H
)
ok=$(sk enqueue ok)
fl=$(sk enqueue flaky)
dead=$(sk enqueue bad --max-attempts 3)
gone=$(sk enqueue ok --in 1h)
sk cancel "$gone" >/dev/null
work() {
	sk worker --handler ok=/bin/true --handler "flaky=$flaky" --handler "bad=$bad" \
		--retry-base 50ms --poll 100ms --lease 5s --until-empty 2>>"$T/w.log" ||
		{ cat "$T/w.log" >&2; fail "worker failed"; }
}
work

# what a user reads: every attempt, once, in order
attempts() { sk --json show "$1" | json_get '",".join("%d:%s:%s" % (r["attempt"], r["outcome"], r.get("exit_code")) for r in d["runs"])'; }
expect_eq "$(attempts "$ok")" "1:succeeded:0" "attempts of the succeeded task (schema 5)"
expect_eq "$(attempts "$fl")" "1:failed:7,2:succeeded:0" "attempts of the flaky task (schema 5)"
expect_eq "$(attempts "$dead")" "1:failed:3,2:failed:3,3:failed:3" "attempts of the dead task (schema 5)"
# schema 5 writes run rows only for the attempts that did not end a task
expect_eq "$(count "SELECT COUNT(*) FROM {p}run")" 3 "run rows (flaky 1, dead 1 and 2)"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task_done WHERE outcome IS NOT NULL")" 3 "ended rows recording their last attempt"
for id in $ok $fl $dead $gone; do sk --json show "$id" >"$T/before.$id.json"; done

# back to schema 4's shape: the ended rows' attempts become run rows,
# the four columns go
sql "INSERT INTO {p}run (task_id, attempt, node_id, started_at, finished_at, outcome, exit_code, error, output) SELECT id, attempts, node_id, started_at, finished_at, outcome, exit_code, error, output FROM {p}task_done WHERE outcome IS NOT NULL" >/dev/null
for c in outcome exit_code error output; do
	sql "ALTER TABLE {p}task_done DROP COLUMN $c" >/dev/null
done
# and what schema 7 added (dependencies)
sql "DROP TABLE {p}task_dep" >/dev/null
for c in dependents open_parents on_parent_failure result; do
	sql "ALTER TABLE {p}task DROP COLUMN $c" >/dev/null
	sql "ALTER TABLE {p}task_done DROP COLUMN $c" >/dev/null
done
# and what schema 8 added (the node's handler count)
sql "ALTER TABLE {p}node DROP COLUMN busy" >/dev/null
# and what schema 9 added (queue pause, trace context)
sql "ALTER TABLE {p}queue_limit DROP COLUMN paused" >/dev/null
sql "ALTER TABLE {p}task DROP COLUMN traceparent" >/dev/null
sql "ALTER TABLE {p}task_done DROP COLUMN traceparent" >/dev/null
# and what schemas 10 and 11 added
undo_steps_10_11
undo_step_12_progress
undo_step_16_hooks
undo_step_15_cron_weight
undo_step_14_events
undo_step_13_fair
sql "UPDATE {p}meta SET value = '4' WHERE name = 'schema_version'" >/dev/null
expect_eq "$(count "SELECT COUNT(*) FROM {p}run")" 6 "run rows at schema 4"

expect_rc 0 sk init
expect_eq "$(sk --json info | json_get 'd["schema_version"] >= 5 and d["schema_version"] == d["schema_expected"]')" true "schema version after the upgrade"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task_done WHERE outcome IS NOT NULL")" 0 "ended rows recording an attempt after the upgrade"
# the same history, read the same way, nothing twice
for id in $ok $fl $dead $gone; do
	sk --json show "$id" >"$T/after.$id.json"
	expect_eq "$(json_get '[(r["attempt"], r["outcome"], r.get("exit_code"), r.get("error"), r.get("output"), r.get("node_id")) for r in d["runs"]]' <"$T/after.$id.json")" \
		"$(json_get '[(r["attempt"], r["outcome"], r.get("exit_code"), r.get("error"), r.get("output"), r.get("node_id")) for r in d["runs"]]' <"$T/before.$id.json")" \
		"attempts of task $id before and after the upgrade"
done
expect_eq "$(json_get 'len(d["runs"])' <"$T/after.$gone.json")" 0 "attempts of the cancelled task"
sk show "$dead" >"$T/show.txt"
expect_eq "$(grep -c 'failed  exit 3' "$T/show.txt")" 3 "show's lines for the dead task's attempts"

# a retry of the dead task keeps its history; its new attempt ends on
# the ended row
expect_rc 0 sk retry "$dead"
work
expect_eq "$(attempts "$dead")" "1:failed:3,2:failed:3,3:failed:3,4:failed:3" "attempts of the retried dead task"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task_done WHERE id = $dead AND outcome = 'failed' AND attempts = 4")" 1 "the retried task's last attempt on its ended row"
expect_eq "$(count "SELECT COUNT(*) FROM {p}run WHERE task_id = $dead")" 3 "run rows of the retried task"
# a task that ends after the upgrade: one row, no run row
new=$(sk enqueue ok)
work
expect_eq "$(attempts "$new")" "1:succeeded:0" "attempts of a task ended after the upgrade"
expect_eq "$(count "SELECT COUNT(*) FROM {p}run WHERE task_id = $new")" 0 "run rows of a task ended after the upgrade"
expect_eq "$(sk --json show "$new" | json_get 'd["runs"][0]["node_id"] is not None and d["runs"][0]["started_at"] <= d["runs"][0]["finished_at"]')" true "node and times of the attempt on the ended row"
# prune removes both kinds of record
expect_rc 0 sk prune --older-than 0s --status succeeded
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_RUNS r WHERE task_id IN ($ok, $fl, $new)")" 0 "attempts of pruned tasks"
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_RUNS r WHERE task_id = $dead")" 4 "attempts of the dead task after pruning succeeded ones"
