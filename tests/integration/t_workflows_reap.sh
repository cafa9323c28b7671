#!/bin/sh
# A parent whose worker is killed with -9 on its last attempt ends dead
# when another node takes its lease back: that end, too, reaches its
# children in the same transaction (docs/workflows.md): the one that
# asked for "cancel" is cancelled naming the parent, the one that asked
# for "ignore" runs.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

h=$(handler h.sh <<'H'
#!/bin/sh
if [ "$SKED_TASK_KIND" = hang ]; then
	touch "$1/hanging"
	exec sleep 60
fi
echo "$SKED_TASK_ID" >>"$1/ran"
H
)
p=$(sk enqueue hang --max-attempts 1)
c=$(sk enqueue w --after "$p")
i=$(sk enqueue w --after "$p" --on-parent-failure ignore)
start_worker victim --lease 2s --poll 100ms --handler "hang=$h $T"
victim=$wpid
wait_for 30 test -e "$T/hanging" || fail "the parent did not start"
kill -9 "$victim"
wait "$victim" 2>/dev/null || true
start_worker rescuer --lease 5s --poll 100ms --handler "w=$h $T"
wait_for 60 sh -c "grep -qx $i '$T/ran'" || { tail "$T/rescuer.log" >&2; fail "the ignoring child did not run"; }
expect_eq "$(status_of "$p")" 3 "the parent after its lease was taken back"
expect_eq "$(status_of "$c")" 5 "the cancelling child"
expect_eq "$(sql "SELECT last_error FROM {p}task_done WHERE id = $c")" "parent $p ended dead" "its error"
grep -qx "$c" "$T/ran" && fail "the cancelled child ran"
kill_child TERM "$wpid"
wait_exit "$wpid" 30
