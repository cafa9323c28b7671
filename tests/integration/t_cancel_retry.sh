#!/bin/sh
# Steering tasks from the command line: cancel makes a pending task
# cancelled; cancelling a finished task is refused (exit 65, one line);
# cancelling a running task stops its handler (its worker notices at the
# next lease renewal) and the task stays cancelled, its late result
# recorded but not applied; retry runs a dead task again.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

h=$(handler h.sh <<'H'
#!/bin/sh
echo $$ >"$1/pid.$SKED_TASK_ID"
case "$(cat)" in
slow) sleep 30 ;;
fail) exit 1 ;;
esac
echo "$SKED_TASK_ID" >>"$1/done"
H
)

# pending -> cancelled: the task leaves the hot table in the same
# transaction (schema 4), and show and list still find it
p=$(sk enqueue job --payload ok --in 1h)
expect_eq "$(where_of "$p")" task "table of a pending task"
sk show "$p" | grep -q pending || fail "show before cancel"
expect_rc 0 sk cancel "$p"
expect_eq "$(status_of "$p")" 5 "status after cancelling a pending task"
expect_eq "$(where_of "$p")" task_done "table of a cancelled task"
sk show "$p" | grep -q cancelled || fail "show of a cancelled task"
sk --json list --status cancelled | json_get '[t["id"] for t in d]' | grep -q "$p" ||
	fail "list --status cancelled does not show the cancelled task"
expect_rc 65 sk cancel "$p"
stderr_one_line "$T/err"
grep -q "cancelled" "$T/err" || fail "a second cancel does not say the task was cancelled"

# cancelled -> pending again: back into the hot table with its id, due
# now, and it runs
expect_rc 0 sk retry "$p"
expect_eq "$(where_of "$p")" task "table of a retried cancelled task"
expect_eq "$(status_of "$p")" 0 "status after retrying a cancelled task"
sk show "$p" | grep -q pending || fail "show after retry"
sk worker --handler "job=$h $T" --until-empty --poll 100ms --lease 5s
expect_eq "$(status_of "$p")" 2 "the retried cancelled task ran"
grep -qx "$p" "$T/done" || fail "the retried cancelled task's handler did not run"
expect_eq "$(where_of "$p")" task_done "table of the retried task once it succeeded"

# a retry whose unique key a new live task has taken meanwhile (a plain
# INSERT, which does not look among ended tasks) is refused in one line,
# and the ended task stays as it was
k=$(sk enqueue job --payload ok --unique steer-k --in 1h)
sk cancel "$k" >/dev/null
sql "INSERT INTO {p}task (kind, payload, unique_key) VALUES ('job', 'ok', 'steer-k')" >/dev/null
expect_rc 65 sk retry "$k"
stderr_one_line "$T/err"
grep -q "steer-k" "$T/err" || fail "the refusal does not name the key: $(cat "$T/err")"
expect_eq "$(where_of "$k")" task_done "table of a task whose retry was refused"
expect_eq "$(status_of "$k")" 5 "status of a task whose retry was refused"
sql "DELETE FROM {p}task WHERE unique_key = 'steer-k'" >/dev/null

# a finished task cannot be cancelled
f=$(sk enqueue job --payload ok)
sk worker --handler "job=$h $T" --until-empty --poll 100ms --lease 5s
expect_eq "$(status_of "$f")" 2 "the quick task succeeded"
expect_rc 65 sk cancel "$f"
stderr_one_line "$T/err"
expect_eq "$(status_of "$f")" 2 "status after refusing to cancel"
expect_rc 65 sk cancel 999999
stderr_one_line "$T/err"

# cancelling a running task stops its handler
r=$(sk enqueue job --payload slow)
start_worker w --node-id w --lease 2s --poll 100ms --handler "job=$h $T"
wait_for 20 test -s "$T/pid.$r" || { cat "$T/w.log" >&2; fail "the slow task did not start"; }
hpid=$(cat "$T/pid.$r")
expect_rc 0 sk cancel "$r"
expect_eq "$(status_of "$r")" 5 "status right after cancelling a running task"
gone() { ! kill -0 "$hpid" 2>/dev/null || case "$(ps -o stat= -p "$hpid")" in Z*) true ;; *) false ;; esac; }
# renewal every lease/3, then SIGTERM: well within 5 s
wait_for 5 gone || { cat "$T/w.log" >&2; fail "the cancelled task's handler still runs"; }
recorded() { [ "$(count "SELECT COUNT(*) FROM $ALL_RUNS runs WHERE task_id = $r")" = 1 ]; }
wait_for 10 recorded || fail "the stopped attempt was not recorded"
expect_eq "$(sql "SELECT outcome FROM $ALL_RUNS runs WHERE task_id = $r")" late "outcome of the cancelled attempt"
expect_eq "$(status_of "$r")" 5 "status after the worker recorded its result"
grep -qx "$r" "$T/done" && fail "the cancelled handler ran to its end"
kill -TERM "$wpid"
wait_exit "$wpid" 10
expect_eq "$wrc" 0 "worker exit status"

# retry of a dead task runs it again
d=$(sk enqueue job --payload fail --max-attempts 1)
sk worker --handler "job=$h $T" --until-empty --poll 100ms --lease 5s 2>/dev/null
expect_eq "$(status_of "$d")" 3 "status after the only attempt failed"
expect_eq "$(where_of "$d")" task_done "table of a dead task"
expect_rc 65 sk retry "$f"
stderr_one_line "$T/err"
expect_rc 0 sk retry "$d"
expect_eq "$(status_of "$d")" 0 "status after retry"
expect_eq "$(where_of "$d")" task "table of a retried dead task"
expect_rc 65 sk retry 999999
stderr_one_line "$T/err"
sql "UPDATE {p}task SET payload = 'ok' WHERE id = $d" >/dev/null
sk worker --handler "job=$h $T" --until-empty --poll 100ms --lease 5s
expect_eq "$(status_of "$d")" 2 "status after the retried run"
expect_eq "$(sql "SELECT attempt, outcome FROM $ALL_RUNS runs WHERE task_id = $d ORDER BY attempt" | tr '\t\n' ' ,')" \
	"1 failed,2 succeeded," "runs of the retried task"
