#!/usr/bin/env bash
# t_bench_deps.sh — `sked bench --pattern` builds each dependency graph,
# drains it with real worker processes and checks it from the handlers'
# own start and end stamps: every job ran exactly once and none started
# before each of its parents had ended.
#
# Layer: integration test (lib.sh gives the database, prefix and config).
# Correctness only: the figures (jobs/s, dep_wait) vary with the machine
# and belong in docs/performance.md, never in a test.
# backends: sqlite pg
. "$(dirname "$0")/lib.sh"

command -v jq >/dev/null || skip "jq is not installed"

j() { jq -r "$1" "$T/cur.json"; }
# pattern --tasks n edges (layered: 20 layers of 125/20 = 6, 19 x 6 x 3
# edges; chain: --chain-length 60)
for spec in "baseline 120 120 0" "fanout 120 120 119" "fanin 120 120 119" \
	"chain 120 60 59" "layered 125 120 342"; do
	set -- $spec
	expect_rc 0 sk --json bench --pattern "$1" --tasks "$2" \
		--chain-length 60 --workers 2 --threads 4 --batch 50 \
		--poll 20ms --prefix "$PREFIX" --timeout 2m
	cp "$T/out" "$T/cur.json"
	jq -e . "$T/cur.json" >/dev/null || fail "$1: --json is not one document"
	expect_eq "$(j .deps.pattern)" "$1" "$1: pattern"
	expect_eq "$(j .deps.n)" "$3" "$1: jobs in the graph"
	expect_eq "$(j .deps.edges)" "$4" "$1: edges"
	expect_eq "$(j .deps.completed)" "$3" "$1: completed"
	expect_eq "$(j .deps.missing)" 0 "$1: missing"
	expect_eq "$(j .deps.duplicates)" 0 "$1: duplicates"
	expect_eq "$(j .deps.violations)" 0 "$1: violations"
	expect_eq "$(j .deps.verified)" true "$1: verified"
	[ "$(j '.deps.jobs_per_s | type')" = number ] || fail "$1: jobs_per_s"
	if [ "$4" -gt 0 ]; then
		[ "$(j '.deps.dep_wait_p50_ms <= .deps.dep_wait_p99_ms')" = true ] ||
			fail "$1: dep_wait percentiles out of order"
	fi
done

# The database agrees: every task of the five graphs succeeded, nothing
# is left blocked, and the workers left the node table.
expect_eq "$(sql "SELECT count(*) FROM $ALL_TASKS a WHERE status = 2")" 540 \
	"succeeded tasks"
expect_eq "$(sql "SELECT count(*) FROM $ALL_TASKS a WHERE status <> 2")" 0 \
	"unfinished tasks"
expect_eq "$(sql "SELECT count(*) FROM {p}node")" 0 "nodes left behind"

# The text output says the same in its result line.
expect_rc 0 sk bench --pattern fanin --tasks 30 --threads 2 \
	--prefix "$PREFIX" --timeout 2m
grep -q '^result pattern=fanin n=30 completed=30 missing=0 duplicates=0 violations=0 ' "$T/out" ||
	fail "text result line: $(cat "$T/out")"

# Usage errors are usage errors, with nothing run.
expect_rc 64 sk bench --pattern diamond
expect_rc 64 sk bench --pattern layered --tasks 19
expect_rc 64 sk bench --pattern fanin --tasks 1
expect_rc 64 sk bench --pattern chain --chain-length 1
expect_rc 64 sk bench --pattern chain --latency-tasks 5
