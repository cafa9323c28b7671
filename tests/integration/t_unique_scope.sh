#!/bin/sh
# Unique keys with a scope (docs/unique.md): a pending-scope key is free
# once its task starts, a period key is held for its period after its
# task has ended, and --unique-replace gives a waiting holder the new
# payload and run time; ten concurrent enqueuers of one key make one task
# in every scope, and concurrent replaces leave one task with one of
# their payloads.
# backends: strategies
. "$(dirname "$0")/lib.sh"
init_db

# race NAME ARGS...: ten enqueuers of ARGS at once; each must exit 0;
# their printed ids go to $T/NAME.*
race() {
	rn=$1
	shift
	i=1
	pids=""
	while [ $i -le 10 ]; do
		sk enqueue "$@" --payload "p$i" >"$T/$rn.$i" 2>"$T/$rn.err.$i" &
		pids="$pids $!"
		i=$((i + 1))
	done
	for p in $pids; do
		wait_exit "$p" 60
		[ "$wrc" = 0 ] || { cat "$T/$rn".err.* >&2; fail "$rn: an enqueue exited $wrc"; }
	done
	expect_eq "$(cat "$T/$rn".[0-9]* | sort -u | wc -l | tr -d ' ')" 1 "$rn: distinct ids printed"
}
# is_status ID S: the task's status is S now (for wait_for, which runs
# its command again each round)
is_status() { [ "$(status_of "$1")" = "$2" ]; }
keyed() { count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE unique_key = '$1'"; }

# ---- each scope under concurrent enqueuers: one task ----
race live mail --queue idle --unique r-live --in 1h
expect_eq "$(keyed r-live)" 1 "tasks made by racing live enqueuers"
race pend mail --queue idle --unique r-pend --unique-scope pending --in 1h
expect_eq "$(keyed r-pend)" 1 "tasks made by racing pending-scope enqueuers"
race per mail --queue idle --unique r-per --unique-for 1h --in 1h
expect_eq "$(keyed r-per)" 1 "tasks made by racing period enqueuers"
race rep mail --queue idle --unique r-rep --unique-replace --in 1h
expect_eq "$(keyed r-rep)" 1 "tasks made by racing replacing enqueuers"
rid=$(cat "$T/rep.1")
pl=$(sql "SELECT payload FROM {p}task WHERE id = $rid")
case "$pl" in p[0-9] | p10) ;; *) fail "the replaced payload is '$pl', not one of the enqueuers'" ;; esac

# ---- pending: held until the task starts ----
h=$(handler hold.sh <<H
#!/bin/sh
while [ ! -f "$T/go" ]; do sleep 0.05; done
exit 0
H
)
p1=$(sk enqueue mail --queue q --unique pend-1 --unique-scope pending)
expect_eq "$(sk enqueue mail --queue q --unique pend-1 --unique-scope pending 2>/dev/null)" "$p1" "pending key before the start"
start_worker w --queues q --handler "mail=$h" --poll 50ms --lease 10s
wait_for 20 is_status "$p1" 1 || fail "the pending-scope task did not start"
p2=$(sk enqueue mail --queue q2 --unique pend-1 --unique-scope pending)
[ "$p2" != "$p1" ] || fail "a running task still holds its pending-scope key"
expect_eq "$(sk enqueue mail --queue q2 --unique pend-1 --unique-scope pending 2>/dev/null)" "$p2" "pending key of the new waiting task"
# the live scope is held by a running task
l1=$(sk enqueue mail --queue q --unique live-1)
wait_for 20 is_status "$l1" 1 || fail "the live-scope task did not start"
expect_eq "$(sk enqueue mail --queue q2 --unique live-1 2>/dev/null)" "$l1" "live key of a running task"
touch "$T/go"
wait_for 20 is_status "$l1" 2 || fail "the live-scope task did not succeed"
kill -TERM "$wpid"
wait_exit "$wpid" 20
# ended: the live key is free
l2=$(sk enqueue mail --queue q2 --unique live-1 2>/dev/null)
[ "$l2" != "$l1" ] || fail "an ended task still holds its live key"

# ---- period: held for D from the enqueue, ended or not ----
f1=$(sk enqueue mail --queue f --unique per-1 --unique-for 1h)
sk worker --queues f --handler "mail=$h" --until-empty --poll 50ms --lease 5s
expect_eq "$(status_of "$f1")" 2 "status of the period task"
expect_eq "$(sk enqueue mail --queue f --unique per-1 --unique-for 1h 2>/dev/null)" "$f1" "period key of an ended task within its period"
expect_eq "$(sk --json enqueue mail --queue f --unique per-1 --unique-for 1h 2>/dev/null | json_get 'd["existed"]')" true "existed within the period"
# an ended task past its period does not hold the key
e1=$(sk enqueue mail --queue f --unique per-3 --unique-for 1s --in 1h)
sk cancel "$e1" >/dev/null
sleep 1.2
e2=$(sk enqueue mail --queue f --unique per-3 --unique-for 1s --in 1h)
[ "$e2" != "$e1" ] || fail "the period key is still held after its period"
# a live task past its period does not hold the key either
g1=$(sk enqueue mail --queue f --unique per-2 --unique-for 1s --in 1h)
sleep 1.2
g2=$(sk enqueue mail --queue f --unique per-2 --unique-for 1s --in 1h)
[ "$g2" != "$g1" ] || fail "a waiting task holds its period key after the period"

# ---- replace (debounce) ----
d1=$(sk enqueue mail --queue d --unique deb-1 --unique-replace --payload first --in 1h)
out=$(sk --json enqueue mail --queue d --unique deb-1 --unique-replace --payload second --in 30s 2>/dev/null)
expect_eq "$(echo "$out" | json_get 'd["id"]')" "$d1" "id answered by a replace"
expect_eq "$(echo "$out" | json_get 'd["replaced"]')" true "replaced flag"
expect_eq "$(sql "SELECT payload FROM {p}task WHERE id = $d1")" second "payload after a replace"
sooner=$(count "SELECT COUNT(*) FROM {p}task WHERE id = $d1 AND run_at < $(case "$(family)" in sqlite) echo "$(($(now_ms) + 120000))" ;; pg) echo "now() + interval '2 minutes'" ;; *) echo "NOW(3) + INTERVAL 2 MINUTE" ;; esac)")
expect_eq "$sooner" 1 "the replaced task's run time moved to the new one"
sk enqueue mail --queue d --unique deb-1 --unique-replace --payload third 2>"$T/err" >/dev/null
grep -q "takes this payload" "$T/err" || fail "no note for a replace: $(cat "$T/err")"
# a plain enqueue of the key answers it unchanged
expect_eq "$(sk --json enqueue mail --queue d --unique deb-1 --unique-scope pending --payload fourth 2>/dev/null | json_get 'd["replaced"]')" false "replaced flag of a plain enqueue"
expect_eq "$(sql "SELECT payload FROM {p}task WHERE id = $d1")" third "payload after a plain enqueue"

# ---- bad input: one line, exit 64 ----
expect_rc 64 sk enqueue mail --unique-for 1h
expect_rc 64 sk enqueue mail --unique k --unique-scope someday
expect_rc 64 sk enqueue mail --unique k --unique-scope pending --unique-for 1h
expect_rc 64 sk enqueue mail --unique k --unique-for 0s
