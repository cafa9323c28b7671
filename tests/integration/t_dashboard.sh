#!/bin/sh
# `sked dashboard`: every page answers and escapes what the database holds
# (a kind and a payload holding <script>); a POST without the CSRF token,
# or from another site, is refused; --read-only shows no form and refuses
# every POST; a non-loopback address is refused without --auth, and with
# it a request without credentials gets 401. The status filter offers
# every status `sked list` knows, blocked too, and the buttons that act on
# a filter say what they do ("Retry now all tasks waiting to retry").
# Then, on sqlite and pg, a real headless Chromium
# (tests/browser/dashboard.mjs) opens the overview, follows a dead task,
# retries tasks in bulk by selection and by filter; the database must show
# the change. At phone width a task's errors and the schedules' buttons
# lie on screen; links have a contrast of 4.5:1 at least in the light and
# the dark scheme. Screenshots at laptop and phone width are kept in
# $SKED_BUILD/screenshots.
# A task's page draws its workflow (a 3-layer graph: the right nodes and
# edges, a "N more" line past 200 tasks), and in the browser the page
# follows a running task to its end without reloading, the graph with it,
# a list keeps its ticked boxes through an update, and a paused page,
# or one hidden behind another tab, asks for nothing.
# backends: sqlite pg
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || skip "curl is not installed"
init_db

fail_h=$(handler fail.sh <<'H'
#!/bin/sh
echo "could not reach the mail server" >&2
exit 3
H
)
ok_h=$(handler ok.sh <<'H'
#!/bin/sh
exit 0
H
)
payload='<script>alert("payload")</script> & "quotes"'
m1=$(sk enqueue mail --payload "$payload" --max-attempts 1)
m2=$(sk enqueue mail --payload '{"to":"ada@example.com"}' --max-attempts 1)
m3=$(sk enqueue mail --payload '{"to":"bob@example.com"}' --max-attempts 1)
r1=$(sk enqueue report --max-attempts 1)
r2=$(sk enqueue report --max-attempts 1)
for i in 1 2 3 4 5 6; do sk enqueue job --payload "$i" >/dev/null; done
start_worker w --handler "mail=$fail_h" --handler "report=$fail_h" \
	--handler "job=$ok_h" --until-empty --poll 100ms
wait_exit "$wpid" 60
expect_eq "$wrc" 0 "the worker's exit status"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task_done WHERE status = 3")" 5 "dead tasks"
# a kind no `sked enqueue` accepts, as another program's INSERT could
# write; dead, so moved to task_done as a task that ends is
sql "INSERT INTO {p}task (kind, payload, status) VALUES ('<script>alert(1)</script>', '<img src=x onerror=alert(2)>', 3)"
sql "INSERT INTO {p}task_done ($TASK_COLS_ALL) SELECT $TASK_COLS_ALL FROM {p}task WHERE status = 3"
sql "DELETE FROM {p}task WHERE status = 3"
sk cron add nightly '0 3 * * *' report --tz Europe/Berlin >/dev/null
sk cron add hourly-digest '@hourly' mail >/dev/null
sk lock run nightly-backup --ttl 10s -- true

# a task waiting to retry, and one blocked behind it
w1=$(sk enqueue later)
sql "UPDATE {p}task SET status = 4 WHERE id = $w1"
b1=$(sk enqueue child --after "$w1")
expect_eq "$(status_of "$b1")" 6 "a task enqueued after a live one is blocked"

get() { curl -s -b "$T/jar" -c "$T/jar" -o "$T/page" -w '%{http_code}' -m 10 "$@" || true; }

# a workflow of 3 layers: ga, then gb and gc after it, then gd after both;
# ga runs (its handler waits for $T/release), gc waits to retry
gate_h=$(handler gate.sh <<H
#!/bin/sh
while [ ! -e "$T/release" ]; do sleep 0.1; done
exit 0
H
)
ga=$(sk enqueue wfgate)
gb=$(sk enqueue wfb --after "$ga")
gc=$(sk enqueue wfc --after "$ga")
gd=$(sk enqueue wfd --after "$gb,$gc")
sql "UPDATE {p}task SET status = 4 WHERE id = $gc"
# past the picture's bound of 200 tasks: one child of 205 parents
i=0 rows=''
while [ $i -lt 205 ]; do rows="$rows${rows:+,}('fan', 'x', 0)"; i=$((i + 1)); done
sql "INSERT INTO {p}task (kind, payload, status) VALUES $rows"
fan_ids=$(sql "SELECT id FROM {p}task WHERE kind = 'fan' ORDER BY id" | paste -sd, -)
fanin=$(sk enqueue fanin --after "$fan_ids")

