#!/bin/sh
# Monitoring while every worker is down (issue 26, item 7), and the
# Grafana dashboard and alert rules against a real scrape: `sked
# dashboard` serves GET /metrics with the cluster-wide gauges and none of
# a worker's own series; with no worker running it says
# sked_nodes_alive 0 (what SkedNoLiveNodes fires on) and the due tasks of
# each queue; while a worker runs, 1; after the worker stopped, 0 again.
# Every metric that a query of contrib/grafana/sked-dashboard.json or an
# expression of contrib/prometheus/sked-rules.yml names is served by the
# dashboard or by the worker's --http /metrics.
# backends: engines
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || skip "curl is not installed"
command -v promtool >/dev/null || skip "promtool is not installed (Debian package prometheus)"
init_db
ok=$(handler ok.sh <<'H'
#!/bin/sh
exit 0
H
)
bad=$(handler bad.sh <<'H'
#!/bin/sh
echo "no such mailbox" >&2
exit 3
H
)
for i in 1 2 3; do sk enqueue mail --queue mail >/dev/null; done
sk enqueue bounce --queue mail --max-attempts 1 >/dev/null

dport=$(free_port)
"$SKED" dashboard --listen "127.0.0.1:$dport" --read-only >"$T/dash.log" 2>&1 &
dash="http://127.0.0.1:$dport"
up() { curl -s -o /dev/null "$dash/static/app.css"; }
wait_for 10 up || { cat "$T/dash.log" >&2; fail "the dashboard did not start"; }
scrape() { # URL FILE: GET URL into FILE, which promtool accepts
	c=$(curl -s -o "$2" -w '%{http_code}' -m 10 "$1" || true)
	expect_eq "$c" 200 "GET $1"
	promtool check metrics <"$2" >"$T/promtool.out" 2>&1 ||
		{ cat "$T/promtool.out" >&2; fail "promtool check metrics rejects $1"; }
}
value() { # FILE SAMPLE: its value
	awk -v k="$2" '$1 == k { print $2; found = 1 } END { if (!found) exit 1 }' "$1" ||
		fail "no sample $2 in $1"
}

# no worker at all: the gauges are there, and say so
scrape "$dash/metrics" "$T/dash0"
expect_eq "$(value "$T/dash0" sked_up)" 1 "the dashboard's sked_up"
expect_eq "$(value "$T/dash0" sked_nodes_alive)" 0 "sked_nodes_alive with no worker running"
expect_eq "$(value "$T/dash0" 'sked_tasks_due{queue="mail"}')" 4 "due tasks of queue mail"
expect_eq "$(value "$T/dash0" 'sked_tasks{queue="mail",status="pending"}')" 4 "pending tasks of queue mail"
grep -q '^sked_worker_' "$T/dash0" && fail "the dashboard serves a worker's own series"
grep -q '^sked_queue_oldest_due_age_seconds{queue="mail"} ' "$T/dash0" ||
	fail "no oldest-due age for queue mail"

# a worker runs them: one success kind, one that ends dead
wport=$(free_port)
start_worker w --queues mail --handler "mail=$ok" --handler "bounce=$bad" \
	--http "127.0.0.1:$wport" --poll 100ms --lease 3s
w=$wpid
ended() { [ "$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE status IN (2, 3)")" = 4 ]; }
wait_for 30 ended || { cat "$T/w.log" >&2; fail "the worker did not end the four tasks"; }
alive() { # N: the dashboard says N nodes alive
	scrape "$dash/metrics" "$T/dash"
	[ "$(value "$T/dash" sked_nodes_alive)" = "$1" ]
}
wait_for 15 alive 1 || fail "the dashboard's sked_nodes_alive is not 1 while a worker runs"
scrape "http://127.0.0.1:$wport/metrics" "$T/worker"
# a queue with no unfinished task has no series, or 0
due=$(awk '$1 == "sked_tasks_due{queue=\"mail\"}" { print $2 }' "$T/dash")
[ -z "$due" ] || [ "$due" = 0 ] || fail "due tasks of queue mail once drained: $due"

# every metric the Grafana dashboard and the rules name has samples in
# a scrape (the dashboard's before and after the run, the worker's)
cat "$T/dash0" "$T/dash" "$T/worker" | sed -n 's/^\(sked_[a-z_]*\).*/\1/p' | sort -u >"$T/served"
python3 - "$SKED_SRC/contrib/grafana/sked-dashboard.json" \
	"$SKED_SRC/contrib/prometheus/sked-rules.yml" "$T/served" <<'PY' || fail "a query names a metric sked does not serve"
import json, re, sys
served = set(open(sys.argv[3]).read().split())
exprs = [("grafana: " + p["title"], t["expr"])
         for p in json.load(open(sys.argv[1]))["panels"] for t in p["targets"]]
# a rule's expr: its line, and the lines of a folded block after it
cur = None
for line in open(sys.argv[2]):
    m = re.match(r"\s*expr:(.*)", line)
    if m:
        cur = ["rules", m.group(1)]
        exprs.append(cur)
    elif cur and re.match(r"\s*[a-z_]+:", line):
        cur = None
    elif cur:
        cur[1] += line
named, bad = set(), []
for where, e in exprs:
    for name in re.findall(r"\bsked_[a-z_]+\b", e):
        named.add(name)
        if name not in served:
            bad.append("%s: %s" % (where, name))
if bad:
    print("not in any scrape:\n  " + "\n  ".join(sorted(set(bad))), file=sys.stderr)
    sys.exit(1)
print("%d metrics named by %d queries and rules, all served" % (len(named), len(exprs)))
PY

# every worker stops: the dashboard still serves the gauge, now 0
kill -TERM "$w"
wait_exit "$w" 30
expect_eq "$wrc" 0 "the worker's exit status"
wait_for 20 alive 0 || fail "sked_nodes_alive stays $(value "$T/dash" sked_nodes_alive) after the only worker stopped"
expect_eq "$(value "$T/dash" sked_up)" 1 "the dashboard's sked_up with no worker"
