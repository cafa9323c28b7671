#!/bin/sh
# Many workers end a fan-in's last parents at the same instant: 40
# parents held at a barrier by four workers (ten slots each) are released
# together; the child becomes pending exactly once, so it runs once, as
# attempt 1 (docs/workflows.md).
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

h=$(handler h.sh <<'H'
#!/bin/sh
if [ "$2" = parent ]; then
	touch "$1/started.$SKED_TASK_ID"
	while [ ! -e "$1/go" ]; do sleep 0.02; done
else
	echo "$SKED_TASK_ID $SKED_TASK_ATTEMPT" >>"$1/child"
fi
H
)
ids=$(seq 40 | sk enqueue parent --lines - | paste -sd, -)
child=$(sk enqueue child --after "$ids")
for w in 1 2 3 4; do
	start_worker w$w --concurrency 10 --prefetch off --lease 30s --poll 100ms \
		--handler "parent=$h $T parent" --handler "child=$h $T child"
done
all_started() { [ "$(ls "$T" | grep -c '^started\.')" = 40 ]; }
wait_for 60 all_started || fail "$(ls "$T" | grep -c '^started\.') of 40 parents started"
expect_eq "$(status_of "$child")" 6 "the child while its parents run"
touch "$T/go"
wait_for 60 sh -c "[ -s '$T/child' ]" || fail "the child did not run"
sleep 1
expect_eq "$(cat "$T/child")" "$child 1" "the child's runs"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task_done WHERE status = 2")" 41 "succeeded tasks"
expect_eq "$(count "SELECT COUNT(*) FROM {p}run")" 0 "extra attempts"
for w in 1 2 3 4; do kill_child TERM "$(cat "$T/w$w.pid")"; done
for w in 1 2 3 4; do wait_exit "$(cat "$T/w$w.pid")" 60; done
