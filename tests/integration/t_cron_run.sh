#!/bin/sh
# `sked cron run NAME`: each call enqueues exactly one task of the
# schedule now (its kind, payload, queue, priority, attempts and name),
# paused or not, without moving its next fire; parallel calls make one
# task each; the fire time of a manual run is never a whole second, so
# it never takes the place of a cron fire, and a worker running the
# schedule meanwhile still makes every cron fire once. Unknown names
# are refused in one line.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

sk cron add nightly '0 3 * * *' job --payload hi --queue cq --priority 3 \
	--max-attempts 2 >/dev/null
next=$(sk --json cron ls | json_get 'd[0]["next_fire"]')

a=$(sk cron run nightly)
b=$(sk cron run nightly)
[ "$a" != "$b" ] || fail "two runs gave one id: $a"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE schedule_name = 'nightly'")" 2 \
	"tasks after two runs"
sk --json show "$a" >"$T/a.json"
expect_eq "$(json_get '(d["kind"], d["payload"], d["queue"], d["priority"], d["max_attempts"], d["schedule_name"], d["status"])' <"$T/a.json")" \
	"('job', 'hi', 'cq', 3, 2, 'nightly', 'pending')" "the manual run's task"
ft=$(json_get 'd["fire_time"]' <"$T/a.json")
case "$ft" in *.000Z) fail "a manual run's fire time is a whole second: $ft" ;; esac
expect_eq "$(sk --json cron ls | json_get 'd[0]["next_fire"]')" "$next" \
	"next fire after manual runs"

# paused: runs all the same, and stays paused
sk cron pause nightly >/dev/null
expect_rc 0 sk --json cron run nightly
p=$(json_get 'd["id"]' <"$T/out")
expect_eq "$(sk --json show "$p" | json_get 'd["schedule_name"]')" nightly "run of a paused schedule"
expect_eq "$(sk --json cron ls | json_get 'd[0]["enabled"]')" false "paused after a run"
sk cron resume nightly >/dev/null

# parallel calls: one task each
for i in 1 2 3 4 5 6 7 8; do
	sk cron run nightly >"$T/par.$i" 2>"$T/par.$i.err" &
done
wait
cat "$T"/par.*.err >&2 || true
expect_eq "$(cat "$T"/par.[0-9] | sort -u | wc -l | tr -d ' ')" 8 "distinct ids of 8 parallel runs"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE schedule_name = 'nightly'")" 11 \
	"tasks after 11 runs"

# a schedule that fires every second, run by hand while a worker fires it
h=$(handler h.sh <<'H'
#!/bin/sh
echo "$SKED_TASK_ID" >>"$1/ran"
H
)
sk cron add every 'x * * * * *' tick >/dev/null 2>&1 && fail "a bad expression was taken"
sk cron add every '* * * * * *' tick >/dev/null
start_worker w --poll 100ms --lease 5s --handler "tick=$h $T" --handler "job=$h $T"
for i in 1 2 3 4 5; do
	sk cron run every >/dev/null
	sleep 0.4
done
sk cron pause every >/dev/null
total() { count "SELECT COUNT(*) FROM {p}task_done WHERE kind = 'tick' AND status = 2"; }
sleep 1
wait_for 30 test "$(count "SELECT COUNT(*) FROM {p}task WHERE kind = 'tick'")" = 0 ||
	fail "tick tasks left unfinished"
n=$(total)
[ "$n" -ge 6 ] || fail "only $n tick tasks ran"
expect_eq "$(sort "$T/ran" | uniq -d | wc -l | tr -d ' ')" 0 "tasks run twice"
sk --json list --kind tick --status succeeded --limit 1000 >"$T/ticks.json"
# five manual runs off whole seconds; every cron fire on one, once each
expect_eq "$(json_get 'sum(1 for t in d if not t["fire_time"].endswith(".000Z"))' <"$T/ticks.json")" 5 \
	"manual runs among the tick tasks"
expect_eq "$(json_get 'len([t["fire_time"] for t in d if t["fire_time"].endswith(".000Z")]) - len(set(t["fire_time"] for t in d if t["fire_time"].endswith(".000Z")))' <"$T/ticks.json")" 0 \
	"cron fires made twice"

# refusals
expect_rc 65 sk cron run nope
stderr_one_line "$T/err"
grep -q "no schedule named 'nope'" "$T/err" || fail "unknown schedule: $(cat "$T/err")"
expect_rc 65 sk cron run 'bad name'
stderr_one_line "$T/err"
expect_rc 64 sk cron run
stderr_one_line "$T/err"
expect_rc 64 sk cron run a b
stderr_one_line "$T/err"
echo "ok"
