#!/bin/sh
# No two copies at once, even when the worker process is frozen. Worker a
# runs a long handler program; then a is stopped with SIGSTOP for longer
# than its lease, so its own watchdog cannot run. Worker b takes the task
# back once the lease has run out and runs attempt 2. The lease guard, a
# process apart from the frozen worker, must have killed a's handler at the
# lease's deadline: the handler's last sign of life comes before attempt 2
# starts. When a runs again it must say what happened, not claim to have
# stopped its handlers in time.
# backends: engines pgbouncer
. "$(dirname "$0")/lib.sh"
case "$SKED_BACKEND" in
sqlite | pg | mariadb) ;;
# through PgBouncer in transaction pooling: PgBouncer keeps a server
# connection assigned to a client until its transaction ends, so one the
# frozen worker was inside stays taken, and worker b's take-over must come
# through the pool's other server connections
pgbouncer) ;;
*) not_here "the guard is the same on every backend: sqlite, pg, mariadb and pgbouncer cover the take-over" ;;
esac
init_db

# Attempt 1 ticks every 50 ms for ever; later attempts note their start.
h=$(handler h.sh <<'H'
#!/bin/sh
if [ "$SKED_TASK_ATTEMPT" = 1 ]; then
	while :; do date +%s%3N >>"$1/ticks"; sleep 0.05; done
fi
date +%s%3N >"$1/start.$SKED_TASK_ATTEMPT"
H
)
id=$(sk enqueue job)
start_worker a --node-id a --lease 3s --poll 100ms --handler "job=$h $T"
a=$wpid
wait_for 20 test -s "$T/ticks" || { cat "$T/a.log" >&2; fail "handler did not start"; }
sleep 0.5
# SQLite has one write lock per file: a process frozen inside a write
# transaction (a beat, a renewal) holds it, and no other process on that
# file can write until it runs again (docs/guarantees.md). That is SQLite's
# limit, not the guard's, so on SQLite a is frozen at a moment it holds
# no write lock: if the lock cannot be taken at once, a runs on and is
# frozen again. (A failure under ASan: b waited its 10 s for the lock.)
frozen_free() {
	[ "$(family)" = sqlite ] || return 0
	sqlite3 -batch -cmd '.timeout 0' "$T/sked.db" "BEGIN IMMEDIATE; ROLLBACK;" >/dev/null 2>&1
}
tries=0
while :; do
	kill -STOP "$a"
	stopped=$(now_ms)
	frozen_free && break
	kill -CONT "$a"
	tries=$((tries + 1))
	[ $tries -lt 50 ] || fail "worker a held SQLite's write lock at 50 tries to freeze it"
	sleep 0.05
done

start_worker b --node-id b --lease 3s --poll 100ms --handler "job=$h $T"
b=$wpid
wait_for 20 test -s "$T/start.2" || {
	kill -CONT "$a"
	cat "$T/a.log" "$T/b.log" >&2
	fail "worker b did not take the task over"
}
# let a stay frozen a little longer: a handler still alive would tick on
sleep 1
kill -CONT "$a"

start2=$(cat "$T/start.2")
last=$(tail -n 1 "$T/ticks")
note "frozen at $stopped, handler's last tick $((last - stopped)) ms later, attempt 2 started $((start2 - stopped)) ms later"
[ "$last" -lt "$start2" ] || {
	cat "$T/a.log" >&2
	fail "attempt 1 was still running $((last - start2)) ms after attempt 2 started"
}
# the lease was 3 s: the handler must be dead before it could end
[ $((last - stopped)) -lt 3000 ] || fail "handler ticked $((last - stopped)) ms after its worker froze (lease 3s)"

wait_for 20 grep -q "could not run for" "$T/a.log" || { cat "$T/a.log" >&2; fail "worker a did not say it had been stalled"; }
wait_for 20 grep -q "lease guard" "$T/a.log" || { cat "$T/a.log" >&2; fail "worker a did not say the lease guard stopped its handler"; }
if grep -q "stopped 1 handler(s) before their leases could expire" "$T/a.log"; then
	cat "$T/a.log" >&2
	fail "worker a claims it stopped its handler in time"
fi
kill -TERM "$a" "$b"
wait_exit "$a" 20
wait_exit "$b" 20

expect_eq "$(status_of "$id")" 2 "status"
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_RUNS runs WHERE task_id = $id AND attempt = 2 AND outcome = 'succeeded'")" 1 "attempt 2 succeeded"
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_RUNS runs WHERE task_id = $id AND attempt = 1 AND outcome = 'succeeded'")" 0 "attempt 1 never succeeded"
