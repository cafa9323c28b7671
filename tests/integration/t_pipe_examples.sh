#!/bin/sh
# The example pipe: handlers of examples/handlers/ (Python, Node.js, sh)
# work under a real worker: each drains its tasks, and the ones that fail
# (Python and Node.js fail the payload "fail") say why in the run record.
# The asyncio and event-loop examples announce a window of 8: one process
# serves the worker's 4 slots (one hello logged, every task in it).
# backends: sqlite
. "$(dirname "$0")/lib.sh"
# the handlers say `#!/usr/bin/env python3`, Debian's interpreter (lib.sh
# puts /usr/bin first): a first process that has not said its window
# within 5 s makes the worker start another
[ "$SKED_BACKEND" = sqlite ] || not_here "the examples are checked once, on sqlite"
init_db
ex=$(cd "$(dirname "$0")/../../examples/handlers" && pwd)
run_example() {
	kind=$1
	prog=$2
	seq 1 20 | sed "s/^/$kind-/" | sk enqueue "$kind" --lines - >/dev/null
	sk enqueue "$kind" --payload fail --max-attempts 1 >"$T/fail.$kind"
	sk worker --node-id "w-$kind" --concurrency "${4:-2}" --poll 100ms --until-empty \
		--handler "$kind=pipe:$prog" 2>"$T/$kind.log" ||
		{ cat "$T/$kind.log" >&2; fail "worker for $kind failed"; }
	expect_eq "$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE kind = '$kind' AND status = 2")" \
		"$3" "$kind: succeeded tasks"
}
run_example py "$ex/pipe_handler.py" 20
expect_eq "$(sql "SELECT error FROM $ALL_RUNS runs WHERE task_id = $(cat "$T/fail.py")")" "asked to fail" "py: error"
# one process for 4 slots: one hello with its window
one_process() {
	expect_eq "$(grep -c "pipe handler $1 (pid [0-9]*) takes 8 task(s) at once" "$T/$1.log")" 1 "$1: processes"
}
SKED_LOG=info run_example pya "$ex/pipe_handler_async.py" 20 4
expect_eq "$(sql "SELECT error FROM $ALL_RUNS runs WHERE task_id = $(cat "$T/fail.pya")")" "asked to fail" "pya: error"
one_process pya
run_example sh "$ex/pipe_handler.sh" 21 # the sh example succeeds at everything
if command -v node >/dev/null 2>&1; then
	run_example js "$ex/pipe_handler.js" 20
	expect_eq "$(sql "SELECT error FROM $ALL_RUNS runs WHERE task_id = $(cat "$T/fail.js")")" "asked to fail" "js: error"
	SKED_LOG=info run_example jsa "$ex/pipe_handler_async.js" 20 4
	expect_eq "$(sql "SELECT error FROM $ALL_RUNS runs WHERE task_id = $(cat "$T/fail.jsa")")" "asked to fail" "jsa: error"
	one_process jsa
elif [ "${CI:-}" = true ]; then
	fail "node is not installed (scripts/deps.sh installs it)"
else
	note "node not installed: the Node.js example was not run"
fi
