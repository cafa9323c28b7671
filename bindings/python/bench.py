"""Drain no-op tasks with an in-process Python handler and print the rate.

    SKED_LIBRARY=build/libsked.so python3 bindings/python/bench.py \
        [--url URL] [--tasks N] [--concurrency C] [--prefetch P]

The tasks go to a table prefix of the bench's own ("pybench<hex>_"),
printed at the end; on a server, drop its tables afterwards. The default
database is a fresh SQLite file under /tmp.
"""

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sked  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--url")
ap.add_argument("--tasks", type=int, default=5000)
ap.add_argument("--concurrency", type=int, default=4)
ap.add_argument("--prefetch", type=int, default=16)
a = ap.parse_args()
url = a.url or "sqlite:" + os.path.join(tempfile.mkdtemp(), "bench.db")
prefix = "pybench%s_" % os.urandom(3).hex()
db = sked.open(url, prefix=prefix, migrate=True)
for i in range(0, a.tasks, 1000):
    db.enqueue_many("noop", ["x"] * min(1000, a.tasks - i))
w = db.worker(concurrency=a.concurrency, prefetch=a.prefetch,
              until_empty=True, poll=0.05)
w.handle("noop", lambda job: None)
start = time.monotonic()
w.run()
took = time.monotonic() - start
done = w.counters()["succeeded"]
w.close()
db.close()
print("%d tasks in %.2f s: %.0f tasks/s (%s, concurrency %d, prefetch %d, "
      "prefix %s)" % (done, took, done / took, url.split(":")[0],
                      a.concurrency, a.prefetch, prefix))
