"""The Python binding against a real database: enqueue options land in the
row, inspecting and steering tasks, bad input refused with the right
exception, Python handlers (a failing one's error in the run record), a
worker stopped from another thread and from a signal, and exactly once
under two Python worker processes.

Run: SKED_LIBRARY=build/libsked.so python3 bindings/python/tests/test_sked.py
(SKED_TEST_BACKEND=pg with SKED_TEST_PG_URL for PostgreSQL).
"""

import datetime as dt
import os
import signal
import subprocess
import sys
import threading
import time
import unittest
import warnings

from common import BACKEND, HERE, DbCase, main, sked


# Every recorded attempt, as sked_runs_get sees them: the run rows and,
# since schema 5, the attempt that ended a task, on its task_done row.
ALL_RUNS = ("(SELECT task_id, node_id, outcome, error FROM {p}run "
            "UNION ALL SELECT id, node_id, outcome, error FROM {p}task_done "
            "WHERE outcome IS NOT NULL)")


def epoch_ms(col):
    if BACKEND == "sqlite":
        return col
    return "(extract(epoch from %s) * 1000)::bigint" % col


class TestAbi(unittest.TestCase):
    def test_version_and_abi(self):
        self.assertEqual(sked._lib.sked_abi_version(), sked.ABI_VERSION)
        self.assertNotEqual(sked._lib.sked_abi_check(sked.ABI_VERSION + 1), 0)
        self.assertRegex(sked.version(), r"^\d+\.\d+\.\d+")

    def test_error_codes_by_name(self):
        self.assertEqual(sked._lib.sked_errcode(b"SKED_OK"), 0)
        self.assertEqual(sked._lib.sked_errcode(b"SKED_ENOTFOUND"), -9)
        self.assertEqual(sked._lib.sked_errcode(b"SKED_ENOSUCH"), 1)
        for code in range(-1, -21, -1):
            name = sked._lib.sked_errname(code)
            self.assertEqual(sked._lib.sked_errcode(name), code)

    def test_struct_sizes(self):
        self.assertEqual(sked._lib.sked_struct_size(b"no_such_struct"), 0)
        self.assertGreater(sked._lib.sked_struct_size(b"sked_enqueue_opts"),
                           0)


