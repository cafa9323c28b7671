#!/bin/sh
# bench/handlers.sh — how fast each kind of handler drains no-op tasks on
# the same database in one session: a program started per task
# (/bin/true) against a pipe: handler in Python (one process per slot).
#
#   SKED=build/sked bench/handlers.sh [DB_URL]     (default: a SQLite file)
#
# Env: PROC_TASKS (3000), PIPE_TASKS (30000), SLOTS (16). One worker
# process with SLOTS slots each time; prints tasks/s and the ratio.
set -eu
SKED=${SKED:-build/sked}
dir=$(mktemp -d /tmp/sked-hbench.XXXXXX)
trap 'rm -rf "$dir"' EXIT
url=${1:-sqlite:$dir/b.db}
slots=${SLOTS:-16}
cat >"$dir/noop.py" <<'PY'
#!/usr/bin/env python3
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" in m:
        sys.stdout.write('{"id":%d,"ok":true}\n' % m["id"])
        sys.stdout.flush()
PY
chmod +x "$dir/noop.py"
rate() { # KIND HANDLER N
	printf '[sked]\ndatabase = %s\nprefix = hb_%s_\n' "$url" \
		"$(od -An -N3 -tx1 /dev/urandom | tr -d ' ')" >"$dir/$1.conf"
	seq 1 "$3" | "$SKED" --config "$dir/$1.conf" enqueue "$1" --lines - >/dev/null
	t0=$(date +%s%N)
	"$SKED" --config "$dir/$1.conf" worker --node-id "hb-$1" \
		--concurrency "$slots" --handler "$1=$2" --until-empty \
		--poll 50ms 2>/dev/null
	t1=$(date +%s%N)
	echo $(($3 * 1000000000 / (t1 - t0)))
}
p=$(rate proc /bin/true "${PROC_TASKS:-3000}")
q=$(rate pipe "pipe:$dir/noop.py" "${PIPE_TASKS:-30000}")
echo "program per task: $p tasks/s"
echo "pipe: (Python):   $q tasks/s"
echo "ratio:            $(awk "BEGIN { printf \"%.1f\", $q / $p }")x"
