#!/bin/sh
# The JSON API of `sked dashboard --api-token` (docs/api.md), driven with
# curl: every endpoint does what it says in the database (enqueue with
# every option, bulk and graphs all-or-none, show, list with filters and keyset
# pages, cancel and retry by id and by filter with the count first,
# stats, queues, schedules), and every refusal answers the one error
# shape with its status: a weak token refused at start, the API off
# without a token, no token, a wrong one, the dashboard's --auth secret,
# a cookie, a token in the URL, another Host, read-only, an oversized
# body, a body that is not JSON, a bad field. Last, every answer recorded
# here is checked against docs/openapi.yaml (tests/openapi/validate.mjs),
# which must itself be valid, and every operation it describes must have
# been answered with success. The clients of examples/api/ (Python,
# Node.js) and docs/api.md's first block (in a scratch folder: a source
# install has no /etc/sked) run as a user would run them.
# backends: sqlite pg
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || skip "curl is not installed"
command -v jq >/dev/null || skip "jq is not installed"
init_db

tok=$(head -c 32 /dev/urandom | base64 | tr -d '\n')
printf '%s\n' "$tok" >"$T/tok"
chmod 640 "$T/tok" # its group may read it

# ---- refused at start: a token never on argv, never weak ----
expect_rc 64 sk dashboard --listen "127.0.0.1:$(free_port)" --api-token "$tok"
stderr_one_line "$T/err"
printf 'short-token\n' >"$T/weak"
chmod 600 "$T/weak"
printf '%s\n' "$(printf 'ab%.0s' $(seq 1 20))" >"$T/repeated"
chmod 600 "$T/repeated"
: >"$T/empty"
chmod 600 "$T/empty"
cp "$T/tok" "$T/open"
chmod 644 "$T/open"
cp "$T/tok" "$T/groupw"
chmod 620 "$T/groupw"
for case in "64 file:$T/weak" "64 file:$T/repeated" "64 file:$T/empty" \
	"64 file:$T/open" "64 file:$T/groupw" "64 env:SKED_NO_SUCH_TOKEN_VAR" \
	"66 file:$T/no-such-file"; do
	spec=${case#* }
	set +e
	"$SKED" dashboard --listen "127.0.0.1:$(free_port)" --api-token "$spec" \
		>/dev/null 2>"$T/err"
	rc=$?
	set -e
	expect_eq "$rc" "${case%% *}" "dashboard --api-token $spec"
	stderr_one_line "$T/err"
done

stop_api() {
	kill -TERM "$dpid"
	wait_exit "$dpid" 10
	expect_eq "$wrc" 0 "the dashboard's exit status after SIGTERM"
}

# call METHOD PATH [CURL ARGS...]: one request with the token (unless the
# args give an Authorization of their own, or NOAUTH=1); the answer is
# in $T/ans, its status in $code; every answer is kept for the OpenAPI
# check, and a refusal must be the one error shape.
n=0
call() {
	m=$1
	p=$2
	shift 2
	n=$((n + 1))
	if [ "${NOAUTH:-0}" = 1 ]; then
		set -- "$@"
	else
		set -- -H "Authorization: Bearer $tok" "$@"
	fi
	code=$(curl -s -m 30 -X "$m" -o "$T/ans.$n" -D "$T/hdr" -w '%{http_code}' \
		"$@" "$base$p") || fail "curl $m $p"
	cp "$T/ans.$n" "$T/ans"
	echo "$m $p $code $T/ans.$n" >>"$T/answers"
	grep -qi '^content-type: application/json' "$T/hdr" ||
		fail "$m $p: the answer is not application/json"
	if [ "$code" -ge 400 ]; then
		ecode=$(jq -er '.error.code | numbers' "$T/ans") ||
			fail "$m $p: no numeric error.code in $(cat "$T/ans")"
		jq -e '(.error.message | strings) and length == 1 and
			(.error | length == 2)' "$T/ans" >/dev/null ||
			fail "$m $p: not the one error shape: $(cat "$T/ans")"
	fi
}
# post PATH JSON [CURL ARGS...]
post() {
	pp=$1
	body=$2
	shift 2
	call POST "$pp" -H 'Content-Type: application/json' --data-binary "$body" "$@"
}
# refused STATUS CODE WHAT: the last answer was this refusal
refused() {
	expect_eq "$code" "$1" "$3: HTTP status"
	expect_eq "$ecode" "$2" "$3: error code"
}
field() { jq -r "$1" "$T/ans" || fail "not JSON: $(cat "$T/ans")"; }

# ---- without --api-token the API is off ----
start_dashboard off
call GET /api/stats
refused 404 69 "the API without --api-token"
stop_api

printf 'dash-secret-1234\n' >"$T/auth"
chmod 600 "$T/auth"
start_dashboard on --api-token "file:$T/tok" --auth "file:$T/auth"

# ---- who may call ----
NOAUTH=1 call GET /api/stats
refused 401 77 "no Authorization header"
grep -qi '^www-authenticate: Bearer' "$T/hdr" || fail "a 401 without WWW-Authenticate: Bearer"
NOAUTH=1 call GET /api/stats -H "Authorization: Bearer ${tok}x"
refused 401 77 "a wrong token (one character more)"
NOAUTH=1 call GET /api/stats -H "Authorization: Bearer $(echo "$tok" | cut -c2-)"
refused 401 77 "a wrong token (one character less)"
NOAUTH=1 call GET /api/stats -H "Authorization: Bearer dash-secret-1234"
refused 401 77 "the dashboard's --auth token"
NOAUTH=1 call GET /api/stats -u "anyone:dash-secret-1234"
refused 401 77 "the dashboard's --auth as basic auth"
NOAUTH=1 call GET /api/stats -H "Cookie: session=$tok; token=$tok"
refused 401 77 "a cookie"
NOAUTH=1 call GET "/api/stats?access_token=$tok"
refused 400 64 "the token in the URL"
call GET "/api/tasks?token=$tok"
refused 400 64 "the token in the URL, with the header too"
call GET /api/stats -H 'Host: attacker.example'
expect_eq "$code" 200 "--auth lets any Host in (the address is the operator's)"
# the API token opens no dashboard page
expect_eq "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $tok" "$base/tasks")" \
	401 "the API token on a dashboard page"
