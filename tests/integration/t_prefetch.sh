#!/bin/sh
# Prefetch holds tasks ahead of free threads only where that cannot keep
# work from idle workers: with the default (auto), a worker whose handlers
# are slow holds next to nothing ahead, so a second worker started later
# gets work at once; `--prefetch off` holds only what its threads run;
# `--prefetch N` holds N more, as told, but gives them back once they
# have waited 2 s for a thread. Then everything runs exactly once.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

# block: runs until the test says go
block=$(handler block.sh <<'H'
#!/bin/sh
echo "$SKED_TASK_ID" >>"$1/ran.log"
i=0
while [ ! -e "$1/go" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
H
)
seq 1 40 | sk enqueue block --lines - >/dev/null

held_by() { count "SELECT COUNT(*) FROM {p}task WHERE status = 1 AND node_id = '$1'"; }
holds() { [ "$(held_by "$1")" -ge "$2" ]; }

start_worker w1 --node-id auto --concurrency 2 --lease 5s --poll 100ms \
	--handler "block=$block $T"
w1=$wpid
wait_for 20 holds auto 2 || { cat "$T/w1.log" >&2; fail "the auto worker claimed nothing"; }
# its start rate is known after its first 25 ms and then every quarter
# second; give it several
sleep 1.5
a=$(held_by auto)
# two running, and nothing ahead: its threads have not shown they take
# more than their first tasks
[ "$a" -le 2 ] || fail "auto prefetch held $a tasks with 2 slots and slow handlers"

start_worker w2 --node-id off --concurrency 2 --prefetch off --lease 5s \
	--poll 100ms --handler "block=$block $T"
w2=$wpid
wait_for 20 holds off 2 || { cat "$T/w2.log" >&2; fail "a second worker found no work: the first hoarded it"; }
sleep 1
expect_eq "$(held_by off)" 2 "tasks held with --prefetch off and 2 slots"

SKED_LOG=info start_worker w3 --node-id fixed --concurrency 1 --prefetch 3 --lease 5s \
	--poll 100ms --handler "block=$block $T"
w3=$wpid
wait_for 20 holds fixed 4 || { cat "$T/w3.log" >&2; fail "--prefetch 3 with 1 slot did not hold 4 tasks"; }
sleep 0.5
[ "$(held_by fixed)" -le 4 ] || fail "--prefetch 3 with 1 slot held more than 4 tasks"
# held ahead 2 s without a free thread, the 3 go back (unstarted, their
# attempts returned) for others to run; nothing is held ahead again
# while its one thread is busy
gone_back() { [ "$(held_by fixed)" = 1 ]; }
wait_for 15 gone_back || { cat "$T/w3.log" >&2; fail "the tasks held ahead by --prefetch 3 were not given back"; }
grep -q "gave back 3 task(s) held ahead" "$T/w3.log" || { cat "$T/w3.log" >&2; fail "the give-back was not logged"; }
sleep 1
expect_eq "$(held_by fixed)" 1 "tasks held by the 1-slot worker after the give-back"

touch "$T/go"
done_all() { [ "$(count "SELECT COUNT(*) FROM {p}task_done WHERE status = 2")" = 40 ]; }
wait_for 60 done_all || { cat "$T"/w*.log >&2; fail "the 40 tasks did not all succeed"; }
expect_eq "$(count "SELECT COUNT(*) FROM {p}task")" 0 "live tasks left"
expect_eq "$(sort "$T/ran.log" | uniq -d | wc -l | tr -d ' ')" 0 "tasks run twice"
expect_eq "$(wc -l <"$T/ran.log" | tr -d ' ')" 40 "runs"
kill -TERM "$w1" "$w2" "$w3"
for p in "$w1" "$w2" "$w3"; do wait_exit "$p" 15; done
