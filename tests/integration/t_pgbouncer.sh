#!/bin/sh
# t_pgbouncer — (pgbouncer) sked behind PgBouncer in transaction pooling.
#
# The whole suite runs through PgBouncer as the `pgbouncer` backend, with
# sked_pooling=transaction in the URL. This test checks what that backend
# cannot show by itself: the URL parameter is sked's own (a mode it does
# not know is one line, exit 69; libpq never sees it); without it sked
# finds the pooler by itself, says so once per process and works; with
# sked_pooling=session (named statements, the explicit choice) the
# failure a transaction pooler causes (a named prepared statement found
# on a server session this client never had) is one line that names the
# setting. Workers, claims under contention, renewals, migrations (a
# transaction-scoped lock) are the suite's.
# backends: pgbouncer
. "$(dirname "$0")/lib.sh"
case "$SKED_BACKEND" in
pgbouncer) ;;
*) not_here "PgBouncer's own edges (every test runs through it as the pgbouncer backend)" ;;
esac
init_db

expect_rc 0 sk --db "$URL" info
grep -q 'sked_pooling=transaction' "$T/out" || fail "info does not show the URL it used"

bogus=$(printf '%s' "$URL" | sed 's/sked_pooling=transaction/sked_pooling=statement/')
expect_rc 64 sk --db "$bogus" info
stderr_one_line "$T/err"
grep -q "sked_pooling must be 'session' or 'transaction', not 'statement'" "$T/err" ||
	fail "unexpected message: $(cat "$T/err")"

# Without the parameter sked finds the pooler itself (the server's
# process id is not the one PgBouncer gave at connect) and runs unnamed
# statements: init, enqueue, list, stats and a worker that drains all
# work, run after run, and each process says so once (info).
plain=$(printf '%s' "$URL" | sed 's/[?&]sked_pooling=transaction//')
case "$plain" in *sked_pooling*) fail "the URL still has sked_pooling: $plain" ;; esac
ok=$(handler ok <<'EOF'
#!/bin/sh
exit 0
EOF
)
pooler_lines() { grep -c 'a connection pooler stands between' "$T/err" || true; }
for i in 1 2 3 4 5 6 7 8 9 10; do
	SKED_LOG=info expect_rc 0 sk --db "$plain" init
	expect_eq "$(pooler_lines)" 1 "run $i: init's lines about the pooler"
	seq 1 5 | SKED_LOG=info expect_rc 0 sk --db "$plain" enqueue plain --lines -
	expect_eq "$(pooler_lines)" 1 "run $i: enqueue's lines about the pooler"
	expect_rc 0 sk --db "$plain" list
	expect_rc 0 sk --db "$plain" stats
done
SKED_LOG=info expect_rc 0 sk --db "$plain" worker --handler "plain=$ok" --until-empty --concurrency 4
expect_eq "$(pooler_lines)" 1 "the worker's lines about the pooler"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task_done WHERE kind = 'plain' AND status = 2")" 50 \
	"tasks drained without sked_pooling"
expect_rc 0 sk --db "$plain" show "$(sql "SELECT MAX(id) FROM {p}task_done")"

# Behind the pooler a worker hears no notification (LISTEN is accepted,
# and the server session it ran on serves the next client), so it polls
# (up to every 2 s once idle), and an idle fleet takes new work at once.
# Two idle one-slot workers get two 10-second tasks: both start within
# 6 s. (A worker that believed it listened claimed once a minute: the
# leader ran both, one after the other, 10 s apart.)
slow=$(handler slow <<'EOF'
#!/bin/sh
date +%s%3N >>"$1/slow.starts"
sleep 10
EOF
)
for i in 1 2; do
	start_worker "idle$i" --node-id "idle$i" --concurrency 1 --handler "slow=$slow $T"
done
both_up() { [ "$(count "SELECT COUNT(*) FROM {p}node WHERE id LIKE 'idle%'")" = 2 ]; }
wait_for 30 both_up || fail "the two workers did not register"
sleep 5 # idle: past their first claims, their polls backed off
t0=$(now_ms)
seq 1 2 | sk enqueue slow --lines - >/dev/null
started() { wc -l <"$T/slow.starts" 2>/dev/null || echo 0; }
two_started() { [ "$(started)" -ge 2 ]; }
wait_for 30 two_started || fail "two tasks for two idle workers: $(started) started in 30 s"
last=$(sort -n "$T/slow.starts" | tail -n 1)
note "behind the pooler: two idle workers started two tasks $((last - t0)) ms after the enqueue"
[ $((last - t0)) -le 6000 ] ||
	fail "the second of two tasks for two idle workers started $((last - t0)) ms after the enqueue (at most 6000: the workers poll behind a pooler)"
for i in 1 2; do kill_child TERM "$(cat "$T/idle$i.pid")"; done

# sked_pooling=session is the explicit choice of named statements: no
# check, no switch. PgBouncer hands the most recently used server session
# to the next client, so one of a few runs in a row meets the statements
# of the run before it, and that failure is one line naming the setting.
case "$plain" in
*\?*) session="$plain&sked_pooling=session" ;;
*) session="$plain?sked_pooling=session" ;;
esac
seen=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	set +e
	sk --db "$session" list >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	[ $rc = 0 ] && continue
	stderr_one_line "$T/err"
	grep -q 'add sked_pooling=transaction to the URL' "$T/err" ||
		fail "the failure does not name the setting: $(cat "$T/err")"
	seen=$((seen + 1))
done
[ $seen -gt 0 ] || fail "ten runs with named statements through a transaction pooler all passed"
note "$seen of 10 runs with sked_pooling=session met another session's statements"
