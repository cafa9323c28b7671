#!/bin/sh
# A released child is handed over in the statement that ends its parent
# (docs/workflows.md, "Hand-off"): on PostgreSQL, a worker with a free
# slot that records a parent's success takes the child it releases in
# that same statement, one update releasing and claiming it, instead of a
# finish, a wake-up and a claim. A task's version counts the updates its
# row went through; a handed child is updated as often as a task without
# parents (claimed, ended: 2), one released and then claimed apart once
# more. A link whose outcome the worker had to record apart (its loop
# busy past the fallback, on a loaded machine) is not handed, so most
# links, not all, must be.
# backends: pg pgbouncer
. "$(dirname "$0")/lib.sh"
init_db

prev=$(sk enqueue link)
root=$prev
kids=""
for i in 1 2 3 4 5 6; do
	prev=$(sk enqueue link --after "$prev")
	kids="$kids $prev"
done
sk worker --until-empty --concurrency 1 --handler "link=true" >"$T/w.log" 2>&1 ||
	{ cat "$T/w.log" >&2; fail "the worker failed"; }
for t in $root $kids; do
	expect_eq "$(sk --json show "$t" | json_get 'd["status"]')" "succeeded" "task $t"
done
expect_eq "$(sql "SELECT version FROM {p}task_done WHERE id = $root")" "2" \
	"the root's updates (claimed, ended)"
handed=0
for t in $kids; do
	v=$(sql "SELECT version FROM {p}task_done WHERE id = $t")
	[ "$v" = 2 ] && handed=$((handed + 1))
	[ "$v" = 2 ] || [ "$v" = 3 ] || fail "child $t was updated $v times"
done
[ "$handed" -ge 4 ] || fail "only $handed of 6 children were handed over with their parent's end"
