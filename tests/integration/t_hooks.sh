#!/bin/sh
# Webhooks (issue 36, on_end): every end of a task whose kind (or queue)
# has an on_end in the config is POSTed to that URL once, as the event's
# JSON, with a Sked-Signature that the verification example of
# docs/operations.md accepts (and that fails for another secret or
# body); a kind's on_end beats its queue's; a receiver that answers 500
# gets the delivery again; ends of kinds without on_end are not
# delivered; the leader killed while ends stream in loses no delivery and
# enqueues none twice (the cursor moves in the transaction that enqueues);
# deliveries make no deliveries; a delivery task to a URL no on_end
# names fails without a request, and a catch-all handler never runs one;
# a bad on_end URL, or no SKED_HOOK_SECRET, is one line and 78 when the
# worker starts; the secret is in no log or message, nor in a handler's
# environment.
# backends: sqlite pg mariadb
. "$(dirname "$0")/lib.sh"
init_db
export SKED_HOOK_SECRET="s3cret-$$"
port=${SKED_TEST_HOOK_PORT:-$(free_port)}

# the receiver: every request logged as a JSON line; /flaky answers 500
# to the first request of each event, 200 after
cat >"$T/recv.py" <<'PY'
import http.server, json, sys
port, log = int(sys.argv[1]), sys.argv[2]
seen = set()
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        code = 200
        try:
            key = json.loads(body)["id"]
        except Exception:
            key = None
        if self.path == "/flaky" and key not in seen:
            seen.add(key)
            code = 500
        with open(log, "a") as f:
            f.write(json.dumps({"path": self.path, "code": code,
                                "sig": self.headers.get("Sked-Signature"),
                                "task": self.headers.get("Sked-Task-Id"),
                                "body": body.decode()}) + "\n")
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
PY
: >"$T/recv.log"
python3 "$T/recv.py" "$port" "$T/recv.log" 2>"$T/recv.err" &
recv=$!
up() { python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$port"; }
wait_for 20 up || { cat "$T/recv.err" >&2; fail "the receiver did not start"; }

# bad configs: one line, 78, before any work
cp "$T/sked.conf" "$T/base.conf"
cp "$T/sked.conf" "$T/bad.conf"
printf '[kind.x]\non_end = ftp://127.0.0.1/\n' >>"$T/bad.conf"
expect_rc 78 sk --config "$T/bad.conf" worker --handler x=/bin/true --until-empty
stderr_one_line "$T/err"
grep -q "on_end" "$T/err" || fail "the message does not name on_end: $(cat "$T/err")"
cp "$T/sked.conf" "$T/nosecret.conf"
printf '[kind.x]\non_end = http://127.0.0.1:%s/ok\n' "$port" >>"$T/nosecret.conf"
expect_rc 78 env -u SKED_HOOK_SECRET "$SKED" --config "$T/nosecret.conf" worker --handler x=/bin/true --until-empty
stderr_one_line "$T/err"
grep -q "SKED_HOOK_SECRET" "$T/err" || fail "the message does not name SKED_HOOK_SECRET"
if grep -q "$SKED_HOOK_SECRET" "$T/err"; then fail "the secret is in a message"; fi

cat >>"$T/sked.conf" <<CONF
[kind.hooked]
on_end = http://127.0.0.1:$port/ok
[queue.flakyq]
on_end = http://127.0.0.1:$port/flaky
CONF

h=$(handler h.sh <<'H'
#!/bin/sh
read -r p || true
# the signing key is sked's secret, never a handler's
[ -z "${SKED_HOOK_SECRET:-}" ] || { echo "SKED_HOOK_SECRET leaked" >&2; exit 1; }
sleep 0.1
case "$p" in
fail*) echo "boom $SKED_TASK_ID" >&2; exit 1 ;;
esac
printf "result of %s" "$SKED_TASK_ID" >"$SKED_TASK_RESULT_FILE"
H
)
: >"$T/expect"
enq() { # KIND QUEUE PAYLOAD STATUS URLPATH
	id=$(sk enqueue "$1" --queue "$2" --payload "$3" --max-attempts 1)
	echo "$id $1 $2 $4 $5" >>"$T/expect"
}
for i in $(seq 1 12); do
	enq hooked default ok succeeded /ok
	enq plain default ok - -
	enq qk flakyq ok succeeded /flaky
