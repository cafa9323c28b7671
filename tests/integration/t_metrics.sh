#!/bin/sh
# Operations endpoints of `sked worker --http`: /metrics passes
# `promtool check metrics` and its figures match the database (tasks by
# queue and status, due tasks, the oldest due task's age, finished tasks by
# kind and outcome, nodes, schedules, locks, schedule fires); /healthz and
# /readyz answer 200, and /healthz turns 503 while the database is blocked
# (a lock held on this test's own tables from another session) and 200
# again once it is released; SIGHUP reloads the config file's schedules
# and never stops the worker.
# backends: engines
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || skip "curl is not installed"
command -v promtool >/dev/null || skip "promtool is not installed (Debian package prometheus)"
init_db

h=$(handler ok.sh <<'H'
#!/bin/sh
exit 0
H
)
for i in 1 2 3; do sk enqueue job --payload "p$i" >/dev/null; done
sk enqueue other --queue q2 >/dev/null
sk enqueue other --queue q2 >/dev/null
sk enqueue other --queue q2 --in 1h >/dev/null
sk enqueue job --in 1h >/dev/null
sk cron add tick '* * * * * *' other --queue q3 --overlap skip >/dev/null
sk cron add paused-one '@daily' other --queue q3 >/dev/null
sk cron pause paused-one >/dev/null
# a yearly schedule whose last fire was missed (as after downtime): the
# worker's first look at it is a misfire
sk cron add late '0 0 1 1 *' other --queue q3 >/dev/null
case "$(family)" in
sqlite) sql "UPDATE {p}schedule SET next_fire = next_fire - 400 * 86400000 WHERE name = 'late'" ;;
pg) sql "UPDATE {p}schedule SET next_fire = next_fire - interval '400 days' WHERE name = 'late'" ;;
*) sql "UPDATE {p}schedule SET next_fire = next_fire - INTERVAL 400 DAY WHERE name = 'late'" ;;
esac
sk lock run maint --ttl 10s -- true
sleep 1 # the due tasks of q2 have waited at least this long

port=$(free_port)
SKED_LOG=info start_worker w --queues default --handler "job=$h" \
	--http "127.0.0.1:$port" --poll 100ms --lease 3s
w=$wpid
base="http://127.0.0.1:$port"
done3() { [ "$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE status = 2")" = 3 ]; }
wait_for 20 done3 || { cat "$T/w.log" >&2; fail "the worker did not run the three tasks"; }

code() { curl -s -o "$T/body" -w '%{http_code}' -m 5 "$base$1" || true; }
# value NAME{LABELS}: the sample's value in $T/metrics
value() {
	awk -v k="$1" '$1 == k { print $2; found = 1 } END { if (!found) exit 1 }' "$T/metrics" ||
		fail "no sample $1 in /metrics"
}

expect_eq "$(code /metrics)" 200 "GET /metrics"
cp "$T/body" "$T/metrics"
promtool check metrics <"$T/metrics" >"$T/promtool.out" 2>&1 || {
	cat "$T/promtool.out" >&2
	fail "promtool check metrics rejects /metrics"
}
expect_eq "$(value sked_up)" 1 "sked_up"
expect_eq "$(value 'sked_tasks{queue="q2",status="pending"}')" \
	"$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE queue = 'q2' AND status = 0")" "q2 pending"
expect_eq "$(value 'sked_tasks_due{queue="q2"}')" 2 "q2 due"
expect_eq "$(value 'sked_tasks{queue="default",status="pending"}')" 1 "default pending (not due)"
expect_eq "$(value 'sked_tasks_due{queue="default"}')" 0 "default due"
age=$(value 'sked_queue_oldest_due_age_seconds{queue="q2"}')
awk -v a="$age" 'BEGIN { exit !(a >= 1 && a < 120) }' ||
	fail "oldest due age of q2 is $age s, expected 1 s to 2 min"
expect_eq "$(value 'sked_queue_oldest_due_age_seconds{queue="default"}')" 0.000 "default age"
expect_eq "$(value 'sked_worker_tasks_finished_total{kind="job",outcome="succeeded"}')" \
	"$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE kind = 'job' AND status = 2")" "succeeded"
