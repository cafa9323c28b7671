#!/bin/sh
# bench/pipe_mux.sh — pipe: handlers with a window against one process per
# slot: KINDS kinds at CONCURRENCY slots in one worker, drained once by a
# Python handler that announces window WINDOW (asyncio, one process a
# kind) and once by one that takes a task at a time (a process a slot).
#
#   SKED=build/sked bench/pipe_mux.sh [DB_URL]     (default: a SQLite file)
#
# Env: KINDS (4), CONCURRENCY (8), WINDOW (8), TASKS a kind (2000),
# SLEEP_MS each task waits (0: no-op). Prints, for each, tasks/s, the most
# handler processes seen at once and the most RSS they held together
# (sampled every 0.2 s from /proc).
set -eu
SKED=${SKED:-build/sked}
dir=$(mktemp -d /tmp/sked-mbench.XXXXXX)
trap 'rm -rf "$dir"' EXIT
url=${1:-sqlite:$dir/b.db}
kinds=${KINDS:-4}
conc=${CONCURRENCY:-8}
window=${WINDOW:-8}
tasks=${TASKS:-2000}
sleep_ms=${SLEEP_MS:-0}
cat >"$dir/one.py" <<'PY'
#!/usr/bin/env python3
# one task at a time (no window)
import json, sys, time
delay = int(sys.argv[1]) / 1000
for line in sys.stdin:
    m = json.loads(line)
    if "id" in m:
        if delay:
            time.sleep(delay)
        sys.stdout.write('{"id":%d,"ok":true}\n' % m["id"])
        sys.stdout.flush()
PY
cat >"$dir/mux.py" <<'PY'
#!/usr/bin/env python3
# window N, asyncio
import asyncio, json, sys
delay, window = int(sys.argv[1]) / 1000, int(sys.argv[2])
async def run(i):
    if delay:
        await asyncio.sleep(delay)
    sys.stdout.write('{"id":%d,"ok":true}\n' % i)
    sys.stdout.flush()
async def main():
    loop = asyncio.get_running_loop()
    r = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(r), sys.stdin)
    sys.stdout.write('{"hello":"mux.py","version":1,"window":%d}\n' % window)
    sys.stdout.flush()
    while line := await r.readline():
        m = json.loads(line)
        if "id" in m:
            asyncio.create_task(run(m["id"]))
asyncio.run(main())
PY
chmod +x "$dir/one.py" "$dir/mux.py"
# the handler processes of script $1: their count and summed RSS (KiB)
sample() {
	n=0 kb=0
	for p in /proc/[0-9]*; do
		case "$({ tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null)" in
		*"$1"*) ;;
		*) continue ;;
		esac
		r=$(awk '/^VmRSS:/ { print $2 }' "$p/status" 2>/dev/null || true)
		[ -n "$r" ] || continue
		n=$((n + 1))
		kb=$((kb + r))
	done
	echo "$n $kb"
}
run() { # NAME SCRIPT ARGS...
	name=$1 script=$2
	shift 2
	printf '[sked]\ndatabase = %s\nprefix = mb_%s_\n' "$url" \
		"$(od -An -N3 -tx1 /dev/urandom | tr -d ' ')" >"$dir/$name.conf"
	k=1
	while [ "$k" -le "$kinds" ]; do
		seq 1 "$tasks" | "$SKED" --config "$dir/$name.conf" enqueue "k$k" --lines - >/dev/null
		printf '[handler.k%s]\ncommand = pipe:%s %s\n' "$k" "$dir/$script" "$*" >>"$dir/$name.conf"
		k=$((k + 1))
	done
	t0=$(date +%s%N)
	"$SKED" --config "$dir/$name.conf" worker --node-id "mb-$name" \
		--concurrency "$conc" --until-empty --poll 50ms 2>/dev/null &
	wpid=$!
	maxn=0 maxkb=0
	while kill -0 "$wpid" 2>/dev/null; do
		set -- $(sample "$dir/$script")
		[ "$1" -le "$maxn" ] || maxn=$1
		[ "$2" -le "$maxkb" ] || maxkb=$2
		sleep 0.2
	done
	wait "$wpid"
	t1=$(date +%s%N)
	all=$((kinds * tasks))
	echo "$name: $all tasks in $(((t1 - t0) / 1000000)) ms, $((all * 1000000000 / (t1 - t0))) tasks/s, at most $maxn processes, $((maxkb / 1024)) MiB RSS"
}
echo "KINDS=$kinds CONCURRENCY=$conc WINDOW=$window TASKS=$tasks SLEEP_MS=$sleep_ms on $url"
run slot one.py "$sleep_ms"
run window mux.py "$sleep_ms" "$window"
