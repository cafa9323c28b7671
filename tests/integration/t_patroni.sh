#!/bin/sh
# t_patroni — (pg) PostgreSQL HA as operators run it: three nodes under
# Patroni (etcd as its store, synchronous mode) with HAProxy in front
# sending connections to whichever node Patroni's REST API calls primary.
# A fleet of 8 workers (2 slots each, lease 3 s) and an enqueuer talk only
# to HAProxy. Under load, `patronictl switchover`, then the new primary
# killed -9 whole (Patroni and its server, as when the machine dies).
# Proven: no acknowledged enqueue and no task lost, every task ends
# succeeded, no claim ran twice as the same attempt, every extra run of a
# task is explained by at-least-once (the run records show the earlier
# attempt's lease lost: an outcome other than succeeded), a per-second
# cron schedule fires at most once per fire time and keeps firing after
# both events; the time from each event to the first claim on the new
# primary is noted (docs/postgresql.md, "Patroni"). The stack is the
# test's own (tests/integration/servers.sh, scripts/serverlib.sh), on
# loopback; SKED_TEST_PATRONI_PORTS picks its nine ports, else free ones.
# backends: pg
# cluster: three PostgreSQL servers, their Patronis, etcd and HAProxy
. "$(dirname "$0")/lib.sh"
case "$SKED_BACKEND" in
pg) ;;
*) not_here "the Patroni stack is PostgreSQL's" ;;
esac
. "$(dirname "$0")/servers.sh"

N=${SKED_PATRONI_TASKS:-300}
pat_up
note "patroni: leader $(pat_leader), members: $(pat_members | tr '\n' ';')"
url="postgres://postgres@127.0.0.1:$HP/sked_test?connect_timeout=2"
cat >"$T/sked.conf" <<CONF
[sked]
database = $url
prefix = $PREFIX

[schedule.tick]
cron = * * * * * *
kind = tick
CONF
init_db
# the server behind HAProxy now, for the records (the primary of the moment)
psql_hp() { pg_sql "$HP" "$1"; }

h=$(handler h.sh <<'H'
#!/bin/sh
echo "S $SKED_TASK_ID $SKED_TASK_ATTEMPT $(date +%s%3N)" >>"$1/attempts"
sleep 0.05
echo "E $SKED_TASK_ID $SKED_TASK_ATTEMPT $(date +%s%3N)" >>"$1/attempts"
H
)
: >"$T/attempts"
: >"$T/acked"
seq 1 "$N" | sk enqueue work --lines - >/dev/null
W=8
for i in $(seq 1 $W); do
	start_worker "w$i" --node-id "${PREFIX}w$i" --concurrency 2 --lease 3s \
		--poll 200ms --handler "work=$h $T" --handler tick=true
	eval "wp$i=\$wpid"
done
# an enqueuer that keeps a backlog (50 at a time while fewer than 300
# wait) and writes down each id the database acknowledged
(
	while [ ! -f "$T/stop-enq" ]; do
		p=$(psql_hp "SELECT count(*) FROM {p}task WHERE kind = 'work' AND status = 0" 2>/dev/null) || p=0
		if [ "$p" -lt 300 ]; then
			seq 1 50 | sk enqueue work --lines - 2>/dev/null >>"$T/acked" || true
		fi
		sleep 0.5
	done
) &
enq=$!
ends() { grep -c '^E' "$T/attempts" || true; }
ends_over() { [ "$(ends)" -ge "$1" ]; }
wait_for 90 ends_over 100 || fail "the fleet did not get going through HAProxy ($(ends) tasks ran)"

# first_claim_after MS: the first attempt started at or after MS, in ms
# since the epoch, by the database's clock (the primary of the moment)
first_claim_after() {
	psql_hp "SELECT COALESCE(floor(extract(epoch FROM min(started_at)) * 1000)::bigint, 0) FROM $ALL_RUNS runs WHERE started_at >= to_timestamp($1 / 1000.0)"
}
resumed_after() { [ "$(first_claim_after "$1" 2>/dev/null)" -gt 0 ] 2>/dev/null; }
# pause_after MS: the longest time between two handler starts from MS on
# (the fleet's pause around an event, by the handlers' own clock)
pause_after() {
	awk -v t="$1" '$1 == "S" && $4 >= t - 1000 { print $4 }' "$T/attempts" | sort -n |
		awk 'NR > 1 && $1 - p > m { m = $1 - p } { p = $1 } END { print m + 0 }'
}

