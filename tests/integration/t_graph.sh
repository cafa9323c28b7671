#!/bin/sh
# A workflow in one transaction (issue 37; docs/workflows.md, "A graph in
# one transaction"): `sked enqueue --graph FILE`.
#   - a diamond of four kinds, after a task that exists already, written
#     children first: the ids printed by name are the database's edges,
#     each task keeps its own queue, priority, attempts and payload (a
#     JSON value stored as its compact text), and a worker runs it in
#     order: no task starts before each of its parents has ended;
#   - --json answers {name: id}, and - reads the graph from stdin;
#   - an unknown name, a cycle, a name used twice, a file that is not
#     JSON, too many parents, a unique key: exit 65, one line, nothing
#     written;
#   - a graph whose last task the library refuses (a bad queue name), or
#     whose last task waits for a task that does not exist (found inside
#     the transaction, after the first parent was counted), leaves
#     nothing behind: no task, no edge, no count on the existing parent.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

h=$(handler h.sh <<'H'
#!/bin/bash
echo "S $SKED_TASK_ID $(date +%s%N)" >>"$1/log"
sleep 0.2
echo "E $SKED_TASK_ID $(date +%s%N)" >>"$1/log"
H
)

# ---- a diamond after an existing task, listed children first ----
pre=$(sk enqueue setup)
cat >"$T/g.json" <<EOF
{"tasks": [
  {"name": "report", "kind": "report", "after": ["left", "right"],
   "payload": {"to": "ops", "n": [1, 2]}},
  {"name": "left", "kind": "resize", "after": ["fetch"], "queue": "img",
   "priority": 5},
  {"name": "right", "kind": "thumb", "after": ["fetch"], "max_attempts": 2,
   "timeout": "30s", "on_parent_failure": "ignore"},
  {"name": "fetch", "kind": "fetch", "payload": "http://example/x",
   "after": [$pre]}
]}
EOF
sk enqueue --graph "$T/g.json" >"$T/ids"
expect_eq "$(cut -d' ' -f1 "$T/ids" | paste -sd' ' -)" "report left right fetch" \
	"one line a task, in the file's order"
id_of() { awk -v n="$1" '$1 == n { print $2 }' "$T/ids"; }
fetch=$(id_of fetch) left=$(id_of left) right=$(id_of right) report=$(id_of report)
for v in "$fetch" "$left" "$right" "$report"; do
	case "$v" in '' | *[!0-9]*) fail "'$v' is not an id: $(cat "$T/ids")" ;; esac
done
sql "SELECT parent_id, child_id FROM {p}task_dep ORDER BY child_id, parent_id" |
	tr '\t|' '  ' >"$T/edges"
printf '%s %s\n' "$pre" "$fetch" "$fetch" "$left" "$fetch" "$right" \
	"$left" "$report" "$right" "$report" | sort -k2,2n -k1,1n >"$T/want"
expect_eq "$(cat "$T/edges")" "$(cat "$T/want")" "the edges are the file's, by the ids printed"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE status = 6")" 4 \
	"the four tasks wait (blocked) for their parents"
expect_eq "$(sql "SELECT kind, queue, priority, max_attempts FROM {p}task WHERE id = $left" | tr '\t|' '  ')" \
	"resize img 5 5" "left's own queue and priority"
expect_eq "$(sql "SELECT kind, max_attempts, timeout_ms FROM {p}task WHERE id = $right" | tr '\t|' '  ')" \
	"thumb 2 30000" "right's own attempts and timeout"
sk --json show "$report" >"$T/report.json"
expect_eq "$(json_get 'd["payload"]' <"$T/report.json")" '{"to":"ops","n":[1,2]}' \
	"a JSON payload is stored as its compact text"
sk --json show "$fetch" >"$T/fetch.json"
expect_eq "$(json_get 'd["payload"]' <"$T/fetch.json")" "http://example/x" \
	"a string payload is the text itself"

# ---- --json: an object name -> id ----
printf '{"tasks": [{"name": "a", "kind": "k"}, {"name": "b", "kind": "k", "after": ["a"]}]}' >"$T/small.json"
sk enqueue --graph - --json <"$T/small.json" >"$T/small.out" # - is stdin
a=$(json_get 'd["a"]' <"$T/small.out")
b=$(json_get 'd["b"]' <"$T/small.out")
expect_eq "$(count "SELECT COUNT(*) FROM {p}task_dep WHERE parent_id = $a AND child_id = $b")" 1 \
	"--json's ids are the edge's"
