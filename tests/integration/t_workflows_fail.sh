#!/bin/sh
# Dependencies when parents fail, are cancelled or retried, and bad
# input (docs/workflows.md): under "cancel" a dead or cancelled parent
# cancels its sub-graph, each task naming the parent that stopped it;
# under "ignore" it counts as ended; a parent that already ended counts
# at once; cancel of a blocked task, retry of a dead parent, retention
# of a parent whose child waits; --after naming a missing task or not a
# number is refused with one line and exit 65, nothing written.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

st() { sk --json show "$1" | json_get 'd["status"]'; }
err() { sql "SELECT last_error FROM {p}task WHERE id = $1 UNION ALL SELECT last_error FROM {p}task_done WHERE id = $1"; }

# bad input: nothing written
before=$(count "SELECT COUNT(*) FROM $ALL_TASKS a")
for bad in 999999 abc 0 1,x -3; do
	set +e
	sk enqueue w --after "$bad" >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	expect_eq "$rc" 65 "exit of --after $bad"
	expect_eq "$(wc -l <"$T/err" | tr -d ' ')" 1 "lines of the error for --after $bad"
done
set +e
printf 'a\nb\n' | sk enqueue w --lines - --after 999999 >"$T/out" 2>"$T/err"
rc=$?
set -e
expect_eq "$rc" 65 "exit of --lines --after a missing task"
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_TASKS a")" "$before" "tasks after refused enqueues"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task_dep")" 0 "edges after refused enqueues"

# a graph under a parent that dies
p=$(sk enqueue fail --max-attempts 1)
ok=$(sk enqueue w)
a=$(sk enqueue w --after "$p")                             # cancel
b=$(sk enqueue w --after "$a")                             # cancel, below a
c=$(sk enqueue w --after "$b,$ok")                         # cancel, two levels down
i=$(sk enqueue w --after "$p" --on-parent-failure ignore)  # runs
j=$(sk enqueue w --after "$a" --on-parent-failure ignore)  # runs once a is cancelled
expect_eq "$(st "$a") $(st "$b") $(st "$c") $(st "$i")" "blocked blocked blocked blocked" "before the worker"
expect_eq "$(sk list --status blocked | tail -n +2 | wc -l | tr -d ' ')" 5 "list --status blocked"
expect_eq "$(sk --json show "$c" | json_get '[(p["id"], p["status"]) for p in d["parents"]]')" \
	"[($ok, 'pending'), ($b, 'blocked')]" "show --json: c's parents"
expect_eq "$(sk --json show "$a" | json_get '[p["id"] for p in d["children"]]')" "[$b, $j]" "show --json: a's children"
sk show "$c" >"$T/show.txt"
grep -q "^  $b  w  blocked\$" "$T/show.txt" || fail "show lists no parent $b: $(cat "$T/show.txt")"
expect_eq "$(sk --json stats | json_get '[q for q in d["queues"] if q["queue"] == "default"][0]["blocked"]')" 5 "stats: blocked"

# cancel of a blocked task, and of a parent
x=$(sk enqueue never)
s=$(sk enqueue w --after "$x")
q=$(sk enqueue never)
r=$(sk enqueue w --after "$q")
r2=$(sk enqueue w --after "$r")
sk cancel "$s" >/dev/null
expect_eq "$(st "$s") $(st "$x")" "cancelled pending" "a blocked task cancelled, its parent untouched"
sk cancel "$q" >/dev/null
expect_eq "$(st "$r") $(st "$r2")" "cancelled cancelled" "children of a cancelled parent"
expect_eq "$(err "$r")" "parent $q was cancelled" "error of a cancelled parent's child"
expect_eq "$(err "$r2")" "parent $r was cancelled" "error two levels down"
# a blocked task is not retried (it has not run)
sk retry "$a" >/dev/null 2>&1 || true
expect_eq "$(st "$a")" blocked "retry of a blocked task"

# a parent kept by retention while a child waits
kept=$(sk enqueue w)
fail=$(handler fail.sh <<'H'
#!/bin/sh
exit 3
H
)
ok_h=$(handler ok.sh <<'H'
#!/bin/sh
echo "$SKED_TASK_ID" >>"$1/ran"
H
)
w2=$(sk enqueue w --after "$kept,$x")
start_worker w --concurrency 4 --poll 100ms --handler "w=$ok_h $T" --handler "fail=$fail"
settled() { [ "$(st "$j")" = succeeded ] && [ "$(st "$i")" = succeeded ] && [ "$(st "$kept")" = succeeded ]; }
wait_for 60 settled || { tail "$T/w.log" >&2; fail "the ignoring children did not run"; }
expect_eq "$(st "$p")" dead "the failing parent"
expect_eq "$(st "$a") $(st "$b") $(st "$c")" "cancelled cancelled cancelled" "the sub-graph below a dead parent"
expect_eq "$(err "$a")" "parent $p ended dead" "a's error"
expect_eq "$(err "$b")" "parent $a was cancelled" "b's error"
expect_eq "$(err "$c")" "parent $b was cancelled" "c's error"
for t in $a $b $c; do
	grep -qx "$t" "$T/ran" && fail "cancelled task $t ran"
done
expect_eq "$(st "$w2")" blocked "a child still waiting on a pending parent"

# parents that have already ended count at once
done_ok=$(sk enqueue w --after "$kept")
# (the worker may have taken it already)
case "$(st "$done_ok")" in blocked | cancelled) fail "child of a succeeded parent is $(st "$done_ok")" ;; esac
pre_c=$(sk enqueue w --after "$p")
expect_eq "$(st "$pre_c")" cancelled "child of a dead parent (cancel)"
expect_eq "$(err "$pre_c")" "parent $p ended dead" "its error"
pre_i=$(sk enqueue w --after "$p" --on-parent-failure ignore)
wait_for 30 sh -c "grep -qx $pre_i '$T/ran'" || fail "child of a dead parent (ignore) did not run"

# retry of the dead parent does not revive the children it cancelled
sk retry "$p" >/dev/null
wait_for 30 sh -c "[ \"\$(SKED_CONFIG=$SKED_CONFIG $SKED --json show $p | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"status\"])')\" = dead ]" ||
	fail "the retried parent did not end dead again"
expect_eq "$(st "$a")" cancelled "a child cancelled by a dead parent, after the parent's retry"

sk prune --older-than 0s >/dev/null
expect_eq "$(where_of "$kept")" task_done "a parent with a waiting child after prune"
expect_eq "$(where_of "$ok")" none "an ended parent whose children ended, after prune"

# the other parent is cancelled: w2 is cancelled, kept may go
sk cancel "$x" >/dev/null
expect_eq "$(st "$w2")" cancelled "w2 after its other parent was cancelled"
expect_eq "$(where_of "$kept")" task_done "kept still there"
sk prune --older-than 0s >/dev/null
expect_eq "$(where_of "$kept")" none "kept pruned once its children ended"
kill_child TERM "$wpid"
wait_exit "$wpid" 30