# stalled_diag: what a stalled fleet was waiting for, on standard error
# (the members, what the primary's sessions wait on, the synchronous
# standby setting, the backlog, each worker's last lines, Patroni's logs),
# so that a failure under load says why and not only that
stalled_diag() {
	echo "--- members: $(pat_members | tr '\n' ';')" >&2
	echo "--- synchronous_standby_names: $(psql_hp 'SHOW synchronous_standby_names' 2>&1)" >&2
	echo "--- backlog: $(psql_hp "SELECT status, count(*) FROM {p}task GROUP BY status ORDER BY status" 2>&1 | tr '\n' ';')" >&2
	echo "--- the primary's sessions (state, wait, query):" >&2
	psql_hp "SELECT state, coalesce(wait_event_type, '-') || '/' || coalesce(wait_event, '-'), left(query, 80) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()" >&2 2>&1 || true
	for _i in $(seq 1 $W); do
		echo "--- w$_i:" >&2
		tail -n 4 "$T/w$_i.log" >&2 2>/dev/null || true
	done
	pat_logs
}

# In synchronous mode Patroni switches over to, and promotes, only the
# synchronous standby it has named, which it does a few loops after the
# replicas come up: on a fast machine the switchover came first and was
# refused ("412, switchover is not possible: can not find sync_standby"),
# and a primary killed before the next one was named left no leader.
# What is tested is the fleet across a failover, so each waits for it.
has_sync() { pat_members | awk '$2 == "sync_standby" && $3 == "running" { f = 1 } END { exit !f }'; }

# ---- a switchover, as an operator does it ----
wait_for 60 has_sync || fail "no synchronous standby named within 60 s (members: $(pat_members | tr '\n' ';'))"
old=$(pat_leader)
t_sw=$(now_ms)
pat_ctl switchover --leader "$old" --force >"$T/switchover.log" 2>&1 ||
	{ cat "$T/switchover.log" >&2; fail "patronictl switchover failed"; }
new_leader() { l=$(pat_leader) && [ -n "$l" ] && [ "$l" != "$old" ]; }
wait_for 60 new_leader || { pat_logs; fail "no new leader after the switchover (members: $(pat_members | tr '\n' ';'))"; }
wait_for 60 resumed_after "$t_sw" || fail "no task claimed within 60 s of the switchover"
leader=$(pat_leader)
e0=$(ends)
wait_for 90 ends_over $((e0 + 100)) || fail "the fleet did not go on after the switchover ($(ends) tasks ran)"
sw_pause=$(pause_after "$t_sw")
note "switchover $old -> $leader: the fleet paused at most $sw_pause ms"

