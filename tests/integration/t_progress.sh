#!/bin/sh
# Progress and what runs now (issue 36): a program handler writes its
# report to SKED_TASK_PROGRESS_FILE (private, removed after the attempt),
# a pipe: handler sends {"id": N, "progress": V} lines; while they run,
# `show --json`, `show`, `list --json`, `list --status running`, GET
# /api/tasks/ID and the API's list show the task's node, started_at,
# elapsed_ms and progress (JSON as that value, text as a string), and the
# dashboard's task page and running list show them too. Reports are stored with the lease renewal:
# a thousand reports in a burst make at most one UPDATE per renewal, and
# handlers that report nothing make none. Hostile reports (5000 bytes in
# a file or a line, a stray id, invalid UTF-8) are refused with a log
# line, the previous report stands and the worker runs on (a line that
# is not JSON stops that handler process, as any protocol error does);
# an earlier attempt's report is not shown for the next one; an ended
# task shows none.
# backends: sqlite pg
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || skip "curl is not installed"
init_db

# wait_file PATH: the handler's side of a step, bounded
prog=$(handler prog.sh <<H
#!/bin/sh
read -r p || true
wait_file() { i=0; while [ ! -e "\$1" ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i+1)); done; }
printf '%s' "\$SKED_TASK_PROGRESS_FILE" >"$T/path-\$SKED_TASK_ID"
stat -c %a "\$SKED_TASK_PROGRESS_FILE" >"$T/mode-\$SKED_TASK_ID"
case "\$p" in
report)
	echo 'copying 1/3' >"\$SKED_TASK_PROGRESS_FILE"
	wait_file "$T/step-\$SKED_TASK_ID"
	printf '{"done": 2, "of": 3}' >"\$SKED_TASK_PROGRESS_FILE"
	;;
hostile)
	echo 'fine so far' >"\$SKED_TASK_PROGRESS_FILE"
	wait_file "$T/step-\$SKED_TASK_ID"
	head -c 5000 /dev/zero | tr '\\0' x >"\$SKED_TASK_PROGRESS_FILE"
	wait_file "$T/step2-\$SKED_TASK_ID"
	printf 'bad \\377 bytes' >"\$SKED_TASK_PROGRESS_FILE"
	;;
again)
	if [ "\$SKED_TASK_ATTEMPT" = 1 ]; then
		echo 'attempt one' >"\$SKED_TASK_PROGRESS_FILE"
		wait_file "$T/step-\$SKED_TASK_ID"
		exit 1
	fi
	;;
esac
wait_file "$T/go-\$SKED_TASK_ID"
H
)

pipe=$(handler pipe.py <<H
#!/usr/bin/env python3
import json, os, sys, time
def say(o):
    sys.stdout.write(json.dumps(o) + "\n")
    sys.stdout.flush()
def wait_file(p):
    for _ in range(300):
        if os.path.exists(p):
            return
        time.sleep(0.1)
for line in sys.stdin:
    t = json.loads(line)
    if "id" not in t:
        continue
    i = t["id"]
    if t["payload"] == "report":
        say({"id": 987654321, "progress": "not mine"})
        say({"id": i, "progress": "x" * 5000})
        for k in range(1000):
            say({"id": i, "progress": {"step": k, "of": 1000}})
        open("$T/sent-%d" % i, "w").close()
        wait_file("$T/go-%d" % i)
    elif t["payload"] == "broken":
        sys.stdout.write('{"id": %d, "progress": {"done": \n' % i)
        sys.stdout.flush()
        time.sleep(5)
    else:
        time.sleep(1.5)
    say({"id": i, "ok": True})
H
)

SKED_LOG=debug SKED_TRACE_SQL=1 "$SKED" worker --lease 3s --poll 100ms \
	--retry-base 10ms --handler "prog=$prog" --handler "pk=pipe:$pipe" \
	>"$T/w.log" 2>&1 &
wpid=$!

tok=$(head -c 32 /dev/urandom | base64 | tr -d '\n')
printf '%s\n' "$tok" >"$T/tok"
chmod 600 "$T/tok"
start_dashboard dash --api-token "file:$T/tok"
api() { curl -s -H "Authorization: Bearer $tok" "$@"; }

