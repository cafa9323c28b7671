#!/bin/sh
# A released child is handed over in the statement that ends its parent
# (docs/workflows.md, "Hand-off"): on PostgreSQL, a worker with a free
# slot that records a parent's success takes the child it releases in
# that same statement, one update releasing and claiming it, instead of a
# finish, a wake-up and a claim. A task's version counts the updates its
# row went through; a handed child is updated as often as a task without
# parents (claimed, ended: 2), one released and then claimed apart once
# more.
# backends: pg pgbouncer
. "$(dirname "$0")/lib.sh"
init_db

a=$(sk enqueue link)
b=$(sk enqueue link --after "$a")
c=$(sk enqueue link --after "$b")
d=$(sk enqueue link --after "$c")
sk worker --until-empty --concurrency 1 --handler "link=true" >"$T/w.log" 2>&1 ||
	{ cat "$T/w.log" >&2; fail "the worker failed"; }
for t in "$a" "$b" "$c" "$d"; do
	expect_eq "$(sk --json show "$t" | json_get 'd["status"]')" "succeeded" "task $t"
done
expect_eq "$(sql "SELECT version FROM {p}task_done WHERE id = $a")" "2" \
	"the root's updates (claimed, ended)"
for t in "$b" "$c" "$d"; do
	expect_eq "$(sql "SELECT version FROM {p}task_done WHERE id = $t")" "2" \
		"child $t's updates: released and claimed by one, then ended"
done