# ---- the new primary's machine dies ----
li=${leader#pn}
wait_for 60 has_sync || fail "no synchronous standby named within 60 s of the switchover (members: $(pat_members | tr '\n' ';'))"
pat_kill "$li"
t_kill=$(now_ms)
new_leader2() { l=$(pat_leader) && [ -n "$l" ] && [ "$l" != "$leader" ]; }
wait_for 90 new_leader2 || { pat_logs; fail "no leader after the primary was killed (members: $(pat_members | tr '\n' ';'))"; }
t_prom=$(now_ms)
wait_for 90 resumed_after "$t_kill" || fail "no task claimed within 90 s of the primary's death"
kill_resume=$(($(first_claim_after "$t_kill") - t_kill))
e1=$(ends)
wait_for 90 ends_over $((e1 + 50)) || {
	stalled_diag
	fail "the fleet did not go on after the failover ($(ends) tasks ran)"
}
kill_pause=$(pause_after "$t_kill")
note "primary $leader killed: $(pat_leader) leads after $((t_prom - t_kill)) ms, first claim after $kill_resume ms, longest pause $kill_pause ms"
sleep 3
touch "$T/stop-enq"
wait "$enq" || true

# every task ran: wait until nothing of kind work is left undone
undone() { psql_hp "SELECT count(*) FROM $ALL_TASKS a WHERE kind = 'work' AND status <> 2"; }
all_done() { [ "$(undone)" = 0 ]; }
wait_for 180 all_done || fail "$(undone) work tasks not succeeded 180 s after the failover"
t_end=$(now_ms)
for i in $(seq 1 $W); do kill_child TERM "$(eval echo \$wp$i)"; done
for i in $(seq 1 $W); do
	eval "wait_exit \$wp$i 60"
	[ "$wrc" = 0 ] || { tail -n 20 "$T/w$i.log" >&2; fail "worker $i exited $wrc"; }
done

# ---- nothing lost ----
acked=$(wc -l <"$T/acked" | tr -d ' ')
found=0
if [ "$acked" -gt 0 ]; then
	found=$(psql_hp "SELECT count(*) FROM $ALL_TASKS a WHERE id IN ($(sort -un "$T/acked" | paste -sd, -))")
fi
lost_enq=$(($(sort -un "$T/acked" | wc -l) - found))
expect_eq "$lost_enq" 0 "acknowledged enqueues lost (synchronous mode)"
total=$(psql_hp "SELECT count(*) FROM $ALL_TASKS a WHERE kind = 'work'")
[ "$total" -ge $((N + acked)) ] || fail "$((N + acked - total)) tasks are gone"
expect_eq "$(psql_hp "SELECT count(*) FROM $ALL_TASKS a WHERE kind = 'work' AND status <> 2")" 0 "work tasks not succeeded"
# every task ran to its end at least once, by the handler's own log
ran=$(awk '$1 == "E" { t[$2] = 1 } END { print length(t) }' "$T/attempts")
expect_eq "$ran" "$total" "tasks the handler ran to their end"

# ---- every duplicate explained ----
# the same attempt ending twice: a claim lost with a primary
# (synchronous mode: must not happen)
same=$(awk '$1 == "E" { n[$2 " " $3]++ } END { for (k in n) if (n[k] > 1) s += n[k] - 1; print s + 0 }' "$T/attempts")
expect_eq "$same" 0 "attempts that ran to their end twice (a claim lost with a primary)"
# runs beyond one per task: each needs an earlier attempt on record that
# did not end the task (its lease lost: lease-expired, or a late result)
awk '$1 == "E" { t[$2]++ } END { for (k in t) if (t[k] > 1) print k, t[k] - 1 }' "$T/attempts" >"$T/extra"
extra=0
unexplained=0
while read -r id n; do
	extra=$((extra + n))
	lost=$(psql_hp "SELECT count(*) FROM $ALL_RUNS runs WHERE task_id = $id AND outcome <> 'succeeded'")
	if [ "$lost" -lt "$n" ]; then
		unexplained=$((unexplained + 1))
		note "task $id ran $((n + 1)) times; its records: $(psql_hp "SELECT attempt, node_id, outcome FROM $ALL_RUNS runs WHERE task_id = $id ORDER BY attempt" | tr '\n\t' '; ')"
	fi
done <"$T/extra"
expect_eq "$unexplained" 0 "tasks run more than once without a lost lease on record"
# no attempt the database never gave out
beyond=$(psql_hp "SELECT id, attempts FROM $ALL_TASKS a WHERE kind = 'work'" | awk -v f="$T/attempts" '
	BEGIN { while ((getline l < f) > 0) { split(l, a, " "); if (a[1] == "E" && a[3] + 0 > m[a[2]] + 0) m[a[2]] = a[3] } }
	{ if (m[$1] + 0 > $2 + 0) u++ }
	END { print u + 0 }')
expect_eq "$beyond" 0 "tasks whose handler ran an attempt the database never gave out"

# ---- the schedule: once per fire time, and on after both events ----
dups=$(psql_hp "SELECT count(*) FROM (SELECT fire_time FROM $ALL_TASKS a WHERE schedule_name = 'tick' GROUP BY fire_time HAVING count(*) > 1) d")
expect_eq "$dups" 0 "cron fire times enqueued more than once"
fires_after() { psql_hp "SELECT count(*) FROM $ALL_TASKS a WHERE schedule_name = 'tick' AND fire_time >= to_timestamp($1 / 1000.0)"; }
[ "$(fires_after "$t_kill")" -gt 0 ] || fail "the cron schedule did not fire after the primary died"
span=$(((t_end - t_sw) / 1000))
fires=$(fires_after "$t_sw")
note "patroni: $total tasks ($acked enqueued during the run, 0 lost), $extra extra runs (leases lost), switchover: longest pause $sw_pause ms; kill -> new leader $((t_prom - t_kill)) ms, -> first claim $kill_resume ms (longest pause $kill_pause ms); $fires cron fires in the last $span s, none twice"
echo "patroni tasks=$total acked=$acked lost_enq=$lost_enq extra=$extra switchover_pause_ms=$sw_pause kill_leader_ms=$((t_prom - t_kill)) kill_first_claim_ms=$kill_resume kill_pause_ms=$kill_pause cron_fires=$fires span_s=$span" >>"${SKED_PATRONI_REPORT:-/dev/null}"