expect_eq "$(value sked_worker_tasks_claimed_total)" 3 "claimed"
expect_eq "$(value 'sked_worker_handler_duration_seconds_count{kind="job"}')" 3 "handler histogram count"
expect_eq "$(value sked_nodes)" "$(count "SELECT COUNT(*) FROM {p}node")" "nodes"
expect_eq "$(value sked_nodes_alive)" 1 "nodes alive"
expect_eq "$(value 'sked_worker_slots{state="busy"}')" 0 "busy slots"
expect_eq "$(value 'sked_schedules{state="active"}')" 2 "active schedules"
expect_eq "$(value 'sked_schedules{state="paused"}')" 1 "paused schedules"
expect_eq "$(value 'sked_locks{state="free"}')" 1 "free locks (maint, run and released)"
# held: the leader lock of the one worker (docs/design.md, "The leader"),
# as the database has it
expect_eq "$(value 'sked_locks{state="held"}')" \
	"$(count "SELECT COUNT(*) FROM {p}lock WHERE owner IS NOT NULL AND name = 'sked-leader'")" "held locks"
expect_eq "$(value 'sked_locks{state="held"}')" 1 "held locks (the leader's)"
fired() {
	curl -s -m 5 "$base/metrics" >"$T/metrics" &&
		awk '$1 == "sked_schedule_fires_total" && $2 >= 1 { ok = 1 } END { exit !ok }' "$T/metrics"
}
wait_for 10 fired || fail "sked_schedule_fires_total stayed 0 with a schedule firing every second"
# q3 is not served: its one task stays pending, so later fires are skipped
skipped() {
	curl -s -m 5 "$base/metrics" >"$T/metrics" &&
		awk '$1 == "sked_schedule_fires_skipped_total" && $2 >= 1 { ok = 1 } END { exit !ok }' "$T/metrics"
}
wait_for 10 skipped || fail "sked_schedule_fires_skipped_total stayed 0 with an overlap-skip schedule"
misfired() {
	curl -s -m 5 "$base/metrics" >"$T/metrics" &&
		awk '$1 == "sked_schedule_misfires_total" && $2 >= 1 { ok = 1 } END { exit !ok }' "$T/metrics"
}
# at least the late schedule's (the per-second one misfires too when a
# loaded machine delays the worker's schedule loop past a fire)
wait_for 10 misfired || fail "sked_schedule_misfires_total stayed 0 with a schedule past a missed fire: $(grep misfires "$T/metrics")"
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE queue = 'q3'")" "$(value sked_schedule_fires_total)" \
	"tasks made by the schedule"
expect_eq "$(code /healthz)" 200 "GET /healthz"
expect_eq "$(code /readyz)" 200 "GET /readyz"
expect_eq "$(code /nope)" 404 "an unknown path"

# Block the database for the worker: a lock held from another session on
# this test's own tables (never the shared server as a whole).
hold=12
case "$(family)" in
sqlite)
	# with a busy timeout: the worker may hold its own lock for a moment
	{ echo '.timeout 10000'; echo 'BEGIN EXCLUSIVE;'; sleep $hold; echo 'COMMIT;'; } | sqlite3 "$T/sked.db" &
	;;
pg)
	q=$(printf 'BEGIN; LOCK TABLE %stask IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(%d); COMMIT;' "$PREFIX" $hold)
	psql -X -q -At "$SKED_TEST_PG_URL" -c "$q" >/dev/null &
	;;
mariadb)
	sql "LOCK TABLES {p}task WRITE; SELECT SLEEP($hold); UNLOCK TABLES" >/dev/null &
	;;
esac
blocker=$!
unhealthy() { [ "$(code /healthz)" = 503 ]; }
wait_for $hold unhealthy || fail "/healthz did not turn 503 while the database was blocked"
grep -q 'no progress' "$T/body" || { cat "$T/body" >&2; fail "the 503 does not say which loop is stuck"; }
kill -0 "$w" || fail "the worker died while the database was blocked"
wait "$blocker" || true
healthy() { [ "$(code /healthz)" = 200 ]; }
wait_for 20 healthy || { cat "$T/body" >&2; fail "/healthz did not recover after the lock was released"; }

# SIGHUP: reload the config file's schedules, keep running.
cat >>"$SKED_CONFIG" <<CONF
[schedule.hup-added]
cron = @hourly
kind = job
CONF
kill -HUP "$w"
reloaded() { grep -q 'SIGHUP: .*1 schedule(s) reloaded' "$T/w.log"; }
wait_for 10 reloaded || { cat "$T/w.log" >&2; fail "SIGHUP did not reload the schedules"; }
kill -0 "$w" || fail "SIGHUP stopped the worker"
expect_eq "$(count "SELECT COUNT(*) FROM {p}schedule WHERE name = 'hup-added'")" 1 "schedule added by SIGHUP"
expect_eq "$(code /healthz)" 200 "GET /healthz after SIGHUP"

kill -TERM "$w"
wait_exit "$w" 15
expect_eq "$wrc" 0 "the worker's exit status"