done
enq hooked flakyq ok succeeded /ok # the kind's on_end beats its queue's
enq hooked default fail dead /ok

work() { # NAME
	SKED_LOG=info "$SKED" worker --node-id "$1" --concurrency 2 --lease 3s \
		--poll 100ms --retry-base 100ms --retry-max 300ms \
		--handler "hooked=$h" --handler "plain=$h" --handler "qk=$h" \
		>"$T/$1.log" 2>&1 &
}
work w1
w1=$!
work w2
w2=$!
# the leader, once some deliveries came: killed while ends stream in
delivered() { [ "$(grep -c '"code": 200' "$T/recv.log")" -ge "$1" ]; }
wait_for 60 delivered 3 || { cat "$T/w1.log" "$T/w2.log" >&2; fail "no delivery came"; }
leader=$(grep -l "leads the cluster's chores" "$T/w1.log" "$T/w2.log" | head -1)
[ -n "$leader" ] || fail "no worker says it leads"
case "$leader" in
*w1.log) kill_child KILL "$w1"; survivor=w2 ;;
*) kill_child KILL "$w2"; survivor=w1 ;;
esac
note "killed the leader ($leader); $survivor goes on"
# more ends, which only the survivor can deliver
for i in $(seq 1 6); do
	enq hooked default ok succeeded /ok
	enq qk flakyq ok succeeded /flaky
done
n=$(grep -vc ' - -$' "$T/expect")
all() { python3 - "$T" <<'PY'
import json, sys
T = sys.argv[1]
want = {int(l.split()[0]) for l in open(T + "/expect") if not l.rstrip().endswith("- -")}
got = {json.loads(json.loads(l)["body"])["id"] for l in open(T + "/recv.log") if json.loads(l)["code"] == 200}
sys.exit(0 if want <= got else 1)
PY
}
wait_for 90 all || { tail -n 5 "$T/w1.log" "$T/w2.log" >&2; fail "not every end was delivered ($n expected)"; }
sleep 3 # anything more (a duplicate, a delivery of a delivery) shows now

# the docs' verification example, as a receiver would run it
python3 - "$(dirname "$0")/../../docs/operations.md" "$T/verify.py" <<'PY'
import re, sys
doc = open(sys.argv[1]).read()
m = re.search(r"<!-- t_hooks runs this -->\s*```python\n(.*?)```", doc, re.S)
if not m:
    sys.exit("no verification example in docs/operations.md")
open(sys.argv[2], "w").write(m.group(1))
PY

# deliveries per event, as sked enqueued them: one each
sql "SELECT payload FROM {p}task WHERE kind = 'sked.hook' UNION ALL SELECT payload FROM {p}task_done WHERE kind = 'sked.hook'" >"$T/hooks.payloads"
sql "SELECT id, attempts FROM {p}task_done WHERE kind = 'sked.hook'" | tr '|' ' ' >"$T/hooks.attempts"

python3 - "$T" <<'PY' || fail "webhook deliveries (above)"
import json, os, sys, collections
T = sys.argv[1]
sys.path.insert(0, T)
from verify import verify
secret = os.environ["SKED_HOOK_SECRET"].encode()
want = {}
for l in open(T + "/expect"):
    i, kind, queue, status, path = l.split()
    want[int(i)] = (kind, queue, status, path)
bad = 0
# sked enqueued one delivery per end that has an on_end, and no other
per_event = collections.Counter()
for l in open(T + "/hooks.payloads"):
    l = l.strip()
    if not l:
        continue
    p = json.loads(l)
    per_event[p["event"]["id"]] += 1
    if p["event"]["kind"] == "sked.hook":
        print("a delivery of a delivery:", p); bad = 1
for i, (kind, queue, status, path) in want.items():
    n = per_event.get(i, 0)
    if path == "-" and n:
        print("task %d (%s, no on_end): %d deliveries" % (i, kind, n)); bad = 1
    if path != "-" and n != 1:
        print("task %d: %d delivery tasks, expected 1" % (i, n)); bad = 1
