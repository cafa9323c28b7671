#!/bin/sh
# Waiting for a task's end (issue 36): `sked wait ID…` blocks until the
# tasks end, prints each outcome and exits with the documented code of
# the worst (0 succeeded, 68 dead, 67 cancelled, 75 the time ran out, 65
# an unknown id, 64 bad input); `enqueue --wait` enqueues and waits;
# GET /api/tasks/ID?wait=D answers as soon as the task ends, or after D,
# cut to 30 s, and a parked long-poll holds no other API request up. On
# PostgreSQL the waiter does not poll: it marks the task, its statement
# stays the same for seconds while it sleeps, and the NOTIFY of the
# ending transaction wakes it; a task nobody waits for is never marked.
# backends: engines pgbouncer
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || skip "curl is not installed"
init_db
# PostgreSQL with a session of its own LISTENs; behind a transaction
# pooler the waiter reads with a back-off, like the other databases
push=0
[ "$(family)" = pg ] && [ "$SKED_BACKEND" != pgbouncer ] && push=1

h=$(handler h.sh <<'H'
#!/bin/sh
read -r p || true
case "$p" in
fail*) echo "boom" >&2; exit 1 ;;
sleep*) sleep "${p#sleep }" ;;
esac
printf "result of %s" "$SKED_TASK_ID" >"$SKED_TASK_RESULT_FILE"
H
)

# bad input: one line and a sysexits code, before the database
expect_rc 64 sk wait
stderr_one_line "$T/err"
expect_rc 64 sk wait abc
expect_rc 64 sk wait 1 --timeout forever
expect_rc 64 sk enqueue job --wait-timeout 5s
stderr_one_line "$T/err"
expect_rc 65 sk wait 999999
stderr_one_line "$T/err"

# nothing runs: the time runs out (75), the task shown as it is
a=$(sk enqueue job --payload 'sleep 0')
t0=$(now_ms)
expect_rc 75 sk wait "$a" --timeout 1s
el=$(($(now_ms) - t0))
[ "$el" -ge 900 ] && [ "$el" -lt 30000 ] || fail "wait --timeout 1s took ${el} ms"
expect_eq "$(cat "$T/out")" "$a pending" "wait's line for a pending task"
if [ $push = 1 ]; then
	expect_eq "$(sql "SELECT waited FROM {p}task WHERE id = $a")" 1 "the waited mark"
fi

# a task nobody waits for is never marked (PostgreSQL: the trigger's WHEN)
b=$(sk enqueue job --payload 'fail')
c=$(sk enqueue job --payload 'sleep 0' --in 1h)
if [ $push = 1 ]; then
	expect_eq "$(sql "SELECT waited FROM {p}task WHERE id = $b")" 0 "an unwaited task's mark"
	expect_eq "$(count "SELECT count(*) FROM pg_trigger WHERE tgname = '${PREFIX}ended'")" 1 "the end trigger"
fi

# a waiter blocked before the worker starts returns when the task ends
sk wait "$a" "$b" --timeout 60s >"$T/w1.out" 2>"$T/w1.err" &
w1=$!
sk --json wait "$a" --timeout 60s >"$T/w2.out" 2>"$T/w2.err" &
w2=$!
sleep 1
start_worker w --concurrency 4 --poll 100ms --handler "job=$h"
wait_exit "$w1" 60
expect_eq "$wrc" 68 "wait on a succeeded and a dead task"
grep -q "^$a succeeded result of $a\$" "$T/w1.out" || { cat "$T/w1.out" >&2; fail "wait's line for $a"; }
grep -q "^$b dead " "$T/w1.out" || { cat "$T/w1.out" >&2; fail "wait's line for $b"; }
wait_exit "$w2" 60
expect_eq "$wrc" 0 "wait --json on a succeeded task"
expect_eq "$(json_get '[(t["id"], t["status"], t["result"].strip()) for t in d]' <"$T/w2.out")" "[($a, 'succeeded', 'result of $a')]" "wait --json"

# an ended task answers at once; cancelled is 67, and dead wins over it
expect_rc 0 sk wait "$a"
sk cancel "$c" >/dev/null
expect_rc 67 sk wait "$c" "$a"
expect_rc 68 sk wait "$c" "$b"