stop_api
# the token from the environment, and no --auth: the Host check holds
SKED_T_API_TOKEN=$tok
export SKED_T_API_TOKEN
start_dashboard main --api-token "env:SKED_T_API_TOKEN"
call GET /api/stats -H "Host: attacker.example"
refused 403 77 "another Host (DNS rebinding)"
call GET /api/stats -H "Host: localhost:$port"
expect_eq "$code" 200 "Host localhost"

# ---- enqueue: every option ----
tp=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
post /api/tasks '{"kind":"mail","payload":{"to":"ada@example.com"},"queue":"q1","priority":7,"in":"1h","max_attempts":3,"unique_key":"order-17","concurrency_key":"tenant-9","traceparent":"'"$tp"'"}'
expect_eq "$code" 201 "enqueue with every option"
expect_eq "$(field .existed)" false "a new task"
t1=$(field .id)
sk show "$t1" --json >"$T/show"
expect_eq "$(jq -r .queue "$T/show")" q1 "queue"
expect_eq "$(jq -r .priority "$T/show")" 7 "priority"
expect_eq "$(jq -r .max_attempts "$T/show")" 3 "max_attempts"
expect_eq "$(jq -r .unique_key "$T/show")" order-17 "unique_key"
expect_eq "$(jq -r .payload "$T/show")" '{"to":"ada@example.com"}' "an object payload, as JSON text"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE id = $t1 AND concurrency_key = 'tenant-9'")" 1 "concurrency_key"
expect_eq "$(jq -r .traceparent "$T/show")" "$tp" "traceparent"
call GET "/api/tasks/$t1"
expect_eq "$(field .traceparent)" "$tp" "show answers the traceparent"
# a traced request's own trace context, unless the body names one
tph=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01
post /api/tasks '{"kind":"traced"}' -H "traceparent: $tph"
expect_eq "$code" 201 "enqueue from a traced request"
expect_eq "$(sk show "$(field .id)" --json | jq -r .traceparent)" "$tph" "traceparent from the request's header"
post /api/tasks/bulk '{"kind":"traced","payloads":["a","b"],"traceparent":"'"$tp"'"}' -H "traceparent: $tph"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE kind = 'traced' AND traceparent = '$tp'")" 2 "bulk: the body's traceparent over the header"
before=$(count "SELECT COUNT(*) FROM {p}task")
post /api/tasks '{"kind":"traced","traceparent":"00-00000000000000000000000000000000-b7ad6b7169203331-01"}'
refused 400 65 "a traceparent with an all-zero trace id"
post /api/tasks '{"kind":"traced"}' -H "traceparent: nonsense"
refused 400 65 "a request whose traceparent header is not one"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task")" "$before" "a refused traceparent enqueues nothing"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE id = $t1 AND run_at > created_at")" 1 "in: later than now"
post /api/tasks '{"kind":"mail","payload":"other","unique_key":"order-17"}'
expect_eq "$code" 200 "the same unique key again"
expect_eq "$(field .id)" "$t1" "the existing task's id"
expect_eq "$(field .existed)" true "existed"
post /api/tasks '{"kind":"report","payload":"plain text","run_at":"2030-01-02T03:04:05Z"}'
expect_eq "$code" 201 "enqueue at a time"
t2=$(field .id)
expect_eq "$(sk show "$t2" --json | jq -r .run_at)" 2030-01-02T03:04:05.000Z "run_at"
expect_eq "$(sk show "$t2" --json | jq -r .payload)" "plain text" "a string payload as it is"
post /api/tasks '{"kind":"bare"}'
expect_eq "$code" 201 "enqueue with the kind alone"

