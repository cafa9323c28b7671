#!/bin/sh
# The bounds of issue 39 on what enters sked, each checked from the
# outside (docs/security.md): a task has at most 1000 parents and one
# enqueue writes at most 100,000 edges (CLI and API alike); what a child
# is handed of its parents' results is at most 1 MiB of JSON, the rest
# left out and marked "cut" (forty parents of 64 KiB of control bytes
# once made 15 MB, a thousand 393 MB read on the claim path); CLI reads
# stop at the limit (--payload @/dev/zero, --lines /dev/zero, a FIFO as
# --config); the API refuses a bulk cancel or retry with no filter, lists
# carry a payload preview within a byte budget, conflicting
# Content-Length headers are refused, and `--auth ''` is an error.
. "$(dirname "$0")/lib.sh"
case "$SKED_BACKEND" in sqlite) ;; *) not_here "the bounds are checked above the database" ;; esac
init_db

# ---- parents per task, edges per enqueue ----
seq 1 1001 | sed 's/^/p/' >"$T/lines"
sk enqueue par --lines "$T/lines" >"$T/pids" || fail "enqueue 1001 parents"
all=$(paste -sd, "$T/pids")
first=$(head -n 1000 "$T/pids" | paste -sd, -)
expect_rc 65 sk enqueue child --after "$all"
grep -q "at most 1000" "$T/err" || fail "1001 parents: $(cat "$T/err")"
seq 1 101 | sed 's/^/c/' >"$T/kids"
expect_rc 65 sk enqueue child --lines "$T/kids" --after "$first"
grep -q "100000" "$T/err" || fail "101 x 1000 edges: $(cat "$T/err")"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE kind = 'child'")" 0 "children written by refused enqueues"
sk enqueue child --after "$first" >/dev/null || fail "1000 parents are allowed"
sk cancel --kind par --yes >/dev/null
sk cancel --kind child --yes >/dev/null

# ---- the parents' results a child is handed: at most 1 MiB ----
par=$(handler par <<'H'
#!/bin/sh
head -c 65536 /dev/zero | tr '\0' '\001' >"$SKED_TASK_RESULT_FILE"
H
)
kid=$(handler kid <<'H'
#!/bin/sh
f=$SKED_TASK_PARENT_RESULTS
printf '{"bytes":%s,"cut":%s,"n":%s}' "$(wc -c <"$f")" \
	"$(grep -o '"cut":true' "$f" | wc -l)" "$(grep -o '"id":' "$f" | wc -l)" >"$SKED_TASK_RESULT_FILE"
H
)
seq 1 40 | sed 's/^/r/' >"$T/rl"
sk enqueue bigp --lines "$T/rl" >"$T/rids" || fail "enqueue 40 parents"
cid=$(sk enqueue kidk --after "$(paste -sd, "$T/rids")") || fail "enqueue the child"
sk worker --handler "bigp=$par" --handler "kidk=$kid" --until-empty --poll 100ms \
	--concurrency 4 >"$T/w.log" 2>&1 || { cat "$T/w.log" >&2; fail "worker"; }
res=$(sk show --json "$cid" | json_get 'd["result"]')
note "the child of 40 parents of 64 KiB of U+0001 was handed: $res"
bytes=$(printf '%s' "$res" | json_get 'd["bytes"]')
[ "$bytes" -le 1100000 ] || fail "the parents' results handed to a child: $bytes bytes"
expect_eq "$(printf '%s' "$res" | json_get 'd["n"]')" 40 "parents listed"
[ "$(printf '%s' "$res" | json_get 'd["cut"]')" -ge 30 ] || fail "no result marked cut: $res"
grep -q "SKED_PARENTS_RESULTS_MAX" "$T/w.log" || fail "the worker did not say what it left out"

echo "ok: $SKED_BACKEND: hostile bounds"
