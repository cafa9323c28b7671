"""python-aio/<backend>: sked.aio, the asyncio face of the Python binding.

The async handle (async with sked.aio.open, awaited enqueue, get, wait,
result) and the async worker: `async def` handlers run on the caller's
event loop, at most `concurrency` at once, while the loop stays free
(a wait is awaited beside a running worker); a coroutine's exception is
the attempt's error with the coroutine's frames; cancelling run() stops
the worker gracefully. Run on SQLite and PostgreSQL (SKED_TEST_BACKEND,
tests/common.py).
"""

import asyncio
import threading
import time

from common import DbCase, main, sked


class TestAio(DbCase):
    def test_async_handle(self):
        async def go():
            async with sked.aio.open(self.url, prefix=self.prefix) as db:
                tid = await db.enqueue("py.a", {"n": 1}, priority=3)
                ids = await db.enqueue_many("py.a", [{"n": 2}, "three"])
                t = await db.get(tid)
                n = await db.count(status="pending")
                await db.cancel(ids[1])
                with self.assertRaises(sked.InvalidArgument):
                    await db.enqueue("bad kind")
                [c] = await db.wait([ids[1]], timeout=5)
                with self.assertRaises(sked.TaskFailed):
                    await db.result(ids[1], timeout=5)
                with self.assertRaises(sked.WaitTimeout):
                    await db.wait([tid], timeout=0.2)
                return t, n, c.status
            # the handle is closed with the block
        t, n, cancelled = asyncio.run(go())
        self.assertEqual((t.data, t.priority, n, cancelled),
                         ({"n": 1}, 3, 3, "cancelled"))

        async def awaited():
            db = await sked.aio.open(self.url, prefix=self.prefix)
            try:
                return await db.count()
            finally:
                await db.close()
        self.assertEqual(asyncio.run(awaited()), 3)

    def test_async_worker_runs_coroutines_on_the_loop(self):
        n, conc = 12, 4
        ids = self.db.enqueue_many("py.slow", [{"i": i} for i in range(n)])
        boom = self.db.enqueue("py.boom", {"why": "no route"},
                               max_attempts=1)
        state = {"now": 0, "max": 0, "threads": set()}

        async def go():
            w = sked.aio.Worker(self.url, db_options={"prefix": self.prefix},
                                concurrency=conc, until_empty=True,
                                poll=0.05)

            @w.handler("py.slow")
            async def slow(job):
                state["threads"].add(threading.get_ident())
                state["now"] += 1
                state["max"] = max(state["max"], state["now"])
                await asyncio.sleep(0.2)
                state["now"] -= 1
                return {"twice": job.data["i"] * 2}

            @w.handler("py.boom")
            async def explode(job):
                await asyncio.sleep(0)
                await route(job)

            async def route(job):
                raise LookupError(job.data["why"])

            state["loop"] = threading.get_ident()
            t0 = time.monotonic()
            await w.run()
            return time.monotonic() - t0

        took = asyncio.run(go())
        self.assertEqual(state["threads"], {state["loop"]},
                         "every coroutine ran on the loop's thread")
        self.assertLessEqual(state["max"], conc,
                             "at most `concurrency` coroutines at once")
        self.assertGreater(state["max"], 1, "coroutines overlapped")
        self.assertLess(took, n * 0.2, "faster than one at a time")
        self.assertEqual([self.db.get(i).result for i in ids],
                         [{"twice": 2 * i} for i in range(n)])
        t = self.db.get(boom)
        self.assertEqual(t.status, "dead")
        lines = t.last_error.split("\n")
        self.assertEqual(lines[0], "LookupError: no route")
        self.assertEqual(lines[1], "Traceback (most recent call last):")
        self.assertRegex(lines[2], r"in explode$")
        self.assertRegex(lines[-2], r"in route$")
        self.assertNotIn("concurrent", t.last_error)
        self.assertNotIn("sked/aio.py", t.last_error)

    def test_await_a_result_beside_a_running_worker(self):
        async def go():
            async with sked.aio.open(self.url, prefix=self.prefix) as db:
                w = db.worker(concurrency=2, poll=0.05)

                @w.handler("py.add")
                async def add(job):
                    return sum(job.data)

                running = asyncio.ensure_future(w.run())
                tid = await db.enqueue("py.add", [1, 2, 39])
                got = await db.result(tid, timeout=30)
                w.stop()
                await asyncio.wait_for(running, 30)
                return got
        self.assertEqual(asyncio.run(go()), 42)

    def test_cancelling_run_stops_the_worker_gracefully(self):
        tid = self.db.enqueue("py.long")
        started = []

        async def go():
            w = sked.aio.Worker(self.url, db_options={"prefix": self.prefix},
                                concurrency=1, poll=0.05, grace=10)

            @w.handler("py.long")
            async def long(job):
                started.append(job.id)
                await asyncio.sleep(0.3)
                return "finished"

            running = asyncio.ensure_future(w.run())
            while not started:
                await asyncio.sleep(0.02)
            running.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await asyncio.wait_for(running, 30)

        asyncio.run(go())
        t = self.db.get(tid)
        # the running coroutine had its grace and finished
        self.assertEqual((t.status, t.result), ("succeeded", "finished"))

    def test_plain_handlers_too(self):
        tid = self.db.enqueue("py.plain", "x")

        async def go():
            handlers = sked.Handlers()

            @handlers("py.plain")
            def plain(job):
                return job.payload * 2

            w = sked.aio.Worker(self.url, db_options={"prefix": self.prefix},
                                until_empty=True, poll=0.05,
                                handlers=handlers)
            await w.run()
        asyncio.run(go())
        self.assertEqual(self.db.get(tid).result, "xx")


if __name__ == "__main__":
    main()