class TestTasks(DbCase):
    def test_enqueue_options_land_in_row(self):
        at = dt.datetime(2031, 5, 6, 7, 8, 9, 123000, tzinfo=dt.timezone.utc)
        tid = self.db.enqueue("mail.send", '{"to":"ada"}', queue="q-1",
                              priority=7, run_at=at, max_attempts=3,
                              unique_key="u-1")
        rows = self.sql("SELECT queue, kind, payload, status, priority, "
                        "%s, max_attempts, unique_key, attempts FROM {p}task "
                        "WHERE id = %d" % (epoch_ms("run_at"), tid))
        self.assertEqual(rows, [("q-1", "mail.send", '{"to":"ada"}', "0",
                                 "7", str(int(at.timestamp() * 1000)), "3",
                                 "u-1", "0")])
        t = self.db.get(tid)
        self.assertEqual((t.queue, t.kind, t.payload, t.status, t.priority,
                          t.run_at, t.max_attempts, t.unique_key),
                         ("q-1", "mail.send", '{"to":"ada"}', "pending", 7,
                          at, 3, "u-1"))

    def test_delay_counts_from_database_now(self):
        before = self.db.now()
        tid = self.db.enqueue("k", delay=dt.timedelta(minutes=10))
        t2 = self.db.enqueue("k", delay=90)
        after = self.db.now()
        ra = int(self.sql("SELECT %s FROM {p}task WHERE id = %d"
                          % (epoch_ms("run_at"), tid))[0][0])
        self.assertGreaterEqual(ra, before + 600000 - 1)
        self.assertLessEqual(ra, after + 600000 + 1)
        self.assertAlmostEqual(self.db.get(t2).run_at_ms - before, 90000,
                               delta=after - before + 2)

    def test_defaults(self):
        tid = self.db.enqueue("k")
        t = self.db.get(tid)
        self.assertEqual((t.queue, t.payload, t.priority, t.max_attempts,
                          t.unique_key), ("default", "", 0, 5, None))

    def test_unique_key_returns_existing(self):
        a, existed = self.db.enqueue_ex("k", "1", unique_key="same")
        self.assertFalse(existed)
        b, existed = self.db.enqueue_ex("k", "2", unique_key="same")
        self.assertEqual((b, existed), (a, True))
        self.assertEqual(self.db.find_unique("same"), a)
        self.assertEqual(self.sql("SELECT count(*) FROM {p}task"), [("1",)])

    def test_unique_scopes(self):
        # pending scope: the holder answers while it has not started
        a, _ = self.db.enqueue_ex("k", "1", unique_key="p",
                                  unique_scope="pending", delay=3600)
        b, existed = self.db.enqueue_ex("k", "2", unique_key="p",
                                        unique_scope="pending")
        self.assertEqual((b, existed), (a, True))
        # debounce: the waiting holder takes the new payload
        c, existed = self.db.enqueue_ex("k", "new", unique_key="p",
                                        unique_replace=True, delay=3600)
        self.assertEqual((c, existed), (a, True))
        self.assertEqual(self.db.get(a).payload, "new")
        # a period holds the key after its task has ended
        d = self.db.enqueue("k", unique_key="f", unique_for=3600)
        self.db.cancel(d)
        self.assertEqual(self.db.enqueue("k", unique_key="f",
                                         unique_for=3600), d)
        # an ended live-scope task frees its key
        e = self.db.enqueue("k", unique_key="l")
        self.db.cancel(e)
        self.assertNotEqual(self.db.enqueue("k", unique_key="l"), e)
        with self.assertRaises(sked.InvalidArgument):
            self.db.enqueue("k", unique_key="x", unique_scope="someday")
        with self.assertRaises(sked.InvalidArgument):
            self.db.enqueue("k", unique_for=60)

    def test_task_timeout(self):
        tid = self.db.enqueue("k", timeout=dt.timedelta(seconds=1.5))
        self.assertEqual(self.sql("SELECT timeout_ms FROM {p}task WHERE "
                                  "id = %d" % tid), [("1500",)])
        with self.assertRaises(sked.InvalidArgument):
            self.db.enqueue("k", timeout=0)

    def test_enqueue_many(self):
        payloads = ["p%d" % i for i in range(50)] + ["caf\u00e9".encode(), ""]
        ids = self.db.enqueue_many("bulk", payloads, queue="bq", priority=2,
                                   max_attempts=9, delay=60)
        self.assertEqual(len(ids), len(payloads))
        self.assertEqual(len(set(ids)), len(ids))
        rows = self.sql("SELECT id, payload, queue, priority, max_attempts "
                        "FROM {p}task ORDER BY id")
        self.assertEqual(len(rows), len(payloads))
        self.assertEqual([r[1] for r in rows[:50]], payloads[:50])
        self.assertTrue(all(r[2:] == ("bq", "2", "9") for r in rows))
        self.assertEqual(self.db.get(ids[-2]).payload, "caf\u00e9")
        self.assertEqual(self.db.enqueue_many("bulk", []), [])

    def test_after(self):
        a = self.db.enqueue("pa")
        kids = self.db.enqueue_many("kid", ["1", "2"], after=[a])
        last = self.db.enqueue("end", after=kids, on_parent_failure="ignore")
        self.assertEqual([self.db.get(t).status for t in kids + [last]],
                         ["blocked"] * 3)
        self.db.cancel(a)  # cancels the kids; "end" ignores them: pending
        self.assertEqual([self.db.get(t).status for t in kids],
                         ["cancelled"] * 2)
        self.assertEqual(self.db.get(last).status, "pending")
        with self.assertRaises(sked.InvalidArgument):
            self.db.enqueue("x", after=[10 ** 9])
        with self.assertRaises(sked.InvalidArgument):
            self.db.enqueue("x", after=[a], on_parent_failure="maybe")
        self.assertEqual(self.sql("SELECT count(*) FROM {p}task WHERE "
                                  "kind = 'x'"), [("0",)])

    def test_enqueue_many_all_or_none(self):
        with self.assertRaises(sked.TooBig):
            self.db.enqueue_many("bulk", ["ok", "x" * (1024 * 1024 + 1)])
        self.assertEqual(self.sql("SELECT count(*) FROM {p}task"), [("0",)])

    def test_enqueue_graph(self):
        # a diamond after an existing task, in one transaction (issue 37)
        pre = self.db.enqueue("setup")
        ids = self.db.enqueue_graph([
            {"name": "report", "kind": "report", "after": ["left", "right"],
             "payload": {"to": "ops"}},
            {"name": "left", "kind": "resize", "after": ["fetch"],
             "queue": "img", "priority": 5, "timeout": 30},
            {"name": "right", "kind": "thumb", "after": ["fetch"],
             "max_attempts": 2},
            {"name": "fetch", "kind": "fetch", "payload": "u",
             "after": [pre]},
        ])
        self.assertEqual(sorted(ids), ["fetch", "left", "report", "right"])
        edges = self.sql("SELECT parent_id, child_id FROM {p}task_dep "
                         "ORDER BY child_id, parent_id")
        want = sorted([(pre, ids["fetch"]), (ids["fetch"], ids["left"]),
                       (ids["fetch"], ids["right"]),
                       (ids["left"], ids["report"]),
                       (ids["right"], ids["report"])],
                      key=lambda e: (e[1], e[0]))
        self.assertEqual([(int(a), int(b)) for a, b in edges], want)
        self.assertEqual(self.db.get(ids["report"]).payload, '{"to":"ops"}')
        left = self.db.get(ids["left"])
        self.assertEqual((left.queue, left.priority, left.status),
                         ("img", 5, "blocked"))
        self.assertEqual(self.db.get(ids["right"]).max_attempts, 2)

    def test_enqueue_graph_all_or_none(self):
        before = self.sql("SELECT count(*) FROM {p}task")
        for bad in (
                [{"name": "a", "kind": "k", "after": ["b"]},
                 {"name": "b", "kind": "k", "after": ["a"]}],  # a cycle
                [{"name": "a", "kind": "k", "after": ["nope"]}],
                [{"name": "a", "kind": "k"}, {"name": "a", "kind": "k"}],
                [{"name": "a", "kind": "k"},
                 {"name": "z", "kind": "k", "after": ["a"],
                  "queue": "not a queue"}],
                [{"name": "a", "kind": "k", "after": [10 ** 12]}]):
            with self.assertRaises(sked.InvalidArgument):
                self.db.enqueue_graph(bad)
        self.assertEqual(self.sql("SELECT count(*) FROM {p}task"), before)
        self.assertEqual(self.sql("SELECT count(*) FROM {p}task_dep"),
                         [("0",)])

    def test_list_filters(self):
        a = self.db.enqueue("ka", queue="qa")
        b = self.db.enqueue("kb", queue="qb")
        c = self.db.enqueue("ka", queue="qb")
        self.db.cancel(c)
        self.assertEqual([t.id for t in self.db.list()], [c, b, a])
        self.assertEqual([t.id for t in self.db.list(kind="ka")], [c, a])
        self.assertEqual([t.id for t in self.db.list(queue="qb")], [c, b])
        self.assertEqual([t.id for t in self.db.list(status="cancelled")],
                         [c])
        self.assertEqual([t.id for t in self.db.list(limit=1)], [c])
        self.assertEqual([t.id for t in self.db.list(before_id=c)], [b, a])

    def test_cancel_and_retry(self):
        tid = self.db.enqueue("k")
        self.db.cancel(tid)
        self.assertEqual(self.db.get(tid).status, "cancelled")
        with self.assertRaises(sked.StateError):
            self.db.cancel(tid)
        self.db.retry(tid)
        self.assertEqual(self.db.get(tid).status, "pending")
        with self.assertRaises(sked.NotFound):
            self.db.cancel(10 ** 12)
        with self.assertRaises(sked.NotFound):
            self.db.get(10 ** 12)
        self.assertEqual(self.db.runs(tid), [])


