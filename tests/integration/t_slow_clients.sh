#!/bin/sh
# Slow clients never silence `sked worker --http` or `sked dashboard`.
# 100 connections that never finish their request (a header line every
# 2 s, reopened when closed) once took every one of the 64 connection
# slots, and /healthz went unanswered for as long as they were held.
# Now: each client keeps at most 16 such connections (a new one closes
# its oldest), all clients together 128, and a request must arrive
# whole within 10 s. Under the load /healthz answers every second, and a
# connection trickling its headers is closed after the deadline.
# The HTTP server is the same on every backend: sqlite only.
# backends: sqlite
. "$(dirname "$0")/lib.sh"
case "$SKED_BACKEND" in sqlite) ;; *) not_here "the HTTP server does not depend on the backend" ;; esac
command -v curl >/dev/null || skip "curl is not installed"
init_db
load() { python3 "$(dirname "$0")/../tools/slow_clients.py" "$@"; }

ports=$(free_ports 2)
wport=${ports% *}
dport=${ports#* }
start_worker w --handler "x=/bin/true" --http "127.0.0.1:$wport" --poll 200ms
up() { curl -s -o /dev/null "http://127.0.0.1:$wport/healthz"; }
wait_for 10 up || { cat "$T/w.log" >&2; fail "the worker's HTTP server did not start"; }

out=$(load "$wport" 100 12 /healthz) || fail "worker --http under 100 slow clients: $out"
note "worker --http, 100 slow clients: $out"
# five trickling connections (within the per-client bound): each is
# closed once its request has taken 10 s
out=$(load "$wport" 5 16 /healthz) || fail "worker --http: $out"
case "$out" in
*"closed by the server "[5-9]* | *"closed by the server "[1-9][0-9]*) ;;
*) fail "trickling connections were not closed after 10 s: $out" ;;
esac
note "worker --http, 5 trickling clients: $out"
kill_child TERM "$wpid"
wait_exit "$wpid" 30
expect_eq "$wrc" 0 "the worker's exit status"

"$SKED" dashboard --listen "127.0.0.1:$dport" >"$T/d.log" 2>&1 &
dpid=$!
dup() { curl -s -o /dev/null "http://127.0.0.1:$dport/healthz"; }
wait_for 10 dup || { cat "$T/d.log" >&2; fail "the dashboard did not start"; }
expect_eq "$(curl -s -m 5 "http://127.0.0.1:$dport/healthz")" ok "the dashboard's /healthz"
out=$(load "$dport" 100 12 /healthz) || fail "dashboard under 100 slow clients: $out"
note "dashboard, 100 slow clients: $out"
# its pages still answer afterwards
expect_eq "$(curl -s -o /dev/null -w '%{http_code}' -m 10 "http://127.0.0.1:$dport/")" 200 "the overview after the load"
kill_child TERM "$dpid"
wait_exit "$dpid" 30
echo "ok: $SKED_BACKEND: slow clients"