# prog_is ID EXPR: show --json's EXPR (python, d the task) is true
prog_is() { [ "$(sk show --json "$1" | json_get "$2")" = true ]; }

# ---- a program handler's report file ----
a=$(sk enqueue prog --payload report)
wait_for 30 prog_is "$a" 'd["progress"] == "copying 1/3"' ||
	fail "the program's first report never showed: $(sk show --json "$a")"
sk show --json "$a" >"$T/a.json"
expect_eq "$(json_get 'd["status"]' <"$T/a.json")" running "status"
expect_eq "$(json_get 'd["node_id"] is not None and len(d["node_id"]) > 0' <"$T/a.json")" true "node_id while running"
expect_eq "$(json_get 'd["started_at"] is not None and d["started_at"].endswith("Z")' <"$T/a.json")" true "started_at while running"
expect_eq "$(json_get 'd["elapsed_ms"] >= 0' <"$T/a.json")" true "elapsed_ms while running"
expect_eq "$(json_get 'd["progress_at"] >= d["started_at"]' <"$T/a.json")" true "progress_at within the attempt"
expect_eq "$(cat "$T/mode-$a")" 600 "the progress file's mode"
sk show "$a" >"$T/a.txt"
grep -q '^  progress     copying 1/3$' "$T/a.txt" || { cat "$T/a.txt" >&2; fail "show's progress line"; }
grep -q '^  started      .*(running for ' "$T/a.txt" || { cat "$T/a.txt" >&2; fail "show's started line"; }
# the API: one task, and the running list
api "$base/api/tasks/$a" >"$T/api.json"
expect_eq "$(json_get 'd["progress"] == "copying 1/3" and d["started_at"] is not None and d["elapsed_ms"] >= 0' <"$T/api.json")" true "GET /api/tasks/ID's progress"
api "$base/api/tasks?status=running" >"$T/apil.json"
expect_eq "$(json_get "[t['progress'] for t in d['tasks'] if t['id'] == $a] == ['copying 1/3']" <"$T/apil.json")" true "the API list's progress"
sk list --json --status running >"$T/list.json"
expect_eq "$(json_get "[t['started_at'] is not None and t['progress'] == 'copying 1/3' for t in d if t['id'] == $a] == [True]" <"$T/list.json")" true "list --json's progress"
sk list --status running >"$T/list.txt"
head -1 "$T/list.txt" | grep -q 'NODE.*STARTED.*ELAPSED.*PROGRESS' || { cat "$T/list.txt" >&2; fail "list --status running's columns"; }
grep -q "^$a .*copying 1/3" "$T/list.txt" || { cat "$T/list.txt" >&2; fail "list --status running's progress"; }
# the dashboard: the task page and the running list
curl -s "$base/task/$a" >"$T/page.html"
grep -q 'copying 1/3' "$T/page.html" || fail "the task page shows no progress"
grep -q "<dt>started</dt>" "$T/page.html" || fail "the task page shows no start"
grep -q "id=\"running\"" "$T/page.html" || fail "the task page does not say the attempt runs"
curl -s "$base/tasks?status=running" >"$T/running.html"
grep -q 'copying 1/3' "$T/running.html" || fail "the running list shows no progress"
# the next report: JSON shown as that value
touch "$T/step-$a"
wait_for 30 prog_is "$a" 'd["progress"] == {"done": 2, "of": 3}' ||
	fail "the program's JSON report never showed: $(sk show --json "$a")"
path=$(cat "$T/path-$a")
[ -e "$path" ] || fail "the progress file is gone while the program runs"
touch "$T/go-$a"
wait_for 30 prog_is "$a" 'd["status"] == "succeeded"' || fail "task $a did not end"
[ ! -e "$path" ] || fail "the progress file $path outlived its attempt"
expect_eq "$(sk show --json "$a" | json_get '[d["progress"], d["started_at"], d["elapsed_ms"]]')" "[None, None, None]" "an ended task's progress"