sk cancel "$a" >/dev/null # with b: not for the worker below

# ---- the worker runs it in order ----
sk worker --until-empty --queues default,img --concurrency 4 --poll 100ms \
	--handler "setup=$h $T" --handler "fetch=$h $T" --handler "resize=$h $T" \
	--handler "thumb=$h $T" --handler "report=$h $T" >"$T/w.log" 2>&1 ||
	{ tail -5 "$T/w.log" >&2; fail "the worker failed"; }
expect_eq "$(count "SELECT COUNT(*) FROM {p}task_done WHERE status = 2 AND id IN ($pre, $fetch, $left, $right, $report)")" 5 \
	"all five succeeded"
# each child's start after each of its parents' end, from the handlers' log
while read -r p c; do
	pe=$(awk -v i="$p" '$1 == "E" && $2 == i { print $3 }' "$T/log")
	cs=$(awk -v i="$c" '$1 == "S" && $2 == i { print $3 }' "$T/log")
	[ -n "$pe" ] && [ -n "$cs" ] || fail "no log of edge $p -> $c: $(cat "$T/log")"
	[ "$cs" -gt "$pe" ] || fail "task $c started before its parent $p ended"
done <"$T/want"

# ---- invalid graphs: 65, one line, nothing written ----
rows() { count "SELECT (SELECT COUNT(*) FROM {p}task) + (SELECT COUNT(*) FROM {p}task_done) + (SELECT COUNT(*) FROM {p}task_dep)"; }
refused() { # NAME TEXT-IN-THE-LINE: $T/bad.json is refused
	before=$(rows)
	expect_rc 65 sk enqueue --graph "$T/bad.json"
	stderr_one_line "$T/err"
	grep -q -- "$2" "$T/err" || fail "$1: '$(cat "$T/err")' does not say '$2'"
	[ ! -s "$T/out" ] || fail "$1: printed $(cat "$T/out")"
	expect_eq "$(rows)" "$before" "$1 wrote nothing"
}
echo '{"tasks": [{"name": "a", "kind": "k"}, {"name": "b", "kind": "k", "after": ["a", "nope"]}]}' >"$T/bad.json"
refused "an unknown name" "'after' names 'nope'"
echo '{"tasks": [{"name": "a", "kind": "k", "after": ["c"]}, {"name": "b", "kind": "k", "after": ["a"]}, {"name": "c", "kind": "k", "after": ["b"]}]}' >"$T/bad.json"
refused "a cycle" "cycle"
echo '{"tasks": [{"name": "a", "kind": "k"}, {"name": "a", "kind": "j"}]}' >"$T/bad.json"
refused "a name used twice" "two tasks are named 'a'"
echo '{"tasks": [{"name": "a", "kind": "k"}' >"$T/bad.json"
refused "a file that is not JSON" "is not JSON"
python3 -c '
import json, sys
tasks = [{"name": "t%d" % i, "kind": "k"} for i in range(1001)]
tasks.append({"name": "last", "kind": "k", "after": ["t%d" % i for i in range(1001)]})
json.dump({"tasks": tasks}, sys.stdout)' >"$T/bad.json"
refused "too many parents" "at most 1000"
echo '{"tasks": [{"name": "a", "kind": "k", "unique_key": "x"}]}' >"$T/bad.json"
refused "a unique key" "unique key"

# ---- all or nothing: the last task refused ----
live=$(sk enqueue setup --in 1h)
echo "{\"tasks\": [{\"name\": \"a\", \"kind\": \"k\", \"after\": [$live]}, {\"name\": \"b\", \"kind\": \"k\", \"after\": [\"a\"]}, {\"name\": \"z\", \"kind\": \"k\", \"after\": [\"b\"], \"queue\": \"no such queue\"}]}" >"$T/bad.json"
refused "a bad queue name on the last task" "task 'z': queue 'no such queue'"
echo "{\"tasks\": [{\"name\": \"a\", \"kind\": \"k\", \"after\": [$live]}, {\"name\": \"b\", \"kind\": \"k\", \"after\": [\"a\"]}, {\"name\": \"z\", \"kind\": \"k\", \"after\": [\"b\", 999999999]}]}" >"$T/bad.json"
refused "a missing parent of the last task" "no task 999999999"
expect_eq "$(count "SELECT dependents FROM {p}task WHERE id = $live")" 0 \
	"the existing parent counted no dependent of a graph rolled back"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE kind = 'k'")" 0 "no task of a refused graph"
