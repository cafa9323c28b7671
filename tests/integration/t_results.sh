#!/bin/sh
# Results (docs/workflows.md): pipe:, program and http:// handlers leave
# a result, kept on the ended task and shown by show and --json; a child
# of two parents gets both parents' ids and results in each handler
# kind (pipe: "parents", SKED_TASK_PARENTS and SKED_TASK_PARENT_RESULTS,
# Sked-Task-Parents and a "parents" body field); a result over 64 KiB
# fails its attempt with the size named and nothing kept; a result of
# \377 and control bytes never wedges the finisher and shows escaped in
# text, as stored in JSON; only the attempt that ends a task keeps its
# result; the result file is private and removed after the attempt.
# backends: engines
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || skip "curl is not installed"
init_db

prog=$(handler prog.sh <<'H'
#!/bin/sh
r=$SKED_TASK_RESULT_FILE
stat -c %a "$r" >"$1/mode.$SKED_TASK_ID"
echo "$r" >"$1/path.$SKED_TASK_ID"
case "$(cat)" in
big) head -c 65537 /dev/zero | tr '\0' a >"$r" ;;
bin) printf 'x\377y\001z\033[31m\n' >"$r" ;;
parents)
	echo "$SKED_TASK_PARENT_RESULTS" >"$1/ppath.$SKED_TASK_ID"
	{ echo "P=$SKED_TASK_PARENTS"; cat "$SKED_TASK_PARENT_RESULTS"; } >"$r" ;;
none) ;;
rename) printf renamed >"$r.new" && mv "$r.new" "$r" ;;
fifo) rm -f "$r" && mkfifo "$r" ;;
*) printf 'prog result %s' "$SKED_TASK_ID" >"$r" ;;
esac
H
)
pipe=$(handler pipe.py <<'H'
#!/usr/bin/env python3
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    r = {"id": m["id"], "ok": True, "result": "pipe result %d" % m["id"]}
    p = m["payload"]
    if p == "parents":
        r["result"] = {"parents": m.get("parents")}
    elif p == "big":
        r["result"] = "p" * 65537
    elif p == "html":
        r["result"] = "<b>bold</b> & co"
    elif p == "ctl":
        r["result"] = "a\u0000b\u0007c\u001b[0m"
    elif p in ("retry", "retry-none") and m["attempt"] == 1:
        r = {"id": m["id"], "ok": False, "error": "once more",
             "retry_in_ms": 0, "result": "first"}
    elif p == "retry":
        r["result"] = "second"
    elif p == "retry-none":
        del r["result"]
    print(json.dumps(r), flush=True)
H
)
python3 "$(dirname "$0")/../tools/http_endpoint.py" "$T/port" "$T/req" &
wait_for 10 test -s "$T/port" || fail "the test's HTTP server did not start"
base="http://127.0.0.1:$(cat "$T/port")"

pa=$(sk enqueue prog --payload plain)
pb=$(sk enqueue pipe --payload plain)
ph=$(sk enqueue web --payload plain)
cprog=$(sk enqueue prog --payload parents --after "$pa,$pb")
cpipe=$(sk enqueue pipe --payload parents --after "$pa,$pb")
chttp=$(sk enqueue web --payload '{"x":1}' --after "$pa,$pb")
bigp=$(sk enqueue prog --payload big --max-attempts 1)
bigq=$(sk enqueue pipe --payload big --max-attempts 1)
bigh=$(sk enqueue webbig --payload x --max-attempts 1)
bin=$(sk enqueue prog --payload bin)
ctl=$(sk enqueue pipe --payload ctl)
none=$(sk enqueue prog --payload none)
renamed=$(sk enqueue prog --payload rename)
fifo=$(sk enqueue prog --payload fifo)
retry=$(sk enqueue pipe --payload retry --max-attempts 2)
retry2=$(sk enqueue pipe --payload retry-none --max-attempts 2)
plain=$(sk enqueue plainkind --payload x)

"$SKED" worker --until-empty --poll 100ms --retry-base 10ms \
	--handler "prog=$prog $T" --handler "pipe=pipe:$pipe" \
	--handler "web=$base/result" --handler "webbig=$base/big" \
	--handler "plainkind=true" >"$T/w.log" 2>&1 &
