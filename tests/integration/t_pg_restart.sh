#!/bin/sh
# PostgreSQL only: a worker whose sessions the server ends (as a restart,
# a failover or an administrator's pg_terminate_backend does) reconnects
# and finishes every task exactly once, including those whose handlers
# were running when the sessions died. The server itself is shared with
# tests running in parallel, so only this worker's sessions are ended:
# the URL names them with application_name (libpq parameters pass
# through sked unchanged). A one-shot command against a closed port fails
# with one line and exit 69, without the password.
# backends: pg pg-optimistic
. "$(dirname "$0")/lib.sh"
case "$SKED_BACKEND" in
pg | pg-optimistic) ;;
*) not_here "PostgreSQL (libpq) only" ;;
esac
init_db

app="sked_${PREFIX}w"
case "$URL" in
*\?*) WURL="$URL&application_name=$app" ;;
*) WURL="$URL?application_name=$app" ;;
esac

h=$(handler h.sh <<'H'
#!/bin/sh
touch "$1/started.$SKED_TASK_ID"
sleep 3
echo "$SKED_TASK_ID $SKED_TASK_ATTEMPT" >>"$1/done"
H
)
ids=""
for i in 1 2 3 4 5 6; do ids="$ids $(sk enqueue job --payload "p$i")"; done

port=$(free_port)
"$SKED" --db "$WURL" worker --concurrency 6 --lease 20s --poll 200ms \
	--http "127.0.0.1:$port" --handler "job=$h $T" >"$T/w.log" 2>&1 &
wpid=$!
running() { [ "$(ls "$T"/started.* 2>/dev/null | wc -l)" = 6 ]; }
wait_for 20 running || { cat "$T/w.log" >&2; fail "handlers did not start"; }

terminate() {
	sql "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '$app'"
}
killed=$(terminate)
[ "$killed" -ge 2 ] || { cat "$T/w.log" >&2; fail "expected the worker's sessions, ended $killed"; }
note "ended $killed session(s) while 6 handlers ran"

# Handlers end about 3 s after they started; their results must land once
# the worker has reconnected.
all_done() { [ "$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE status = 2")" = 6 ]; }
wait_for 40 all_done || { cat "$T/w.log" >&2; fail "tasks did not all finish after the sessions were ended"; }

# Again while idle: the next tasks are still picked up.
killed=$(terminate)
[ "$killed" -ge 1 ] || fail "expected the idle worker's sessions, ended $killed"
more="$(sk enqueue job --payload p7) $(sk enqueue job --payload p8)"
eight_done() { [ "$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE status = 2")" = 8 ]; }
wait_for 40 eight_done || { cat "$T/w.log" >&2; fail "tasks enqueued after an idle disconnect did not run"; }
# the sessions come back, still carrying the URL's application_name. The
# finishing one proved itself by the results above and closes once unused
# for 10 s (connections follow the work, docs/design.md); the claims one
# is back at the next claim, the leases one at the next renewal (an idle
# node renews every lease/3, here 6.7 s): the idle worker comes back to
# two sessions. Then /metrics is read until the claims and leases
# sessions have been reconnected (both were ended twice): read once, it
# could come before the leases session was back, the two sessions seen
# then being claims and finishes. (The first read of /metrics opens a
# session of its own, for the gauges: it comes after the count.)
reconnected() {
	curl -s -m 5 "http://127.0.0.1:$port/metrics" >"$T/metrics" || return 1
	for conn in claims leases; do
		n=$(awk -v c="sked_worker_db_reconnects_total{conn=\"$conn\",result=\"made\"}" '$1 == c { print $2 }' "$T/metrics")
		[ "${n:-0}" -ge 1 ] || return 1
	done
}
two_sessions() { [ "$(count "SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = '$app'")" = 2 ]; }
wait_for 40 two_sessions || { cat "$T/w.log" >&2; fail "the idle worker did not come back to its two sessions (claims, leases): $(count "SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = '$app'")"; }
if command -v curl >/dev/null; then
	wait_for 40 reconnected || { grep reconnects "$T/metrics" >&2; fail "the claims and leases connections were not both reconnected (/metrics)"; }
	# the finishing one is reconnected only when the session ended was
	# still open and is used again within its idle limit (10 s), else it
	# is closed as idle and a new one opened, which is no reconnect:
	# under a loaded machine either happens, so its counter is only
	# required to be there
	grep -q '^sked_worker_db_reconnects_total{conn="finishes",result="made"} [0-9]' "$T/metrics" ||
		fail "no reconnect counter for the finishes connection in /metrics"
fi
kill -TERM "$wpid"
wait_exit "$wpid" 30
[ "$wrc" = 0 ] || { cat "$T/w.log" >&2; fail "worker exited $wrc"; }

# exactly once: one successful attempt per task, nothing late or retried
for id in $ids $more; do
	expect_eq "$(count "SELECT COUNT(*) FROM $ALL_RUNS runs WHERE task_id = $id AND outcome = 'succeeded'")" 1 "successful runs of task $id"
	expect_eq "$(count "SELECT COUNT(*) FROM $ALL_RUNS runs WHERE task_id = $id")" 1 "runs of task $id"
	expect_eq "$(grep -c "^$id " "$T/done")" 1 "handler completions of task $id"
done
expect_eq "$(count "SELECT MAX(attempts) FROM $ALL_TASKS a")" 1 "attempts"

# a closed port: one line, exit 69, no password
expect_rc 69 "$SKED" --db "postgres://u:s3cret@127.0.0.1:1/x?connect_timeout=3" info
stderr_one_line "$T/err"
if grep -q s3cret "$T/err"; then fail "the password reached stderr: $(cat "$T/err")"; fi
grep -q "127.0.0.1" "$T/err" || fail "the error does not say where: $(cat "$T/err")"
