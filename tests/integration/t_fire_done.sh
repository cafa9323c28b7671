#!/bin/sh
# A schedule's fire stays taken after its task has ended: the task of a
# fire moves to task_done when it succeeds (schema 4), where task's unique
# index on (schedule_name, fire_time) cannot see it; the tick looks there
# too. The schedule's row is set back to a fire whose task has ended (as
# a database clock going back would), and the next tick moves on without
# enqueuing that fire again.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

# one fire, at a second of today (UTC), inside one minute
while [ "$(date -u +%S | sed 's/^0//')" -gt 50 ]; do sleep 1; done
now=$(date -u +%s)
s=$((now + 2))
sec=$((s % 60)) min=$(((s / 60) % 60)) hour=$(((s / 3600) % 24))
sk cron add once "$sec $min $hour * * *" job --misfire fire-once >/dev/null
sleep $((s - now + 1))
sk worker --handler job=true --until-empty --poll 100ms --lease 5s 2>"$T/w1.log" ||
	{ cat "$T/w1.log" >&2; fail "first worker failed"; }
expect_eq "$(count "SELECT COUNT(*) FROM {p}task_done WHERE schedule_name = 'once' AND status = 2")" 1 "the fire's task, ended"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE schedule_name = 'once'")" 0 "live tasks of the schedule"

# the schedule's next fire set back to the fire that has ended
sql "UPDATE {p}schedule SET next_fire = (SELECT fire_time FROM {p}task_done WHERE schedule_name = 'once') WHERE name = 'once'" >/dev/null
SKED_LOG=info sk worker --handler job=true --until-empty --poll 100ms --lease 5s 2>"$T/w2.log" ||
	{ cat "$T/w2.log" >&2; fail "second worker failed"; }
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE schedule_name = 'once'")" 1 "tasks of the fire after the clock went back"
grep -q "already enqueued and has ended" "$T/w2.log" || { cat "$T/w2.log" >&2; fail "the tick did not say it moved on"; }
# and the schedule moved on past that fire
expect_eq "$(count "SELECT COUNT(*) FROM {p}schedule s WHERE s.name = 'once' AND s.next_fire > (SELECT fire_time FROM {p}task_done WHERE schedule_name = 'once')")" 1 "the schedule's next fire after the tick"
