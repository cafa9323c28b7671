#!/bin/sh
# No thundering herd (docs/design.md, "Wake-ups"): one enqueued task wakes
# a bounded number of claims, not one per listening worker. 16 idle
# workers serve kind `a` and 4 serve only kind `b`, all listening on
# PostgreSQL; 20 lone `a` tasks are enqueued one at a time. Each runs
# exactly once and is picked up within 3 s (a wake-up that misses is
# caught by the leader's poll each second; in a loaded full run one
# did), the `a` workers run
# about 2 claims per task between them (at most 3 allowed; every one of
# the 16 claimed on every notification before), and the `b` workers,
# which do not serve `a`, claim for none of them. The claims are counted
# from each worker's own trace (SKED_TRACE_SQL=1); the leader, which
# polls every second whatever it is told, is left out of the count.
# backends: pg
. "$(dirname "$0")/lib.sh"
case "$SKED_BACKEND" in
pg | pg-optimistic) ;;
*) not_here "wake-ups are addressed where the database pushes them (PostgreSQL LISTEN)" ;;
esac
init_db

h=$(handler h.sh <<'H'
#!/bin/sh
echo "$SKED_TASK_ID" >>"$1"
H
)
# a short lease: the heartbeat (every lease/2 while idle) reads each
# worker's rank among those that serve what it serves
for i in $(seq 1 16); do
	SKED_TRACE_SQL=1 SKED_LOG=debug start_worker a$i --node-id wa-$i \
		--lease 4s --concurrency 2 --handler "a=$h $T/ran"
done
for i in 1 2 3 4; do
	SKED_TRACE_SQL=1 SKED_LOG=debug start_worker b$i --node-id wb-$i \
		--lease 4s --concurrency 2 --handler "b=$h $T/ran-b"
done
registered() { [ "$(count "SELECT COUNT(*) FROM {p}node")" -eq 20 ]; }
wait_for 30 registered || fail "the 20 workers did not register"
# beats after the last registration (every lease/2 while idle): every
# rank is read; a loaded machine gets a few more
sleep 8
leader=$(grep -l "leads the cluster's chores" "$T"/a*.log "$T"/b*.log | head -n 1)
note "leader: $(basename "$leader" .log)"

claims() {
	# the claim statements each worker ran (its trace), but the leader's
	n=0
	for f in "$@"; do
		[ "$f" = "$leader" ] && continue
		c=$(grep -c 'sql\[.*SKIP LOCKED\|sql\[.*version = ' "$f" || true)
		n=$((n + c))
	done
	echo "$n"
}
a0=$(claims "$T"/a*.log)
b0=$(claims "$T"/b*.log)
for i in $(seq 1 20); do
	t0=$(now_ms)
	id=$(sk enqueue a)
	while ! grep -qx "$id" "$T/ran" 2>/dev/null; do
		[ $(($(now_ms) - t0)) -lt 3000 ] ||
			fail "task $id not picked up within 3 s"
		sleep 0.01
	done
	sleep 0.2
done
sleep 0.5
a1=$(claims "$T"/a*.log)
b1=$(claims "$T"/b*.log)
na=$((a1 - a0))
nb=$((b1 - b0))
note "claims for 20 lone tasks: $na by the 'a' workers, $nb by the 'b' workers (the leader left out)"
expect_eq "$(sort "$T/ran" | uniq -d | wc -l)" 0 "tasks that ran twice"
expect_eq "$(wc -l <"$T/ran")" 20 "tasks that ran"
[ "$na" -le 60 ] || fail "$na claims for 20 lone tasks among 16 listening workers (at most 60: about 2 each)"
[ "$nb" -eq 0 ] || fail "the workers that do not serve 'a' claimed $nb times for its tasks"

for f in "$T"/*.pid; do kill -TERM "$(cat "$f")" 2>/dev/null || true; done
for f in "$T"/*.pid; do wait_exit "$(cat "$f")" 60; done
