# tests/integration/lib.sh — sourced by every tests/integration/t_*.sh.
#
# A test runs real `sked` processes against a real database. CTest runs
# each script once per backend (SKED_BACKEND); this file turns the
# backend into a database URL and strategy, gives the test a folder of its
# own and a table prefix of its own (so tests share a server without
# seeing each other's tables), and writes a config file that every `sked`
# call reads through SKED_CONFIG.
#
#   sk ARGS...        run sked
#   skip REASON       exit 77 (CTest: skipped) — loudly; in CI a missing
#                     server is a failure, not a skip
#   not_here REASON   exit 77 for a test meant for another backend (also
#                     in CI)
#   fail REASON       exit 1
#   expect_eq A B MSG, expect_rc RC CMD..., wait_for SECONDS CMD...
#   sql QUERY         run SQL on the test database (sqlite3/psql/mariadb),
#                     table names written as {p}task etc.
#   free_ports N      N distinct free loopback ports (tests/tools/free_ports.py:
#                     below the ephemeral range, none twice); free_port: one
set -eu

# Debian's tools first: python3 and the clients come from scripts/deps.sh,
# and a version manager's shim that may come first on the caller's PATH
# (pyenv's took 3.3 s to start Python under a loaded suite, past the 5 s a
# pipe handler has to say hello and the 10 s of a test's HTTP server)
PATH=/usr/bin:/bin:$PATH
export PATH

: "${SKED:?SKED must name the sked binary}"
: "${SKED_BACKEND:?SKED_BACKEND must name the backend}"

skip() {
	if [ "${CI:-}" = true ] && [ "${SKED_ALLOW_SKIP:-}" != 1 ]; then
		echo "FAIL (would skip, but CI must run it): $*" >&2
		exit 1
	fi
	echo "SKIP: $SKED_BACKEND: $*" >&2
	exit 77
}
# not_here REASON: this test is for another backend; a skip even in CI.
not_here() {
	echo "SKIP: $SKED_BACKEND: $*" >&2
	exit 77
}
fail() {
	echo "FAIL: $SKED_BACKEND: $*" >&2
	exit 1
}
note() { echo "# $*" >&2; }
free_ports() { python3 "$(dirname "$0")/../tools/free_ports.py" "$1"; }
free_port() { free_ports 1; }

tmproot=${SKED_BUILD:-/tmp}/testtmp
mkdir -p "$tmproot"
T=$(mktemp -d "$tmproot/$(basename "$0" .sh).XXXXXX")
PREFIX="t$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')_"
STRATEGY=auto
ODBC=""
case "$SKED_BACKEND" in
sqlite) URL="sqlite:$T/sked.db" ;;
sqlite-optimistic) URL="sqlite:$T/sked.db" STRATEGY=optimistic ;;
pg | pg-optimistic)
	[ -n "${SKED_TEST_PG_URL:-}" ] || skip "no PostgreSQL server given (SKED_TEST_PG_URL)"
	URL=$SKED_TEST_PG_URL
	[ "$SKED_BACKEND" = pg ] || STRATEGY=optimistic
	;;
pgbouncer)
	# PgBouncer in transaction pooling in front of the pg server; the sql
	# helper talks to that server directly (SKED_TEST_PG_URL)
	[ -n "${SKED_TEST_PGB_URL:-}" ] || skip "no PgBouncer given (SKED_TEST_PGB_URL)"
	[ -n "${SKED_TEST_PG_URL:-}" ] || skip "no PostgreSQL server given (SKED_TEST_PG_URL)"
	URL=$SKED_TEST_PGB_URL
	;;
mariadb | mariadb-optimistic)
	[ -n "${SKED_TEST_MY_URL:-}" ] || skip "no MariaDB server given (SKED_TEST_MY_URL)"
	URL=$SKED_TEST_MY_URL
	[ "$SKED_BACKEND" = mariadb ] || STRATEGY=optimistic
	;;
odbc-sqlite)
	[ -n "${SKED_TEST_ODBC:-}" ] || skip "ODBC drivers not set up (SKED_TEST_ODBC)"
	URL="odbc:Driver=${SKED_TEST_ODBC_SQLITE_DRIVER:-SQLite3};Database=$T/sked.db"
	ODBC=sqlite
	;;
odbc-pg)
	[ -n "${SKED_TEST_ODBC:-}" ] || skip "ODBC drivers not set up (SKED_TEST_ODBC)"
	[ -n "${SKED_TEST_ODBC_PG:-}" ] || skip "no PostgreSQL ODBC connection string (SKED_TEST_ODBC_PG)"
	URL="odbc:$SKED_TEST_ODBC_PG"
	ODBC=pg
	;;