# ---- dependencies: after, on_parent_failure (docs/workflows.md) ----
post /api/tasks '{"kind":"parent","in":"1h"}'
par1=$(field .id)
post /api/tasks '{"kind":"parent","in":"1h"}'
par2=$(field .id)
post /api/tasks '{"kind":"child","after":['"$par1,$par2"'],"on_parent_failure":"ignore"}'
expect_eq "$code" 201 "enqueue with parents"
kid=$(field .id)
call GET "/api/tasks/$kid"
expect_eq "$(field .status)" blocked "a child waits, blocked"
expect_eq "$(field '[.parents[].id] | map(tostring) | join(",")')" "$par1,$par2" "its parents"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE id = $kid AND on_parent_failure = 1")" 1 "on_parent_failure ignore"
post /api/tasks/bulk '{"kind":"child","payloads":["a","b"],"after":['"$par1"']}'
expect_eq "$code" 201 "bulk enqueue with a parent"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task_dep WHERE parent_id = $par1")" 3 "the edges of the bulk's children"
before=$(count "SELECT COUNT(*) FROM {p}task")
post /api/tasks '{"kind":"child","after":[999999999]}'
refused 400 65 "a parent that does not exist"
post /api/tasks '{"kind":"child","after":["1"]}'
refused 400 65 "a parent id that is not a number"
post /api/tasks '{"kind":"child","after":[0]}'
refused 400 65 "a parent id below 1"
post /api/tasks '{"kind":"child","after":'"$par1"'}'
refused 400 65 "after that is not an array"
post /api/tasks '{"kind":"child","after":['"$par1"'],"on_parent_failure":"shrug"}'
refused 400 65 "an unknown on_parent_failure"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task")" "$before" "refused dependencies enqueue nothing"

# ---- bulk: one kind, shared options, all or none ----
post /api/tasks/bulk '{"kind":"job","payloads":["1","2",{"n":3}],"queue":"bulkq","priority":2,"max_attempts":1}'
expect_eq "$code" 201 "bulk enqueue"
expect_eq "$(field '.ids | length')" 3 "three ids"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE queue = 'bulkq' AND priority = 2 AND max_attempts = 1")" 3 "three tasks with the options"
before=$(count "SELECT COUNT(*) FROM {p}task")
post /api/tasks/bulk '{"kind":"job","payloads":["ok","no\u0000nul"]}'
refused 400 65 "bulk with a payload the library refuses"
post /api/tasks/bulk '{"kind":"not a name!","payloads":["a","b"]}'
refused 400 65 "bulk with a bad kind"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task")" "$before" "a refused bulk enqueues nothing"
post /api/tasks/bulk '{"kind":"job","payloads":["a"],"unique_key":"k"}'
refused 400 65 "bulk with a unique key"
post /api/tasks/bulk '{"kind":"job","payloads":[]}'
refused 400 65 "bulk of nothing"

# ---- a graph in one transaction (issue 37; docs/workflows.md) ----
post /api/graphs '{"tasks":[{"name":"fetch","kind":"gfetch","payload":{"u":1}},{"name":"left","kind":"gleft","after":["fetch"],"queue":"gq"},{"name":"right","kind":"gright","after":["fetch"]},{"name":"join","kind":"gjoin","after":["left","right"]}]}'
expect_eq "$code" 201 "a graph enqueued"
gf=$(field '.ids.fetch') gl=$(field '.ids.left') gr=$(field '.ids.right') gj=$(field '.ids.join')
expect_eq "$(count "SELECT COUNT(*) FROM {p}task_dep WHERE (parent_id = $gf AND child_id IN ($gl, $gr)) OR (child_id = $gj AND parent_id IN ($gl, $gr))")" 4 \
	"the graph's edges are those of the ids answered by name"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE id = $gl AND kind = 'gleft' AND queue = 'gq' AND status = 6")" 1 \
	"a task of the graph with its own kind and queue, blocked"
