#!/bin/sh
# No deadlocks and no long tail when parents that share children end
# together (docs/workflows.md, "Ending a parent"): the layered graph of
# `sked bench --pattern layered` (each task after three tasks of the
# layer before) is drained RUNS times by several worker processes; the
# test fails on any dependent that waited more than 2 s after its last
# parent's handler returned, and on any deadlock the server counted
# meanwhile (PostgreSQL's pg_stat_database.deadlocks, MariaDB's
# Innodb_deadlocks). sked retries a deadlocked finish by itself, so only
# the server's count shows one. PostgreSQL and MariaDB only: SQLite has
# one writer and cannot deadlock.
#
# Layer: integration test (lib.sh gives the database, prefix and config).
# backends: pg mariadb
. "$(dirname "$0")/lib.sh"

case "$SKED_BACKEND" in
pg | mariadb) ;;
*) not_here "the layered deadlock test runs on pg and mariadb" ;;
esac
command -v jq >/dev/null || skip "jq is not installed"
init_db

RUNS=${RUNS:-4}
deadlocks() {
	case "$(family)" in
	pg)
		# counters reach the view within a second of a transaction's end
		sleep 1.2
		sql "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"
		;;
	mariadb) sql "SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'" | cut -f2 ;;
	esac
}

before=$(deadlocks)
worst=0
i=0
while [ "$i" -lt "$RUNS" ]; do
	i=$((i + 1))
	expect_rc 0 sk --json bench --pattern layered --tasks 1500 --workers 3 \
		--threads 8 --batch 500 --poll 20ms --prefix "$PREFIX" --timeout 2m
	cp "$T/out" "$T/run$i.json"
	expect_eq "$(jq -r .deps.violations "$T/out")" 0 "run $i: violations"
	expect_eq "$(jq -r .deps.missing "$T/out")" 0 "run $i: missing"
	max=$(jq -r '.deps.dep_wait_max_ms | floor' "$T/out")
	note "run $i: $(jq -r .deps.jobs_per_s "$T/out") jobs/s, dep_wait max $max ms"
	[ "$max" -gt "$worst" ] && worst=$max
done
after=$(deadlocks)
n=$((after - before))
note "deadlocks the server counted: $n"
case "$(family)" in
pg) expect_eq "$n" 0 "deadlocks the server counted during $RUNS layered runs" ;;
mariadb)
	# releases no longer deadlock each other (24 in four runs before
	# the one lock order, 0 after); a claim's SKIP LOCKED scan of the
	# due_prio index can still meet a release that makes children
	# pending, rarely (docs/workflows.md): fewer than one per run
	[ "$n" -lt "$RUNS" ] ||
		fail "$n deadlocks the server counted during $RUNS layered runs"
	;;
esac
# The issue's 1 s is for a quiet machine (docs/performance.md measures
# it there). In the suite, four tests at a time (load average about 36
# on two cores), the slowest release took 700 to 1148 ms with no
# deadlock at all, while the stall this test exists for is deadlock
# cycles of 1 s (PostgreSQL's deadlock_timeout) chained into seconds:
# 2 s tells the one from the other, and the deadlock count above is
# exact.
[ "$worst" -le 2000 ] || fail "a dependent waited $worst ms after its last parent ended (more than 2 s)"
