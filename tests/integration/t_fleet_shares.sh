#!/bin/sh
# A fleet shares a backlog (docs/design.md, "Wake-ups"): 8 listening
# workers with one slot each, 320 tasks enqueued in one go. Every worker
# of the notification's window claims, and a worker whose claim came back
# full goes on claiming as its slot frees, until a claim comes back
# short: the backlog is spread over the fleet, not drained by the leader
# alone. Before the fix, a worker woken while its only slot was busy
# sent no claim, took that empty round for "the backlog is gone" and
# waited for the next wake-up: the leader (which polls) ran 982 of 1000
# tasks and the 9 others 2 or 3 each. Checked from the handlers' own log:
# each task ran once, no worker ran more than half of them, and at least
# 6 of the 8 ran a fair part (a quarter of an even share).
# backends: pg pg-optimistic
. "$(dirname "$0")/lib.sh"
case "$SKED_BACKEND" in
pg | pg-optimistic) ;;
*) not_here "wake-ups are addressed where the database pushes them (PostgreSQL LISTEN)" ;;
esac
init_db

W=8
N=320
h=$(handler h.sh <<'H'
#!/bin/sh
sleep 0.02
echo "$SKED_TASK_ID $2" >>"$1"
H
)
for i in $(seq 1 "$W"); do
	start_worker w$i --node-id fs-$i --concurrency 1 --handler "work=$h $T/ran w$i"
done
registered() { [ "$(count "SELECT COUNT(*) FROM {p}node")" -eq "$W" ]; }
wait_for 30 registered || fail "the $W workers did not register"
# the first claims of their start are behind them
sleep 2

seq 1 "$N" | sk enqueue work --lines - >/dev/null
done_all() { [ "$(wc -l <"$T/ran" 2>/dev/null || echo 0)" -ge "$N" ]; }
wait_for 180 done_all || fail "$(wc -l <"$T/ran") of $N tasks ran within 180 s"
sleep 0.5

expect_eq "$(awk '{ print $1 }' "$T/ran" | sort | uniq -d | wc -l)" 0 "tasks that ran twice"
expect_eq "$(wc -l <"$T/ran")" "$N" "runs"
awk '{ n[$2]++ } END { for (w in n) print w, n[w] }' "$T/ran" | sort >"$T/shares"
note "tasks per worker: $(tr '\n' ' ' <"$T/shares")"
most=$(awk '$2 > m { m = $2 } END { print m + 0 }' "$T/shares")
[ "$most" -le $((N / 2)) ] ||
	fail "one worker ran $most of $N tasks: the others did not drain the backlog"
fair=$(awk -v f=$((N / W / 4)) '$2 >= f { n++ } END { print n + 0 }' "$T/shares")
[ "$fair" -ge 6 ] ||
	fail "only $fair of $W workers ran at least $((N / W / 4)) tasks of $N"

for f in "$T"/*.pid; do kill -TERM "$(cat "$f")" 2>/dev/null || true; done
for f in "$T"/*.pid; do wait_exit "$(cat "$f")" 60; done