wk=$!
wait_exit "$wk" 120
expect_eq "$wrc" 0 "the worker's exit status (--until-empty)"

result_of() { sk --json show "$1" | json_get 'd["result"]'; }
for id in $pa $pb $cprog $cpipe $bin $ctl $none $renamed $fifo $retry $retry2 $plain; do
	expect_eq "$(status_of "$id")" 2 "task $id succeeded"
done
expect_eq "$(result_of "$pa")" "prog result $pa" "the program's result"
expect_eq "$(result_of "$pb")" "pipe result $pb" "the pipe: handler's result"
expect_eq "$(result_of "$none")" null "a program that wrote no result"
expect_eq "$(result_of "$renamed")" renamed "a result file renamed into place"
expect_eq "$(result_of "$fifo")" null "a FIFO at the result file's name (no result, no wait)"
expect_eq "$(result_of "$plain")" null "a handler that knows nothing of results"
expect_eq "$(result_of "$retry")" second "the result of the attempt that ended the task"
expect_eq "$(result_of "$retry2")" null "a failed attempt's result is not kept"
sk show "$pa" | grep -q "^  result       (1[0-9] bytes)" ||
	fail "show does not print the result's size: $(sk show "$pa")"
sk show "$pa" | grep -q "prog result $pa" || fail "show does not print the result"

# the result file: private, one per attempt, gone after it
expect_eq "$(cat "$T/mode.$pa")" 600 "the result file's mode"
for f in "$T"/path.* "$T"/ppath.*; do
	[ ! -e "$(cat "$f")" ] || fail "$(cat "$f") is left behind"
done
[ "$(cat "$T/path.$pa")" != "$(cat "$T/path.$bin")" ] || fail "one result file for two attempts"

# a child of two parents, in each handler kind
sk --json show "$cprog" | python3 -c '
import json, sys
pa, pb = int(sys.argv[1]), int(sys.argv[2])
r = json.load(sys.stdin)["result"]
head, body = r.split("\n", 1)
assert head == "P=%d,%d" % (pa, pb), head
par = json.loads(body)
assert par == [{"id": pa, "kind": "prog", "result": "prog result %d" % pa},
               {"id": pb, "kind": "pipe", "result": "pipe result %d" % pb}], par
' "$pa" "$pb" || fail "the program child did not get both parents (SKED_TASK_PARENTS, SKED_TASK_PARENT_RESULTS)"
sk --json show "$cpipe" | python3 -c '
import json, sys
pa, pb = int(sys.argv[1]), int(sys.argv[2])
par = json.load(sys.stdin)["result"]["parents"]  # a JSON result: an object
assert par == [{"id": pa, "kind": "prog", "result": "prog result %d" % pa},
               {"id": pb, "kind": "pipe", "result": "pipe result %d" % pb}], par
' "$pa" "$pb" || fail "the pipe: child did not get both parents in \"parents\""

# over 64 KiB: the attempt fails, the size named, nothing kept
for id in $bigp $bigq; do
	expect_eq "$(status_of "$id")" 3 "task $id with a 65537-byte result (dead)"
	sk --json show "$id" | json_get 'd["last_error"]' | grep -q "result of 65537 bytes is over the limit of 65536" ||
		fail "task $id's error does not name the size: $(sk --json show "$id" | json_get 'd["last_error"]')"
	expect_eq "$(result_of "$id")" null "task $id's result past the bound"
done

# \377 and control bytes: recorded (the worker went on to the end),
# escaped in text, as stored in JSON (\377 replaced by U+FFFD)
sk --json show "$bin" | python3 -c '
import json, sys
r = json.load(sys.stdin)["result"]
assert r == "x\ufffdy\x01z\x1b[31m", repr(r)  # the last newline dropped
' || fail "the binary result is not stored as sanitised text"
sk --json show "$ctl" | python3 -c '
import json, sys
r = json.load(sys.stdin)["result"]
assert r == "a\ufffdb\x07c\x1b[0m", repr(r)
' || fail "the pipe: result with NUL and control characters is not stored as text"
for id in $bin $ctl; do
	sk show "$id" >"$T/show.$id"
	if tr -d '\n' <"$T/show.$id" | LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')"; then
		fail "show $id prints raw control bytes"
	fi
done
grep -q 'x.*y.*z' "$T/show.$bin" || fail "show $bin lost the result's text"

