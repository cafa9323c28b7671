# t_throughput — the dashboard's chart counts every finished attempt of
# its window, however many there are. More run rows than the 20,000 the
# chart once read (20,600 succeeded, 400 failed within the last ten
# minutes), and more attempts recorded on ended rows (schema 5) than it
# read of those (20,500 succeeded, 300 dead), beside attempts that must
# not count (given back, cancelled, or finished 40 to 50 minutes ago):
# the overview's legend says exactly 41100 succeeded and 700 failed in
# the last 30 minutes.
# backends: engines
. "$(dirname "$0")/lib.sh"
command -v curl >/dev/null || skip "curl is not installed"
init_db

# add_runs N OUTCOME AGO_S: N runs of that outcome, finished between AGO_S
# and AGO_S + 599 seconds ago by the database's clock
add_runs() {
	case "$(family)" in
	pg)
		sql "INSERT INTO {p}run (task_id, attempt, node_id, started_at, finished_at, outcome)
			SELECT g, 1, 'n', now() - ($3 + g % 600) * interval '1 second',
				now() - ($3 + g % 600) * interval '1 second', '$2'
			FROM generate_series(1, $1) g"
		;;
	mariadb)
		sql "INSERT INTO {p}run (task_id, attempt, node_id, started_at, finished_at, outcome)
			SELECT seq, 1, 'n', UTC_TIMESTAMP(3) - INTERVAL ($3 + seq % 600) SECOND,
				UTC_TIMESTAMP(3) - INTERVAL ($3 + seq % 600) SECOND, '$2'
			FROM seq_1_to_$1"
		;;
	sqlite)
		sql "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < $1)
			INSERT INTO {p}run (task_id, attempt, node_id, started_at, finished_at, outcome)
			SELECT i, 1, 'n', CAST(strftime('%s', 'now') AS INTEGER) * 1000 - ($3 + i % 600) * 1000,
				CAST(strftime('%s', 'now') AS INTEGER) * 1000 - ($3 + i % 600) * 1000, '$2' FROM s"
		;;
	esac
}
# add_done N STATUS OUTCOME AGO_S FROM_ID: N ended rows, ids from FROM_ID,
# each the record of the attempt that ended it, finished as add_runs says
add_done() {
	cols="id, queue, kind, payload, status, run_at, created_at, updated_at, finished_at, outcome"
	case "$(family)" in
	pg)
		sql "INSERT INTO {p}task_done ($cols)
			SELECT $5 + g, 'q', 'k', '', $2, now(), now(), now(),
				now() - ($4 + g % 600) * interval '1 second', $3
			FROM generate_series(1, $1) g"
		;;
	mariadb)
		sql "INSERT INTO {p}task_done ($cols)
			SELECT $5 + seq, 'q', 'k', '', $2, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3), UTC_TIMESTAMP(3),
				UTC_TIMESTAMP(3) - INTERVAL ($4 + seq % 600) SECOND, $3
			FROM seq_1_to_$1"
		;;
	sqlite)
		sql "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < $1)
			INSERT INTO {p}task_done ($cols)
			SELECT $5 + i, 'q', 'k', '', $2, 0, 0, 0,
				CAST(strftime('%s', 'now') AS INTEGER) * 1000 - ($4 + i % 600) * 1000, $3 FROM s"
		;;
	esac
}
add_done 20500 2 "'succeeded'" 0 0
add_done 300 3 "'failed'" 0 100000
add_done 200 2 "'succeeded'" 2400 200000 # outside the window
add_done 50 5 NULL 0 300000               # cancelled: no attempt ended it
add_runs 500 succeeded 2400 # 40 to 50 minutes ago: outside the window
add_runs 20600 succeeded 0
add_runs 400 failed 0
add_runs 20 released 0 # given back: not an outcome the chart counts
expect_eq "$(count "SELECT COUNT(*) FROM {p}run")" 21520 "runs written"

start_dashboard dash
curl -s -m 30 -o "$T/overview.html" "$base/"
legend=$(python3 - "$T/overview.html" <<'PY'
import re, sys
page = open(sys.argv[1]).read()
m = re.search(r'</span>(\d+) succeeded</span><span><span class="sw bad"></span>(\d+) failed</span><span>last (\d+) minutes', page)
print("%s %s %s" % m.groups() if m else "no legend")
PY
)
expect_eq "$legend" "41100 700 30" "the chart's legend (succeeded, failed, minutes)"
kill_child 15 "$dpid"
