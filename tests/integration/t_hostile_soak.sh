#!/bin/sh
# A hostile soak (issue 39), bounded to about 2 minutes: under a memory
# cap (prlimit --as), a worker with --http and a dashboard with the JSON
# API take, at once, a workflow whose 100 parents each leave 64 KiB of
# control bytes for one child (the claim path once read 6x that per
# child), 260 clients that pipeline thousands of requests and never read
# their replies (busy connections once escaped every limit), and a
# stream of oversized and adversarial API requests (bulk enqueues at and
# over the edge bound, deep and huge JSON, bad UTF-8, null filters,
# conflicting lengths, long URLs, bad chunks, random bytes). It fails
# when /healthz of either stops answering, an /api/ refusal is not the
# JSON error shape (sked's own; libmicrohttpd's HTML refusals are counted,
# docs/security.md), a bound answers otherwise (a bulk over the edge
# bound, a cancel of everything, two lengths, a list over 4 MiB), a task
# with a 10 s lease loses it (the worker stopped
# renewing), the child does not run on its first attempt, or either
# process dies; it prints both processes' peak memory.
# backends: sqlite
. "$(dirname "$0")/lib.sh"
case "$SKED_BACKEND" in sqlite) ;; *) not_here "the HTTP server and the bounds are above the database" ;; esac
command -v prlimit >/dev/null || skip "prlimit is not installed (util-linux)"
command -v curl >/dev/null || skip "curl is not installed"
init_db
tool() { python3 "$(dirname "$0")/../tools/hostile.py" "$@"; }
CAP=$((2 * 1024 * 1024 * 1024)) # address space of each, bytes
peak() { awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$1/status" 2>/dev/null; }

par=$(handler par <<'H'
#!/bin/sh
head -c 65536 /dev/zero | tr '\0' '\001' >"$SKED_TASK_RESULT_FILE"
H
)
kid=$(handler kid <<'H'
#!/bin/sh
wc -c <"$SKED_TASK_PARENT_RESULTS" >"$SKED_TASK_RESULT_FILE"
H
)
seq 1 100 | sed 's/^/r/' >"$T/rl"
sk enqueue bigp --lines "$T/rl" >"$T/rids" || fail "enqueue the parents"
cid=$(sk enqueue kidk --after "$(paste -sd, "$T/rids")") || fail "enqueue the child"
long=$(sk enqueue slow) || fail "enqueue the long task"

ports=$(free_ports 2)
wport=${ports% *}
dport=${ports#* }
prlimit --as=$CAP "$SKED" worker --http "127.0.0.1:$wport" --lease 10s --poll 100ms \
	--concurrency 4 --handler "bigp=$par" --handler "kidk=$kid" \
	--handler "slow=/bin/sleep 20" --handler "soak=/bin/true" --handler "soakbig=/bin/true" \
	>"$T/w.log" 2>&1 &
wpid=$!
tok=$(head -c 32 /dev/urandom | base64 | tr -d '\n/+=' | head -c 40)
printf '%s\n' "$tok" >"$T/tok"
chmod 600 "$T/tok"
prlimit --as=$CAP "$SKED" dashboard --listen "127.0.0.1:$dport" --api-token "file:$T/tok" \
	>"$T/d.log" 2>&1 &
dpid=$!
up() { curl -s -o /dev/null "http://127.0.0.1:$1/healthz"; }
wait_for 10 up "$wport" || { cat "$T/w.log" >&2; fail "the worker's HTTP server did not start"; }
wait_for 10 up "$dport" || { cat "$T/d.log" >&2; fail "the dashboard did not start"; }

# pipelining clients that never read, at the worker then the dashboard
# (their busy connections count against the per-client bound of 16: the
# server closes the oldest; before, it closed none and held them all).
# What the server still holds is counted on its side (ss): a connection
# it shut behind megabytes of unread replies looks open from the client
# until those are read, so the client's own count said 0 closed on a
# fast machine where the server held 15 of the 260
for p in "$wport" "$dport"; do
	out=$(tool pipeline "$p" 260 5000 8) || fail "port $p under pipelining clients: $out"
	note "port $p, 260 pipelining clients: $out"
	held=${out##*the server holds }
	case "$held" in
	'' | *[!0-9]*) fail "port $p: how many connections the server holds is unknown: $out" ;;
	esac
	# 16 for the one client, one more arriving, and the probe's
	[ "$held" -le 20 ] || fail "port $p: the server holds $held of 260 pipelining connections (at most 16 a client): $out"
done
# adversarial API requests, probing both /healthz every second
out=$(tool soak "$dport" 25 "$T/tok" "$wport") || fail "soak: $out"
note "API soak: $out"

is_child "$wpid" || { cat "$T/w.log" >&2; fail "the worker died"; }
is_child "$dpid" || { cat "$T/d.log" >&2; fail "the dashboard died"; }
note "peak memory: worker $(peak "$wpid") MiB, dashboard $(peak "$dpid") MiB (cap $((CAP >> 20)) MiB of address space)"
done_ok() { [ "$(status_of "$long")" = 2 ] && [ "$(status_of "$cid")" = 2 ]; }
wait_for 60 done_ok || {
	tail -20 "$T/w.log" >&2
	fail "the long task ($(status_of "$long")) or the child ($(status_of "$cid")) did not succeed"
}
expect_eq "$(sk show --json "$long" | json_get 'd["attempts"]')" 1 "the long task's attempts (a lease lost)"
expect_eq "$(sk show --json "$cid" | json_get 'd["attempts"]')" 1 "the child's attempts"
if grep -E "could not be renewed|cannot heartbeat|lease lost" "$T/w.log" >&2; then
	fail "the worker stopped renewing"
fi
kill_child TERM "$wpid"
wait_exit "$wpid" 30
expect_eq "$wrc" 0 "the worker's exit status"
kill_child TERM "$dpid"
wait_exit "$dpid" 30
echo "ok: $SKED_BACKEND: hostile soak"