before=$(count "SELECT (SELECT COUNT(*) FROM {p}task) + (SELECT COUNT(*) FROM {p}task_dep)")
post /api/graphs '{"tasks":[{"name":"a","kind":"k"},{"name":"b","kind":"k","after":["a","nope"]}]}'
refused 400 65 "a graph naming no task of its own"
post /api/graphs '{"tasks":[{"name":"a","kind":"k","after":["b"]},{"name":"b","kind":"k","after":["a"]}]}'
refused 400 65 "a graph with a cycle"
post /api/graphs '{"tasks":[{"name":"a","kind":"k"},{"name":"b","kind":"k","after":["a"],"queue":"not a queue"}]}'
refused 400 65 "a graph whose last task the library refuses"
post /api/graphs '{"tasks":[{"name":"a","kind":"k"},{"name":"b","kind":"k","after":["a", 999999999]}]}'
refused 400 65 "a graph with a missing parent"
post /api/graphs '{"tasks":[]}'
refused 400 65 "a graph of nothing"
expect_eq "$(count "SELECT (SELECT COUNT(*) FROM {p}task) + (SELECT COUNT(*) FROM {p}task_dep)")" "$before" \
	"a refused graph writes nothing"

# ---- bad input: one line, 400/65 (415, 413) ----
post /api/tasks '{"kind":"mail",'
refused 400 65 "a body that is not JSON"
post /api/tasks '[1,2]'
refused 400 65 "a body that is not an object"
post /api/tasks '{"kind":"mail","kind":"job"}'
refused 400 65 "a field given twice"
post /api/tasks '{"kind":"mail","prio":1}'
refused 400 65 "an unknown field"
post /api/tasks '{"kind":"mail","priority":"high"}'
refused 400 65 "priority as a string"
post /api/tasks '{"kind":"mail","max_attempts":0}'
refused 400 65 "max_attempts 0"
post /api/tasks '{"payload":"x"}'
refused 400 65 "no kind"
post /api/tasks '{"kind":"bad kind"}'
refused 400 65 "a kind that is not a name"
post /api/tasks '{"kind":"mail","run_at":"2030-01-02T03:04:05"}'
refused 400 65 "run_at without its zone"
post /api/tasks '{"kind":"mail","run_at":"2030-01-02T03:04:05Z","in":"1h"}'
refused 400 65 "run_at and in"
post /api/tasks '{"kind":"mail","in":"soon"}'
refused 400 65 "in that is not a duration"
call POST /api/tasks -H 'Content-Type: text/plain' --data-binary '{"kind":"mail"}'
refused 415 65 "a body without Content-Type: application/json"
call POST /api/tasks --data-binary '{"kind":"mail"}'
refused 415 65 "a form body"
python3 -c 'import sys; sys.stdout.write("{\"kind\":\"big\",\"payload\":\"" + "a" * 1100000 + "\"}")' >"$T/big.json"
call POST /api/tasks -H 'Content-Type: application/json' --data-binary "@$T/big.json"
refused 413 65 "a body over 1 MiB"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE kind IN ('big', 'mail') AND id <> $t1")" 0 \
	"no refused enqueue made a task"
call GET /api/nothing-here
refused 404 64 "an endpoint that does not exist"
call DELETE "/api/tasks/$t1"
refused 405 64 "DELETE"
call GET /api/tasks/bulk
refused 405 64 "GET on a POST endpoint"
call GET /api/tasks/999999999
refused 404 65 "a task that does not exist"
call GET "/api/tasks?status=finished"
refused 400 65 "an unknown status"
call GET "/api/tasks?limit=0"
refused 400 65 "limit 0"
call GET "/api/tasks?limit=ten"
refused 400 65 "a limit that is not a number"
call GET "/api/tasks?queue=no%20name"
refused 400 65 "a queue that is not a name"
call GET "/api/tasks?since=yesterday"
refused 400 65 "since that is not a duration"

