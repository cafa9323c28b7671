#!/bin/sh
# Why work waits (issue 36): each node records the kinds it has handlers
# for and the queues it claims from when it registers; `stats` (text and
# --json), the dashboard's overview and /metrics (sked_kind_unserved) name
# the due tasks of a queue and kind that no live node serves, and stop
# naming them once a node that serves them runs; a paused queue's tasks
# are paused, not unserved; a task not yet due is not named.
# backends: engines
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || skip "curl is not installed"
init_db

sk enqueue invoice --payload x >/dev/null
sk enqueue mail --queue q2 >/dev/null
sk enqueue report --in 1h >/dev/null
j=$(sk enqueue job)
start_worker wa --node-id wa --poll 100ms --queues default --handler "job=true"
pa=$wpid
job_done() { [ "$(status_of "$j")" = 2 ]; }
wait_for 60 job_done || fail "the worker did not run its job"
expect_eq "$(sql "SELECT serves_kinds, serves_queues FROM {p}node WHERE id = 'wa'")" ",job,	,default," "what node wa serves"

sk --json stats >"$T/stats.json"
expect_eq "$(json_get 'sorted((u["queue"], u["kind"], u["due"]) for u in d["unserved"])' <"$T/stats.json")" "[('default', 'invoice', 1), ('q2', 'mail', 1)]" "stats --json: unserved"
sk stats >"$T/stats.txt"
grep -q "^unserved: 1 due task(s) of kind 'invoice' in queue 'default'" "$T/stats.txt" || { cat "$T/stats.txt" >&2; fail "stats does not name invoice"; }

start_dashboard dash
curl -s "$base/metrics" >"$T/metrics"
grep -q '^sked_kind_unserved{queue="default",kind="invoice"} 1$' "$T/metrics" || { grep unserved "$T/metrics" >&2; fail "/metrics: invoice"; }
grep -q '^sked_kind_unserved{queue="q2",kind="mail"} 1$' "$T/metrics" || fail "/metrics: mail"
if grep -q 'kind="report"\|kind="job"' "$T/metrics"; then fail "/metrics names work that is not due or is served"; fi
curl -s "$base/" >"$T/overview.html"
grep -q 'No live node serves <b>1</b> due task(s) of kind <span class="mono">invoice</span> in queue <span class="mono">default</span>' "$T/overview.html" || fail "the overview does not name invoice"

# a paused queue's tasks are paused, not unserved
sk queue pause q2 >/dev/null
expect_eq "$(sk --json stats | json_get '[u["kind"] for u in d["unserved"]]')" "['invoice']" "unserved with q2 paused"
sk queue resume q2 >/dev/null

# a node with a catch-all on every queue serves them all
start_worker wb --node-id wb --poll 100ms --handler "*=true"
pb=$wpid
served() { [ "$(sk --json stats | json_get 'len(d["unserved"])')" = 0 ]; }
wait_for 60 served || fail "stats still names unserved work with a catch-all node alive"
curl -s "$base/metrics" >"$T/metrics2"
if grep -q '^sked_kind_unserved{' "$T/metrics2"; then fail "/metrics still names unserved work"; fi
kill_child TERM "$dpid"
kill_child TERM "$pa"
kill_child TERM "$pb"
