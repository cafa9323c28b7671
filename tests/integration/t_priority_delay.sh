#!/bin/sh
# Claim order and due times: with one slot, higher priority runs first
# (ties in enqueue order); a task enqueued with --in 4s is not claimed
# before it is due, by the database's clock (run start >= created + 4 s),
# and does not hold back a task due now.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

h=$(handler h.sh <<'H'
#!/bin/sh
echo "$(cat)" >>"$1/order"
H
)
sk enqueue job --payload low1 --priority -5 >/dev/null
sk enqueue job --payload mid1 >/dev/null
sk enqueue job --payload high --priority 10 >/dev/null
sk enqueue job --payload mid2 >/dev/null
sk enqueue job --payload low2 --priority -5 >/dev/null
sk worker --concurrency 1 --handler "job=$h $T" --until-empty --poll 100ms --lease 5s
expect_eq "$(tr '\n' ' ' <"$T/order")" "high mid1 mid2 low1 low2 " "run order"

# Delayed: enqueued with --in 4s while a worker polls, then a task due
# now. The worker runs before either is enqueued, so a loaded machine's
# slow worker start cannot let the delayed task come due first.
: >"$T/order"
# (--until-empty would not wait for a task that is not due yet)
start_worker w --concurrency 1 --handler "job=$h $T" --poll 100ms --lease 5s
d=$(sk enqueue job --payload later --in 4s)
n=$(sk enqueue job --payload now)
expect_eq "$(sk --json show "$d" | json_get 'd["status"]')" pending "delayed task status"
done_d() { [ "$(status_of "$d")" = 2 ]; }
wait_for 30 done_d || { cat "$T/w.log" >&2; fail "the delayed task never ran"; }
kill_child TERM "$wpid"
wait_exit "$wpid" 10
expect_eq "$(tr '\n' ' ' <"$T/order")" "now later " "run order with a delayed task"
for id in $d $n; do sk --json show "$id" >"$T/show.$id"; done
python3 - "$T/show.$d" "$T/show.$n" <<'PY' || fail "the delayed task ran before it was due"
import json, sys, datetime
def t(s): return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ")
late, now = (json.load(open(f)) for f in sys.argv[1:3])
for task in (late, now):
    assert task["status"] == "succeeded", task["status"]
    assert len(task["runs"]) == 1, task["runs"]
wait = (t(late["runs"][0]["started_at"]) - t(late["created_at"])).total_seconds()
if wait < 4.0:
    sys.exit("delayed task started %.3f s after it was enqueued" % wait)
if t(late["run_at"]) > t(late["runs"][0]["started_at"]):
    sys.exit("delayed task started before its run_at")
# the due one did not wait for it
if t(now["runs"][0]["started_at"]) >= t(late["run_at"]):
    sys.exit("the due task waited behind the delayed one")
PY