start_dashboard d
for p in / /tasks /failed "/failed?status=retry" "/task/$m1" /nodes /schedules /locks \
	"/tasks?status=dead&kind=mail" "/tasks?q=$m2"; do
	code=$(get -L "$base$p")
	expect_eq "$code" 200 "GET $p"
	if grep -q '<script>alert\|<img src=x' "$T/page"; then
		fail "GET $p shows a value from the database unescaped"
	fi
done
get "$base/task/$m1" >/dev/null
grep -q '&lt;script&gt;alert(&quot;payload&quot;)&lt;/script&gt; &amp; &quot;quotes&quot;' "$T/page" ||
	fail "the task page does not show the payload escaped"
get "$base/failed" >/dev/null
grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' "$T/page" || fail "the failed page does not show the kind escaped"
csrf=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$T/page" | head -1)
[ -n "$csrf" ] || fail "no CSRF token in the failed page's forms"
get "$base/schedules" >/dev/null
grep -q 'Europe/Berlin' "$T/page" || fail "the schedules page does not list the schedule"
expect_eq "$(get "$base/task/999999")" 404 "a task that does not exist"
# the workflow's picture: every task of the graph linked once, the edges
# parent to child, each task's status; none for a task without relatives
get "$base/task/$ga" >/dev/null
for id in $ga $gb $gc $gd; do
	expect_eq "$(grep -o "<a href=\"/task/$id\" class=\"node [a-z ]*\" data-id=\"$id\"" "$T/page" | wc -l)" 1 \
		"task $id drawn once in the workflow of $ga"
done
edges=$(grep -o 'data-from="[0-9]*" data-to="[0-9]*"' "$T/page" | sort | tr '\n' ' ')
want=$(printf 'data-from="%s" data-to="%s"\n' "$ga" "$gb" "$ga" "$gc" "$gb" "$gd" "$gc" "$gd" | sort | tr '\n' ' ')
expect_eq "$edges" "$want" "the workflow's edges"
grep -q "class=\"node retry\" data-id=\"$gc\"" "$T/page" || fail "task $gc not drawn as waiting to retry"
grep -q "class=\"node pending self\" data-id=\"$ga\"" "$T/page" || fail "task $ga not drawn as itself, pending"
get "$base/task/$m3" >/dev/null
if grep -q 'id="workflow"' "$T/page"; then fail "a task without parents or children has a workflow"; fi
get "$base/task/$fanin" >/dev/null
expect_eq "$(grep -o 'class="node [a-z ]*" data-id=' "$T/page" | wc -l)" 200 "tasks drawn of a workflow of 206"
grep -q 'at least 6 more tasks not drawn' "$T/page" || fail "the picture does not say 6 tasks were left out"
# its parents' states, read a list at a time: all 205 still to end
grep -q 'Waits for 205 of its 205 parents' "$T/page" || fail "the page of $fanin: $(grep -o 'Waits for[^<]*' "$T/page")"
# the live update's fetch is allowed by the pages' CSP, inline script is not
csp=$(curl -s -D - -o /dev/null "$base/" | tr -d '\r' | sed -n 's/^Content-Security-Policy: //ip')
case "$csp" in *"connect-src 'self'"*"script-src 'self'"* | *"script-src 'self'"*"connect-src 'self'"*) ;;
*) fail "the CSP does not allow the live update's fetch, or allows more script: $csp" ;; esac
case "$csp" in *unsafe-inline* | *unsafe-eval*) fail "the CSP allows inline script: $csp" ;; esac
get "$base/tasks?since=15m&kind=mail" >/dev/null
grep -q "href=\"/task/$m1\"" "$T/page" || fail "a task created a moment ago is not in the last 15m"
get "$base/tasks?node=nobody" >/dev/null
grep -q 'No tasks match' "$T/page" || fail "a node filter matched tasks of no such node"
# the status filter offers every status (its refusal in sked list names
# them all), blocked too, and a blocked task is listed under it
statuses=$(sk list --status x 2>&1 | sed -n "s/.*is not one of \([a-z, ]*\).*/\1/p" | tr -d ,)
[ -n "$statuses" ] || fail "sked list --status x names no statuses"
get "$base/tasks" >/dev/null
for st in $statuses; do
	grep -q "<option>$st</option>" "$T/page" || fail "the status filter does not offer $st"