odbc-mariadb)
	[ -n "${SKED_TEST_ODBC:-}" ] || skip "ODBC drivers not set up (SKED_TEST_ODBC)"
	[ -n "${SKED_TEST_ODBC_MY:-}" ] || skip "no MariaDB ODBC connection string (SKED_TEST_ODBC_MY)"
	URL="odbc:$SKED_TEST_ODBC_MY"
	ODBC=mariadb
	;;
*) fail "unknown backend '$SKED_BACKEND'" ;;
esac

cat >"$T/sked.conf" <<CONF
[sked]
database = $URL
strategy = $STRATEGY
prefix = $PREFIX
CONF
export SKED_CONFIG="$T/sked.conf"
unset SKED_DATABASE_URL SKED_STRATEGY
export SKED_LOG=${SKED_LOG:-warn}

sk() { "$SKED" "$@"; }

# The database family behind the backend: sqlite, pg or mariadb.
family() {
	case "$SKED_BACKEND" in
	sqlite* | odbc-sqlite) echo sqlite ;;
	pg* | odbc-pg) echo pg ;;
	*) echo mariadb ;;
	esac
}

# Run SQL on the test database; "{p}" stands for the table prefix. Prints
# rows tab-separated, no header.
# On SQLite the probe waits up to 10 s for a worker's write lock instead of
# failing with "database is locked" (a lost probe, not a failure of sked).
sql() {
	q=$(printf '%s' "$1" | sed "s/{p}/$PREFIX/g")
	case "$(family)" in
	sqlite) sqlite3 -batch -noheader -cmd '.timeout 10000' -separator '	' "$T/sked.db" "$q" ;;
	pg) psql -X -q -At -F '	' "$SKED_TEST_PG_URL" -c "$q" ;;
	mariadb)
		mariadb --no-defaults -N -B -h 127.0.0.1 \
			-P "$(echo "$SKED_TEST_MY_URL" | sed 's|.*:\([0-9]*\)/.*|\1|')" \
			-u sked -psked-test-pw sked_test -e "$q"
		;;
	esac
}

expect_eq() {
	[ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"
}

# expect_rc RC CMD...: run CMD, check its exit status, keep stderr in $T/err
expect_rc() {
	want=$1
	shift
	set +e
	"$@" >"$T/out" 2>"$T/err"
	got=$?
	set -e
	[ "$got" = "$want" ] || {
		cat "$T/err" >&2
		fail "'$*' exited $got, expected $want"
	}
}

# wait_for SECONDS CMD...: poll CMD until it succeeds
wait_for() {
	limit=$1
	shift
	end=$(($(date +%s) + limit))
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.2
	done
}

cleanup() {
	rc=$?
	# stop anything the test left running, children of this shell
	for p in $(jobs -p); do kill_child 9 "$p"; done
	pkill -9 -f "$T/" 2>/dev/null || true
	case "$(family)" in
	pg | mariadb)
		for t in run task task_done queue_limit node schedule lock meta unique_for queue_weight hook_cursor; do
			sql "DROP TABLE IF EXISTS {p}$t" >/dev/null 2>&1 || true
		done
		;;
	esac
	[ $rc = 0 ] && rm -rf "$T"
	exit $rc
}
trap cleanup EXIT

# Initialise the schema for this test's prefix. A backend whose driver
# is not built skips, unless the driver's library is installed and the
# driver was not turned off: then the build is stale, and that fails.
init_db() {
	set +e
	sk init >"$T/init.out" 2>"$T/init.err"
	rc=$?
	set -e
	if [ $rc = 69 ] && grep -q "no driver" "$T/init.err"; then
		case "$SKED_BACKEND" in
		pg*) mod=libpq ;;
		mariadb*) mod=libmariadb ;;
		odbc*) mod=odbc ;;
		*) mod="" ;;
		esac
		case " ${SKED_DRIVERS_OFF:-} " in *" $mod "*) mod="" ;; esac
		if [ -n "$mod" ] && pkg-config --exists "$mod" 2>/dev/null; then
			fail "$mod is installed but this build has no driver for" \
				"it (configure again: make build): $(cat "$T/init.err")"
		fi
		skip "$(cat "$T/init.err")"
	fi
	[ $rc = 0 ] || { cat "$T/init.err" >&2; fail "sked init exited $rc"; }
}

# ---- helpers for the foundation suite ----

# handler NAME: write a handler program from stdin to $T/NAME (a sh
# script), make it executable and print its path.
handler() {
	cat >"$T/$1"
	chmod +x "$T/$1"
	echo "$T/$1"
}

