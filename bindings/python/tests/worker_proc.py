"""A Python worker process for test_sked.py (not a test itself).

PY_MODE=drain: run tasks of kind "once" until none is left, appending
"TASK-ID PID" to PY_LOG for each (one short write with O_APPEND, so the
lines of two processes never mix). PY_MODE=signal: run tasks of kind
"sig", print "ran ID" for each, and stop gracefully on SIGTERM.
"""

import os
import sys
import time

import sked

mode = os.environ["PY_MODE"]
db = sked.open(os.environ["PY_URL"], prefix=os.environ["PY_PREFIX"])

if mode == "drain":
    fd = os.open(os.environ["PY_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT,
                 0o644)
    w = db.worker(concurrency=2, until_empty=True, poll=0.05)

    @w.handler("once")
    def once(job):
        os.write(fd, b"%d %d\n" % (job.id, os.getpid()))
        time.sleep(0.02)
else:
    w = db.worker(concurrency=1, poll=0.05)
    w.stop_on_signals()

    @w.handler("sig")
    def sig(job):
        print("ran %d" % job.id, flush=True)

w.run()
w.close()
db.close()
sys.exit(0)
