#!/bin/sh
# Logs: with --log-format json (or SKED_LOG_FORMAT=json) every line a
# worker writes is one JSON object with time, level, pid and node, and a
# line about a task carries its task_id and attempt; a SKED_LOG or log
# format sked does not know is refused with one line; `sked --help` names
# every environment variable sked reads; and every line of a worker's run
# with successes, a failure, a dead task, a lease lost and a fatal error
# parses, with its facts (task_id, attempt, kind, queue, outcome,
# duration_ms, error, node) as keys, each named by docs/cli.md and
# docs/operations.md. Backend-independent: sqlite only.
# backends: sqlite
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

# Every line of a worker's run with --log-format json parses, and carries
# its facts as keys: successes (at debug), a failure and a dead task, a
# lease lost (the running task cancelled), and a fatal error at start.
ok=$(handler ok.sh <<'H'
#!/bin/sh
exit 0
H
)
slow=$(handler slow.sh <<'H'
#!/bin/sh
exec sleep 60
H
)
bad=$(handler bad.sh <<'H'
#!/bin/sh
echo "mailbox full" >&2
exit 2
H
)
for i in 1 2 3; do sk enqueue ok --queue mail >/dev/null; done
failing=$(sk enqueue bad --queue mail --max-attempts 2)
long=$(sk enqueue slow --queue video)
SKED_LOG=debug SKED_LOG_FORMAT=json start_worker jw --queues mail,video --handler "ok=$ok" \
	--handler "bad=$bad" --handler "slow=$slow" --retry-base 100ms \
	--retry-max 200ms --poll 100ms --lease 3s --node-id json-node
jw=$wpid
running() { [ "$(status_of "$long")" = 1 ]; }
ended() { [ "$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE status = 2")" = 3 ] && [ "$(status_of "$failing")" = 3 ]; }
wait_for 30 running || { cat "$T/jw.log" >&2; fail "the slow task did not start"; }
sk cancel "$long" >/dev/null
lost() { grep -q '"outcome":"lost"' "$T/jw.log"; }
wait_for 20 lost || { cat "$T/jw.log" >&2; fail "no lease-lost line after the running task was cancelled"; }
wait_for 30 ended || { cat "$T/jw.log" >&2; fail "the worker did not end the other tasks"; }
kill -TERM "$jw"
wait_exit "$jw" 30
# a fatal error at start, in the same log
set +e
SKED_LOG=debug "$SKED" --log-format json worker --handler "x=$T/no-such-program" >>"$T/jw.log" 2>&1
rc=$?
set -e
expect_eq "$rc" 78 "a worker whose handler program does not exist"
python3 - "$T/jw.log" "$failing" "$long" <<'PY' || { cat "$T/jw.log" >&2; fail "the worker's JSON lines lack their facts"; }
import json, sys
failing, long = int(sys.argv[2]), int(sys.argv[3])
lines = open(sys.argv[1]).read().splitlines()
docs = []
for l in lines:
    try:
        d = json.loads(l)
    except ValueError:
        sys.exit("not a JSON object: %r" % l)
    for k in ("time", "level", "pid", "msg"):
        assert k in d, (k, l)
    if "outcome" in d:
        for k in ("task_id", "attempt", "kind", "queue"):
            assert k in d, ("an outcome line lacks", k, l)
    docs.append(d)
def find(**kv):
    return [d for d in docs if all(d.get(k) == v for k, v in kv.items())]
ok = find(outcome="succeeded", kind="ok", queue="mail", level="debug")
assert len(ok) == 3, ("three success lines at debug", ok)
assert all(isinstance(d["duration_ms"], int) and d["duration_ms"] >= 0 and
           d["node"] == "json-node" and d["attempt"] == 1 for d in ok), ok
f = find(outcome="failed", task_id=failing, attempt=1, kind="bad", queue="mail")
assert f and f[0]["level"] == "info" and "duration_ms" in f[0] and f[0]["error"], ("failure", f)
dead = find(outcome="dead", task_id=failing, attempt=2, kind="bad")
assert dead and dead[0]["level"] == "warn" and dead[0]["error"], ("dead", dead)
lost = find(outcome="lost", task_id=long, kind="slow", queue="video")
assert lost and lost[0]["level"] == "warn" and lost[0]["attempt"] == 1, ("lost", lost)
fatal = [d for d in docs if d["level"] == "error" and "no-such-program" in d.get("error", "")]
assert fatal and "msg" in fatal[0], ("no fatal error line with its error", fatal)
print("%d JSON lines, every fact as a key" % len(docs))
PY
# every key those lines carried is named where the pages list the keys:
# docs/cli.md's paragraph and docs/operations.md's "Logs" (cli.md once
# named 7 of the 12: issue 36)
python3 - "$T/jw.log" "$SKED_SRC/docs/cli.md" "$SKED_SRC/docs/operations.md" <<'PY' || fail "a log key the docs do not name"
import json, sys
keys = set()
for l in open(sys.argv[1]):
    keys |= set(json.loads(l))
paras = [" ".join(p.split()) for p in open(sys.argv[2]).read().split("\n\n")]
para = [p for p in paras if "each log line is one object" in p][0]
ops = open(sys.argv[3]).read()
logs = ops[ops.index("\n## Logs\n"):]
logs = logs[:logs.index("\n## ", 1)]
for name, text in (("docs/cli.md", para), ("docs/operations.md", logs)):
    missing = sorted(k for k in keys if "`%s`" % k not in text)
    if missing:
        sys.exit("%s does not name the log keys %s" % (name, missing))
print("docs name the %d log keys: %s" % (len(keys), " ".join(sorted(keys))))
PY