# enqueue --wait: one go, the result printed, the exit code the outcome's
expect_rc 0 sk enqueue job --payload 'sleep 0' --wait --wait-timeout 60s
grep -q "^[0-9]* succeeded result of [0-9]*\$" "$T/out" || { cat "$T/out" >&2; fail "enqueue --wait's line"; }
expect_rc 68 sk enqueue job --payload fail --max-attempts 1 --wait
printf 'sleep 0\nsleep 0\n' >"$T/lines"
expect_rc 0 sk enqueue job --lines "$T/lines" --wait
expect_eq "$(grep -c ' succeeded ' "$T/out")" 2 "enqueue --lines --wait: a line each"

# on PostgreSQL the waiter sleeps on its connection: the statement it
# ran last keeps its start time while it waits (a poll would run it again
# within a second), and the end wakes it at once
if [ $push = 1 ]; then
	d=$(sk enqueue job --payload 'sleep 0' --in 1h)
	sk wait "$d" --timeout 60s >"$T/w3.out" 2>&1 &
	w3=$!
	q="SELECT query_start FROM pg_stat_activity WHERE query LIKE 'SELECT id, 0 FROM ${PREFIX}task %'"
	has_q() { [ -n "$(sql "$q")" ]; }
	wait_for 20 has_q || fail "the waiter's statement never showed"
	s1=$(sql "$q")
	sleep 3
	s2=$(sql "$q")
	expect_eq "$s2" "$s1" "the waiter's last statement (no polling)"
	sk cancel "$d" >/dev/null
	t0=$(now_ms)
	wait_exit "$w3" 30
	el=$(($(now_ms) - t0))
	expect_eq "$wrc" 67 "the woken waiter's exit code"
	# not polling (above), it looks again only every 10 s: an answer
	# well before that is the NOTIFY's
	[ "$el" -lt 5000 ] || fail "the waiter woke ${el} ms after the cancel"
fi

# ---- the JSON API's long-poll ----
tok=$(head -c 32 /dev/urandom | base64 | tr -d '\n')
printf '%s\n' "$tok" >"$T/tok"
chmod 600 "$T/tok"
start_dashboard dash --api-token "file:$T/tok"
api() { curl -s -H "Authorization: Bearer $tok" "$@"; }
e=$(sk enqueue job --payload 'sleep 0' --in 3s)
t0=$(now_ms)
api -o "$T/lp.json" -w '%{http_code}' "$base/api/tasks/$e?wait=20s" >"$T/lp.code" &
lp=$!
sleep 0.5
# a parked long-poll holds nothing else up
t1=$(now_ms)
expect_eq "$(api -o /dev/null -w '%{http_code}' "$base/api/stats")" 200 "stats during a long-poll"
[ $(($(now_ms) - t1)) -lt 5000 ] || fail "stats waited for the long-poll"
wait_exit "$lp" 30
el=$(($(now_ms) - t0))
expect_eq "$(cat "$T/lp.code")" 200 "the long-poll's status"
expect_eq "$(json_get 'd["status"]' <"$T/lp.json")" succeeded "the long-poll's task"
[ "$el" -ge 2500 ] && [ "$el" -lt 20000 ] || fail "the long-poll answered after ${el} ms (the task ran at 3 s)"
# no end within the wait: the task as it is, after the wait
f=$(sk enqueue job --payload 'sleep 0' --in 1h)
t0=$(now_ms)
expect_eq "$(api -o "$T/lp2.json" -w '%{http_code}' "$base/api/tasks/$f?wait=1s")" 200 "a long-poll that times out"
el=$(($(now_ms) - t0))
[ "$el" -ge 900 ] && [ "$el" -lt 20000 ] || fail "wait=1s answered after ${el} ms"
expect_eq "$(json_get 'd["status"]' <"$T/lp2.json")" pending "the timed-out long-poll's task"
# an ended task answers at once; bad input is the one error shape
expect_eq "$(api -o /dev/null -w '%{http_code}' "$base/api/tasks/$a?wait=30s")" 200 "a long-poll on an ended task"
expect_eq "$(api -o "$T/bad.json" -w '%{http_code}' "$base/api/tasks/$f?wait=soon")" 400 "wait=soon"
expect_eq "$(json_get 'd["error"]["code"]' <"$T/bad.json")" 64 "wait=soon's code"
expect_eq "$(api -o /dev/null -w '%{http_code}' "$base/api/tasks/999999?wait=5s")" 404 "a long-poll on no task"
kill_child TERM "$dpid"
kill_child TERM "$wpid"