for id in $ph $chttp; do
	expect_eq "$(status_of "$id")" 2 "http task $id succeeded"
	expect_eq "$(result_of "$id")" "http result $id" "the HTTP body is the result"
done
expect_eq "$(status_of "$bigh")" 3 "the HTTP task with a 65537-byte body (dead)"
sk --json show "$bigh" | json_get 'd["last_error"]' | grep -q "result of 65537 bytes" ||
	fail "the HTTP task's error does not name the size"
python3 -c '
import json, sys
pa, pb, c = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
recs = [json.loads(l) for l in open(sys.argv[1])]
[r] = [r for r in recs if r.get("sked-task-id") == c]
assert r["sked-task-parents"] == "%d,%d" % (pa, pb), r
b = json.loads(r["body"])
assert b["x"] == 1, b
assert b["parents"] == [
    {"id": pa, "kind": "prog", "result": "prog result %d" % pa},
    {"id": pb, "kind": "pipe", "result": "pipe result %d" % pb}], b
assert not [r for r in recs if r.get("sked-task-id") != c and
            "sked-task-parents" in r], "a task without parents named some"
' "$T/req" "$pa" "$pb" "$chttp" || fail "the HTTP child did not get its parents (Sked-Task-Parents, \"parents\")"

# tasks without parents pay no statement for them; a child's batch one
sk enqueue plainkind --payload a >/dev/null
sk enqueue plainkind --payload b >/dev/null
SKED_LOG=debug SKED_TRACE_SQL=1 "$SKED" worker --until-empty --poll 100ms \
	--handler "plainkind=true" >"$T/trace.log" 2>&1 || fail "the traced worker failed"
expect_eq "$(grep -c 'task_dep e' "$T/trace.log" || true)" 0 \
	"statements on parents for tasks without parents"
p1=$(sk enqueue plainkind --payload c)
sk enqueue plainkind --payload d --after "$p1" >/dev/null
SKED_LOG=debug SKED_TRACE_SQL=1 "$SKED" worker --until-empty --poll 100ms \
	--handler "plainkind=true" >"$T/trace2.log" 2>&1 || fail "the traced worker failed"
expect_eq "$(grep -c 'task_dep e' "$T/trace2.log" || true)" 1 \
	"statements on parents for one child"

# the dashboard's task page (HTML-escaped) and the JSON API's show
html=$(sk enqueue pipe --payload html)
# a child whose parents had ended before it was enqueued: pending at
# once, and its handler still gets them
late=$(sk enqueue pipe --payload parents --after "$pb,$pa")
expect_eq "$(status_of "$late")" 0 "a child of ended parents is pending at once"
"$SKED" worker --until-empty --poll 100ms \
	--handler "pipe=pipe:$pipe" >"$T/w2.log" 2>&1 || fail "the second worker failed"
sk --json show "$late" | python3 -c '
import json, sys
pa, pb = int(sys.argv[1]), int(sys.argv[2])
par = json.load(sys.stdin)["result"]["parents"]  # a JSON result: an object
assert [p["id"] for p in par] == [pa, pb], par
assert par[1]["result"] == "pipe result %d" % pb, par
' "$pa" "$pb" || fail "a child of ended parents did not get them"
hb=$base
tok=$(head -c 32 /dev/urandom | base64 | tr -d '\n')
printf '%s\n' "$tok" >"$T/tok"
chmod 600 "$T/tok"
start_dashboard d --api-token "file:$T/tok"
curl -s -m 10 "$base/task/$html" >"$T/page" || fail "the task page did not load"
grep -q '&lt;b&gt;bold&lt;/b&gt; &amp; co' "$T/page" ||
	fail "the task page does not show the result HTML-escaped: $(grep -i result "$T/page" | head -3)"
grep -q '<b>bold' "$T/page" && fail "the task page shows the result's HTML as markup"
curl -s -m 10 -H "Authorization: Bearer $tok" "$base/api/tasks/$bin" >"$T/api" ||
	fail "the API's show did not answer"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["result"]
assert r == "x\ufffdy\x01z\x1b[31m", repr(r)  # the last newline dropped
' "$T/api" || fail "the API's show does not carry the result: $(cat "$T/api")"
base=$hb

echo "ok: $SKED_BACKEND: results"
