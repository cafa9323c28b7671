#!/bin/bash
# tests/tools/hostile_measure.sh SKED PORT: issue 39's memory figures
# (docs/security.md), scaled down: the worker's peak for one child of 200
# parents of 64 KiB of \x01, and the dashboard's for GET /api/tasks over
# 200 tasks of 1 MiB. Layer: test tools; not run by CTest (a measurement:
# run it on the old build and the new, same machine, same moment).
# Loopback only; everything in a temporary directory, removed at the end.
set -u
S=$1; P=$2; D=$(mktemp -d); cd $D
export SKED_DATABASE_URL=sqlite://$D/db.sqlite SKED_LOG=warn
$S init >/dev/null
cat > par <<'H'
#!/bin/sh
head -c 65536 /dev/zero | tr '\0' '\001' >"$SKED_TASK_RESULT_FILE"
H
cat > kid <<'H'
#!/bin/sh
wc -c <"$SKED_TASK_PARENT_RESULTS" >"$SKED_TASK_RESULT_FILE"
H
chmod +x par kid
seq 1 200 | sed 's/^/r/' > rl
$S enqueue bigp --lines rl > rids
cid=$($S enqueue kidk --after "$(paste -sd, rids)")
$S worker --handler "bigp=$D/par" --handler "kidk=$D/kid" --concurrency 4 --poll 100ms > w.log 2>&1 &
w=$!
for i in $(seq 1 120); do st=$($S show --json $cid | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])'); [ "$st" = succeeded ] && break; sleep 0.5; done
echo "worker: child $st, parents file $($S show --json $cid | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"])') bytes, peak $(awk '/VmHWM/{print int($2/1024)}' /proc/$w/status) MiB"
kill $w; wait $w 2>/dev/null
head -c 32 /dev/urandom | base64 | tr -d '\n/+=' | head -c 40 > tok; chmod 600 tok
python3 -c "print('\n'.join(['z'*(1024*1024-16)]*200))" > big
$S enqueue listk --lines big > /dev/null
$S dashboard --listen 127.0.0.1:$P --api-token file:$D/tok > d.log 2>&1 &
d=$!; sleep 1
n=$(curl -s -H "Authorization: Bearer $(cat tok)" "http://127.0.0.1:$P/api/tasks?limit=200" | wc -c)
echo "dashboard: list of 200 x 1 MiB: reply $n bytes, peak $(awk '/VmHWM/{print int($2/1024)}' /proc/$d/status) MiB"
kill $d; wait $d 2>/dev/null
cd /; rm -rf $D
