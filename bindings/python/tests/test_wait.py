"""Waiting from Python (issue 36): db.wait(ids, timeout) blocks until the
tasks end and returns them; a worker in another thread ends them while
the main thread waits; the time running out raises WaitTimeout with the
tasks as they were; submit() returns a handle whose result() is the
handler's result, or raises TaskFailed for a dead or cancelled task;
bad input is refused before the database.

Run: SKED_LIBRARY=build/libsked.so python3 bindings/python/tests/test_wait.py
(SKED_TEST_BACKEND=pg with SKED_TEST_PG_URL for PostgreSQL).
"""

import threading
import time

from common import DbCase, main, sked


class TestWait(DbCase):
    def start_worker(self):
        """A worker on a handle of its own, in a thread, until stopped."""
        wdb = sked.open(self.url, prefix=self.prefix)
        w = wdb.worker(concurrency=2, poll=0.05)

        @w.handler("py.ok")
        def ok(job):
            time.sleep(0.3)
            return "done " + job.payload

        @w.handler("py.fail")
        def fail(job):
            raise RuntimeError("no luck")

        th = threading.Thread(target=w.run)
        th.start()

        def stop():
            w.stop()
            th.join(30)
            w.close()
            wdb.close()
        self.addCleanup(stop)

    def test_wait_blocks_until_the_end(self):
        a = self.db.enqueue("py.ok", "a")
        b = self.db.enqueue("py.fail", "b", max_attempts=1)
        with self.assertRaises(sked.WaitTimeout) as cm:
            self.db.wait([a, b], timeout=0.2)
        self.assertEqual([t.status for t in cm.exception.tasks],
                         ["pending", "pending"])
        self.start_worker()
        t0 = time.monotonic()
        got = self.db.wait([a, b], timeout=30)
        self.assertLess(time.monotonic() - t0, 20)
        self.assertEqual([(t.id, t.status) for t in got],
                         [(a, "succeeded"), (b, "dead")])
        self.assertEqual(got[0].result, "done a")
        # ended tasks answer at once
        self.assertEqual(self.db.wait([a], timeout=0)[0].status, "succeeded")

    def test_submit_and_result(self):
        self.start_worker()
        h = self.db.submit("py.ok", "x", queue="default")
        self.assertIsInstance(h, sked.TaskHandle)
        self.assertEqual(h.result(timeout=30), "done x")
        self.assertEqual(h.get().status, "succeeded")
        bad = self.db.submit("py.fail", "y", max_attempts=1)
        with self.assertRaises(sked.TaskFailed) as cm:
            bad.result(timeout=30)
        self.assertEqual(cm.exception.task.status, "dead")
        self.assertIn("no luck", str(cm.exception))

    def test_cancelled_and_bad_input(self):
        c = self.db.enqueue("py.ok", "c", delay=3600)
        self.db.cancel(c)
        with self.assertRaises(sked.TaskFailed) as cm:
            self.db.task(c).result(timeout=5)
        self.assertEqual(cm.exception.task.status, "cancelled")
        with self.assertRaises(sked.NotFound):
            self.db.wait([999999], timeout=1)
        with self.assertRaises(ValueError):
            self.db.wait([])
        with self.assertRaises(ValueError):
            self.db.wait(range(1, 1002))


if __name__ == "__main__":
    main()