# ---- run some: two dead, three succeeded ----
fail_h=$(handler fail.sh <<'H'
#!/bin/sh
echo "the mail server said no" >&2
exit 3
H
)
ok_h=$(handler ok.sh <<'H'
#!/bin/sh
exit 0
H
)
post /api/tasks/bulk '{"kind":"flaky","payloads":["a","b"],"max_attempts":1}'
d1=$(field '.ids[0]')
d2=$(field '.ids[1]')
start_worker w --handler "flaky=$fail_h" --handler "job=$ok_h" \
	--handler "bare=$ok_h" --until-empty --poll 100ms
wait_exit "$wpid" 120
expect_eq "$wrc" 0 "the worker's exit status"
expect_eq "$(status_of "$d1")" 3 "a failing task is dead"

# ---- show ----
call GET "/api/tasks/$d1"
expect_eq "$code" 200 "show"
expect_eq "$(field .id)" "$d1" "show: the id"
expect_eq "$(field .status)" dead "show: the status"
expect_eq "$(field '.runs | length')" 1 "show: one attempt"
expect_eq "$(field '.runs[0].exit_code')" 3 "show: the attempt's exit code"
sk show "$d1" --json >"$T/cli.json"
expect_eq "$(field 'keys | join(" ")')" "$(jq -r 'keys | join(" ")' "$T/cli.json")" \
	"show: the same fields as sked show --json"

# ---- list: filters, keyset pages ----
all=$(sk list --limit 1000 --json | jq -r 'map(.id | tostring) | join(" ")')
got=""
cursor=""
pages=0
while :; do
	call GET "/api/tasks?limit=3$cursor"
	expect_eq "$code" 200 "a page of tasks"
	[ "$(field '.tasks | length')" -le 3 ] || fail "a page longer than its limit"
	got="$got $(field '.tasks | map(.id | tostring) | join(" ")')"
	pages=$((pages + 1))
	nb=$(field .next_before)
	[ "$nb" = null ] && break
	cursor="&before=$nb"
	[ $pages -lt 50 ] || fail "the pages never end"
done
expect_eq "$(echo $got)" "$all" "the pages, in order, are sked list's tasks"
[ $pages -ge 3 ] || fail "only $pages pages of 3 for $(echo $all | wc -w) tasks"
call GET "/api/tasks?queue=bulkq"
expect_eq "$(field '.tasks | length')" 3 "queue filter"
call GET "/api/tasks?kind=flaky&status=dead"
expect_eq "$(field '.tasks | map(.id) | sort | map(tostring) | join(" ")')" "$d1 $d2" \
	"kind and status filter"
call GET "/api/tasks?status=succeeded"
expect_eq "$(field '.tasks | length')" 4 "status filter: succeeded"
call GET "/api/tasks?unique_key=order-17"
expect_eq "$(field '.tasks | map(.id | tostring) | join(" ")')" "$t1" "a unique key"
call GET "/api/tasks?unique_key=no-such-key"
expect_eq "$(field '.tasks | length')" 0 "a unique key that no task has"
call GET "/api/tasks?since=1h"
expect_eq "$(field '.tasks | length')" "$(echo $all | wc -w)" "since 1h: every task"
call GET "/api/tasks?older_than=1h"
expect_eq "$(field '.tasks | length')" 0 "older than 1h: none"
call GET "/api/tasks?node=nobody"
expect_eq "$(field '.tasks | length')" 0 "a node that ran nothing"

# ---- cancel, retry by id ----
call POST "/api/tasks/$d1/retry"
expect_eq "$code" 200 "retry a dead task"
expect_eq "$(field .result)" "will run again" "retry: the result"
expect_eq "$(status_of "$d1")" 0 "a retried task is pending"
call POST "/api/tasks/$d1/cancel"
expect_eq "$code" 200 "cancel a pending task"
expect_eq "$(status_of "$d1")" 5 "a cancelled task"
call POST "/api/tasks/$d1/cancel"
refused 409 65 "cancel a cancelled task"
post "/api/tasks/$d1/cancel" '{"now":true}'
refused 400 65 "a field a one-task change does not take"
call POST /api/tasks/999999999/retry
refused 404 65 "retry a task that does not exist"