# ---- hostile reports in a file: refused, the previous one stands ----
b=$(sk enqueue prog --payload hostile)
wait_for 30 prog_is "$b" 'd["progress"] == "fine so far"' || fail "task $b's first report"
touch "$T/step-$b"
wait_for 30 grep -q "task $b attempt 1: its progress file's report is refused (over the limit of 1024 bytes)" "$T/w.log" ||
	fail "a 5000-byte report was not refused: $(sk show --json "$b")"
sleep 1.2 # a renewal after the refusal
expect_eq "$(sk show --json "$b" | json_get 'd["progress"]')" "fine so far" "the report before a refused one"
touch "$T/step2-$b"
sleep 2.5 # two renewals: the invalid bytes are refused too (logged once)
expect_eq "$(sk show --json "$b" | json_get 'd["progress"]')" "fine so far" "the report before invalid UTF-8"
expect_eq "$(count "SELECT max(length(progress)) FROM {p}task")" 11 "the longest report stored"
touch "$T/go-$b"

# ---- an earlier attempt's report is not the next one's ----
c=$(sk enqueue prog --payload again)
wait_for 30 prog_is "$c" 'd["progress"] == "attempt one"' || fail "task $c's first attempt's report"
touch "$T/step-$c"
wait_for 30 prog_is "$c" 'd["status"] == "running" and d["attempts"] == 2' || fail "task $c's second attempt"
sleep 1.2 # a renewal within the second attempt
expect_eq "$(sk show --json "$c" | json_get 'd["progress"]')" null "the second attempt's progress"
touch "$T/go-$c"

# ---- a pipe: handler's lines: a burst of 1000, a stray, a huge one ----
mark=$(grep -c 'SET progress = ' "$T/w.log" || true)
rmark=$(grep -c 'SET lease_until = .* AND lease_until >= ' "$T/w.log" || true)
d=$(sk enqueue pk --payload report)
wait_for 30 test -e "$T/sent-$d" || fail "the pipe handler did not report"
wait_for 30 prog_is "$d" 'd["progress"] == {"step": 999, "of": 1000}' ||
	fail "the pipe handler's last report never showed: $(sk show --json "$d")"
sleep 2.5 # renewals with nothing new
touch "$T/go-$d"
wait_for 30 prog_is "$d" 'd["status"] == "succeeded"' || fail "task $d did not end"
puts=$(($(grep -c 'SET progress = ' "$T/w.log") - mark))
renews=$(($(grep -c 'SET lease_until = .* AND lease_until >= ' "$T/w.log") - rmark))
note "1000 pipe reports: $puts progress write(s), $renews renewal(s)"
[ "$puts" -ge 1 ] && [ "$puts" -le 2 ] ||
	fail "1000 reports made $puts progress writes (expected 1 or 2: one per renewal that saw a new one)"
[ "$puts" -le "$renews" ] || fail "$puts progress writes for $renews renewals"
grep -q "task $d: progress report of 5002 bytes refused: over the limit of 1024 bytes" "$T/w.log" ||
	fail "the pipe's 5000-byte report was not refused in the log"
grep -q "which is not in flight" "$T/w.log" && fail "a stray progress line was taken for an answer"

# a progress line that is not JSON is a protocol error like any other:
# that process is stopped and its task fails; the worker runs on
g=$(sk enqueue pk --payload broken --max-attempts 1)
wait_for 30 prog_is "$g" 'd["status"] == "dead" and "not a JSON object" in d["last_error"]' ||
	fail "a broken progress line: $(sk show --json "$g")"

# ---- no report, no write ----
mark=$(grep -c 'SET progress = ' "$T/w.log")
e=$(sk enqueue pk --payload quiet)
f=$(sk enqueue prog --payload quiet)
touch "$T/go-$f"
wait_for 30 prog_is "$e" 'd["status"] == "succeeded"' || fail "task $e did not end"
wait_for 30 prog_is "$f" 'd["status"] == "succeeded"' || fail "task $f did not end"
expect_eq "$(($(grep -c 'SET progress = ' "$T/w.log") - mark))" 0 "progress writes of handlers that report nothing"

# the worker ran on through all of it
is_child "$wpid" || fail "the worker stopped"
kill_child TERM "$wpid"
wait "$wpid" || true
echo "ok"