class TestBadInput(DbCase):
    def test_refused_with_the_right_exception(self):
        cases = [
            (sked.InvalidArgument, lambda: self.db.enqueue("bad kind")),
            (sked.InvalidArgument, lambda: self.db.enqueue("")),
            (sked.InvalidArgument, lambda: self.db.enqueue("k", queue="a b")),
            (sked.InvalidArgument, lambda: self.db.enqueue("k" * 129)),
            (sked.InvalidArgument,
             lambda: self.db.enqueue("k", max_attempts=0)),
            (sked.InvalidArgument,
             lambda: self.db.enqueue("k", run_at=dt.datetime.now(),
                                     delay=1)),
            (sked.InvalidArgument,
             lambda: self.db.enqueue_many("k", ["a"], queue="no/slash")),
            (sked.InvalidArgument, lambda: self.db.list(status="nope")),
            (sked.InvalidArgument, lambda: self.db.list(kind="a b")),
            (sked.TooBig,
             lambda: self.db.enqueue("k", b"x" * (1024 * 1024 + 1))),
            (sked.InvalidArgument,
             lambda: self.db.enqueue("k", priority=1 << 40)),
            (sked.InvalidArgument, lambda: self.db.enqueue("k", delay=-5)),
            (sked.InvalidArgument,
             lambda: self.db.enqueue("k", max_attempts=1 << 33)),
            (TypeError, lambda: self.db.enqueue(42)),
            (TypeError, lambda: self.db.enqueue("k", {1, 2})),
            (TypeError, lambda: self.db.enqueue("k", {"at": dt.datetime.now()})),
            (TypeError, lambda: self.db.enqueue("k", [float("nan")])),
            (TypeError, lambda: self.db.enqueue_many("k", [{}, object()])),
            (TypeError, lambda: self.db.enqueue("k", priority="high")),
            (TypeError, lambda: self.db.enqueue("k", delay="10s")),
            (TypeError, lambda: self.db.enqueue("k", run_at=1700000000)),
        ]
        for i, (exc, call) in enumerate(cases):
            with self.subTest(case=i):
                with self.assertRaises(exc) as cm:
                    call()
                if issubclass(exc, sked.SkedError):
                    self.assertTrue(str(cm.exception))
                    self.assertNotIn("\n", str(cm.exception))
        self.assertEqual(self.sql("SELECT count(*) FROM {p}task"), [("0",)])

    def test_invalid_argument_is_a_value_error(self):
        with self.assertRaises(ValueError):
            self.db.enqueue("bad kind")
        with self.assertRaises(LookupError):
            self.db.get(10 ** 12)

    def test_bad_open(self):
        with self.assertRaises(sked.InvalidArgument) as cm:
            sked.open("nosuch://x")
        self.assertEqual(cm.exception.name, "SKED_EURL")
        with self.assertRaises(sked.InvalidArgument) as cm:
            sked.open(self.url, prefix="Bad-Prefix")
        self.assertEqual(cm.exception.name, "SKED_EINVAL")
        with self.assertRaises(sked.SchemaError):
            sked.open(self.url, prefix="py_never_made_")
        with self.assertRaises(TypeError):
            sked.open(None)

    def test_bad_worker_options(self):
        with self.assertRaises(sked.InvalidArgument):
            self.db.worker(queues="a b")
        with self.assertRaises(TypeError):
            self.db.worker(lease_time=3)
        w = self.db.worker()
        try:
            with self.assertRaises(sked.InvalidArgument):
                w.handle("bad kind", lambda job: None)
            w.handle("k", lambda job: None)
            with self.assertRaises(sked.InvalidArgument):
                w.handle("k", lambda job: None)
            with self.assertRaises(TypeError):
                w.handle("k2", "not callable")
        finally:
            w.close()