# ---- by filter: the count, and a change only with confirm ----
post /api/tasks/retry '{"kind":"flaky"}'
expect_eq "$code" 200 "count the dead flaky tasks"
expect_eq "$(field .matched)" 1 "one dead (the other is cancelled)"
expect_eq "$(field .applied)" false "not applied without confirm"
expect_eq "$(status_of "$d2")" 3 "nothing changed without confirm"
post /api/tasks/retry '{"kind":"flaky","status":"cancelled","confirm":false}'
expect_eq "$(field .matched)" 1 "the cancelled one, by status"
expect_eq "$(status_of "$d1")" 5 "confirm false changes nothing"
post /api/tasks/retry '{"kind":"flaky","confirm":true}'
expect_eq "$(field .changed)" 1 "retried with confirm"
expect_eq "$(field .applied)" true "applied"
expect_eq "$(status_of "$d2")" 0 "the dead task is pending again"
post /api/tasks/cancel '{"queue":"bulkq","status":"succeeded"}'
refused 400 65 "cancel succeeded tasks"
post /api/tasks/cancel '{"kind":"flaky","older_than":"1h","confirm":true}'
expect_eq "$(field .matched)" 0 "older than 1h: none match"
expect_eq "$(status_of "$d2")" 0 "nothing cancelled"
post /api/tasks/cancel "{\"ids\":[$d2,$t2,$t2,999999999]}"
expect_eq "$(field .changed)" 2 "cancel by ids"
# matched counts tasks, as a filter's does: an id twice is one task, an
# id of no task none (it said 4, the ids given)
expect_eq "$(field .matched)" 2 "cancel by ids: the tasks matched"
expect_eq "$(status_of "$t2")" 5 "cancelled by ids"
post /api/tasks/retry "{\"ids\":[$d2],\"kind\":\"flaky\"}"
refused 400 65 "ids and a filter"
post /api/tasks/retry '{"ids":["one"]}'
refused 400 65 "ids that are not numbers"
# a number JSON allows but sked cannot hold, and an id with a fraction,
# each named for what it is (they said "not JSON" and "something else")
post /api/tasks/retry '{"ids":[1e400]}'
refused 400 65 "an id of 1e400"
field .error | grep -q "number too large" || fail "1e400: $(field .error)"
post /api/tasks '{"kind":"mail","after":[4.0]}'
refused 400 65 "a parent id of 4.0"
field .error | grep -q "a fractional number" || fail "4.0: $(field .error)"
post /api/tasks/retry '{"confirm":"yes"}'
refused 400 65 "confirm that is not a boolean"
# confirm null is absent, as a filter field left null is (it was 400)
post /api/tasks/retry '{"kind":"flaky","confirm":null}'
expect_eq "$code" 200 "confirm null: a count"
expect_eq "$(field .applied)" false "confirm null: not applied"
# more than 100 years: refused, as enqueue and the CLI refuse it
post /api/tasks/retry '{"kind":"flaky","older_than":"40000d"}'
refused 400 65 "older_than over 100 years"
call GET "/api/tasks?since=40000d"
refused 400 65 "since over 100 years"

# ---- stats, queues, schedules ----
call GET /api/stats
expect_eq "$code" 200 "stats"
sk stats --json >"$T/stats.json"
# the same counts as sked stats (the oldest due age moves with the clock)
counts='map(del(.oldest_due_ms)) | tostring'
expect_eq "$(field ".queues | $counts")" "$(jq -r ".queues | $counts" "$T/stats.json")" \
	"stats per queue, as sked stats"
expect_eq "$(field "[.total] | $counts")" "$(jq -r "[.total] | $counts" "$T/stats.json")" \
	"stats in total, as sked stats"
expect_eq "$(field '.queues[] | select(.queue == "bulkq") | .succeeded')" 3 "bulkq's succeeded tasks"
# nothing due: null, as sked stats --json (and its text's "-"; issue 36)
expect_eq "$(field '.queues[] | select(.queue == "bulkq") | .oldest_due_ms')" null "bulkq's oldest due, none due"
# the events feed (t_events tests it through): bulkq's ends are in it
call GET "/api/events?after=0&queue=bulkq&settle=1ms&limit=50"
expect_eq "$code" 200 "events"
expect_eq "$(field '[.events[] | select(.type == "end")] | length')" 3 "bulkq's end events"
sk queue set q1 --concurrency 2 --per-key 1 --rate 10/1m >/dev/null
call GET /api/queues
expect_eq "$code" 200 "queues"
expect_eq "$(field '.queues[] | select(.queue == "q1") | "\(.concurrency) \(.per_key) \(.rate.n)"')" \
	"2 1 10" "the limits of q1"
