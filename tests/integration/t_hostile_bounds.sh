#!/bin/sh
# The bounds of issue 39 on what enters sked, each checked from the
# outside (docs/security.md): a task has at most 1000 parents and one
# enqueue writes at most 100,000 edges (CLI and API alike); what a child
# is handed of its parents' results is at most 1 MiB of JSON, the rest
# left out and marked "cut" (forty parents of 64 KiB of control bytes
# once made 15 MB, a thousand 393 MB read on the claim path); CLI reads
# stop at the limit (--payload @/dev/zero, --lines /dev/zero, a FIFO as
# --config); the API refuses a bulk cancel or retry with no filter, lists
# carry a payload preview within a byte budget, conflicting
# Content-Length headers are refused, `--auth ''` is an error, a payload
# that is not UTF-8 is refused (65), an error line never echoes a
# control byte, a handler's 0xFF byte keeps a JSON log line JSON, and
# the attempt files a worker killed -9 left are removed by the next.
# backends: sqlite
. "$(dirname "$0")/lib.sh"
case "$SKED_BACKEND" in sqlite) ;; *) not_here "the bounds are checked above the database" ;; esac
init_db

# ---- parents per task, edges per enqueue ----
seq 1 1001 | sed 's/^/p/' >"$T/lines"
sk enqueue par --lines "$T/lines" >"$T/pids" || fail "enqueue 1001 parents"
all=$(paste -sd, "$T/pids")
first=$(head -n 1000 "$T/pids" | paste -sd, -)
expect_rc 65 sk enqueue child --after "$all"
grep -q "at most 1000" "$T/err" || fail "1001 parents: $(cat "$T/err")"
seq 1 101 | sed 's/^/c/' >"$T/kids"
expect_rc 65 sk enqueue child --lines "$T/kids" --after "$first"
grep -q "100000" "$T/err" || fail "101 x 1000 edges: $(cat "$T/err")"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE kind = 'child'")" 0 "children written by refused enqueues"
sk enqueue child --after "$first" >/dev/null || fail "1000 parents are allowed"
sk cancel --kind par --yes >/dev/null
sk cancel --kind child --yes >/dev/null

# ---- the parents' results a child is handed: at most 1 MiB ----
par=$(handler par <<'H'
#!/bin/sh
head -c 65536 /dev/zero | tr '\0' '\001' >"$SKED_TASK_RESULT_FILE"
H
)
kid=$(handler kid <<'H'
#!/bin/sh
f=$SKED_TASK_PARENT_RESULTS
printf '{"bytes":%s,"cut":%s,"n":%s}' "$(wc -c <"$f")" \
	"$(grep -o '"cut":true' "$f" | wc -l)" "$(grep -o '"id":' "$f" | wc -l)" >"$SKED_TASK_RESULT_FILE"
H
)
seq 1 40 | sed 's/^/r/' >"$T/rl"
sk enqueue bigp --lines "$T/rl" >"$T/rids" || fail "enqueue 40 parents"
cid=$(sk enqueue kidk --after "$(paste -sd, "$T/rids")") || fail "enqueue the child"
sk worker --handler "bigp=$par" --handler "kidk=$kid" --until-empty --poll 100ms \
	--concurrency 4 >"$T/w.log" 2>&1 || { cat "$T/w.log" >&2; fail "worker"; }
# a JSON result is shown as its value (docs/workflows.md): dumped again
res=$(sk show --json "$cid" | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["result"]))') ||
	fail "show --json $cid"
note "the child of 40 parents of 64 KiB of U+0001 was handed: $res"
bytes=$(printf '%s' "$res" | json_get 'd["bytes"]')
[ "$bytes" -le 1100000 ] || fail "the parents' results handed to a child: $bytes bytes"
expect_eq "$(printf '%s' "$res" | json_get 'd["n"]')" 40 "parents listed"
[ "$(printf '%s' "$res" | json_get 'd["cut"]')" -ge 30 ] || fail "no result marked cut: $res"
grep -q "SKED_PARENTS_RESULTS_MAX" "$T/w.log" || fail "the worker did not say what it left out"

# ---- CLI reads stop at the bound ----
t0=$(date +%s)
expect_rc 65 timeout 20 "$SKED" enqueue k --payload @/dev/zero
expect_rc 65 timeout 20 "$SKED" enqueue k --lines /dev/zero
grep -q "line 1 of /dev/zero is longer" "$T/err" || fail "--lines /dev/zero: $(cat "$T/err")"
mkfifo "$T/fifo"
expect_rc 78 timeout 20 "$SKED" --config "$T/fifo" info
grep -q "not a regular file" "$T/err" || fail "--config FIFO: $(cat "$T/err")"
[ $(($(date +%s) - t0)) -lt 15 ] || fail "the bounded reads took $(($(date +%s) - t0)) s"
expect_rc 64 timeout 20 "$SKED" dashboard --listen 127.0.0.1:0 --auth ''