# count QUERY: sql that must print one number (a COUNT); fails when it
# prints anything else, so an error never passes as "0".
# undo_steps_10_11: take this test's tables back to before schema steps
# 10 (unique scopes, a task's own timeout) and 11 (waiting for an end,
# what a node serves), for the upgrade tests, which build an old schema
# from the new one by undoing each step's additions
undo_steps_10_11() {
	case "$(family)" in
	sqlite)
		sql "DROP INDEX IF EXISTS {p}task_unique_held" >/dev/null
		sql "CREATE UNIQUE INDEX {p}task_unique ON {p}task (unique_key) WHERE unique_key IS NOT NULL" >/dev/null
		for c in unique_scope timeout_ms; do
			sql "ALTER TABLE {p}task DROP COLUMN $c" >/dev/null
		done
		;;
	pg)
		sql "DROP TRIGGER IF EXISTS {p}ended ON {p}task" >/dev/null
		sql "DROP FUNCTION IF EXISTS {p}ended_notify()" >/dev/null
		sql "ALTER TABLE {p}task DROP COLUMN waited, DROP COLUMN unique_scope, DROP COLUMN timeout_ms" >/dev/null
		sql "CREATE UNIQUE INDEX {p}task_unique ON {p}task (unique_key) WHERE unique_key IS NOT NULL" >/dev/null
		;;
	mariadb)
		sql "ALTER TABLE {p}task DROP INDEX {p}task_unique_held, DROP INDEX {p}task_unique_key, DROP COLUMN unique_held, DROP COLUMN unique_scope, DROP COLUMN timeout_ms, ADD UNIQUE KEY {p}task_unique (unique_key)" >/dev/null
		;;
	esac
	sql "DROP TABLE {p}unique_for" >/dev/null
	sql "ALTER TABLE {p}node DROP COLUMN serves_kinds" >/dev/null
	sql "ALTER TABLE {p}node DROP COLUMN serves_queues" >/dev/null
}

# undo_step_12_progress: the same for schema step 12 (a running task's
# progress report, progress_at)
undo_step_12_progress() {
	for c in progress progress_at; do
		sql "ALTER TABLE {p}task DROP COLUMN $c" >/dev/null
	done
}

# undo_step_13_fair: the same for schema step 13 (fair queues: the
# limit row's fair flag, the waiting tasks' index by key)
undo_step_13_fair() {
	case "$(family)" in
	mariadb) sql "ALTER TABLE {p}task DROP INDEX {p}task_fair" >/dev/null ;;
	*) sql "DROP INDEX IF EXISTS {p}task_fair" >/dev/null ;;
	esac
	sql "ALTER TABLE {p}queue_limit DROP COLUMN fair" >/dev/null
}

# undo_step_14_events: the same for schema step 14 (the events feed:
# the index on the runs' end time)
undo_step_14_events() {
	case "$(family)" in
	mariadb) sql "ALTER TABLE {p}run DROP INDEX {p}run_ended" >/dev/null ;;
	*) sql "DROP INDEX IF EXISTS {p}run_ended" >/dev/null ;;
	esac
}

# undo_step_15_cron_weight: the same for schema step 15 (a schedule's
# unique key, the fair queues' key weights)
undo_step_15_cron_weight() {
	for c in unique_key unique_scope unique_for_ms unique_replace; do
		sql "ALTER TABLE {p}schedule DROP COLUMN $c" >/dev/null
	done
	sql "DROP TABLE {p}queue_weight" >/dev/null
}

# undo_step_16_hooks: the same for schema step 16 (webhooks: the
# leader's cursor on the feed)
undo_step_16_hooks() {
	sql "DROP TABLE {p}hook_cursor" >/dev/null
}

count() {
	c=$(sql "$1") || fail "query failed: $1"
	case "$c" in
	'' | *[!0-9]*) fail "query '$1' printed '$c', not a count" ;;
	esac
	echo "$c"
}

# json_get EXPR: read one JSON document on stdin, print the Python
# expression EXPR evaluated with the document bound to d (None prints as
# "null", booleans as "true"/"false"). A document that does not parse
# fails the test.
json_get() {
	python3 -c '
import json, sys
d = json.load(sys.stdin)
v = eval(sys.argv[1], {"d": d})
print("null" if v is None else ("true" if v is True else ("false" if v is False else v)))
' "$1" || fail "not JSON, or no $1"
}

# stderr_one_line FILE: the file holds exactly one line starting "sked: ".
stderr_one_line() {
	n=$(wc -l <"$1")
	[ "$n" = 1 ] || { cat "$1" >&2; fail "expected one line on stderr, got $n"; }
	grep -q '^sked: ' "$1" || { cat "$1" >&2; fail "stderr line does not start with 'sked: '"; }
}

# start_worker NAME ARGS...: run `sked worker ARGS...` in the background,
# output in $T/NAME.log; its pid goes to $T/NAME.pid and into $wpid.
start_worker() {
	name=$1
	shift
	"$SKED" worker "$@" >"$T/$name.log" 2>&1 &
	wpid=$!
	echo "$wpid" >"$T/$name.pid"
}