# a fair queue's key weights ride along (docs/limits.md, "Fair queues")
sk queue set q1 --weight vip=4 >/dev/null
call GET /api/queues
expect_eq "$(field '.queues[] | select(.queue == "q1") | .weights | tojson')" '{"vip":4}' "the key weights of q1"
sk queue set q1 --weight vip=default >/dev/null
call POST /api/queues/q1/pause
expect_eq "$code" 200 "pause a queue"
expect_eq "$(field '"\(.queue) \(.paused)"')" "q1 true" "the pause's answer"
call POST /api/queues/qfree/pause
expect_eq "$code" 200 "pause a queue without limits"
expect_eq "$(count "SELECT COUNT(*) FROM {p}queue_limit WHERE paused = 1")" 2 "paused in the database"
call GET /api/queues
expect_eq "$(field '[.queues[] | select(.paused) | "\(.queue) \(.limited)"] | join(",")')" \
	"q1 true,qfree false" "the paused queues, as /api/queues shows them"
call POST /api/queues/q1/resume
expect_eq "$(field '"\(.queue) \(.paused)"')" "q1 false" "resume a queue"
call POST /api/queues/qfree/resume
expect_eq "$(count "SELECT COUNT(*) FROM {p}queue_limit WHERE paused = 1")" 0 "resumed in the database"
expect_eq "$(count "SELECT COUNT(*) FROM {p}queue_limit WHERE queue = 'q1' AND concurrency = 2")" 1 \
	"q1 keeps its limit"
post /api/queues/q1/pause '{"now":true}'
refused 400 65 "a field pause does not take"
call POST /api/queues/bad%20queue/pause
refused 404 64 "pause of a queue that is not a name"
call POST /api/queues/q1/stop
refused 404 64 "an action queues do not have"
call GET /api/queues/q1/pause
refused 405 64 "GET on a queue's pause"
sk cron add nightly '0 3 * * *' report --tz Europe/Berlin >/dev/null
call GET /api/schedules
expect_eq "$code" 200 "schedules"
expect_eq "$(field '.schedules | map("\(.name) \(.tz)") | join(",")')" "nightly Europe/Berlin" \
	"the schedule"
call POST /api/schedules/nightly/pause
expect_eq "$code" 200 "pause a schedule"
expect_eq "$(count "SELECT COUNT(*) FROM {p}schedule WHERE name = 'nightly' AND enabled = 0")" 1 "paused in the database"
call POST /api/schedules/nightly/resume
expect_eq "$(field .done)" resumed "resume a schedule"
expect_eq "$(count "SELECT COUNT(*) FROM {p}schedule WHERE name = 'nightly' AND enabled = 1")" 1 "resumed in the database"
call POST /api/schedules/nightly/run
expect_eq "$code" 201 "run a schedule now"
r1=$(field .id)
call POST /api/schedules/nightly/run
r2=$(field .id)
[ "$r1" != "$r2" ] || fail "two runs of a schedule made one task"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE schedule_name = 'nightly' AND kind = 'report'")" 2 \
	"one task per run, of the schedule's kind"
call POST /api/schedules/no-such/run
refused 404 65 "run a schedule that does not exist"
call POST /api/schedules/nightly/stop
refused 404 64 "an action schedules do not have"
call GET /api/schedules/nightly/run
refused 405 64 "GET on a schedule's run"

# ---- the examples of examples/api/, as a user would run them ----
ex=$SKED_SRC/examples/api
SKED_API_URL=$base SKED_API_TOKEN=$tok python3 "$ex/enqueue.py" report-ex \
	'{"day": "2026-03-08"}' '"plain"' >"$T/py.out" || fail "examples/api/enqueue.py"
grep -q '^enqueued [0-9]* [0-9]*$' "$T/py.out" || fail "enqueue.py printed $(cat "$T/py.out")"
grep -q '^dead of this kind: 0$' "$T/py.out" || fail "enqueue.py printed $(cat "$T/py.out")"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE kind = 'report-ex' AND queue = 'reports'")" 2 \
	"the Python example's tasks"
set +e
SKED_API_URL=$base SKED_API_TOKEN=wrong python3 "$ex/enqueue.py" report-ex '1' 2>"$T/err" >/dev/null
rc=$?
set -e
expect_eq "$rc" 1 "the Python example with a wrong token"
expect_eq "$(cat "$T/err")" "sked: wrong API token" "the Python example says why"
if command -v node >/dev/null; then
	SKED_API_URL=$base SKED_API_TOKEN=$tok node "$ex/enqueue.mjs" mail-ex '{"to": "ada@example.com"}' \
		>"$T/node.out" || fail "examples/api/enqueue.mjs"
	nid=$(cut -d' ' -f1 "$T/node.out")
	expect_eq "$(cat "$T/node.out")" "$nid pending {\"to\":\"ada@example.com\"}" "the Node example's output"
	expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE id = $nid AND kind = 'mail-ex' AND max_attempts = 3")" 1 \
		"the Node example's task"