class TestWorker(DbCase):
    def test_handlers_see_the_task_and_failures_are_recorded(self):
        ok = self.db.enqueue("py.ok", "hello", queue="wq", max_attempts=2)
        bad = self.db.enqueue("py.fail", "boom", max_attempts=1)
        seen = {}
        w = self.db.worker(concurrency=2, until_empty=True, poll=0.05)

        @w.handler("py.ok")
        def handle_ok(job):
            seen[job.id] = (job.kind, job.queue, job.payload, job.attempt,
                            job.max_attempts, job.cancelled(),
                            threading.current_thread() is not
                            threading.main_thread())

        @w.handler("py.fail")
        def handle_fail(job):
            raise RuntimeError("it went %s on attempt %d" % (job.payload,
                                                             job.attempt))

        w.run()
        w.close()
        self.assertEqual(seen, {ok: ("py.ok", "wq", "hello", 1, 2, False,
                                     True)})
        self.assertEqual(self.db.get(ok).status, "succeeded")
        t = self.db.get(bad)
        self.assertEqual(t.status, "dead")
        first = "RuntimeError: it went boom on attempt 1"
        self.assertEqual(t.last_error.split("\n")[0], first)
        runs = self.db.runs(bad)
        self.assertEqual(len(runs), 1)
        self.assertEqual((runs[0].outcome, runs[0].error), ("failed",
                                                            t.last_error))
        rows = self.sql("SELECT outcome, substr(error, 1, %d) FROM %s r "
                        "WHERE task_id = %d" % (len(first), ALL_RUNS, bad))
        self.assertEqual(rows, [("failed", first)])

    def test_traceparent(self):
        tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        a = self.db.enqueue("py.tp", "x", traceparent=tp)
        b = self.db.enqueue("py.tp", "y")
        [c] = self.db.enqueue_many("py.tp", ["z"], traceparent=tp)
        self.assertEqual((self.db.get(a).traceparent, self.db.get(b).traceparent,
                          self.db.get(c).traceparent), (tp, None, tp))
        with self.assertRaises(sked.InvalidArgument):
            self.db.enqueue("py.tp", "x", traceparent=tp.upper())
        seen = {}
        w = self.db.worker(concurrency=1, until_empty=True, poll=0.05)

        @w.handler("py.tp")
        def handle(job):
            seen[job.id] = job.traceparent

        w.run()
        w.close()
        self.assertEqual(seen, {a: tp, b: None, c: tp})
        self.assertEqual(self.db.get(a).traceparent, tp)  # ended, kept

    def test_log_lines_reach_python(self):
        self.db.enqueue("py.fail", "x", max_attempts=1)
        lines = []
        sked.set_log(lambda lvl, line: lines.append((lvl, line)), "info")
        try:
            w = self.db.worker(until_empty=True, poll=0.05)
            w.handle("py.fail", lambda job: 1 / 0)
            w.run()
            w.close()
        finally:
            sked.set_log(None, "warn")
        self.assertTrue(any(lvl == 30 and "ZeroDivisionError" in line
                            for lvl, line in lines), lines)
        with self.assertRaises(sked.InvalidArgument):
            sked.set_log(None, "loud")

    def test_retry_then_success(self):
        tid = self.db.enqueue("flaky", max_attempts=3)
        w = self.db.worker(until_empty=True, poll=0.05, retry_base=0.05,
                           retry_max=0.1)
        calls = []

        @w.handler("flaky")
        def flaky(job):
            calls.append(job.attempt)
            if job.attempt < 2:
                raise ValueError("not yet")
        line = flaky.__code__.co_firstlineno + 4

        w.run()
        w.close()
        self.assertEqual(calls, [1, 2])
        self.assertEqual([(r.attempt, r.outcome, r.error)
                          for r in self.db.runs(tid)],
                         [(1, "failed", "ValueError: not yet\n"
                           "Traceback (most recent call last):\n"
                           '  File "%s", line %d, in flaky\n'
                           '    raise ValueError("not yet")'
                           % (__file__, line)),
                          (2, "succeeded", None)])

    def test_stop_from_another_thread(self):
        tid = self.db.enqueue("slow")
        started = threading.Event()
        w = self.db.worker(poll=0.05, grace=10)

        @w.handler("slow")
        def slow(job):
            started.set()
            time.sleep(0.3)

        t = threading.Thread(target=w.run)
        t.start()
        self.assertTrue(started.wait(30))
        w.stop()
        t.join(30)
        self.assertFalse(t.is_alive(), "the worker did not stop")
        w.close()
        # the running handler was given its grace and finished
        self.assertEqual(self.db.get(tid).status, "succeeded")

    def test_progress(self):
        # a handler reports progress as often as it likes; the worker
        # stores the latest with its lease renewal (a third of the
        # lease), and db.live shows it with the node and the start
        tid = self.db.enqueue("long")
        release = threading.Event()
        refused = []
        w = self.db.worker(poll=0.05, lease=3, node_id="py-progress")

        @w.handler("long")
        def long(job):
            for i in range(100):
                job.progress({"done": i, "of": 99})
            try:
                job.progress("x" * (sked.PROGRESS_MAX + 1))
            except sked.InvalidArgument as e:
                refused.append(str(e))
            self.assertTrue(release.wait(60))

        t = threading.Thread(target=w.run)
        t.start()
        try:
            live = None
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                try:
                    live = self.db.live(tid)
                except sked.NotFound:
                    live = None  # not claimed yet
                # the latest report, once a renewal has stored it (a
                # renewal during the loop stores an earlier one first)
                if live is not None and live.progress == {"done": 99,
                                                          "of": 99}:
                    break
                time.sleep(0.1)
            self.assertIsNotNone(live, "the task never ran")
            self.assertEqual(live.progress, {"done": 99, "of": 99})
            self.assertEqual(live.node_id, "py-progress")
            self.assertIsNotNone(live.started)
            self.assertGreater(live.elapsed_ms, 0)
            self.assertIsNotNone(live.progress_at)
            self.assertEqual(len(refused), 1, "an oversized report passed")
        finally:
            release.set()
            w.stop()
            t.join(30)
            w.close()
        self.assertEqual(self.db.get(tid).status, "succeeded")
        with self.assertRaises(sked.NotFound):
            self.db.live(tid)

    def test_stop_from_a_signal(self):
        tid = self.db.enqueue("sig")
        env = dict(os.environ, PY_URL=self.url, PY_PREFIX=self.prefix,
                   PY_MODE="signal", PYTHONPATH=os.path.dirname(HERE))
        p = subprocess.Popen([sys.executable,
                              os.path.join(HERE, "worker_proc.py")],
                             env=env, stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(p.stdout.readline().strip(), "ran %d" % tid)
            p.send_signal(signal.SIGTERM)
            self.assertEqual(p.wait(30), 0)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            p.stdout.close()
        self.assertEqual(self.db.get(tid).status, "succeeded")

    def test_exactly_once_under_two_worker_processes(self):
        n = 300
        ids = self.db.enqueue_many("once", [str(i) for i in range(n)])
        log = os.path.join(self.tmp, "ran.log")
        env = dict(os.environ, PY_URL=self.url, PY_PREFIX=self.prefix,
                   PY_MODE="drain", PY_LOG=log,
                   PYTHONPATH=os.path.dirname(HERE))
        procs = [subprocess.Popen([sys.executable,
                                   os.path.join(HERE, "worker_proc.py")],
                                  env=env) for _ in range(2)]
        try:
            for p in procs:
                self.assertEqual(p.wait(300), 0)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        with open(log) as f:
            lines = [line.split() for line in f]
        ran = [int(tid) for tid, _pid in lines]
        self.assertEqual(sorted(ran), sorted(ids),
                         "every task ran once, no task twice")
        pids = {pid for _tid, pid in lines}
        self.assertEqual(len(pids), 2, "both workers took tasks")
        # ended tasks may live in another table: ask libsked for each
        self.assertEqual({(t.status, t.attempts)
                          for t in (self.db.get(i) for i in ids)},
                         {("succeeded", 1)})
        self.assertEqual(self.sql("SELECT count(*), count(DISTINCT task_id), "
                                  "count(DISTINCT node_id) FROM %s r"
                                  % ALL_RUNS),
                         [(str(n), str(n), "2")])


class TestReach(DbCase):
    """What issue 29 asked of the package: concurrency keys, bulk
    enqueue and bulk steering, schedules, locks, limits, a handler
    decorator, and no silent drop of a handler's return value."""

    def test_concurrency_key_lands_in_row(self):
        a = self.db.enqueue("k", concurrency_key="cust-1")
        ids = self.db.enqueue_many("k", ["x", "y"], concurrency_key="cust-2")
        rows = self.sql("SELECT id, concurrency_key FROM {p}task ORDER BY id")
        self.assertEqual(rows, [(str(a), "cust-1"), (str(ids[0]), "cust-2"),
                                (str(ids[1]), "cust-2")])
        with self.assertRaises(sked.InvalidArgument):
            self.db.enqueue("k", concurrency_key="")
        with self.assertRaises(TypeError):
            self.db.enqueue("k", concurrency_key=5)

    def test_count_and_bulk_steering(self):
        a = self.db.enqueue_many("ka", ["1", "2", "3"], queue="q1", delay=3600)
        b = self.db.enqueue("kb", queue="q2", delay=3600)
        self.assertEqual(self.db.count(), 4)
        self.assertEqual(self.db.count(status="pending", kind="ka"), 3)
        self.assertEqual(self.db.count(queue="q2"), 1)
        self.assertEqual(self.db.count(older_than=3600), 0)
        self.assertEqual(self.db.cancel_where(kind="ka"), 3)
        self.assertEqual(self.db.count(status="cancelled"), 3)
        self.assertEqual(self.db.get(b).status, "pending")
        self.assertEqual(self.db.retry_where(status="cancelled",
                                             queue="q1"), 3)
        self.assertEqual({self.db.get(i).status for i in a}, {"pending"})
        self.assertEqual(self.db.cancel_many(a + [b, 10 ** 12]), 4)
        self.assertEqual(self.db.cancel_many([]), 0)
        self.assertEqual(self.db.retry_many(a), 3)
        with self.assertRaises(sked.InvalidArgument):
            self.db.cancel_where(status="dead")
        with self.assertRaises(sked.InvalidArgument):
            self.db.retry_where(status="pending")
        with self.assertRaises(sked.InvalidArgument):
            self.db.count(older_than=0)
        with self.assertRaises(sked.InvalidArgument):
            self.db.count(kind="bad kind")

    def test_schedules(self):
        self.assertTrue(self.db.schedule("nightly", "30 2 * * *", "report",
                                         '{"all": 1}', tz="Europe/Paris",
                                         queue="rq", priority=4,
                                         max_attempts=2, misfire="skip",
                                         overlap="skip"))
        self.assertFalse(self.db.schedule("nightly", "30 2 * * *", "report",
                                          '{"all": 1}', tz="Europe/Paris",
                                          queue="rq", priority=4,
                                          max_attempts=2, misfire="skip",
                                          overlap="skip"))
        [s] = self.db.schedules()
        self.assertEqual((s.name, s.cron, s.tz, s.kind, s.payload, s.queue,
                          s.priority, s.max_attempts, s.misfire, s.overlap,
                          s.enabled),
                         ("nightly", "30 2 * * *", "Europe/Paris", "report",
                          '{"all": 1}', "rq", 4, 2, "skip", "skip", True))
        self.assertIsNotNone(s.next_fire)
        self.db.pause_schedule("nightly")
        self.assertFalse(self.db.schedules()[0].enabled)
        # run now: one task per call, paused or not, off whole seconds
        t1 = self.db.run_schedule("nightly")
        t2 = self.db.run_schedule("nightly")
        self.assertNotEqual(t1, t2)
        for tid in (t1, t2):
            t = self.db.get(tid)
            self.assertEqual((t.kind, t.payload, t.queue, t.priority,
                              t.max_attempts, t.schedule_name),
                             ("report", '{"all": 1}', "rq", 4, 2, "nightly"))
            self.assertNotEqual(t.fire_time_ms % 1000, 0)
        self.assertEqual(self.db.schedules()[0].next_fire_ms, s.next_fire_ms)
        # in quick succession (several in one millisecond): one each
        burst = [self.db.run_schedule("nightly") for _ in range(30)]
        fires = {self.db.get(i).fire_time_ms for i in burst}
        self.assertEqual((len(set(burst)), len(fires)), (30, 30))
        self.assertFalse([f for f in fires if f % 1000 == 0])
        self.db.resume_schedule("nightly")
        fired, nxt = self.db.tick()
        self.assertEqual(fired, 0)
        self.assertIsNotNone(nxt)
        self.db.unschedule("nightly")
        self.assertEqual(self.db.schedules(), [])
        with self.assertRaises(sked.NotFound):
            self.db.run_schedule("nightly")
        with self.assertRaises(sked.NotFound):
            self.db.pause_schedule("nightly")
        with self.assertRaises(sked.InvalidArgument) as cm:
            self.db.schedule("bad", "61 * * * *", "k")
        self.assertEqual(cm.exception.name, "SKED_ECRON")
        with self.assertRaises(sked.InvalidArgument):
            self.db.schedule("bad", "* * * * *", "k", tz="Mars/Olympus")
        with self.assertRaises(sked.InvalidArgument):
            self.db.schedule("bad", "* * * * *", "k", misfire="later")

    def test_locks(self):
        with self.db.lock("export", ttl=30, owner="me") as lk:
            self.assertGreater(lk.token, 0)
            st = self.db.lock_state("export")
            self.assertEqual((st.owner, st.held, st.token),
                             ("me", True, lk.token))
            with self.assertRaises(sked.Locked) as cm:
                self.db.acquire_lock("export", "you", 30)
            self.assertIn("me", cm.exception.message)
            lk.extend(60)
            first = lk.token
        self.assertFalse(self.db.lock_state("export").held)
        self.assertEqual([(r.name, r.held) for r in self.db.locks()],
                         [("export", False)])
        # released on an exception too, and the next token is larger
        with self.assertRaises(KeyError):
            with self.db.lock("export", ttl=30) as lk:
                self.assertGreater(lk.token, first)
                raise KeyError("boom")
        self.assertFalse(self.db.lock_state("export").held)
        # someone else took it over: ours is lost
        tok = self.db.acquire_lock("job", "a", 0.05)
        time.sleep(0.2)
        self.db.acquire_lock("job", "b", 30)
        with self.assertRaises(sked.LockLost):
            self.db.extend_lock("job", "a", tok, 30)
        with self.assertRaises(sked.NotFound):
            self.db.lock_state("never-taken")
        with self.assertRaises(sked.InvalidArgument):
            self.db.acquire_lock("bad name", "a", 30)

    def test_queue_limits(self):
        self.db.set_queue_limits("mail", concurrency=3, per_key=1,
                                 rate="100/1m")
        [q] = [q for q in self.db.queues() if q.queue == "mail"]
        self.assertEqual((q.limited, q.concurrency, q.per_key, q.rate),
                         (True, 3, 1, (100, dt.timedelta(minutes=1))))
        self.db.set_queue_limits("mail", rate=(5, 2))  # the rest kept
        [q] = [q for q in self.db.queues() if q.queue == "mail"]
        self.assertEqual((q.concurrency, q.per_key, q.rate),
                         (3, 1, (5, dt.timedelta(seconds=2))))
        self.db.set_queue_limits("mail", concurrency=None, per_key=None,
                                 rate=None)
        self.assertEqual([q.queue for q in self.db.queues()
                          if q.limited], [])
        with self.assertRaises(sked.InvalidArgument):
            self.db.set_queue_limits("mail", rate="lots")
        with self.assertRaises(sked.InvalidArgument):
            self.db.set_queue_limits("mail", concurrency=-5)
        with self.assertRaises(sked.InvalidArgument):
            self.db.set_queue_limits("bad queue", concurrency=1)

    def test_schedule_unique_key(self):
        # each fire and run enqueues as enqueue(unique_key=...) would: a
        # live holder makes a run return it instead of a new task
        self.db.schedule("sync", "0 3 * * *", "py.sync", "p1",
                         unique_key="sync:acme")
        t1 = self.db.run_schedule("sync")
        self.assertEqual(self.db.get(t1).unique_key, "sync:acme")
        self.assertEqual(self.db.run_schedule("sync"), t1)
        # replace (debounce): the waiting holder takes the new payload
        self.db.schedule("sync", "0 3 * * *", "py.sync", "p2",
                         unique_key="sync:acme", unique_replace=True)
        self.assertEqual(self.db.run_schedule("sync"), t1)
        self.assertEqual(self.db.get(t1).payload, "p2")
        # redefined without a key: runs make new tasks again
        self.db.schedule("sync", "0 3 * * *", "py.sync", "p3")
        self.assertNotEqual(self.db.run_schedule("sync"), t1)
        with self.assertRaises(sked.InvalidArgument):
            self.db.schedule("bad", "0 3 * * *", "py.sync",
                             unique_key="k", unique_scope="forever")

    def test_queue_fair_and_weights(self):
        self.db.set_queue_fair("tenants", weights={"big": 3, "vip": 5})
        [q] = [q for q in self.db.queues() if q.queue == "tenants"]
        self.assertTrue(q.fair)
        weights = ("SELECT concurrency_key, weight FROM {p}queue_weight "
                   "WHERE queue = 'tenants' ORDER BY concurrency_key")
        self.assertEqual(self.sql(weights), [("big", "3"), ("vip", "5")])
        self.db.set_queue_fair("tenants", weights={"big": 1})
        self.assertEqual(self.sql(weights), [("vip", "5")])
        with self.assertRaises(sked.InvalidArgument):
            self.db.set_queue_fair("tenants", weights={"big": 101})
        self.db.set_queue_fair("tenants", False)
        self.assertFalse([q for q in self.db.queues()
                          if q.queue == "tenants" and q.fair])

    def test_queue_pause(self):
        self.db.set_queue_limits("slow", concurrency=2)
        self.db.pause_queue("slow")
        self.db.pause_queue("idle")  # no limits: a row of its own
        qs = {q.queue: q for q in self.db.queues()}
        self.assertEqual((qs["slow"].paused, qs["slow"].limited,
                          qs["slow"].concurrency), (True, True, 2))
        self.assertEqual((qs["idle"].paused, qs["idle"].limited),
                         (True, False))
        # removing a paused queue's limits keeps it paused
        self.db.set_queue_limits("slow", concurrency=None)
        qs = {q.queue: q for q in self.db.queues()}
        self.assertEqual((qs["slow"].paused, qs["slow"].limited),
                         (True, False))
        self.db.resume_queue("slow")
        self.db.resume_queue("idle")
        self.db.resume_queue("never-paused")
        self.assertEqual([q.queue for q in self.db.queues() if q.paused],
                         [])
        with self.assertRaises(sked.InvalidArgument):
            self.db.pause_queue("bad queue")

    def test_handlers_decorator_and_return_values(self):
        handlers = sked.Handlers()
        seen = []

        @handlers("py.plain")
        def plain(job):
            seen.append(job.payload)

        @handlers("py.value")
        def value(job):
            return {"answer": 42}

        @handlers("py.text")
        def text(job):
            return "parents " + ",".join(
                "%d:%s:%s" % (p["id"], p["kind"], p["result"])
                for p in job.parents)

        self.assertIn("py.plain", handlers)
        with self.assertRaises(sked.InvalidArgument):
            handlers.add("py.plain", plain)
        with self.assertRaises(TypeError):
            handlers.add("py.other", "not callable")
        a = self.db.enqueue("py.plain", "hi")
        b = self.db.enqueue_many("py.value", ["1", "2"])
        c = self.db.enqueue("py.text", "", after=[a, b[0]])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with self.db.worker(until_empty=True, poll=0.05,
                                handlers=handlers) as w:
                w.run()
        self.assertEqual(seen, ["hi"])
        self.assertEqual({self.db.get(i).status for i in [a, c] + b},
                         {"succeeded"})
        # a returned value is the task's result (JSON unless text),
        # read back as that value, and a child's handler sees its
        # parents' results as values too (a dict here, not its text)
        self.assertIsNone(self.db.get(a).result)
        self.assertEqual(self.db.get(b[0]).result, {"answer": 42})
        self.assertEqual(self.db.get(b[0]).result_text, '{"answer":42}')
        self.assertEqual(self.db.get(c).result,
                         "parents %d:py.plain:None,%d:py.value:"
                         "{'answer': 42}" % (a, b[0]))
        self.assertEqual([w for w in caught
                          if issubclass(w.category, sked.ResultNotStored)],
                         [])

    def test_give_up_and_retry_in(self):
        handlers = sked.Handlers()
        box = {}

        @handlers("py.final")
        def final(job):
            raise sked.GiveUp("unknown account")

        @handlers("py.later")
        def later(job):
            # the last task (lower priority): stop, since a task waiting
            # to retry would keep until_empty waiting
            box["w"].stop()
            raise sked.RetryIn(3600, "mail server said later")

        a = self.db.enqueue("py.final", max_attempts=5, priority=1)
        b = self.db.enqueue("py.later", max_attempts=5)
        with self.db.worker(until_empty=True, poll=0.05, concurrency=1,
                            handlers=handlers) as w:
            box["w"] = w
            w.run()
        t = self.db.get(a)
        self.assertEqual((t.status, t.attempts), ("dead", 1))
        self.assertEqual(t.last_error, "no retry (the handler said so): "
                         "GiveUp: unknown account")
        t = self.db.get(b)
        self.assertEqual((t.status, t.attempts), ("retry", 1))
        wait_ms = t.run_at_ms - self.db.now()
        self.assertTrue(3500 * 1000 < wait_ms <= 3600 * 1000, wait_ms)


class TestValues(DbCase):
    """Payloads and results as JSON-able values (docs/python.md,
    "Payloads and results")."""

    def test_payloads_as_values(self):
        cases = [({"a": 1, "b": [1, 2.5, None, True], "é": "ü"},
                  '{"a":1,"b":[1,2.5,null,true],"é":"ü"}'),
                 ([1, "two"], '[1,"two"]'), ((1, 2), '[1,2]'), (42, '42'),
                 (2.5, '2.5'), (True, 'true'), (False, 'false'),
                 ("as it is", "as it is"), ('{"a": 1}', '{"a": 1}'),
                 (b"raw bytes", None), (None, "")]
        ids = [self.db.enqueue("py.v", v) for v, _ in cases]
        many = self.db.enqueue_many("py.v", [{"n": 1}, "t", b"b", 7])
        graph = self.db.enqueue_graph([{"name": "g", "kind": "py.v",
                                        "payload": {"n": 2}}])
        for tid, (value, text) in zip(ids, cases):
            with self.subTest(value=value):
                t = self.db.get(tid)
                if text is None:
                    self.assertEqual(t.payload_bytes, value)
                else:
                    self.assertEqual(t.payload, text)
        self.assertEqual([self.db.get(i).payload for i in many],
                         ['{"n":1}', "t", "b", "7"])
        self.assertEqual(self.db.get(graph["g"]).payload, '{"n":2}')
        self.assertEqual(self.db.get(ids[0]).data, cases[0][0])
        self.assertIsNone(self.db.get(ids[-1]).data)
        with self.assertRaises(ValueError):
            self.db.get(ids[7]).data  # "as it is" is not JSON
        # the handler's view: text and value
        seen = {}
        w = self.db.worker(concurrency=1, until_empty=True, poll=0.05)

        @w.handler("py.v")
        def handle(job):
            try:
                data = job.data
            except ValueError as e:
                data = ("not JSON", str(e))
            seen[job.id] = (job.payload, data)

        w.run()
        w.close()
        self.assertEqual(seen[ids[0]], (cases[0][1], cases[0][0]))
        self.assertEqual(seen[ids[2]], ("[1,2]", [1, 2]))
        self.assertEqual(seen[ids[3]], ("42", 42))
        self.assertEqual(seen[ids[5]], ("true", True))
        self.assertEqual(seen[ids[8]], ('{"a": 1}', {"a": 1}))
        self.assertEqual(seen[ids[10]], ("", None))
        self.assertEqual(seen[ids[7]][1][0], "not JSON")
        self.assertIn("task %d" % ids[7], seen[ids[7]][1][1])

    def test_results_as_values(self):
        returns = {"dict": {"total": 3, "items": ["a", None]},
                   "list": [1, 2], "int": 7, "float": 0.5, "true": True,
                   "text": "plain words", "jsontext": '{"x": 1}',
                   "bytes": b"raw", "none": None}
        ids = {k: self.db.enqueue("py.r", k) for k in returns}
        w = self.db.worker(concurrency=2, until_empty=True, poll=0.05)
        w.handle("py.r", lambda job: returns[job.payload])
        w.run()
        w.close()
        got = {k: self.db.get(i) for k, i in ids.items()}
        self.assertEqual({k: t.status for k, t in got.items()},
                         {k: "succeeded" for k in returns})
        self.assertEqual(got["dict"].result_text,
                         '{"total":3,"items":["a",null]}')
        self.assertEqual(got["dict"].result, returns["dict"])
        self.assertEqual(got["list"].result, [1, 2])
        self.assertEqual(got["int"].result, 7)
        self.assertEqual(got["float"].result, 0.5)
        self.assertIs(got["true"].result, True)
        self.assertEqual(got["text"].result, "plain words")
        self.assertEqual(got["jsontext"].result, {"x": 1})
        self.assertEqual(got["bytes"].result, "raw")
        self.assertIsNone(got["none"].result)
        self.assertIsNone(got["none"].result_text)
        self.assertEqual(self.db.task(ids["dict"]).result(timeout=10),
                         returns["dict"])

    def test_a_result_that_is_not_json_able_fails_the_attempt(self):
        tid = self.db.enqueue("py.r", max_attempts=1)
        w = self.db.worker(concurrency=1, until_empty=True, poll=0.05)
        w.handle("py.r", lambda job: {"when": dt.datetime.now()})
        w.run()
        w.close()
        t = self.db.get(tid)
        self.assertEqual(t.status, "dead")
        self.assertTrue(t.last_error.startswith(
            "TypeError: sked: a handler's result is not JSON-able"),
            t.last_error)

    def test_schedule_payload_as_value(self):
        self.db.schedule("nightly", "0 3 * * *", "py.v", {"full": True})
        self.assertEqual(self.db.schedules()[0].payload, '{"full":true}')


class TestTracebacks(DbCase):
    """A handler's exception is kept with its traceback (docs/python.md,
    "Failures")."""

    def run_one(self, fn, **enqueue):
        tid = self.db.enqueue("py.tb", max_attempts=1, **enqueue)
        w = self.db.worker(concurrency=1, until_empty=True, poll=0.05)
        w.handle("py.tb", fn)
        w.run()
        w.close()
        t = self.db.get(tid)
        self.assertEqual(t.status, "dead")
        [run] = self.db.runs(tid)
        self.assertEqual(run.error, t.last_error)
        return t.last_error

    def test_the_frames_of_the_handler(self):
        customers = {}

        def lookup(job):
            return customers[job.data["customer"]]

        def charge(job):
            lookup(job)

        err = self.run_one(charge, payload={"customer": "missing customer"})
        lines = err.split("\n")
        self.assertEqual(lines[0], "KeyError: 'missing customer'")
        self.assertEqual(lines[1], "Traceback (most recent call last):")
        self.assertRegex(lines[2], r'^  File ".*test_sked\.py", line \d+, '
                         'in charge$')
        self.assertEqual(lines[3], "    lookup(job)")
        self.assertRegex(lines[4], r"in lookup$")
        self.assertEqual(lines[5],
                         '    return customers[job.data["customer"]]')
        self.assertEqual(len(lines), 6, err)  # none of the package's frames
        self.assertNotIn("_worker.py", err)

    def test_a_deep_traceback_keeps_its_last_frames(self):
        def ping(n, job):
            if n == 0:
                raise RuntimeError("x" * 2000)  # the message is cut too
            return pong(n - 1, job)

        def pong(n, job):  # two by turns: no "repeated" line
            return ping(n - 1, job)

        def deep(job):
            return ping(30, job)

        err = self.run_one(deep)
        self.assertLessEqual(len(err.encode()), 1023)
        lines = err.split("\n")
        self.assertTrue(lines[0].startswith("RuntimeError: xxx"))
        self.assertTrue(lines[0].endswith("..."))
        self.assertLessEqual(len(lines[0]), 300)
        self.assertRegex(lines[1], r"^Traceback \(most recent call last, "
                         r"\d+ frames left out\):$")
        self.assertEqual(lines[-1], '    raise RuntimeError("x" * 2000)  '
                         '# the message is cut too')
        self.assertNotIn("in deep", err)  # the oldest went first

    def test_give_up_and_retry_in_have_no_traceback(self):
        def give_up(job):
            raise sked.GiveUp("bad input")

        self.assertEqual(self.run_one(give_up),
                         "no retry (the handler said so): GiveUp: bad input")


class TestApp(DbCase):
    def test_delay(self):
        app = sked.App(self.url, prefix=self.prefix)
        self.addCleanup(app.close)

        @app.task("py.add", max_attempts=2, queue="math")
        def add(job):
            return sum(job.data)

        @app.task()
        def shout(job):
            return job.payload.upper()

        self.assertEqual((add.kind, shout.kind), ("py.add", "shout"))
        h = add.delay([1, 2, 39], priority=4)
        self.assertIsInstance(h, sked.TaskHandle)
        t = self.db.get(h.id)
        self.assertEqual((t.kind, t.queue, t.max_attempts, t.priority,
                          t.data), ("py.add", "math", 2, 4, [1, 2, 39]))
        # another thread enqueues on a handle of its own
        other = []
        th = threading.Thread(target=lambda: other.append(
            shout.delay("hi", queue="math")))
        th.start()
        th.join()
        self.assertEqual(len(app._opened), 2)
        with app.worker(until_empty=True, poll=0.05, queues="math") as w:
            w.run()
        self.assertEqual(h.result(timeout=10), 42)
        self.assertEqual(self.db.get(other[0].id).result, "HI")

        class FakeJob:  # still the function when called
            data = [2, 3]
        self.assertEqual(add(FakeJob()), 5)
        with self.assertRaises(sked.InvalidArgument):
            app.task("py.add")(lambda job: None)  # a kind has one handler



if __name__ == "__main__":
    main()
