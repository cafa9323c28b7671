#!/bin/sh
# Enqueue with --unique is idempotent under concurrency: ten processes
# enqueuing the same key at the same moment make exactly one task, and all
# of them print its id and exit 0.
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