fi
stop_api

# ---- docs/api.md's first block, as a reader of a source tree runs it ----
# (it once wrote the token to /etc/sked, which only a packaged install
# has: issue 36): the lines before the dashboard make the token, the
# dashboard starts with the --api-token it names, the curl enqueues
awk '/^```sh$/ { n++; next } n == 1 && /^```$/ { exit } n == 1 { print }' \
	"$SKED_SRC/docs/api.md" >"$T/apidoc.sh"
sed '/^sked dashboard/,$d' "$T/apidoc.sh" >"$T/apidoc-token.sh"
mkdir "$T/apidoc"
(cd "$T/apidoc" && sh -e "$T/apidoc-token.sh") 2>"$T/err" ||
	fail "docs/api.md: making the token failed: $(cat "$T/err")"
spec=$(sed -n 's/^sked dashboard .*--api-token \([^ &]*\).*/\1/p' "$T/apidoc.sh")
[ -n "$spec" ] || fail "docs/api.md's block starts no dashboard with --api-token"
case $spec in file:/*) ;; file:*) spec="file:$T/apidoc/${spec#file:}" ;; esac
start_dashboard apidoc --api-token "$spec"
sed -n '/^curl/,/^#/p' "$T/apidoc.sh" | grep -v '^#' |
	sed "s,http://127.0.0.1:8420,$base," >"$T/apidoc-curl.sh"
(cd "$T/apidoc" && sh -e "$T/apidoc-curl.sh") >"$T/apidoc.out" ||
	fail "docs/api.md's curl failed: $(cat "$T/apidoc.out")"
expect_eq "$(jq -c . "$T/apidoc.out")" \
	"$(sed -n 's/^# \({"id".*\)/\1/p' "$T/apidoc.sh" | sed 's/"id":[0-9]*/"id":'"$(jq .id "$T/apidoc.out")"'/')" \
	"docs/api.md's enqueue answers as the page shows"
stop_api

# ---- read-only: reads answer, every change is refused ----
start_dashboard ro --api-token "file:$T/tok" --read-only
call GET /api/stats
expect_eq "$code" 200 "a read on a read-only dashboard"
before=$(count "SELECT COUNT(*) FROM {p}task")
post /api/tasks '{"kind":"mail"}'
refused 403 77 "enqueue on a read-only dashboard"
post /api/tasks/bulk '{"kind":"mail","payloads":["a"]}'
refused 403 77 "bulk on a read-only dashboard"
call POST "/api/tasks/$t1/cancel"
refused 403 77 "cancel on a read-only dashboard"
post /api/tasks/retry '{"confirm":true}'
refused 403 77 "retry by filter on a read-only dashboard"
call POST /api/schedules/nightly/run
refused 403 77 "run a schedule on a read-only dashboard"
call POST /api/queues/q1/pause
refused 403 77 "pause a queue on a read-only dashboard"
expect_eq "$(count "SELECT COUNT(*) FROM {p}queue_limit WHERE paused = 1")" 0 "a read-only API paused nothing"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task")" "$before" "a read-only API changed nothing"
expect_eq "$(status_of "$t1")" 0 "still pending"
stop_api

# ---- every answer against docs/openapi.yaml ----
command -v node >/dev/null || skip "node is not installed (the OpenAPI check)"
set +e
sh "$SKED_SRC/tests/browser/install.sh" "$SKED_BUILD/openapi" "$SKED_SRC/tests/openapi" 2>"$T/npm.err"
rc=$?
set -e
[ $rc = 0 ] || skip "cannot install swagger-parser with npm: $(tail -1 "$T/npm.err")"
# from beside its node_modules: ES modules do not read NODE_PATH
cp "$SKED_SRC/tests/openapi/validate.mjs" "$SKED_BUILD/openapi/validate-$SKED_BACKEND.mjs"
node "$SKED_BUILD/openapi/validate-$SKED_BACKEND.mjs" "$SKED_SRC/docs/openapi.yaml" "$T/answers" ||
	fail "the answers do not fit docs/openapi.yaml"