# ---- text: payloads are UTF-8, errors and JSON logs stay clean ----
expect_rc 65 sk enqueue k --payload "$(printf 'ok\377')"
grep -q "not UTF-8" "$T/err" || fail "a payload that is not UTF-8: $(cat "$T/err")"
expect_rc 65 sk enqueue "$(printf 'x\033[31mred')"
if grep -q "$(printf '\033')" "$T/err"; then fail "an error line echoes an escape byte"; fi
ff=$(handler ff <<'H'
#!/bin/sh
# a pipe: handler whose stderr holds a byte that is never UTF-8
while read -r line; do
	id=$(printf '%s' "$line" | sed -n 's/^{"id":\([0-9]*\),.*/\1/p')
	[ -n "$id" ] || continue
	printf 'bad \377 byte\n' >&2
	printf '{"id":%s,"ok":true}\n' "$id"
done
H
)
sk enqueue ffk >/dev/null
SKED_LOG=info sk --log-format json worker --handler "ffk=pipe:$ff" --until-empty --poll 100ms \
	>"$T/j.log" 2>&1 || true
python3 -c '
import json, sys
for n, line in enumerate(open(sys.argv[1], "rb"), 1):
    json.loads(line.decode("utf-8"))
' "$T/j.log" || { cat -v "$T/j.log" >&2; fail "a JSON log line is not JSON"; }
grep -q "bad" "$T/j.log" || fail "the handler's stderr was not logged"

# ---- the API: bulk changes need a filter, lists carry previews ----
tok=$(head -c 32 /dev/urandom | base64 | tr -d '\n/+=' | head -c 40)
printf '%s\n' "$tok" >"$T/tok"
chmod 600 "$T/tok"
start_dashboard d --api-token "file:$T/tok"
api() { # METHOD PATH [BODY]: prints the status, the answer in $T/ans
	curl -s -m 30 -o "$T/ans" -w '%{http_code}' -X "$1" -H "Authorization: Bearer $tok" \
		-H 'Content-Type: application/json' ${3:+-d "$3"} "$base$2"
}
sk enqueue big --payload "$(head -c 5000 /dev/zero | tr '\0' 'y')" >/dev/null
expect_eq "$(api POST /api/tasks/cancel '{"confirm": true}')" 400 "cancel everything"
expect_eq "$(api POST /api/tasks/retry '{"confirm": true, "kind": null, "queue": null}')" 400 "retry with null filters"
json_get 'd["error"]["message"]' <"$T/ans" | grep -q "needs one of" || fail "$(cat "$T/ans")"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE status = 0")" 1 "pending tasks after the refused cancel"
expect_eq "$(api GET '/api/tasks?kind=big')" 200 "list"
expect_eq "$(json_get 'len(d["tasks"][0]["payload"])' <"$T/ans")" 1024 "a listed payload's preview"
expect_eq "$(json_get 'd["tasks"][0]["payload_bytes"]' <"$T/ans")" 5000 "its size"
# two different Content-Length headers: refused, in the API's shape
python3 - "$base" "$tok" >"$T/cl" <<'PY'
import socket, sys
host, port = sys.argv[1].split("//")[1].split(":")
s = socket.create_connection((host, int(port)), 10)
s.sendall(("POST /api/tasks HTTP/1.1\r\nHost: %s:%s\r\nAuthorization: Bearer %s\r\n"
           "Content-Type: application/json\r\nContent-Length: 13\r\n"
           "Content-Length: 2\r\nConnection: close\r\n\r\n{\"kind\":\"cl\"}"
           % (host, port, sys.argv[2])).encode())
d = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    d += b
print(d.decode("latin-1"))
PY
head -n 1 "$T/cl" | grep -q " 400 " || fail "two Content-Length headers: $(head -n 1 "$T/cl")"
grep -q '"error"' "$T/cl" || fail "the refusal is not the API's JSON: $(cat "$T/cl")"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE kind = 'cl'")" 0 "tasks enqueued by the smuggled request"
kill_child TERM "$dpid"
wait_exit "$dpid" 30

# ---- a worker killed -9 leaves its attempts' files; the next start
# removes them (finding 11) ----
mkdir -p "$T/tmp"
slow=$(handler slow <<'H'
#!/bin/sh
sleep 60
H
)
sk enqueue slowk >/dev/null || fail "enqueue slowk"
TMPDIR=$T/tmp "$SKED" worker --handler "slowk=$slow" --poll 100ms >"$T/tw1.log" 2>&1 &
tw1=$!
left() { ls "$T/tmp" | grep -c '^sked-result-' || true; }
# the result and the progress file (docs/handlers.md, "Progress")
has_left() { [ "$(left)" -ge 1 ] && ls "$T/tmp" | grep -q '^sked-progress-'; }
wait_for 30 has_left || fail "no attempt file while the handler runs: $(ls "$T/tmp")"
kill_child KILL "$tw1"
wait_exit "$tw1" 30
pkill -KILL -f "$slow" 2>/dev/null || true
expect_eq "$(left)" 1 "attempt files left by the killed worker"
sk cancel --kind slowk --status running --yes >/dev/null || fail "cancel slowk"
TMPDIR=$T/tmp sk worker --handler "slowk=true" --until-empty --poll 100ms \
	>"$T/tw2.log" 2>&1 || fail "the second worker: $(tail -n 3 "$T/tw2.log")"
expect_eq "$(ls "$T/tmp" | grep -c '^sked-' || true)" 0 "attempt files after the next worker's start"

echo "ok: $SKED_BACKEND: hostile bounds"
