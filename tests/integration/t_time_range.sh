#!/bin/sh
# One bound on times and durations, the same on every database
# (SKED_TIME_MAX_MS, SKED_DURATION_MAX_MS in sked.h): a time from
# 1970-01-01 to 9999-12-31T23:59:59.999Z, a duration of at most 100
# years. Beyond them: one line and exit 65, nothing stored. SQLite once
# stored `--in 9223372036854775807ms` as a REAL shown as 1970-01-01, and
# PostgreSQL exited 70 on it. Within them, the edges are stored and read
# back exactly.
# backends: all
. "$(dirname "$0")/lib.sh"
init_db

for args in "--in 9223372036854775807ms" "--in 9223372036854775807s" \
	"--in 36526d" "--at 1969-12-31T23:59:59Z" \
	"--at 9999-12-31T23:59:59-01:00"; do
	# shellcheck disable=SC2086 # the words of $args are options
	expect_rc 65 sk enqueue k $args
	stderr_one_line "$T/err"
done
expect_rc 65 sk worker --handler k=/bin/true --lease 999999999d --until-empty
stderr_one_line "$T/err"
expect_rc 65 sk worker --handler k=/bin/true --retry-max 9223372036854775807ms --until-empty
stderr_one_line "$T/err"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task")" 0 "tasks stored from out-of-range times"

far=$(sk enqueue k --at 9999-12-31T23:59:59.999Z)
expect_eq "$(sk --json show "$far" | json_get "d['run_at']")" "9999-12-31T23:59:59.999Z" "the last time sked stores"
near=$(sk enqueue k --in 36525d 2>/dev/null)
year=$(sk --json show "$near" | json_get "d['run_at']" | cut -c1-4)
[ "$year" -ge 2100 ] || fail "--in 36525d stored a run time in $year"
echo "ok: $SKED_BACKEND: time range"