extra = set(per_event) - set(want)
if extra:
    print("deliveries for tasks never enqueued here:", extra); bad = 1
attempts = {}
for l in open(T + "/hooks.attempts"):
    if l.strip():
        a, b = l.split()
        attempts[int(a)] = int(b)
reqs = collections.defaultdict(list)
for l in open(T + "/recv.log"):
    r = json.loads(l)
    body = r["body"].encode()
    if not verify(secret, r["sig"], body):
        print("a bad signature:", r); bad = 1
    if verify(b"other", r["sig"], body) or verify(secret, r["sig"], body + b" "):
        print("the example accepts what it must not:", r); bad = 1
    reqs[json.loads(body)["id"]].append(r)
for i, (kind, queue, status, path) in want.items():
    rs = reqs.get(i, [])
    if path == "-":
        if rs:
            print("task %d of kind %s was delivered" % (i, kind)); bad = 1
        continue
    ok = [r for r in rs if r["code"] == 200]
    if not ok:
        print("task %d: not delivered" % i); bad = 1; continue
    if any(r["path"] != path for r in rs):
        print("task %d: delivered to %s, expected %s" % (i, [r["path"] for r in rs], path)); bad = 1
    # at most once per attempt of its delivery task (once, unless a
    # killed worker's attempt is run again)
    dt = int(ok[0]["task"])
    if len(ok) > attempts.get(dt, 1):
        print("task %d: %d deliveries for %d attempts" % (i, len(ok), attempts.get(dt, 1))); bad = 1
    if path == "/flaky" and (rs[0]["code"] != 500 or len(rs) < 2):
        print("task %d: the 500 was not retried: %s" % (i, [r["code"] for r in rs])); bad = 1
    e = json.loads(ok[0]["body"])
    if (e["type"], e["kind"], e["queue"], e["status"]) != ("end", kind, queue, status):
        print("task %d: event %s, expected %s" % (i, e, (kind, queue, status))); bad = 1
    if status == "succeeded" and e["result"] != "result of %d" % i:
        print("task %d: result %r" % (i, e["result"])); bad = 1
    if status == "dead" and not (e["error"] and e["outcome"] == "failed"):
        print("task %d: %s" % (i, e)); bad = 1
    if not (e["finished_ms"] and e["node_id"] and e["attempt"] == 1):
        print("task %d: %s" % (i, e)); bad = 1
sys.exit(bad)
PY
# the secret is never logged
for f in "$T"/w1.log "$T"/w2.log; do
	if grep -q "$SKED_HOOK_SECRET" "$f"; then fail "the secret is in $f"; fi
done
# a delivery task to a URL no on_end names is refused without a request
evil=$(sk enqueue sked.hook --max-attempts 1 --payload "{\"url\":\"http://127.0.0.1:$port/evil\",\"event\":{\"id\":1}}")
dead() { [ "$(status_of "$1")" = 3 ]; }
wait_for 30 dead "$evil" || fail "the delivery to an unknown URL did not end dead"
sk --json show "$evil" | grep -q "not one of this worker's on_end URLs" || fail "the refusal does not say why"
if grep -q '"/evil"' "$T/recv.log"; then fail "a delivery went to a URL no on_end names"; fi
kill_child TERM "$w1"
kill_child TERM "$w2"
wait "$w1" 2>/dev/null || true
wait "$w2" 2>/dev/null || true
# the catch-all of a worker without on_end does not run deliveries (it
# would end them as delivered without a request)
stray=$(sk enqueue sked.hook --max-attempts 1 --payload "{\"url\":\"http://127.0.0.1:$port/ok\",\"event\":{\"id\":2}}")
"$SKED" --config "$T/base.conf" worker --handler '*=/bin/true' --poll 100ms --until-empty >"$T/w3.log" 2>&1 || true
expect_eq "$(status_of "$stray")" 3 "a delivery met by a catch-all handler (dead)"
sk --json show "$stray" | grep -q "no handler for kind 'sked.hook'" || fail "the catch-all's refusal does not say why"
kill_child TERM "$recv"
wait 2>/dev/null || true
