#!/bin/sh
# `sked worker --http` beyond loopback: without SKED_METRICS_TOKEN it
# warns that /metrics has no authentication (it once started silently);
# with it, /metrics wants `Authorization: Bearer TOKEN` (401 otherwise)
# while /healthz and /readyz stay open for probes; a token under 8
# characters, or of fewer than 4 different ones (aaaaaaaa was taken), is
# refused at start (78). sqlite only: the HTTP server does
# not depend on the backend.
# backends: sqlite
. "$(dirname "$0")/lib.sh"
case "$SKED_BACKEND" in sqlite) ;; *) not_here "the HTTP server does not depend on the backend" ;; esac
command -v curl >/dev/null || skip "curl is not installed"
init_db
code() { curl -s -o /dev/null -w '%{http_code}' -m 10 "$@" || true; }

port=$(free_port)
SKED_LOG=info start_worker open --handler k=/bin/true --http "0.0.0.0:$port" --poll 200ms
up() { [ "$(code "http://127.0.0.1:$port/healthz")" = 200 ]; }
wait_for 15 up || { cat "$T/open.log" >&2; fail "the worker's HTTP server did not start"; }
grep -q "beyond loopback and /metrics has no authentication" "$T/open.log" ||
	fail "no warning for an open /metrics on 0.0.0.0: $(cat "$T/open.log")"
expect_eq "$(code "http://127.0.0.1:$port/metrics")" 200 "/metrics without a token configured"
kill_child TERM "$wpid"
wait_exit "$wpid" 30

SKED_METRICS_TOKEN=short expect_rc 78 "$SKED" worker --handler k=/bin/true --http "127.0.0.1:$(free_port)" --until-empty
stderr_one_line "$T/err"
# long enough but one letter repeated (it was taken)
SKED_METRICS_TOKEN=aaaaaaaa expect_rc 78 "$SKED" worker --handler k=/bin/true --http "127.0.0.1:$(free_port)" --until-empty
stderr_one_line "$T/err"
grep -q "too few different" "$T/err" || fail "a repeated metrics token: $(cat "$T/err")"

port=$(free_port)
SKED_LOG=info SKED_METRICS_TOKEN=metrics-token-123 start_worker tok --handler k=/bin/true --http "0.0.0.0:$port" --poll 200ms
wait_for 15 up || { cat "$T/tok.log" >&2; fail "the worker's HTTP server did not start"; }
if grep -q "no authentication" "$T/tok.log"; then fail "a warning although a token is set"; fi
m="http://127.0.0.1:$port/metrics"
expect_eq "$(code "$m")" 401 "/metrics without a token"
expect_eq "$(code -H 'Authorization: Bearer wrong-token-123' "$m")" 401 "/metrics with a wrong token"
expect_eq "$(code -H 'Authorization: Bearer metrics-token-1234' "$m")" 401 "/metrics with a longer token"
expect_eq "$(code -H 'Authorization: Bearer metrics-token-123' "$m")" 200 "/metrics with the token"
expect_eq "$(code "http://127.0.0.1:$port/healthz")" 200 "/healthz without a token"
expect_eq "$(code "http://127.0.0.1:$port/readyz")" 200 "/readyz without a token"
kill_child TERM "$wpid"
wait_exit "$wpid" 30
expect_eq "$wrc" 0 "the worker's exit status"
echo "ok: $SKED_BACKEND: worker --http beyond loopback"