done
get "$base/tasks?status=blocked" >/dev/null
grep -q '<option selected>blocked</option>' "$T/page" || fail "the blocked filter is not shown as chosen"
grep -q "href=\"/task/$b1\"" "$T/page" || fail "the blocked task $b1 is not listed under blocked"
if grep -q "href=\"/task/$w1\"" "$T/page"; then fail "the blocked filter lists a task waiting to retry"; fi
# the buttons that act on a filter say what they do in words
get "$base/failed?status=retry" >/dev/null
grep -q 'Retry now all tasks waiting to retry' "$T/page" ||
	fail "the retry-by-filter button of tasks waiting to retry: $(grep -o 'id="bulk-filter"[^<]*' "$T/page")"
if grep -q 'retry tasks' "$T/page"; then fail "a page still says 'retry tasks'"; fi
get "$base/failed?status=dead" >/dev/null
grep -q 'Retry all dead tasks' "$T/page" || fail "the retry-by-filter button of dead tasks"

# changes need the token, and not from another site
expect_eq "$(get -d "id=$m3" "$base/tasks/retry")" 403 "POST without a CSRF token"
expect_eq "$(get -d "id=$m3&csrf=0000" "$base/tasks/retry")" 403 "POST with a wrong token"
expect_eq "$(get -H 'Sec-Fetch-Site: cross-site' -d "id=$m3&csrf=$csrf" "$base/tasks/retry")" 403 \
	"POST from another site"
expect_eq "$(get -H 'Origin: http://attacker.example' -d "id=$m3&csrf=$csrf" "$base/tasks/retry")" 403 \
	"POST with another site's Origin"
expect_eq "$(get -X GET "$base/tasks/retry?id=$m3&csrf=$csrf")" 404 "a change by GET"
# DNS rebinding: another name pointed at 127.0.0.1 gets nothing
expect_eq "$(get -H 'Host: attacker.example' "$base/failed")" 403 "a request for another host name"
expect_eq "$(get -H "Host: localhost:$port" "$base/failed")" 200 "a request for localhost"
expect_eq "$(status_of "$m3")" 3 "the refused POSTs changed nothing"
expect_eq "$(get -d "id=$m3&csrf=$csrf&back=/failed" "$base/tasks/cancel")" 303 "cancel a dead task (skipped)"
expect_eq "$(status_of "$m3")" 3 "a dead task cannot be cancelled"
# schedules: pause and resume; nodes: prune
expect_eq "$(get -d "name=nightly&csrf=$csrf" "$base/schedules/pause")" 303 "pause a schedule"
expect_eq "$(count "SELECT COUNT(*) FROM {p}schedule WHERE name = 'nightly' AND enabled = 0")" 1 "paused in the database"
get "$base/schedules" >/dev/null
grep -q 'paused' "$T/page" || fail "the schedules page does not show the pause"
expect_eq "$(get -d "name=nightly&csrf=$csrf" "$base/schedules/resume")" 303 "resume a schedule"
expect_eq "$(count "SELECT COUNT(*) FROM {p}schedule WHERE name = 'nightly' AND enabled = 1")" 1 "resumed in the database"
# queues: pause and resume, with the token only
expect_eq "$(get -d "queue=mailq" "$base/queues/pause")" 403 "pause a queue without a CSRF token"
expect_eq "$(count "SELECT COUNT(*) FROM {p}queue_limit")" 0 "a refused pause changed nothing"
expect_eq "$(get -d "queue=mailq&csrf=$csrf" "$base/queues/pause")" 303 "pause a queue"
expect_eq "$(count "SELECT COUNT(*) FROM {p}queue_limit WHERE queue = 'mailq' AND paused = 1")" 1 "queue paused in the database"
get "$base/queues" >/dev/null
grep -q '<td class="mono">mailq</td><td>paused</td>' "$T/page" || fail "the queues page does not show the pause"
grep -q 'action="/queues/resume"' "$T/page" || fail "the queues page has no resume button"
expect_eq "$(get -d "queue=bad%20queue!&csrf=$csrf" "$base/queues/pause")" 400 "pause a queue with a bad name"
expect_eq "$(get -d "queue=mailq&csrf=$csrf" "$base/queues/resume")" 303 "resume a queue"
expect_eq "$(count "SELECT COUNT(*) FROM {p}queue_limit WHERE queue = 'mailq'")" 0 "queue resumed in the database"
expect_eq "$(get -d "older_than=1m&csrf=$csrf" "$base/nodes/prune")" 303 "prune dead nodes"
kill -TERM "$dpid"
wait_exit "$dpid" 10
expect_eq "$wrc" 0 "the dashboard's exit status after SIGTERM"

