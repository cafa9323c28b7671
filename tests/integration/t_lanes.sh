#!/bin/sh
# Lanes: while a worker has a backlog it keeps several claims in flight,
# each on a connection of its own, and every task still runs exactly
# once. Two worker processes with --lanes 4 drain one queue at the same
# time through pipe: handlers that log every task they run: each task
# succeeded once, with one attempt and one record, the handlers' log and
# the records agree, and (where the database has more than one writer)
# a worker really had more than one claim in flight, which its last log
# line says; on SQLite, one (its single write lock is not fought over).
# A worker of 4 threads with --prefetch off and 4 lanes never holds more
# than one claimer may: its 4 running and at most 4 results to record.
# --lanes outside 1-64 is refused.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

case "$(family)" in
sqlite) n=3000 ;;
*) n=8000 ;;
esac
h=$(handler log.py <<'H'
#!/usr/bin/env python3
import json, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
node = os.environ.get("SKED_NODE_ID", "?")
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    os.write(fd, f"{m['id']} {m['attempt']}\n".encode())
    print(json.dumps({"id": m["id"], "ok": True}), flush=True)
H
)
: >"$T/ran.log"
seq 1 $n >"$T/payloads"
sk enqueue tick --lines "$T/payloads" >/dev/null

SKED_LOG=info start_worker a --node-id a --concurrency 8 --lanes 4 --poll 100ms \
	--lease 20s --until-empty --handler "tick=pipe:$h $T/ran.log"
pa=$wpid
SKED_LOG=info start_worker b --node-id b --concurrency 8 --lanes 4 --poll 100ms \
	--lease 20s --until-empty --handler "tick=pipe:$h $T/ran.log"
pb=$wpid
for p in $pa $pb; do
	wait_exit "$p" 300
	[ "$wrc" = 0 ] || { cat "$T"/a.log "$T"/b.log >&2; fail "a worker exited $wrc"; }
done

expect_eq "$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE status = 2")" $n "succeeded tasks"
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_TASKS a WHERE attempts <> 1")" 0 "tasks claimed more than once"
expect_eq "$(count "SELECT COUNT(*) FROM $ALL_RUNS runs")" $n "attempts recorded"
expect_eq "$(count "SELECT COUNT(*) FROM (SELECT task_id, attempt FROM $ALL_RUNS runs GROUP BY task_id, attempt HAVING COUNT(*) > 1) x")" 0 "(task, attempt) recorded twice"
expect_eq "$(wc -l <"$T/ran.log" | tr -d ' ')" $n "handler executions"
expect_eq "$(cut -d' ' -f1 "$T/ran.log" | sort -u | wc -l | tr -d ' ')" $n "distinct tasks in the handler log"

# how many claims each worker had in flight at once, from its last line
most() { sed -n 's/.*at most \([0-9]*\) claim(s) in flight at once.*/\1/p' "$T/$1.log"; }
ma=$(most a) mb=$(most b)
[ -n "$ma" ] && [ -n "$mb" ] || { cat "$T/a.log" "$T/b.log" >&2; fail "a worker did not say how many claims it had in flight"; }
note "claims in flight at most: a $ma, b $mb"
case "$(family)" in
sqlite)
	expect_eq "$ma $mb" "1 1" "claims in flight at once on SQLite"
	;;
*)
	[ "$ma" -ge 2 ] || [ "$mb" -ge 2 ] || fail "neither worker had two claims in flight (a $ma, b $mb)"
	[ "$ma" -le 4 ] && [ "$mb" -le 4 ] || fail "more claims in flight than --lanes 4 (a $ma, b $mb)"
	;;
esac

# the room claims in flight fill is reserved: with --prefetch off a
# worker holds no more than one claimer would, however many lanes claim
sh -c 'seq 1 3000' | sk enqueue tick --lines - >/dev/null
start_worker c --node-id c --concurrency 4 --prefetch off --lanes 4 --poll 100ms \
	--lease 20s --until-empty --handler "tick=pipe:$h $T/ran2.log"
pc=$wpid
most_held=0
while is_child "$pc"; do
	n=$(sql "SELECT COUNT(*) FROM {p}task WHERE status = 1 AND node_id = 'c'") || break
	[ -n "$n" ] && [ "$n" -gt "$most_held" ] && most_held=$n
	sleep 0.05
done
wait_exit "$pc" 120
[ "$wrc" = 0 ] || { cat "$T/c.log" >&2; fail "worker c exited $wrc"; }
note "worker c (4 threads, --prefetch off, --lanes 4) held at most $most_held"
# its 4 threads' tasks and, as with one claim at a time, at most one
# result per thread still to be recorded (docs/design.md, "Finishing")
[ "$most_held" -le 8 ] || fail "a worker of 4 threads with --prefetch off held $most_held tasks"
expect_eq "$(wc -l <"$T/ran2.log" | tr -d ' ')" 3000 "handler executions of worker c"

expect_rc 64 sk worker --lanes 0 --handler tick=/bin/true
expect_rc 64 sk worker --lanes 65 --handler tick=/bin/true
printf '[worker]\nlanes = many\n' >"$T/bad.conf"
expect_rc 78 sk --config "$T/bad.conf" worker --handler tick=/bin/true
