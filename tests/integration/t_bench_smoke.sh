#!/usr/bin/env bash
# t_bench_smoke.sh — `sked bench` runs end to end on this backend and its
# --json output is one document with every phase filled in.
#
# Layer: integration test (lib.sh gives the database, prefix and config).
# Speed is not asserted here: figures vary with the machine and belong in
# docs/performance.md. This checks only that the bench enqueues, drains
# with real worker processes, measures latency and reports it all, and
# that the database agrees with what it reports.
# backends: engines
. "$(dirname "$0")/lib.sh"

command -v jq >/dev/null || skip "jq is not installed"

# The test's own prefix, so that lib.sh's cleanup drops the bench tables.
expect_rc 0 sk --json bench --tasks 300 --workers 2 --threads 4 --batch 64 \
	--latency-tasks 20 --rate 200 --poll 20ms --prefix "$PREFIX" --timeout 2m
cp "$T/out" "$T/bench.json"
jq -e . "$T/bench.json" >/dev/null || fail "bench --json is not one JSON document"

j() { jq -r "$1" "$T/bench.json"; }
expect_eq "$(j .settings.prefix)" "$PREFIX" "prefix used"
expect_eq "$(j .enqueue.tasks)" 300 "enqueued"
expect_eq "$(j .throughput.tasks)" 300 "drained"
expect_eq "$(j .throughput.concurrency)" 8 "workers x threads"
expect_eq "$(j .latency.tasks)" 20 "latency samples"
[ "$(j '.throughput.handler_calls >= 300')" = true ] || fail "handler calls"
for f in .enqueue.tasks_per_s .throughput.tasks_per_s .latency.p50_ms \
	.latency.p95_ms .latency.p99_ms; do
	[ "$(j "$f | type")" = number ] || fail "$f is not a number"
done
[ "$(j '.throughput.tasks_per_s > 0')" = true ] || fail "no throughput"
[ "$(j '.latency.p50_ms <= .latency.p95_ms and .latency.p95_ms <= .latency.p99_ms')" = true ] ||
	fail "percentiles out of order"

# The database agrees: every bench task succeeded, none is left over, and
# the workers left the node table.
expect_eq "$(sql "SELECT count(*) FROM $ALL_TASKS a WHERE status = 2")" 320 \
	"succeeded tasks"
expect_eq "$(sql "SELECT count(*) FROM $ALL_TASKS a WHERE status <> 2")" 0 \
	"unfinished tasks"
expect_eq "$(sql "SELECT count(*) FROM {p}node")" 0 "nodes left behind"

# A second run on the same prefix measures on a table holding finished
# rows, and says how many.
expect_rc 0 sk --json bench --tasks 50 --threads 2 --latency-tasks 0 \
	--prefix "$PREFIX" --timeout 2m
expect_eq "$(jq -r .throughput.finished_rows_before "$T/out")" 320 \
	"finished rows before the second run"
expect_eq "$(jq -r .latency "$T/out")" null "no latency phase asked for"

# Usage errors are usage errors.
expect_rc 64 sk bench --tasks 0
expect_rc 64 sk bench --threads x
