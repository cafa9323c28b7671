#!/bin/sh
# Logs: with --log-format json (or SKED_LOG_FORMAT=json) every line a
# worker writes is one JSON object with time, level, pid and node, and a
# line about a task carries its task_id and attempt; a SKED_LOG or log
# format sked does not know is refused with one line; `sked --help` names
# every environment variable sked reads. Backend-independent: sqlite only.
. "$(dirname "$0")/lib.sh"
[ "$SKED_BACKEND" = sqlite ] || not_here "logging does not depend on the database"
init_db
h=$(handler fail.sh <<'H'
#!/bin/sh
exit 1
H
)
id=$(sk enqueue job --max-attempts 1)
SKED_LOG=info sk --log-format json worker --handler "job=$h" --until-empty \
	--poll 100ms --node-id log-node 2>"$T/log"
python3 - "$T/log" "$id" <<'PY' || fail "the JSON log lines are not as documented"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert lines, "no log lines"
about = []
for l in lines:
    d = json.loads(l)
    for k in ("time", "level", "pid", "msg"):
        assert k in d, (k, l)
    assert d["time"].endswith("Z"), l
    if "node" in d:
        assert d["node"] == "log-node", l
    if d.get("task_id") == int(sys.argv[2]):
        about.append(d)
assert any(d.get("node") == "log-node" for d in map(json.loads, lines)), "no line names the node"
assert about and about[0]["attempt"] == 1, "no line about the task with its attempt"
PY
SKED_LOG=info SKED_LOG_FORMAT=json sk stats >/dev/null 2>"$T/log2"
[ ! -s "$T/log2" ] || python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$T/log2" ||
	fail "SKED_LOG_FORMAT=json did not give JSON lines"

SKED_LOG=loud expect_rc 78 sk stats
stderr_one_line "$T/err"
grep -q "SKED_LOG: 'loud'" "$T/err" || fail "the refusal does not name SKED_LOG"
SKED_LOG_FORMAT=xml expect_rc 78 sk stats
stderr_one_line "$T/err"
expect_rc 64 sk --log-format yaml stats
stderr_one_line "$T/err"

sk --help >"$T/help"
for v in SKED_DATABASE_URL SKED_CONFIG SKED_STRATEGY SKED_LOG SKED_LOG_FORMAT \
	SKED_DASHBOARD_AUTH SKED_SQLITE_BUSY_MS SKED_TRACE_SQL PGCONNECT_TIMEOUT; do
	grep -q "$v" "$T/help" || fail "sked --help does not name $v"
	grep -q "$v" "$SKED_SRC/docs/cli.md" || fail "docs/cli.md does not name $v"
done
