#!/bin/sh
# A schedule with a unique key (cron add --unique KEY): it fires every
# second, its handler takes 3 s, and two workers of 2 slots serve it; the
# database, sampled every 0.2 s, never holds two live tasks of the
# schedule (the key is live-scoped), while the schedule still makes a
# new task after each one ends; the skips are logged, and a plain
# enqueue of the key meanwhile answers the schedule's live task. With
# --unique-for 3s an every-second schedule's tasks are at least 3 s
# apart by fire time although each ends at once, and not just one.
# --unique-replace: `cron run` with the key held by a waiting task moves
# that task to now with the schedule's payload (debounce) and prints its
# id; with a live key held by another, `cron run` prints the holder.
# cron ls shows the key (and --json), the config's [schedule.NAME]
# unique keys are set by a worker, and bad flags are usage errors.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

h=$(handler h.sh <<'H'
#!/bin/sh
echo "S $(date +%s%3N) $SKED_TASK_ID" >>"$1/events"
sleep "$2"
echo "E $(date +%s%3N) $SKED_TASK_ID" >>"$1/events"
H
)

# ---- live scope: never two live tasks of the key ----
sk cron add u '* * * * * *' slow --unique K --queue cu >/dev/null
expect_eq "$(sk --json cron ls | json_get '[s["unique"] for s in d if s["name"] == "u"][0]')" \
	"{'key': 'K', 'scope': 'live', 'for_ms': None, 'replace': False}" "cron ls --json: the unique key"
sk cron ls | grep -q "K (live)" || fail "cron ls does not show the key: $(sk cron ls)"
SKED_LOG=info start_worker w1 --queues cu --concurrency 2 --poll 100ms --handler "slow=$h $T 3"
w1=$wpid
SKED_LOG=info start_worker w2 --queues cu --concurrency 2 --poll 100ms --handler "slow=$h $T 3"
w2=$wpid
live() { count "SELECT COUNT(*) FROM {p}task WHERE schedule_name = 'u' AND status IN (0, 1, 4)"; }
max=0
end=$(($(date +%s) + 9))
held=""
while [ "$(date +%s)" -lt "$end" ]; do
	l=$(live)
	[ "$l" -gt "$max" ] && max=$l
	if [ -z "$held" ] && [ "$l" = 1 ]; then
		# a plain enqueue of the key answers the schedule's live task
		sk --json enqueue slow --queue cu --unique K >"$T/enq.json" 2>/dev/null || true
		held=$(json_get 'd["existed"]' <"$T/enq.json" 2>/dev/null || echo "")
	fi
	sleep 0.2
done
sk cron pause u >/dev/null
expect_eq "$max" 1 "most live tasks of the unique schedule at once"
expect_eq "$held" true "a plain enqueue of the key while the schedule's task lives"
no_live() { [ "$(live)" = 0 ]; }
wait_for 20 no_live || fail "tasks of u left unfinished"
ends=$(awk '$1 == "E"' "$T/events" | wc -l | tr -d ' ')
[ "$ends" -ge 2 ] || fail "only $ends task(s) of u ran in 9 s: the schedule did not fire again after its task ended"
# the handlers' own log: no start before the previous task's end
awk '$1 == "S" { if (open) bad = 1; open = 1 } $1 == "E" { open = 0 } END { exit bad }' "$T/events" ||
	fail "two tasks of the unique schedule ran at once: $(cat "$T/events")"
grep -q "unique key 'K' is held" "$T/w1.log" "$T/w2.log" ||
	fail "no skip of a held key was logged: $(cat "$T/w1.log")"
kill_child TERM "$w1"
kill_child TERM "$w2"
wait_exit "$w1" 30
wait_exit "$w2" 30

# ---- a period: tasks at least 3 s apart by fire time ----
sk cron add p '* * * * * *' quick --unique P --unique-for 3s --queue cp >/dev/null
sk cron ls | grep -q "P (for 3s)" || fail "cron ls does not show the period: $(sk cron ls)"
start_worker w3 --queues cp --poll 100ms --handler "quick=$h $T/p 0"
w3=$wpid
mkdir -p "$T/p"
sleep 8
sk cron pause p >/dev/null
kill_child TERM "$w3"
wait_exit "$w3" 30
sk --json list --kind quick --limit 100 >"$T/p.json"
n=$(json_get 'len(d)' <"$T/p.json")
[ "$n" -ge 2 ] && [ "$n" -le 3 ] || fail "$n tasks of the 3 s period in 8 s of every-second fires"
python3 - "$T/p.json" <<'PY' || fail "tasks of the period closer than 3 s: $(cat "$T/p.json")"
import json, sys, datetime
d = json.load(open(sys.argv[1]))
t = sorted(datetime.datetime.fromisoformat(x["fire_time"].replace("Z", "+00:00")) for x in d)
sys.exit(0 if all((b - a).total_seconds() >= 3 for a, b in zip(t, t[1:])) else 1)
PY

