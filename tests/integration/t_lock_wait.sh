#!/bin/sh
# The lock-wait watchdog: a worker that waits on one of sked's own rows
# longer than --lock-wait-warn logs one line naming the row and the
# holder, and counts it in /metrics.
#
# PostgreSQL and MariaDB: another session (psql, the mariadb client) holds
# the schedule row "nightly" and the cluster lock row "sked-prune" with
# SELECT … FOR UPDATE in an open transaction. The worker's schedule tick
# (the claim loop) and its pruner's lock acquisition wait on them: each
# wait is told once, with the holder's pid / connection id (and, on
# PostgreSQL, its application_name), and counted in
# sked_worker_lock_waits_total{row="schedule"} and {row="lock"}; once the
# holder commits, the schedule fires. Then the queue gets a limit and the
# holder locks its row in {p}queue_limit: the worker's limited claim waits
# there, told as queue limit "lw" and counted in {row="queue_limit"}.
# SQLite has no row locks: the holder
# keeps the whole database locked (BEGIN EXCLUSIVE) and the pruner's wait
# names the database file, the one thing SQLite can say. Through PgBouncer
# in transaction pooling a session's pid means nothing from one
# transaction to the next: the line names the row and says the holder
# cannot be asked for, and the wait is counted all the same.
# backends: engines pgbouncer
. "$(dirname "$0")/lib.sh"
case "$SKED_BACKEND" in
sqlite | pg | mariadb | pgbouncer) ;;
*) not_here "the watchdog's SQL is the same through every driver: run on sqlite, pg, mariadb and pgbouncer" ;;
esac
command -v curl >/dev/null || skip "curl is not installed"
init_db

h=$(handler ok.sh <<H
#!/bin/sh
echo ran >>"$T/ran"
H
)
sk cron add nightly '* * * * * *' job --queue lw >/dev/null
# the lock row exists once it has been taken
sk lock run sked-prune --ttl 1s -- true
port=$(free_port)
hold=10

# The holder's application_name and the worker's node id are this test's
# own: the pg and pgbouncer runs of it share one server at the same time,
# and a name both used would find the other run's sessions.
app="sked-holder-${PREFIX%_}"
node="lw-${PREFIX%_}"

# hold_rows: from another session, lock both rows for $hold seconds;
# $T/holder gets the holder's id on the server
hold_rows() {
	case "$(family)" in
	pg)
		PGAPPNAME=$app psql -X -q -At "$SKED_TEST_PG_URL" \
			-c "BEGIN" \
			-c "SELECT name FROM ${PREFIX}schedule WHERE name = 'nightly' FOR UPDATE" \
			-c "SELECT name FROM ${PREFIX}lock WHERE name = 'sked-prune' FOR UPDATE" \
			-c "SELECT pg_sleep($hold)" -c "COMMIT" >/dev/null 2>&1 &
		;;
	mariadb)
		q=$(printf "SELECT CONNECTION_ID(); BEGIN; SELECT name FROM %sschedule WHERE name = 'nightly' FOR UPDATE; SELECT name FROM %slock WHERE name = 'sked-prune' FOR UPDATE; SELECT SLEEP(%d); COMMIT;" \
			"$PREFIX" "$PREFIX" $hold)
		mariadb --no-defaults -N -B -n -h 127.0.0.1 \
			-P "$(echo "$SKED_TEST_MY_URL" | sed 's|.*:\([0-9]*\)/.*|\1|')" \
			-u sked -psked-test-pw sked_test -e "$q" >"$T/holder" 2>&1 &
		;;
	sqlite)
		# the CLI's busy timeout: without it BEGIN EXCLUSIVE fails at
		# once while the worker holds its own lock for a moment
		{
			echo '.timeout 10000'
			echo 'BEGIN EXCLUSIVE;'
			sleep $hold
			echo 'COMMIT;'
		} | sqlite3 "$T/sked.db" &
		;;
	esac
	holder_pid=$!
}
held() {
	case "$(family)" in
	pg)
		# the holder's pid, once it sleeps with both rows locked
		sql "SELECT pid FROM pg_stat_activity WHERE application_name = '$app' AND wait_event = 'PgSleep'" >"$T/holder" &&
			[ -s "$T/holder" ]
		;;
	*) grep -q nightly "$T/holder" ;;
	esac
}

if [ "$(family)" = sqlite ]; then
	# the worker starts, then the pruner's first turn (2 s after the
	# start) meets the database locked
	SKED_LOG=info start_worker w --queues lw --handler "job=$h" --poll 100ms \
		--lock-wait-warn 2s --http "127.0.0.1:$port"
	registered() { [ "$(count "SELECT COUNT(*) FROM {p}node")" -ge 1 ]; }
	wait_for 10 registered || { cat "$T/w.log" >&2; fail "the worker did not start"; }
	hold_rows
else
	hold_rows
	wait_for 10 held || { cat "$T/holder" >&2; fail "the holder did not lock the rows"; }
	SKED_LOG=info start_worker w --node-id "$node" --queues lw --handler "job=$h" \
		--poll 100ms --lock-wait-warn 2s --http "127.0.0.1:$port"
fi
[ "$(family)" = sqlite ] || holder=$(head -n 1 "$T/holder")

