#!/bin/sh
# Outcomes ride with the lanes' claims: while a worker drains a backlog
# with its lanes, the results of its tasks are recorded by the lanes'
# fused claim+finish statements (one statement, one commit for both), and
# its finisher records apart only what the claims left behind for a while
# (docs/design.md, "Lanes"). One worker of 10 threads drains 20,000
# no-op tasks; its last line says how many results it recorded with
# claims and how many apart. Before 2026-12-06 the lanes never told the
# finisher that they carried outcomes, and it recorded 41-46 % of them
# apart, in statements of their own (a commit each); now it is 0-3 %, 0-7
# % with three copies of this test on two cores, so a quarter is the
# bound. Every task ran once and succeeded.
# backends: pg
. "$(dirname "$0")/lib.sh"
init_db

n=20000
seq 1 $n | sk enqueue noop --lines - >/dev/null
SKED_LOG=info start_worker a --node-id a --concurrency 10 --poll 100ms \
	--builtin-noop noop --until-empty
wait_exit "$wpid" 300
[ "$wrc" = 0 ] || { cat "$T/a.log" >&2; fail "the worker exited $wrc"; }

expect_eq "$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE status = 2 AND attempts = 1")" $n "tasks succeeded at their first attempt"

line=$(grep 'stopped:' "$T/a.log" || true)
with=$(echo "$line" | sed -n 's/.* \([0-9]*\) result(s) recorded with claims.*/\1/p')
apart=$(echo "$line" | sed -n 's/.*with claims, \([0-9]*\) apart.*/\1/p')
[ -n "$with" ] && [ -n "$apart" ] || { cat "$T/a.log" >&2; fail "the worker did not say how it recorded its results"; }
note "results recorded with claims: $with, apart: $apart"
expect_eq "$((with + apart))" $n "results recorded"
[ $((apart * 4)) -le $n ] ||
	fail "$apart of $n results were recorded apart from the lanes' claims (at most a quarter)"
echo ok