# is_child PID: PID is still a child of this shell. A pid kept in a
# variable outlives its process: once the shell has reaped it, the number
# may soon be another process's (on a busy machine pids wrap within
# seconds), and a kill of it would hit another test.
is_child() {
	[ "$(ps -o ppid= -p "$1" 2>/dev/null | tr -d ' ')" = "${BASHPID:-$$}" ]
}
# kill_child SIGNAL PID: signal PID only while it is a child of this shell
kill_child() { if is_child "$2"; then kill "-$1" "$2" 2>/dev/null || true; fi; }

# stacks PID: print every thread's stack of a live process to stderr
# (gdb, from scripts/deps.sh test), for a process that should have ended
# and has not: the test then says where it is stuck, not only that it is.
stacks() {
	echo "# stacks of process $1 ($(tr '\0' ' ' </proc/"$1"/cmdline 2>/dev/null)):" >&2
	if command -v gdb >/dev/null; then
		timeout 60 gdb -p "$1" -batch -nx -q -ex 'set pagination off' \
			-ex 'thread apply all bt' 2>&1 | grep -v '^\[New LWP\|^warning:' >&2 || true
	else
		for t in /proc/"$1"/task/*; do
			echo "# thread ${t##*/}: $(cat "$t/comm" 2>/dev/null) in $(cat "$t/wchan" 2>/dev/null)" >&2
		done
	fi
}

# start_dashboard NAME ARGS...: `sked dashboard ARGS...` on a free port,
# log in $T/NAME.log; waits until it answers; sets $base and $dpid.
start_dashboard() {
	dname=$1
	shift
	port=$(free_port)
	"$SKED" dashboard --listen "127.0.0.1:$port" "$@" >"$T/$dname.log" 2>&1 &
	dpid=$!
	base="http://127.0.0.1:$port"
	dash_up() { curl -s -o /dev/null "$base/static/app.css"; }
	wait_for 10 dash_up || { cat "$T/$dname.log" >&2; fail "the dashboard did not start"; }
}

# wait_exit PID SECONDS: wait for a background child to end within SECONDS;
# sets $wrc to its exit status. Fails (and kills it) on timeout, after
# printing its stacks and the tail of any worker log of this test.
wait_exit() {
	we_end=$(($(date +%s) + $2))
	while is_child "$1"; do
		# a zombie is still a child: ask ps whether it is one
		case "$(ps -o stat= -p "$1" 2>/dev/null)" in Z*) break ;; esac
		if [ "$(date +%s)" -ge "$we_end" ]; then
			stacks "$1"
			for f in "$T"/*.pid; do
				[ "$(cat "$f" 2>/dev/null)" = "$1" ] || continue
				echo "# last lines of ${f%.pid}.log:" >&2
				tail -n 20 "${f%.pid}.log" >&2 2>/dev/null || true
			done
			kill_child 9 "$1"
			fail "process $1 did not exit within $2 s"
		fi
		sleep 0.1
	done
	set +e
	wait "$1"
	wrc=$?
	set -e
}

# status_of ID: the task's status number from the database: a live task
# is in {p}task, an ended one (succeeded, dead, cancelled) in
# {p}task_done (schema 4); where_of ID says which: task, task_done, both
# or none.
status_of() { sql "SELECT status FROM {p}task WHERE id = $1 UNION ALL SELECT status FROM {p}task_done WHERE id = $1"; }
# $ALL_TASKS: every task, live or ended, as one table for sql (give it an
# alias: FROM $ALL_TASKS a)
TASK_COLS_ALL="id, queue, kind, payload, status, priority, run_at, attempts, max_attempts, node_id, lease_until, started_at, version, unique_key, schedule_name, fire_time, last_error, created_at, updated_at, finished_at"
ALL_TASKS="(SELECT $TASK_COLS_ALL FROM {p}task UNION ALL SELECT $TASK_COLS_ALL FROM {p}task_done)"
# $ALL_RUNS: every recorded attempt, as users see them (show, --json):
# the run rows, and since schema 5 the attempt that ended a task, which
# its {p}task_done row records (id NULL there; give it an alias)
RUN_COLS_ALL="task_id, attempt, node_id, started_at, finished_at, outcome, exit_code, error, output"
ALL_RUNS="(SELECT id, $RUN_COLS_ALL FROM {p}run UNION ALL SELECT NULL, id, attempts, node_id, started_at, finished_at, outcome, exit_code, error, output FROM {p}task_done WHERE outcome IS NOT NULL)"
where_of() {
	wl=$(count "SELECT COUNT(*) FROM {p}task WHERE id = $1")
	wd=$(count "SELECT COUNT(*) FROM {p}task_done WHERE id = $1")
	case "$wl$wd" in
	10) echo task ;;
	01) echo task_done ;;
	11) echo both ;;
	*) echo none ;;
	esac
}

# now_ms: the local clock in milliseconds (GNU date), for deadlines.
now_ms() { date +%s%3N; }
