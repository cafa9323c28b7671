#!/bin/sh
# Enqueue with --unique is idempotent under concurrency: ten processes
# enqueuing the same key at the same moment make exactly one task, and all
# of them print its id and exit 0.
# backends: engines drivers pgbouncer
. "$(dirname "$0")/lib.sh"
init_db

n=10
i=1
pids=""
while [ $i -le $n ]; do
	sk enqueue mail --unique welcome-42 --payload "from $i" >"$T/id.$i" 2>"$T/err.$i" &
	pids="$pids $!"
	i=$((i + 1))
done
for p in $pids; do
	wait_exit "$p" 30
	[ "$wrc" = 0 ] || { cat "$T"/err.* >&2; fail "an enqueue exited $wrc"; }
done

expect_eq "$(count "SELECT COUNT(*) FROM {p}task")" 1 "tasks"
id=$(sql "SELECT id FROM {p}task WHERE unique_key = 'welcome-42'")
expect_eq "$(cat "$T"/id.* | sort -u)" "$id" "ids printed"
expect_eq "$(cat "$T"/id.* | wc -l | tr -d ' ')" $n "lines printed"

# Later ones are duplicates too; a different key is a new task.
expect_eq "$(sk enqueue mail --unique welcome-42 2>"$T/err")" "$id" "id for a repeat enqueue"
grep -q . "$T/err" || fail "no note on stderr for an existing key"
other=$(sk enqueue mail --unique welcome-43)
[ "$other" != "$id" ] || fail "a different key returned the same task"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task")" 2 "tasks after a second key"
expect_eq "$(sk --json enqueue mail --unique welcome-42 2>/dev/null | json_get 'd["existed"]')" true "JSON existed flag"

# The default scope (schema 10): a key is held while its task is live;
# once the task has ended (moved to task_done) the key is free again at
# once, not only after retention.
h=$(handler h.sh <<'H'
#!/bin/sh
[ "$(cat)" = slow ] && sleep 1
exit 0
H
)
s=$(sk enqueue mail --queue u --unique done-1)
sk worker --queues u --handler "mail=$h" --until-empty --poll 100ms --lease 5s
expect_eq "$(where_of "$s")" task_done "table of the succeeded task"
again=$(sk enqueue mail --queue u --unique done-1 2>"$T/err")
[ "$again" != "$s" ] || fail "the key of a succeeded task still names it"
grep -q . "$T/err" && fail "a note for a key whose task has ended: $(cat "$T/err")"
expect_eq "$(where_of "$again")" task "table of the new task with a freed key"
c=$(sk enqueue mail --queue u --unique cancel-1 --in 1h)
sk cancel "$c" >/dev/null
expect_eq "$(where_of "$c")" task_done "table of the cancelled task"
again_c=$(sk enqueue mail --queue u --unique cancel-1 --in 1h 2>/dev/null)
[ "$again_c" != "$c" ] || fail "the key of a cancelled task still names it"
# a running task holds it (live: pending, retrying, running, blocked)
sk cancel "$again" >/dev/null

# Enqueuers racing with the end of the task that holds their key: a
# worker finishes it (moving it to task_done) while rounds of enqueuers
# ask for the same key; never two live tasks with the key, and every
# enqueuer gets the id of the task that held it when it asked.
r=$(sk enqueue mail --queue race --unique race-1 --payload slow)
start_worker rw --queues race --handler "mail=$h" --poll 50ms --lease 5s
sleep 0.5
round=0
while [ $round -lt 6 ]; do
	i=0
	pids=""
	while [ $i -lt 8 ]; do
		sk enqueue mail --queue race --unique race-1 >"$T/rid.$round.$i" 2>"$T/rerr.$round.$i" &
		pids="$pids $!"
		i=$((i + 1))
	done
	for p in $pids; do
		wait_exit "$p" 30
		[ "$wrc" = 0 ] || { cat "$T"/rerr.* >&2; fail "a racing enqueue exited $wrc"; }
	done
	round=$((round + 1))
	sleep 0.1
done
is_status() { [ "$(status_of "$1")" = "$2" ]; }
wait_for 20 is_status "$r" 2 || fail "the racing key's task did not succeed"
kill -TERM "$wpid"
wait_exit "$wpid" 20
# never two tasks with the key live at once: the index allows one, and
# every enqueuer above exited 0 with the holder's id or a new one. (The
# rows' timestamps cannot show it: PostgreSQL's now() is the start of a
# statement, which may have begun before the holder's end that it waited
# for.)
[ "$(count "SELECT COUNT(*) FROM {p}task WHERE unique_key = 'race-1'")" -le 1 ] || fail "two live tasks hold race-1"
expect_eq "$(where_of "$r")" task_done "table of the racing key's task"
