#!/bin/sh
# Runbook verbs by filter: `sked cancel` and `sked retry` with --status,
# --kind, --queue and --older-than print how many tasks match and change
# nothing without --yes; with --yes they change exactly those, in
# batches (1200 tasks cross two batch boundaries), and say how many.
# Running tasks are cancelled only with --status running, and then their
# handlers are stopped.
# Bad filters are refused in one line with a usage code.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

h=$(handler h.sh <<'H'
#!/bin/sh
exit 1
H
)
n_status() { count "SELECT COUNT(*) FROM {p}task WHERE kind = '$1' AND status = $2"; }
n_done() { count "SELECT COUNT(*) FROM {p}task_done WHERE kind = '$1' AND status = $2"; }

for i in 1 2 3; do sk enqueue a --queue q1 --in 1h >/dev/null; done
sk enqueue a --queue q2 --in 1h >/dev/null
# dead tasks: three of kind f in q1, one in q2
for i in 1 2 3; do sk enqueue f --queue q1 --max-attempts 1 >/dev/null; done
sk enqueue f --queue q2 --max-attempts 1 >/dev/null
sk worker --handler "f=$h" --until-empty --poll 100ms --lease 5s 2>/dev/null
expect_eq "$(n_done f 3)" 4 "dead tasks made"

# the count first, nothing changed
expect_rc 0 sk cancel --kind a
grep -qx "4 pending or retry task(s) match; add --yes to cancel them" "$T/out" ||
	fail "cancel without --yes: $(cat "$T/out")"
expect_eq "$(n_status a 0)" 4 "pending after a cancel without --yes"

# --yes changes only what matches
expect_rc 0 sk cancel --kind a --queue q1 --yes
grep -qx "3 of 3 matching pending or retry task(s) cancelled" "$T/out" ||
	fail "cancel --yes: $(cat "$T/out")"
expect_eq "$(n_done a 5)" 3 "cancelled by kind and queue"
expect_eq "$(n_status a 0)" 1 "the task of the other queue stays pending"

# JSON: matched, changed, applied
expect_eq "$(sk --json cancel --kind a | json_get 'd["matched"], d["changed"], d["applied"]')" \
	"(1, 0, False)" "cancel --json without --yes"

# retry: dead by default; --status cancelled brings the cancelled back
expect_rc 0 sk retry --queue q1
grep -qx "3 dead task(s) match; add --yes to retry them" "$T/out" ||
	fail "retry without --yes: $(cat "$T/out")"
expect_eq "$(n_done f 3)" 4 "dead after a retry without --yes"
expect_rc 0 sk retry --queue q1 --yes
grep -qx "3 of 3 matching dead task(s) retried" "$T/out" ||
	fail "retry --yes: $(cat "$T/out")"
expect_eq "$(n_status f 0)" 3 "dead tasks of q1 pending again"
expect_eq "$(n_done f 3)" 1 "the dead task of q2 stays dead"
expect_rc 0 sk retry --status cancelled --kind a --yes
expect_eq "$(n_status a 0)" 4 "cancelled tasks pending again"

# a retry some of whose tasks a live task's unique key holds again: the
# others are retried, and one line says how many stayed ended (65)
sk enqueue u --unique bulk-k --in 1h >/dev/null
sk enqueue u --in 1h >/dev/null
sk cancel --kind u --yes >/dev/null
sql "INSERT INTO {p}task (kind, payload, unique_key) VALUES ('u', 'ok', 'bulk-k')" >/dev/null
expect_rc 65 sk retry --status cancelled --kind u --yes
stderr_one_line "$T/err"
grep -q "retry cancelled task(s) (2 matched): 1 task(s) retried, 1 left ended (.*bulk-k" "$T/err" ||
	fail "partial retry: $(cat "$T/err")"
expect_eq "$(n_status u 0)" 2 "the free task retried beside the new holder"
expect_eq "$(n_done u 5)" 1 "the task whose key is taken stays cancelled"
sql "DELETE FROM {p}task WHERE kind = 'u'" >/dev/null

# --older-than: by creation time on the database clock
sk cancel --kind f --yes >/dev/null
sk enqueue old --in 1h >/dev/null
sk enqueue old --in 1h >/dev/null
sleep 2
sk enqueue old --in 1h >/dev/null
expect_rc 0 sk cancel --kind old --older-than 1500ms --yes
grep -qx "2 of 2 matching pending or retry task(s) cancelled" "$T/out" ||
	fail "cancel --older-than: $(cat "$T/out")"
expect_eq "$(n_status old 0)" 1 "the young task stays pending"

# many: several batches, every one changed once
seq 1 1200 | sk enqueue many --lines - --in 1h >/dev/null
expect_rc 0 sk cancel --kind many --yes
grep -qx "1200 of 1200 matching pending or retry task(s) cancelled" "$T/out" ||
	fail "cancel of 1200: $(cat "$T/out")"
expect_eq "$(n_done many 5)" 1200 "1200 cancelled"
expect_rc 0 sk retry --status cancelled --kind many --yes
grep -qx "1200 of 1200 matching cancelled task(s) retried" "$T/out" ||
	fail "retry of 1200: $(cat "$T/out")"
expect_eq "$(n_status many 0)" 1200 "1200 pending again"

# running tasks only when asked for: their handlers are stopped
s=$(handler slow.sh <<'H'
#!/bin/sh
echo $$ >"$1/slow.pid"
sleep 60
H
)
sk enqueue slow >/dev/null
start_worker w --node-id w --lease 2s --poll 100ms --handler "slow=$s $T"
wait_for 30 test -s "$T/slow.pid" || { cat "$T/w.log" >&2; fail "the slow task did not start"; }
expect_rc 0 sk cancel --kind slow --yes
grep -qx "0 of 0 matching pending or retry task(s) cancelled" "$T/out" ||
	fail "cancel by default touched a running task: $(cat "$T/out")"
expect_rc 0 sk cancel --kind slow --status running --yes
grep -qx "1 of 1 matching running task(s) cancelled" "$T/out" ||
	fail "cancel --status running: $(cat "$T/out")"
expect_eq "$(n_done slow 5)" 1 "the running task cancelled"
spid=$(cat "$T/slow.pid")
gone() { ! kill -0 "$spid" 2>/dev/null || case "$(ps -o stat= -p "$spid")" in Z*) true ;; *) false ;; esac; }
wait_for 20 gone || { cat "$T/w.log" >&2; fail "the cancelled task's handler still runs"; }

# refusals: one line, a usage code, nothing changed
expect_rc 64 sk retry --status running
stderr_one_line "$T/err"
expect_rc 64 sk cancel --status dead --kind a
stderr_one_line "$T/err"
expect_rc 64 sk cancel --status nonsense
stderr_one_line "$T/err"
expect_rc 64 sk cancel --older-than 5x --kind a
stderr_one_line "$T/err"
expect_rc 64 sk cancel 5 --kind a
stderr_one_line "$T/err"
expect_rc 64 sk cancel --yes
stderr_one_line "$T/err"
expect_rc 64 sk retry
stderr_one_line "$T/err"
expect_rc 65 sk cancel --kind 'bad kind' --yes
stderr_one_line "$T/err"
expect_eq "$(n_status a 0)" 4 "pending after the refusals"
expect_eq "$(n_status many 0)" 1200 "pending after the refusals"
echo "ok"
