#!/bin/sh
# The events feed (issue 36): `sked events --follow` prints each task's
# end (succeeded, dead, cancelled) and each attempt that did not end its
# task (a failure that retries) as JSON lines with the right fields, in
# order of time; a follower killed mid-stream (it prints nothing more)
# and resumed from the pos of the last line it printed misses no end,
# neither of the tasks that ended meanwhile nor of those enqueued while
# no follower ran; GET /api/events pages through
# the same events with next, and its long-poll answers when an event
# comes (or after wait=D with none); bad input is one line and 64.
# backends: engines
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || skip "curl is not installed"
init_db

h=$(handler h.sh <<'H'
#!/bin/sh
read -r p || true
case "$p" in
fail*) echo "boom $SKED_TASK_ID" >&2; exit 1 ;;
retry*)
	# the first attempt fails, the second succeeds
	if [ ! -e "$SKED_TEST_MARK.$SKED_TASK_ID" ]; then
		: >"$SKED_TEST_MARK.$SKED_TASK_ID"
		echo "once $SKED_TASK_ID" >&2
		exit 1
	fi ;;
esac
printf "result of %s" "$SKED_TASK_ID" >"$SKED_TASK_RESULT_FILE"
H
)
export SKED_TEST_MARK="$T/mark"

# bad input: one line and a sysexits code
expect_rc 64 sk events --after abc
stderr_one_line "$T/err"
expect_rc 64 sk events --limit 0
expect_rc 64 sk events --kind 'no such'
expect_rc 64 sk events --settle 0
expect_rc 0 sk events
expect_eq "$(cat "$T/out")" "" "the feed of an empty database"

# a follower from the start, before anything runs ("$SKED" itself, not
# the sk function's subshell: the kill below must reach the follower)
"$SKED" events --follow --after 0 --settle 300ms >"$T/f1.out" 2>"$T/f1.err" &
f1=$!

: >"$T/expect"
for i in $(seq 1 12); do
	echo "$(sk enqueue job --payload ok) succeeded 1" >>"$T/expect"
	echo "$(sk enqueue job --payload fail --max-attempts 1) dead 1" >>"$T/expect"
	echo "$(sk enqueue job --payload retry --max-attempts 3 --queue other) succeeded 2" >>"$T/expect"
done
c=$(sk enqueue job --payload ok --in 1h)
sk cancel "$c" >/dev/null
echo "$c cancelled 0" >>"$T/expect"
n=$(wc -l <"$T/expect")