told() { grep -q "$1" "$T/w.log"; }
line() { grep "lock wait: $1" "$T/w.log" | head -n 1; }
case "$(family)" in
pg | mariadb)
	wait_for 8 told 'lock wait: the claim loop .* on schedule "nightly"' || {
		cat "$T/w.log" >&2
		fail "no lock-wait line for the schedule row within 8 s of a 2 s threshold"
	}
	wait_for 8 told 'lock wait: the pruner .* on lock "sked-prune"' || {
		cat "$T/w.log" >&2
		fail "no lock-wait line for the lock row"
	}
	s=$(line 'the claim loop')
	l=$(line 'the pruner')
	note "$s"
	note "$l"
	if [ "$SKED_BACKEND" = pgbouncer ]; then
		for x in "$s" "$l"; do
			case "$x" in *"the holder cannot be asked for"*"transaction pooler"*) ;; *) fail "behind PgBouncer the line should say the holder cannot be asked for: $x" ;; esac
		done
	else
		if [ "$(family)" = pg ]; then
			word=pid
			case "$s" in *"application '$app'"*) ;; *) fail "the schedule line does not name the holder's application_name: $s" ;; esac
			# and the worker's own sessions carry its node id
			n=$(count "SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = '$node'")
			[ "$n" -ge 3 ] || fail "$n sessions named after the node (application_name '$node'), expected its 3 or more"
		else
			word=connection
		fi
		case "$s" in *"held by $word $holder "*) ;; *) fail "the schedule line does not name the holder ($word $holder): $s" ;; esac
		case "$l" in *"held by $word $holder "*) ;; *) fail "the lock line does not name the holder ($word $holder): $l" ;; esac
	fi
	;;
sqlite)
	wait_for 8 told 'lock wait: the pruner .* on lock "sked-prune"' || {
		cat "$T/w.log" >&2
		fail "no lock-wait line for the pruner's wait on the locked database"
	}
	l=$(line 'the pruner')
	note "$l"
	case "$l" in *"$T/sked.db"*"SQLite cannot name"*) ;; *) fail "the line does not name the database file: $l" ;; esac
	;;
esac
# one line per wait, however long it lasts
sleep 3
for who in 'the claim loop' 'the pruner'; do
	n=$(grep -c "lock wait: $who" "$T/w.log" || true)
	[ "$n" -le 1 ] || fail "$who's one wait was told $n times"
done

value() {
	awk -v k="$1" '$1 == k { print $2; found = 1 } END { if (!found) exit 1 }' "$T/metrics" ||
		fail "no sample $1 in /metrics"
}
curl -s -m 5 "http://127.0.0.1:$port/metrics" >"$T/metrics" || fail "GET /metrics failed"
lk=$(value 'sked_worker_lock_waits_total{row="lock"}')
[ "$lk" -ge 1 ] || fail "sked_worker_lock_waits_total{row=\"lock\"} is $lk after a told wait"
if [ "$(family)" != sqlite ]; then
	sc=$(value 'sked_worker_lock_waits_total{row="schedule"}')
	[ "$sc" -ge 1 ] || fail "sked_worker_lock_waits_total{row=\"schedule\"} is $sc after a told wait"
fi
expect_eq "$(value 'sked_worker_lock_waits_total{row="queue_limit"}')" 0 "queue limit waits"

# the holder lets go: the schedule fires again
wait "$holder_pid" || true
: >"$T/ran"
fired() { [ -s "$T/ran" ]; }
wait_for 15 fired || { cat "$T/w.log" >&2; fail "the schedule did not fire once the row was free"; }

# a queue limit's row: the claim of a limited queue locks it first
if [ "$(family)" != sqlite ]; then
	sk queue set lw --concurrency 2 >/dev/null
	sleep 3 # a worker sees a queue's first limit within 2 s
	hold=8
	case "$(family)" in
	pg)
		PGAPPNAME=$app psql -X -q -At "$SKED_TEST_PG_URL" \
			-c "BEGIN" \
			-c "SELECT queue FROM ${PREFIX}queue_limit WHERE queue = 'lw' FOR UPDATE" \
			-c "SELECT pg_sleep($hold)" -c "COMMIT" >/dev/null 2>&1 &
		;;
	mariadb)
		q=$(printf "SELECT CONNECTION_ID(); BEGIN; SELECT queue FROM %squeue_limit WHERE queue = 'lw' FOR UPDATE; SELECT SLEEP(%d); COMMIT;" "$PREFIX" $hold)
		mariadb --no-defaults -N -B -n -h 127.0.0.1 \
			-P "$(echo "$SKED_TEST_MY_URL" | sed 's|.*:\([0-9]*\)/.*|\1|')" \
			-u sked -psked-test-pw sked_test -e "$q" >"$T/holder" 2>&1 &
		;;
	esac
	holder_pid=$!
	held2() { case "$(family)" in pg) held ;; *) grep -qx lw "$T/holder" ;; esac; }
	wait_for 10 held2 || fail "the holder did not lock the queue limit row"
	holder=$(head -n 1 "$T/holder")
	wait_for 8 told 'lock wait: the claim loop .* on queue limit "lw"' || {
		cat "$T/w.log" >&2
		fail "no lock-wait line for the queue limit row"
	}
	q=$(line 'the claim loop .* on queue limit')
	note "$q"
	if [ "$SKED_BACKEND" = pgbouncer ]; then
		case "$q" in *"the holder cannot be asked for"*) ;; *) fail "behind PgBouncer the line should say the holder cannot be asked for: $q" ;; esac
	else
		case "$q" in *"held by $word $holder "*) ;; *) fail "the queue limit line does not name the holder ($word $holder): $q" ;; esac
	fi
	curl -s -m 5 "http://127.0.0.1:$port/metrics" >"$T/metrics" || fail "GET /metrics failed"
	ql=$(value 'sked_worker_lock_waits_total{row="queue_limit"}')
	[ "$ql" -ge 1 ] || fail "sked_worker_lock_waits_total{row=\"queue_limit\"} is $ql after a told wait"
	wait "$holder_pid" || true
fi
kill -TERM "$wpid"
wait_exit "$wpid" 40
