#!/bin/sh
# sked queue pause|resume (issue 29): while a queue is paused no worker of
# the cluster claims its tasks, those already running finish normally,
# enqueueing goes on and other queues run; a worker that was running when
# the pause came stops claiming within the documented bound (2 s, the
# interval at which workers read the queues' limits again); a fresh
# --until-empty worker leaves the paused tasks alone and exits; after the
# resume every task runs exactly once. Checked from the handler's own
# log, not from sked's tables.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

h=$(handler h.sh <<'H'
#!/bin/sh
read -r p || true
echo "S $(date +%s%3N) $SKED_TASK_QUEUE $SKED_TASK_ID" >>"$1/events"
case "$p" in sleep*) sleep "${p#sleep }" ;; esac
echo "E $(date +%s%3N) $SKED_TASK_QUEUE $SKED_TASK_ID" >>"$1/events"
H
)
: >"$T/events"
ends() { grep -c "^E .* $1 " "$T/events" || true; }
starts_ids() { awk -v q="$1" '$1 == "S" && $3 == q { print $4 }' "$T/events"; }

# bad input: one line and a sysexits code
expect_rc 64 sk queue pause
expect_rc 65 sk queue pause 'bad queue'
stderr_one_line "$T/err"
expect_rc 64 sk queue resume a b

# two workers already running: one serves every queue, one named queues
# (one of them limited, which takes the limited claim's path)
sk queue set lim --concurrency 2
start_worker wa --node-id wa --concurrency 4 --poll 100ms --handler "job=$h $T"
pa=$wpid
start_worker wb --node-id wb --concurrency 4 --poll 100ms \
	--queues p,lim,other --handler "job=$h $T"
pb=$wpid

# a task of p running when the pause comes finishes normally
long=$(sk enqueue job --queue p --payload 'sleep 3')
has_started() { grep -q "^S .* p $long\$" "$T/events"; }
wait_for 60 has_started || fail "task $long never started"
expect_rc 0 sk queue pause p
expect_eq "$(cat "$T/out")" "paused queue p" "pause's answer"
sk queue pause lim >/dev/null
t0=$(now_ms)
long_ended() { [ "$(ends p)" = 1 ]; }
wait_for 60 long_ended || fail "the task running at the pause did not finish"
expect_eq "$(status_of "$long")" 2 "the running task's status after the pause"

# what queue ls says
sk queue ls --json >"$T/ls.json"
expect_eq "$(json_get '[(q["paused"], q["limited"]) for q in d if q["queue"] == "p"][0]' <"$T/ls.json")" "(True, False)" "queue ls --json: p"
expect_eq "$(json_get '[(q["paused"], q["limited"]) for q in d if q["queue"] == "lim"][0]' <"$T/ls.json")" "(True, True)" "queue ls --json: lim"
sk queue ls >"$T/ls.txt"
grep -q '^p  *paused ' "$T/ls.txt" || { cat "$T/ls.txt" >&2; fail "queue ls does not say p is paused"; }

sk --json stats >"$T/stats.json"
expect_eq "$(json_get '[q["paused"] for q in d["queues"] if q["queue"] == "p"]' <"$T/stats.json")" "[True]" "stats --json: p paused"
sk stats >"$T/stats.txt"
expect_eq "$(awk '$1 == "p" { print $NF }' "$T/stats.txt")" paused "stats: p's state"

# past the bound, the running workers claim none of p's or lim's tasks,
# though they were enqueued before other's (which would otherwise go
# first), and run other's
sleep_ms=$((2000 + 1000 - ($(now_ms) - t0)))
[ "$sleep_ms" -le 0 ] || sleep "$(awk -v m="$sleep_ms" 'BEGIN { print m / 1000 }')"
seq 1 20 | sk enqueue job --queue p --lines - >"$T/p.ids"
seq 1 4 | sk enqueue job --queue lim --lines - >/dev/null
seq 1 6 | sk enqueue job --queue other --lines - >/dev/null
others_done() { [ "$(ends other)" = 6 ]; }
wait_for 60 others_done || fail "the other queue's tasks did not run"
sleep 1
expect_eq "$(starts_ids p | wc -l)" 1 "tasks of the paused queue started by running workers"
expect_eq "$(starts_ids lim | wc -l)" 0 "tasks of the paused limited queue started"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE queue = 'p' AND status = 0")" 20 "p's tasks pending"

# a fresh --until-empty worker: nothing it may claim is outstanding
start_worker wc --node-id wc --concurrency 2 --poll 100ms --handler "job=$h $T" --until-empty
wait_exit "$wpid" 60
[ "$wrc" = 0 ] || { cat "$T/wc.log" >&2; fail "the --until-empty worker exited $wrc"; }
expect_eq "$(starts_ids p | wc -l)" 1 "tasks of the paused queue started by an --until-empty worker"

# what /metrics says (the dashboard's cluster gauges)
if command -v curl >/dev/null; then
	start_dashboard dash
	curl -s "$base/metrics" >"$T/metrics"
	grep -q '^sked_queue_paused{queue="p"} 1$' "$T/metrics" || { grep paused "$T/metrics" >&2; fail "/metrics: p not paused"; }
	# the overview's Queues table marks it too
	curl -s "$base/" >"$T/overview.html"
	grep -q 'href="/tasks?queue=p">p</a> <span class="pill retry">paused</span>' "$T/overview.html" ||
		fail "the overview does not mark queue p paused"
	kill_child TERM "$dpid"
fi

# resume: every task runs, once
expect_rc 0 sk queue resume p
sk queue resume lim >/dev/null
sk queue resume never-paused >/dev/null
all_done() { [ "$(ends p)" = 21 ] && [ "$(ends lim)" = 4 ]; }
wait_for 120 all_done || fail "after the resume, p ran $(ends p) of 21 and lim $(ends lim) of 4"
expect_eq "$(starts_ids p | sort -u | wc -l)" 21 "distinct tasks of p started"
expect_eq "$(starts_ids p | wc -l)" 21 "starts of p's tasks (each once)"
sk queue ls --json >"$T/ls.json"
expect_eq "$(json_get '[q["queue"] for q in d if q["paused"]]' <"$T/ls.json")" "[]" "paused queues after the resume"
expect_eq "$(json_get '[q["concurrency"] for q in d if q["queue"] == "lim"]' <"$T/ls.json")" "[2]" "lim keeps its limit"

kill_child TERM "$pa"
kill_child TERM "$pb"
wait_exit "$pa" 60
wait_exit "$pb" 60
