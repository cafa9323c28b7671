#!/bin/sh
# Limits refuse bad input with one clear line and a sysexits code, and
# change nothing: numbers out of range and malformed rates are usage
# errors (64), a queue or key that is not a name is bad data (65), a
# [queue.NAME] section that is wrong is a config error (78).
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

sk queue set q --concurrency 2
for args in "--concurrency -1" "--concurrency 0" "--concurrency x" \
	"--per-key -1" "--per-key 1000001" "--rate 5" "--rate 0/1s" \
	"--rate 5/0s" "--rate 5/x" "--rate /1s" "--rate 100001/1s" "--rate 1/2d"; do
	# shellcheck disable=SC2086
	expect_rc 64 sk queue set q $args
	stderr_one_line "$T/err"
done
expect_rc 64 sk queue set q
stderr_one_line "$T/err"
expect_rc 65 sk queue set 'no spaces' --concurrency 1
stderr_one_line "$T/err"
grep -q "not a valid name" "$T/err" || fail "the refusal does not say why: $(cat "$T/err")"
expect_rc 65 sk queue set "$(printf 'q%.0s' $(seq 1 200))" --concurrency 1
stderr_one_line "$T/err"
expect_rc 65 sk enqueue job --queue q --concurrency-key ''
stderr_one_line "$T/err"
# nothing changed
sk queue ls --json >"$T/ls.json"
expect_eq "$(json_get 'len(d)' <"$T/ls.json")" 1 "queues listed"
expect_eq "$(json_get 'd[0]["concurrency"]' <"$T/ls.json")" 2 "the limit"
expect_eq "$(json_get 'd[0]["rate"]' <"$T/ls.json")" null "no rate"

# "none" clears one limit and keeps the others; clearing all unlimits
sk queue set q --per-key 1 --rate 10/1m
sk queue set q --concurrency none
sk queue ls --json >"$T/ls.json"
expect_eq "$(json_get 'd[0]["concurrency"]' <"$T/ls.json")" null "concurrency cleared"
expect_eq "$(json_get 'd[0]["per_key"]' <"$T/ls.json")" 1 "per-key kept"
expect_eq "$(json_get 'd[0]["rate"]["window_ms"]' <"$T/ls.json")" 60000 "rate kept"
sk queue set q --per-key none --rate none
expect_eq "$(sk queue ls --json | json_get 'len(d)')" 0 "queues left limited"

# the config file's [queue.NAME]
cp "$SKED_CONFIG" "$T/bad.conf"
printf '[queue.q]\nrate = 5\n' >>"$T/bad.conf"
expect_rc 78 env SKED_CONFIG="$T/bad.conf" "$SKED" queue ls
stderr_one_line "$T/err"
cp "$SKED_CONFIG" "$T/bad2.conf"
printf '[queue.q]\nconcurrency = -3\n' >>"$T/bad2.conf"
expect_rc 78 env SKED_CONFIG="$T/bad2.conf" "$SKED" queue ls
stderr_one_line "$T/err"
# a good one is applied when a worker starts
cp "$SKED_CONFIG" "$T/good.conf"
printf '[queue.fromconf]\nconcurrency = 4\nper_key = 2\nrate = 30/1m\n' >>"$T/good.conf"
h=$(handler h.sh <<'H'
#!/bin/sh
exit 0
H
)
SKED_CONFIG="$T/good.conf" "$SKED" worker --handler "job=$h" --until-empty >"$T/w.log" 2>&1 ||
	{ cat "$T/w.log" >&2; fail "worker with [queue.fromconf] failed"; }
sk queue ls --json >"$T/ls.json"
expect_eq "$(json_get '[q["concurrency"], q["per_key"], q["rate"]["n"], q["rate"]["window"]][0:4] if (q := d[0]) else 0' <"$T/ls.json")" "[4, 2, 30, '1m']" "limits from the config file"

# /metrics shows each limit and its use
if command -v curl >/dev/null; then
	port=$(free_port)
	start_worker m --handler "job=$h" --http "127.0.0.1:$port" --poll 100ms
	got_metrics() {
		curl -s -m 5 "http://127.0.0.1:$port/metrics" >"$T/metrics" &&
			grep -q '^sked_queue_limit{queue="fromconf",limit="concurrency"} 4$' "$T/metrics"
	}
	wait_for 20 got_metrics || { cat "$T/metrics" "$T/m.log" >&2; fail "/metrics has no queue limit"; }
	grep -q '^sked_queue_limit{queue="fromconf",limit="rate"} 30$' "$T/metrics" || fail "/metrics: no rate limit"
	grep -q '^sked_queue_limit_used{queue="fromconf",limit="concurrency"} 0$' "$T/metrics" || fail "/metrics: no use of the limit"
	grep -q '^sked_queue_limit_window_seconds{queue="fromconf"} 60.000$' "$T/metrics" || fail "/metrics: no rate window"
	kill "$wpid"
	wait_exit "$wpid" 30
	# and the dashboard's Queues page
	port=$(free_port)
	"$SKED" dashboard --listen "127.0.0.1:$port" --read-only >"$T/dash.log" 2>&1 &
	dpid=$!
	got_page() { curl -s -m 5 "http://127.0.0.1:$port/queues" >"$T/queues.html" && grep -q 'fromconf' "$T/queues.html"; }
	wait_for 10 got_page || { cat "$T/dash.log" >&2; fail "the dashboard's /queues does not show the queue"; }
	grep -q '30/1m' "$T/queues.html" || fail "/queues: no rate"
	kill "$dpid"
	wait "$dpid" 2>/dev/null || true
else
	note "curl is not installed: /metrics not checked"
fi
