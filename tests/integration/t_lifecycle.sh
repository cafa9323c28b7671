#!/bin/sh
# Enqueue, run, inspect: a task's whole life through the command line.
# backends: all
. "$(dirname "$0")/lib.sh"
init_db

id=$(sk enqueue greet --payload "hello")
[ -n "$id" ] || fail "enqueue printed no id"
sk show "$id" | grep -q pending || fail "a new task is not pending"

cat >"$T/h.sh" <<'H'
#!/bin/sh
read -r line
echo "got $line as $SKED_TASK_KIND attempt $SKED_TASK_ATTEMPT"
H
chmod +x "$T/h.sh"
sk worker --handler "greet=$T/h.sh" --until-empty --poll 100ms --lease 5s
expect_eq "$(status_of "$id")" 2 "status after the run"
# an ended task leaves the hot table, in the transaction that ended it
expect_eq "$(where_of "$id")" task_done "table of the succeeded task"
sk show "$id" | grep -q succeeded || fail "show does not find the succeeded task"
sk list | grep -q "^ *$id .*succeeded" || fail "list does not show the succeeded task"
expect_eq "$(sql "SELECT COUNT(*) FROM $ALL_RUNS runs WHERE task_id = $id")" 1 "runs recorded"
sql "SELECT output FROM $ALL_RUNS runs WHERE task_id = $id" | grep -q "got hello as greet attempt 1" ||
	fail "the handler's output tail was not recorded"