start_worker w --concurrency 4 --poll 100ms --retry-base 100ms --retry-max 200ms --handler "job=$h"
# kill the follower once it has printed some ends, mid-stream
some() { [ "$(grep -c '"type":"end"' "$T/f1.out" 2>/dev/null)" -ge 8 ]; }
wait_for 60 some || { cat "$T/f1.err" >&2; fail "the follower printed no ends"; }
kill_child KILL "$f1"
wait "$f1" 2>/dev/null || true
cp "$T/f1.out" "$T/f1.at_kill"
# the pos of the last whole line it printed
pos=$(python3 -c '
import json, sys
pos = None
for line in open(sys.argv[1]):
    try:
        pos = json.loads(line)["pos"]
    except ValueError:
        pass
print(pos)' "$T/f1.out")
[ "$pos" != None ] || fail "no position in the follower's output"
# more work while no follower runs: only the resumed one can show it
for i in 1 2 3; do
	echo "$(sk enqueue job --payload ok) succeeded 1" >>"$T/expect"
	echo "$(sk enqueue job --payload fail --max-attempts 1) dead 1" >>"$T/expect"
done
n=$(wc -l <"$T/expect")
"$SKED" events --follow --after "$pos" --settle 300ms >"$T/f2.out" 2>"$T/f2.err" &
f2=$!

ended() { [ "$(count "SELECT COUNT(*) FROM {p}task_done")" -ge "$n" ]; }
wait_for 120 ended || fail "the tasks did not all end"
all_seen() { [ "$(grep -c '"type":"end"' "$T/f2.out")" -ge 1 ] && python3 - "$T" <<'PY'
import json, sys
T = sys.argv[1]
want = {int(l.split()[0]) for l in open(T + "/expect")}
got = set()
for f in ("f1.out", "f2.out"):
    for line in open(T + "/" + f):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e["type"] == "end":
            got.add(e["id"])
sys.exit(0 if want <= got else 1)
PY
}
wait_for 60 all_seen || true
kill_child TERM "$f2"
wait "$f2" 2>/dev/null || true
# the killed follower printed nothing more: what it missed came from the
# resumed one
cmp -s "$T/f1.out" "$T/f1.at_kill" || fail "the killed follower went on printing"

# every end, at least once, with its fields; the retried attempts; the
# times in order within each output
python3 - "$T" <<'PY' || fail "the events feed (above)"
import json, sys
T = sys.argv[1]
want = {}
for l in open(T + "/expect"):
    i, st, att = l.split()
    want[int(i)] = (st, int(att))
ends, attempts = {}, {}
for f in ("f1.out", "f2.out"):
    last = None
    for line in open(T + "/" + f):
        try:
            e = json.loads(line)
        except ValueError:
            continue  # the line the kill cut
        at = e["at"]
        if last and at < last:
            print("%s: %s before %s" % (f, at, last)); sys.exit(1)
        last = at
        assert int(e["pos"]) > 0, e
        if e["type"] == "end":
            ends.setdefault(e["id"], []).append(e)
        elif e["type"] == "attempt":
            attempts.setdefault(e["id"], []).append(e)
bad = 0
for i, (st, att) in want.items():
    if i not in ends:
        print("task %d: no end event" % i); bad = 1; continue
    e = ends[i][0]
    if (e["status"], e["attempt"], e["kind"]) != (st, att, "job"):
        print("task %d: end %s, expected %s attempt %d" % (i, e, st, att)); bad = 1
    if st == "succeeded" and (e["result"] != "result of %d" % i or e["outcome"] != "succeeded" or not e["node_id"] or not e["started_at"]):
        print("task %d: %s" % (i, e)); bad = 1
    if st == "dead" and (e["outcome"] != "failed" or not e["error"]):
        print("task %d: %s" % (i, e)); bad = 1
    if att == 2:
        if e["queue"] != "other":
            print("task %d: queue %s" % (i, e["queue"])); bad = 1
        a = attempts.get(i, [])
        if not a or a[0]["attempt"] != 1 or a[0]["outcome"] != "failed":
            print("task %d: attempt events %s" % (i, a)); bad = 1
extra = set(ends) - set(want)
if extra:
    print("ends of no task enqueued here: %s" % extra); bad = 1
sys.exit(bad)
PY

# --kind, --queue and --limit; a listing stops at its limit
sleep 0.5
expect_rc 0 sk events --queue other --after 0 --settle 300ms
python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
assert ev and all(e["queue"] == "other" for e in ev), ev
' "$T/out" || fail "events --queue other"
expect_rc 0 sk events --kind nothing
expect_eq "$(cat "$T/out")" "" "events --kind of no task"
expect_rc 0 sk events --limit 3 --settle 300ms
# 3, or more only by the events of the last one's millisecond (a page
# never ends inside a millisecond)
python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
assert len(ev) >= 3 and len({e["at"] for e in ev[2:]}) == 1, ev
' "$T/out" || fail "events --limit 3 printed $(wc -l <"$T/out") lines"

# ---- the JSON API ----
tok=$(head -c 32 /dev/urandom | base64 | tr -d '\n')
printf '%s\n' "$tok" >"$T/tok"
chmod 600 "$T/tok"
start_dashboard dash --api-token "file:$T/tok"
api() { curl -s -H "Authorization: Bearer $tok" "$@"; }
# pages of 5 from the start, each read on from the last next
after=0
: >"$T/api.ids"
for i in $(seq 1 100); do
	api -o "$T/page.json" "$base/api/events?after=$after&limit=5&settle=300ms"
	k=$(json_get 'len(d["events"])' <"$T/page.json")
	json_get '"\n".join(str(e["id"]) for e in d["events"] if e["type"] == "end")' <"$T/page.json" >>"$T/api.ids"
	after=$(json_get 'd["next"]' <"$T/page.json")
	[ "$k" -gt 0 ] || break
	[ "$k" -le 5 ] || [ "$(json_get 'len({e["at"] for e in d["events"]})' <"$T/page.json")" = 1 ] ||
		fail "a page of $k events, limit 5, over more than one millisecond"
done
for id in $(cut -d' ' -f1 "$T/expect"); do
	grep -qx "$id" "$T/api.ids" || fail "task $id's end is not in the API's pages"
done
# the long-poll: answers when an event comes
t0=$(now_ms)
api -o "$T/lp.json" -w '%{http_code}' "$base/api/events?after=$after&wait=20s&settle=300ms" >"$T/lp.code" &
lp=$!
sleep 1
# a parked long-poll holds nothing else up
expect_eq "$(api -o /dev/null -w '%{http_code}' "$base/api/stats")" 200 "stats during a long-poll"
e=$(sk enqueue job --payload ok)
wait_exit "$lp" 30
el=$(($(now_ms) - t0))
expect_eq "$(cat "$T/lp.code")" 200 "the long-poll's status"
# its events are the new task's (a start first when it ran long enough)
expect_eq "$(json_get 'sorted({x["id"] for x in d["events"]})' <"$T/lp.json")" "[$e]" "the long-poll's events"
[ "$el" -ge 900 ] && [ "$el" -lt 20000 ] || fail "the long-poll answered after ${el} ms"
after=$(json_get 'd["next"]' <"$T/lp.json")
if [ "$(json_get '[x["id"] for x in d["events"] if x["type"] == "end"]' <"$T/lp.json")" != "[$e]" ]; then
	api -o "$T/lp1.json" "$base/api/events?after=$after&wait=20s&settle=300ms"
	expect_eq "$(json_get '[x["id"] for x in d["events"] if x["type"] == "end"]' <"$T/lp1.json")" "[$e]" "the long-poll's end, next"
	after=$(json_get 'd["next"]' <"$T/lp1.json")
fi
# nothing comes: an empty page after the wait
t0=$(now_ms)
expect_eq "$(api -o "$T/lp2.json" -w '%{http_code}' "$base/api/events?after=$after&wait=1s")" 200 "an empty long-poll"
el=$(($(now_ms) - t0))
[ "$el" -ge 900 ] && [ "$el" -lt 15000 ] || fail "wait=1s answered after ${el} ms"
expect_eq "$(json_get 'd["events"]' <"$T/lp2.json")" "[]" "the empty long-poll's events"
# bad input is the one error shape
expect_eq "$(api -o "$T/bad.json" -w '%{http_code}' "$base/api/events?after=soon")" 400 "after=soon"
expect_eq "$(json_get 'd["error"]["code"]' <"$T/bad.json")" 64 "after=soon's code"
expect_eq "$(api -o /dev/null -w '%{http_code}' "$base/api/events?limit=0")" 400 "limit=0"
kill_child TERM "$dpid"
kill_child TERM "$wpid"
