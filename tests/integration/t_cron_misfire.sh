#!/bin/sh
# Fires missed while no worker ran: each misfire policy does what it says
# when a worker starts. The three schedules fire at four given seconds of
# today (S..S+3, UTC) and then not again until tomorrow, so what a worker
# enqueues afterwards is the catch-up alone.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

# keep the window inside one minute
while [ "$(date -u +%S | sed 's/^0//')" -gt 45 ]; do sleep 1; done
now=$(date -u +%s)
s=$((now + 2))
sec=$(( s % 60 )) min=$(( (s / 60) % 60 )) hour=$(( (s / 3600) % 24 ))
expr="$sec-$((sec + 3)) $min $hour * * *"
note "schedule '$expr' (UTC)"
sk cron add once "$expr" job --misfire fire-once >/dev/null
sk cron add all "$expr" job --misfire fire-all >/dev/null
sk cron add skip "$expr" job --misfire skip >/dev/null
before=$(sk --json cron ls)

# no worker while the four fires pass, and a few seconds more
sleep $((s + 3 - now + 4))
expect_eq "$(sql "SELECT COUNT(*) FROM $ALL_TASKS a")" 0 "tasks before any worker ran"

sk worker --handler job=true --until-empty --poll 100ms --lease 5s 2>"$T/w.log" ||
	fail "worker exited $? ($(cat "$T/w.log"))"

count() { sql "SELECT COUNT(*) FROM $ALL_TASKS a WHERE schedule_name = '$1'"; }
expect_eq "$(count all)" 4 "fire-all: one task per missed fire"
expect_eq "$(sql "SELECT COUNT(DISTINCT fire_time) FROM $ALL_TASKS a WHERE schedule_name = 'all'")" 4 "fire-all: distinct fire times"
expect_eq "$(count once)" 1 "fire-once: one catch-up task"
expect_eq "$(sql "SELECT COUNT(*) FROM $ALL_TASKS o WHERE o.schedule_name = 'once' AND o.fire_time = (SELECT MAX(fire_time) FROM $ALL_TASKS a WHERE schedule_name = 'all')")" 1 "fire-once: the catch-up is for the latest missed fire"
expect_eq "$(count skip)" 0 "skip: no catch-up"
expect_eq "$(sql "SELECT COUNT(*) FROM $ALL_TASKS a WHERE status <> 2")" 0 "catch-up tasks not run"
# every policy moved on to tomorrow's first fire
after=$(sk --json cron ls)
for name in once all skip; do
	b=$(printf '%s' "$before" | tr -d ' \n' | sed "s/.*\"name\":\"$name\"[^}]*\"next_fire\":\"\([^\"]*\)\".*/\1/")
	a=$(printf '%s' "$after" | tr -d ' \n' | sed "s/.*\"name\":\"$name\"[^}]*\"next_fire\":\"\([^\"]*\)\".*/\1/")
	[ -n "$a" ] && [ "$a" != "$b" ] || fail "$name: next fire did not move on ($b -> $a)"
	[ "${a%%T*}" != "${b%%T*}" ] || fail "$name: next fire $a is not tomorrow's"
done
