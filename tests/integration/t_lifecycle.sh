#!/bin/sh
# Enqueue, run, inspect: a task's whole life through the command line.
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
expect_eq "$(sql "SELECT status FROM {p}task WHERE id = $id")" 2 "status after the run"
expect_eq "$(sql "SELECT COUNT(*) FROM {p}run WHERE task_id = $id")" 1 "runs recorded"
sql "SELECT output FROM {p}run WHERE task_id = $id" | grep -q "got hello as greet attempt 1" ||
	fail "the handler's output tail was not recorded"