# --read-only
start_dashboard ro --read-only
get "$base/failed" >/dev/null
if grep -q 'method="post"' "$T/page"; then fail "--read-only still shows forms"; fi
expect_eq "$(get -d "id=$m3&csrf=$csrf" "$base/tasks/retry")" 403 "POST to a read-only dashboard"
kill -TERM "$dpid"
wait_exit "$dpid" 10

# another address than loopback needs --auth; credentials never on argv
expect_rc 64 sk dashboard --listen "0.0.0.0:$(free_port)"
stderr_one_line "$T/err"
grep -q 'without --auth' "$T/err" || fail "the refusal does not say --auth is needed"
expect_rc 64 sk dashboard --auth "admin:secret-pw"
stderr_one_line "$T/err"
if grep -q 'secret-pw' "$T/err"; then fail "the error repeats the secret"; fi
export SKED_TEST_DASH_AUTH="admin:correct-horse"
start_dashboard auth --auth env:SKED_TEST_DASH_AUTH
expect_eq "$(get "$base/")" 401 "no credentials"
expect_eq "$(get -u admin:wrong-horse "$base/")" 401 "wrong credentials"
expect_eq "$(get -u admin:correct-horse "$base/")" 200 "right credentials"
kill -TERM "$dpid"
wait_exit "$dpid" 10

# the browser, on one database of each kind that needs no ODBC
case "$SKED_BACKEND" in
sqlite | pg) ;;
*) exit 0 ;;
esac
command -v node >/dev/null || skip "node is not installed (the browser test drives Chromium with puppeteer-core)"
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || skip "chromium is not installed (Debian package chromium)"
set +e
sh "$SKED_SRC/tests/browser/install.sh" "$SKED_BUILD/browser" 2>"$T/npm.err"
rc=$?
set -e
[ $rc = 0 ] || skip "cannot install puppeteer-core with npm: $(tail -1 "$T/npm.err")"
shots="$SKED_BUILD/screenshots/$SKED_BACKEND"
mkdir -p "$shots"
start_worker wf --handler "wfgate=$gate_h" --poll 100ms
gw=$wpid
i=0
until [ "$(status_of "$ga")" = 1 ]; do
	i=$((i + 1))
	[ $i -lt 150 ] || fail "task $ga did not start running"
	sleep 0.2
done
start_dashboard browser
# from beside its node_modules: ES modules do not read NODE_PATH. A copy
# per backend: another backend's test may be running its own (ctest -j)
script="$SKED_BUILD/browser/dashboard-$SKED_BACKEND.mjs"
cp "$SKED_SRC/tests/browser/dashboard.mjs" "$script"
graph="{\"a\":\"$ga\",\"b\":\"$gb\",\"c\":\"$gc\",\"d\":\"$gd\",\"fanin\":\"$fanin\",\"fan\":205,\"release\":\"$T/release\"}"
node "$script" "$base" "$shots" "$payload" "$m1,$m2" report "$graph" \
	>"$T/browser.out" 2>"$T/browser.err" && browser_rc=0 || browser_rc=$?
cat "$T/browser.err" >&2
cat "$T/browser.out" >&2 # what it saw, for the log (how long the live update took)
[ $browser_rc = 0 ] || fail "the browser test failed"
expect_eq "$(status_of "$m1")" 0 "task $m1 after the bulk retry"
expect_eq "$(status_of "$m2")" 0 "task $m2 after the bulk retry"
expect_eq "$(status_of "$m3")" 3 "task $m3, not selected"
expect_eq "$(status_of "$r1")" 0 "report task $r1 after the retry by filter"
expect_eq "$(status_of "$r2")" 0 "report task $r2 after the retry by filter"
expect_eq "$(json_get 'd["filterRetried"]' <"$T/browser.out")" 2 "tasks the filter retried"
expect_eq "$(status_of "$ga")" 2 "task $ga after its handler was released"
kill -TERM "$gw"
wait_exit "$gw" 30
for f in overview failed task retried nodes schedules locks workflow live; do
	for w in laptop phone; do
		[ -s "$shots/$f-$w.png" ] || fail "no screenshot $shots/$f-$w.png"
	done
done
kill -TERM "$dpid"
wait_exit "$dpid" 10
