"""A program as a user writes it, for the type checker (python/install
runs mypy --strict on it against the installed package): it must check
clean, so the hints in sked/ say what the calls take and give. It also
runs: SKED_URL names a database, and it prints what it did."""

import asyncio
import datetime as dt
import os
from typing import Any, List, Optional

import sked

handlers = sked.Handlers()


@handlers("mail.send")
def send(job: sked.Job) -> None:
    data: Any = job.data if job.payload.startswith("{") else None
    print("sent", job.id, job.payload, data is not None)


def main() -> None:
    url = os.environ.get("SKED_URL", "sqlite:typed.db")
    with sked.open(url, migrate=True) as db:
        tid: int = db.enqueue("mail.send", '{"to": "ada"}', queue="mail",
                              concurrency_key="ada",
                              delay=dt.timedelta(seconds=0))
        ids: List[int] = db.enqueue_many("mail.send", ["a", b"b"])
        created: bool = db.schedule("nightly", "0 3 * * *", "mail.send",
                                    "{}", tz="Europe/Paris")
        manual: int = db.run_schedule("nightly")
        db.enqueue("mail.send", {"to": ["ada", "bob"], "n": 1.5})
        db.set_queue_limits("mail", concurrency=2, per_key=1, rate="10/1s")
        limits: List[sked.QueueInfo] = db.queues()
        with db.lock("report", ttl=30) as lk:
            token: int = lk.token
        state: sked.LockState = db.lock_state("report")
        pending: int = db.count(status="pending")
        with db.worker(concurrency=2, until_empty=True, poll=0.05,
                       handlers=handlers) as w:
            w.run()
        task: sked.Task = db.get(tid)
        when: Optional[dt.datetime] = task.finished
        print("task", tid, task.status, "bulk", len(ids), "created", created,
              "manual", manual, "limits", len(limits), "token", token > 0,
              "held", state.held, "pending before", pending,
              "finished", when is not None)



async def aio_part(url: str) -> None:
    async with sked.aio.open(url) as db:
        w: sked.aio.Worker = db.worker(until_empty=True, poll=0.05)

        @w.handler("aio.add")
        async def add(job: sked.Job) -> int:
            total: int = sum(job.data)
            return total

        tid: int = await db.enqueue("aio.add", [1, 2])
        await w.run()
        got: Any = await db.result(tid, timeout=10)
        print("aio", got)


def app_part(url: str) -> None:
    app = sked.App(url)

    @app.task("app.twice")
    def twice(job: sked.Job) -> int:
        n: int = job.data * 2
        return n

    h: sked.TaskHandle = twice.delay(21, priority=1)
    with app.worker(until_empty=True, poll=0.05) as w:
        w.run()
    print("app", h.result(timeout=10))
    app.close()


if __name__ == "__main__":
    main()
    url = os.environ.get("SKED_URL", "sqlite:typed.db")
    asyncio.run(aio_part(url))
    app_part(url)
