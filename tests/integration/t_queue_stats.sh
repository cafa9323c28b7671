# t_queue_stats — per-queue figures count ended tasks too. 40 tasks on
# queue `mail` (one of them dead, one cancelled) and 3 on `other` are
# drained; `sked stats` (table and --json) and the dashboard's Queues
# table then show each queue's succeeded, dead and cancelled counts in
# its own row, and no row without a queue name.
# backends: engines
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || skip "curl is not installed"
init_db

ok=$(handler ok <<'EOF2'
#!/bin/sh
exit 0
EOF2
)
bad=$(handler bad <<'EOF2'
#!/bin/sh
exit 3
EOF2
)
seq 1 38 | sk enqueue mail --queue mail --lines - >/dev/null
sk enqueue boom --queue mail --max-attempts 1 >/dev/null
c=$(sk enqueue mail --queue mail --in 1h)
sk cancel "$c" >/dev/null
seq 1 3 | sk enqueue mail --queue other --lines - >/dev/null
start_worker w --handler "mail=$ok" --handler "boom=$bad" --until-empty
wait_exit "$wpid" 120
expect_eq "$wrc" 0 "the worker's exit status"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task_done WHERE queue = 'mail'")" 40 \
	"ended tasks of queue mail"

sk --json stats >"$T/stats.json"
row() { json_get "[[q[k] for k in ('succeeded', 'dead', 'cancelled', 'pending')] for q in d['queues'] if q['queue'] == '$1']" <"$T/stats.json"; }
expect_eq "$(row mail)" "[[38, 1, 1, 0]]" "stats --json for queue mail"
expect_eq "$(row other)" "[[3, 0, 0, 0]]" "stats --json for queue other"
expect_eq "$(json_get 'len(d["queues"])' <"$T/stats.json")" 2 "queues in stats --json"
expect_eq "$(json_get '[d["total"][k] for k in ("succeeded", "dead", "cancelled")]' <"$T/stats.json")" \
	"[41, 1, 1]" "the total"
sk stats >"$T/stats.txt"
# QUEUE pending running retry due succeeded dead cancelled oldest_due
expect_eq "$(awk '$1 == "mail" { print $6, $7, $8 }' "$T/stats.txt")" "38 1 1" "stats' row for mail"
expect_eq "$(awk '$1 == "other" { print $6, $7, $8 }' "$T/stats.txt")" "3 0 0" "stats' row for other"
expect_eq "$(awk '$1 == "(total)" { print $6, $7, $8 }' "$T/stats.txt")" "41 1 1" "stats' total row"
expect_eq "$(wc -l <"$T/stats.txt" | tr -d ' ')" 4 "stats' lines (header, two queues, total)"

start_dashboard dash
curl -s -m 10 -o "$T/overview.html" "$base/"
# the Queues table's cells, queue by queue: succeeded, dead, cancelled
cells() {
	python3 - "$1" "$T/overview.html" <<'PY'
import re, sys
q, page = sys.argv[1], open(sys.argv[2]).read()
table = page[page.index("<h2>Queues</h2>"):]
rows = re.findall(r'<tr><td><a href="/tasks\?queue=([^"]*)">', table)
if q == "-names":
    print(" ".join(rows))
    sys.exit(0)
for st in ("succeeded", "dead", "cancelled"):
    m = re.search(r'href="/tasks\?queue=%s&amp;status=%s">(\d+)</a>' % (re.escape(q), st), table)
    print(m.group(1) if m else "none", end=" ")
print()
PY
}
expect_eq "$(cells -names)" "mail other" "the Queues table's rows"
expect_eq "$(cells mail)" "38 1 1 " "the Queues table's row for mail"
expect_eq "$(cells other)" "3 0 0 " "the Queues table's row for other"
kill_child 15 "$dpid"
