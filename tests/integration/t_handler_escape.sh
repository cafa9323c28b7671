#!/bin/sh
# Nothing a handler starts outlives its task: a handler's child that
# leaves the handler's process group with setsid() escaped the group
# kill and ran on after the worker (it went to init). `sked worker` is a
# child subreaper now: such an orphan comes back to it and is killed once
# the handler ends, for a program and for a pipe: handler, and the lease
# guard, a child of the worker too, is left alone. Linux only;
# sqlite only: it does not depend on the backend.
# backends: sqlite
. "$(dirname "$0")/lib.sh"
case "$SKED_BACKEND" in sqlite) ;; *) not_here "handler processes do not depend on the backend" ;; esac
[ "$(uname -s)" = Linux ] || skip "PR_SET_CHILD_SUBREAPER is Linux's"
command -v setsid >/dev/null || skip "setsid (util-linux) is not installed"
init_db

prog=$(handler escape.sh <<'H'
#!/bin/sh
# a child in a session of its own, then the handler is done
setsid sh -c 'echo $$ >"$1"; exec sleep 300' sh "$ESCAPE_FILE.prog" </dev/null >/dev/null 2>&1 &
for i in 1 2 3 4 5 6 7 8 9 10; do [ -s "$ESCAPE_FILE.prog" ] && break; sleep 0.2; done
exit 0
H
)
pipe=$(handler escape.py <<'H'
#!/usr/bin/env python3
import json, os, subprocess, sys, time
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    subprocess.Popen(["setsid", "sh", "-c", 'echo $$ >"$1"; exec sleep 300', "sh",
                      os.environ["ESCAPE_FILE"] + ".pipe"],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
    for _ in range(20):
        if os.path.exists(os.environ["ESCAPE_FILE"] + ".pipe"):
            break
        time.sleep(0.1)
    print(json.dumps({"id": m["id"], "ok": True}), flush=True)
H
)
p1=$(sk enqueue prog)
sk enqueue pipekind >/dev/null
ESCAPE_FILE="$T/escaped" start_worker w --handler "prog=$prog" --handler "pipekind=pipe:$pipe" --poll 100ms
done1() { [ "$(status_of "$p1")" = 2 ] && [ -s "$T/escaped.pipe" ]; }
wait_for 30 done1 || { cat "$T/w.log" >&2; fail "the tasks did not run"; }
# the program's orphan is gone with its task, while the worker runs on;
# the lease guard (a child of the worker, no handler) is left alone
pid=$(cat "$T/escaped.prog")
gone() { ! kill -0 "$pid" 2>/dev/null || case "$(ps -o stat= -p "$pid")" in Z*) true ;; *) false ;; esac; }
wait_for 10 gone || { kill -9 "$pid" 2>/dev/null; fail "the program's setsid child outlived its task"; }
ps -o args= --ppid "$wpid" | grep -q -- "worker --handler" || fail "the worker's lease guard was killed as an orphan"
kill_child TERM "$wpid"
wait_exit "$wpid" 30
expect_eq "$wrc" 0 "the worker's exit status"
leftover=""
for f in "$T/escaped.prog" "$T/escaped.pipe"; do
	[ -s "$f" ] || fail "the handler did not start its escaping child ($f)"
	pid=$(cat "$f")
	gone() { ! kill -0 "$pid" 2>/dev/null || case "$(ps -o stat= -p "$pid")" in Z*) true ;; *) false ;; esac; }
	wait_for 10 gone || leftover="$leftover $pid"
done
for pid in $leftover; do kill -9 "$pid" 2>/dev/null || true; done
[ -z "$leftover" ] || fail "a handler's setsid child outlived its task and the worker:$leftover"
echo "ok: $SKED_BACKEND: no handler descendant survives"
