#!/bin/sh
# Three workers share a per-second schedule for about 12 seconds: every
# fire is enqueued exactly once (by whichever worker claimed it), with no
# gap between the first fire and the last. The schedule comes from the
# config file, so the three workers also race to declare it at start.
# backends: strategies pgbouncer
. "$(dirname "$0")/lib.sh"
init_db

cat >>"$T/sked.conf" <<CONF
[schedule.every-second]
cron = * * * * * *
kind = tick
payload = beat
CONF

pids=""
for n in 1 2 3; do
	"$SKED" worker --handler tick=true --node-id "w$n" --poll 200ms \
		--lease 5s 2>"$T/w$n.log" &
	pids="$pids $!"
done
sleep 12
kill -TERM $pids
for p in $pids; do wait "$p" || fail "a worker exited $? (see $T/w*.log)"; done

sk cron ls | grep -q "every-second" || fail "the config's schedule is not listed"
n=$(sql "SELECT COUNT(*) FROM $ALL_TASKS a WHERE schedule_name = 'every-second'")
distinct=$(sql "SELECT COUNT(DISTINCT fire_time) FROM $ALL_TASKS a WHERE schedule_name = 'every-second'")
dups=$(sql "SELECT COUNT(*) FROM (SELECT fire_time FROM $ALL_TASKS a WHERE schedule_name = 'every-second' GROUP BY fire_time HAVING COUNT(*) > 1) d")
case "$(family)" in
sqlite) span="(MAX(fire_time) - MIN(fire_time)) / 1000" ;;
pg) span="CAST(EXTRACT(EPOCH FROM MAX(fire_time) - MIN(fire_time)) AS INTEGER)" ;;
*) span="TIMESTAMPDIFF(SECOND, MIN(fire_time), MAX(fire_time))" ;;
esac
seconds=$(sql "SELECT $span + 1 FROM $ALL_TASKS a WHERE schedule_name = 'every-second'")
note "$n tasks, $distinct distinct fire times over $seconds seconds"
[ "$n" -ge 9 ] || fail "only $n fires in 12 seconds"
expect_eq "$dups" 0 "fire times enqueued more than once"
expect_eq "$distinct" "$n" "distinct fire times"
expect_eq "$seconds" "$n" "fires between the first and the last (no gaps)"
# the payload came from the config
expect_eq "$(sql "SELECT COUNT(*) FROM $ALL_TASKS a WHERE schedule_name = 'every-second' AND payload <> 'beat'")" 0 "tasks with another payload"
