#!/bin/sh
# --json prints one parseable JSON document on stdout for info, enqueue,
# enqueue --lines, list, show, stats, nodes, cancel and cron next, with the
# field values the database holds; docs/cli.md names every key of show's.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

j() { sk --json "$@" >"$T/doc" || fail "'sked --json $*' failed"; }
get() { json_get "$1" <"$T/doc"; }

j info
expect_eq "$(get 'd["schema_version"] == d["schema_expected"]')" true "info schema versions"
[ -n "$(get 'd["strategy"]')" ] || fail "info has no strategy"
[ -n "$(get 'd["reason"]')" ] || fail "info has no reason"
if [ "$STRATEGY" != auto ]; then expect_eq "$(get 'd["strategy"]')" "$STRATEGY" "info strategy"; fi

j enqueue mail --payload 'héllo "world"' --priority 3 --queue q1 --max-attempts 4
id=$(get 'd["id"]')
expect_eq "$(get 'd["existed"]')" false "enqueue existed"
expect_eq "$(sql "SELECT kind FROM {p}task WHERE id = $id")" mail "kind of the enqueued id"

printf 'a\nb\n' >"$T/lines"
j enqueue mail --lines "$T/lines"
expect_eq "$(get 'len(d["ids"])')" 2 "ids from --lines"

# the --json flag also works after the command name
sk show "$id" --json >"$T/doc" || fail "show --json failed"
expect_eq "$(get 'd["id"]')" "$id" "show id"
expect_eq "$(get 'd["payload"]')" 'héllo "world"' "show payload"
expect_eq "$(get 'd["status"]')" pending "show status"
expect_eq "$(get 'd["priority"]')" 3 "show priority"
expect_eq "$(get 'd["queue"]')" q1 "show queue"
expect_eq "$(get 'd["max_attempts"]')" 4 "show max_attempts"
expect_eq "$(get 'd["finished_at"]')" null "show finished_at"
expect_eq "$(get 'd["runs"]')" "[]" "show runs"

j list
expect_eq "$(get 'len(d)')" 3 "list length"
expect_eq "$(get 'sorted(t["id"] for t in d)[0]')" "$id" "first id in list"

h=$(handler h.sh <<'H'
#!/bin/sh
echo "out $SKED_TASK_ID"
H
)
sk worker --queues q1 --handler "mail=$h" --until-empty --poll 100ms --lease 5s
j show "$id"
expect_eq "$(get 'd["status"]')" succeeded "status after the run"
expect_eq "$(get 'len(d["runs"])')" 1 "runs"
expect_eq "$(get 'd["runs"][0]["outcome"]')" succeeded "run outcome"
expect_eq "$(get 'd["runs"][0]["exit_code"]')" 0 "run exit code"
expect_eq "$(get 'd["runs"][0]["output"].strip()')" "out $id" "run output"

j stats
# tasks per queue, live and ended (q1 has only ended ones)
expect_eq "$(get '[q["queue"] for q in d["queues"]]')" "['default', 'q1']" "queues in stats"
expect_eq "$(get '[q["succeeded"] for q in d["queues"] if q["queue"] == "q1"][0]')" 1 "succeeded in q1's row"
expect_eq "$(get 'd["total"]["succeeded"]')" 1 "succeeded in the total"
expect_eq "$(get '[q["pending"] for q in d["queues"] if q["queue"] == "default"][0]')" 2 "pending in default"
expect_eq "$(get 'd["total"]["pending"] + d["total"]["succeeded"]')" 3 "total"

j nodes
expect_eq "$(get 'len(d)')" 0 "nodes after the worker stopped"

other=$(sk enqueue mail)
j cancel "$other"
expect_eq "$(get 'd["id"]')" "$other" "cancel id"
expect_eq "$(get 'd["result"]')" cancelled "cancel result"

j cron next '30 7 * * *' --tz UTC --from 2026-03-08T00:00:00Z --count 2
expect_eq "$(get '",".join(d["next"])')" "2026-03-08T07:30:00Z,2026-03-09T07:30:00Z" "cron next"

# every key of show --json (a task, its attempt, a parent) is named in
# docs/cli.md's "JSON output" (traceparent, result, parents and children
# once were not: issue 36)
sk --json show "$id" >"$T/shown.json"
sk --json show "$(sk enqueue mail --after "$id")" >"$T/child.json"
python3 - "$SKED_SRC/docs/cli.md" "$T/shown.json" "$T/child.json" <<'PY' ||
import json, sys
doc = open(sys.argv[1]).read()
sec = doc[doc.index("\n## JSON output"):]
sec = sec[:sec.index("\n## ", 1)]
t, c = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
keys = set(t) | set(t["runs"][0]) | set(c) | set(c["parents"][0])
missing = sorted(k for k in keys if '"%s"' % k not in sec)
if missing:
    sys.exit("docs/cli.md's JSON output does not name %s" % missing)
PY
	fail "docs/cli.md does not name every key of show --json"

# errors stay on stderr, one line; stdout stays empty
expect_rc 65 sk --json show 999999
stderr_one_line "$T/err"
[ ! -s "$T/out" ] || fail "stdout not empty on error"