# ---- replace: cron run debounces the waiting holder ----
sk cron add r '0 0 1 1 *' rk --unique R --unique-replace --payload new >/dev/null
sk cron ls | grep -q "R (pending, replace)" || fail "cron ls: $(sk cron ls)"
old=$(sk enqueue rk --unique R --unique-scope pending --in 1h --payload old)
expect_eq "$(sk cron run r)" "$old" "cron run with the key held by a waiting task"
sk --json show "$old" >"$T/r.json"
expect_eq "$(json_get 'd["payload"]' <"$T/r.json")" new "the holder's payload after the debounce"
# its run-at was an hour ahead; now it is now (a minute's leeway)
expect_eq "$(json_get '__import__("datetime").datetime.fromisoformat(d["run_at"].replace("Z", "+00:00")).timestamp() < __import__("time").time() + 60' <"$T/r.json")" \
	true "the debounced holder's run-at moved to now"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE kind = 'rk'")" 1 "tasks of the replace schedule"

# ---- cron run with a live key held by another enqueue: the holder ----
sk cron add l '0 0 1 1 *' lk --unique L >/dev/null
hid=$(sk enqueue lk --unique L)
expect_eq "$(sk cron run l)" "$hid" "cron run with the key held"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE kind = 'lk'")" 1 "tasks of key L"
# redefined without the key: it is gone
sk cron add l '0 0 1 1 *' lk >/dev/null
expect_eq "$(sk --json cron ls | json_get '[s["unique"] for s in d if s["name"] == "l"][0]')" null "unique key after a redefinition without it"
[ "$(sk cron run l)" != "$hid" ] || fail "a schedule without its key still answered the holder"

# ---- the config file's [schedule.NAME] keys ----
cp "$T/sked.conf" "$T/c.conf"
cat >>"$T/c.conf" <<CONF
[schedule.c]
cron = 0 0 1 1 *
kind = ck
unique = C
unique_for = 1h
CONF
SKED_CONFIG="$T/c.conf" start_worker w4 --queues none --poll 100ms --handler "none=$h"
wait_for 20 sh -c "'$SKED' --json cron ls | grep -q '\"C\"'" || { cat "$T/w4.log" >&2; fail "the config's unique key was not set"; }
kill_child TERM "$wpid"
wait_exit "$wpid" 30
expect_eq "$(sk --json cron ls | json_get '[s["unique"] for s in d if s["name"] == "c"][0]')" \
	"{'key': 'C', 'scope': 'period', 'for_ms': 3600000, 'replace': False}" "the config's unique key"
cp "$T/sked.conf" "$T/bad.conf"
printf '[schedule.b]\ncron = 0 0 1 1 *\nkind = b\nunique_scope = sometimes\n' >>"$T/bad.conf"
SKED_CONFIG="$T/bad.conf" expect_rc 78 sk worker --until-empty --handler "none=$h"
stderr_one_line "$T/err"
cp "$T/sked.conf" "$T/bad2.conf"
printf '[schedule.b]\ncron = 0 0 1 1 *\nkind = b\nunique = B\nunique_scope = live\nunique_for = 1m\n' >>"$T/bad2.conf"
SKED_CONFIG="$T/bad2.conf" expect_rc 78 sk cron ls
stderr_one_line "$T/err"
grep -q "bad2.conf:.*unique_scope and unique_for conflict" "$T/err" || fail "config conflict: $(cat "$T/err")"

# ---- refusals ----
expect_rc 64 sk cron add x '* * * * *' k --unique-for 1s
stderr_one_line "$T/err"
expect_rc 64 sk cron add x '* * * * *' k --unique X --unique-scope sometimes
stderr_one_line "$T/err"
expect_rc 64 sk cron add x '* * * * *' k --unique X --unique-scope live --unique-for 1s
stderr_one_line "$T/err"
expect_rc 64 sk cron add x '* * * * *' k --unique X --unique-for 1s --unique-replace
stderr_one_line "$T/err"
echo "ok"
