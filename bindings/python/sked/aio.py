"""asyncio for sked: an async handle and a worker for `async def` handlers.

    async with sked.aio.open(url) as db:
        tid = await db.enqueue("email", {"to": "ada"})
        print(await db.result(tid, timeout=30))

    worker = sked.aio.Worker(url, concurrency=8)

    @worker.handler("email")
    async def send(job: sked.Job) -> None: ...

    await worker.run()          # until worker.stop() or cancellation

Layer: the top of the Python binding, over _client (Sked) and _worker
(Worker); nothing imports it but the package's __init__. libsked's calls
block, so each runs on a thread: a handle's calls on one thread of its
own, in the order made (a handle is one connection, used by one thread
at a time); the worker's C loop on another, its handler threads handing
each task's coroutine to the event loop that called run() and waiting
for it, so at most `concurrency` coroutines run at once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import inspect
from typing import (
    Any, Callable, Dict, Generator, Iterable, List, Optional,
    Sequence, Tuple, TypeVar)

from ._client import Sked as _Sked
from ._errors import StateError, _code
from ._rows import Live, Run, Task
from ._values import Duration, Payload
from ._wait import TaskFailed
from ._worker import Handlers, Job, Worker as _Worker, _Registers

_T = TypeVar("_T")
_F = TypeVar("_F", bound=Callable[..., Any])

#: An async handler: an `async def` taking the Job (a plain function
#: works too, and runs on the worker's thread).
AsyncHandler = Callable[[Job], Any]


class Sked:
    """A handle whose calls are awaited: each runs sked.Sked's call on
    the handle's own thread, one at a time in the order made (a wait
    holds the handle until it returns: open a second handle to wait
    while enqueueing). Make one with `sked.aio.open(url)`."""

    def __init__(self, db: _Sked,
                 pool: concurrent.futures.ThreadPoolExecutor) -> None:
        self.sync = db  #: the blocking handle underneath
        self._pool = pool

    async def _call(self, fn: Callable[..., _T], *args: Any,
                    **kwargs: Any) -> _T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._pool, functools.partial(fn, *args, **kwargs))

    @property
    def url(self) -> str:
        return self.sync.url

    async def enqueue(self, kind: str, payload: Payload = None,
                      **options: Any) -> int:
        """sked.Sked.enqueue: the task's id."""
        return await self._call(self.sync.enqueue, kind, payload, **options)

    async def enqueue_ex(self, kind: str, payload: Payload = None,
                         **options: Any) -> Tuple[int, bool]:
        return await self._call(self.sync.enqueue_ex, kind, payload,
                                **options)

    async def enqueue_many(self, kind: str, payloads: Iterable[Payload],
                           **options: Any) -> List[int]:
        return await self._call(self.sync.enqueue_many, kind,
                                list(payloads), **options)

    async def enqueue_graph(self, tasks: Sequence[Dict[str, Any]]
                            ) -> Dict[str, int]:
        return await self._call(self.sync.enqueue_graph, tasks)

    async def get(self, task_id: int) -> Task:
        return await self._call(self.sync.get, task_id)

    async def list(self, **filters: Any) -> List[Task]:
        return await self._call(self.sync.list, **filters)

    async def count(self, **filters: Any) -> int:
        return await self._call(self.sync.count, **filters)

    async def runs(self, task_id: int) -> List[Run]:
        return await self._call(self.sync.runs, task_id)

    async def live(self, task_id: int) -> Live:
        return await self._call(self.sync.live, task_id)

    async def cancel(self, task_id: int) -> None:
        await self._call(self.sync.cancel, task_id)

    async def retry(self, task_id: int) -> None:
        await self._call(self.sync.retry, task_id)

    async def wait(self, ids: Iterable[int],
                   timeout: Optional[Duration] = None) -> List[Task]:
        """The tasks once each has ended (sked.WaitTimeout when timeout
        runs out). Cancelling the await does not cut the wait short: the
        handle stays busy until it returns, so give a timeout."""
        return await self._call(self.sync.wait, list(ids), timeout)

    async def result(self, task_id: int,
                     timeout: Optional[Duration] = None) -> Any:
        """Wait for the task, then its handler's result (a JSON value
        decoded); sked.TaskFailed when it ended dead or cancelled."""
        [t] = await self.wait([task_id], timeout)
        if t.status != "succeeded":
            raise TaskFailed(t)
        return t.result

    def worker(self, **options: Any) -> "Worker":
        """A Worker on this database (a connection of its own)."""
        return Worker(self.sync.url, db_options=self.sync._args, **options)

    async def close(self) -> None:
        try:
            await self._call(self.sync.close)
        finally:
            self._pool.shutdown(wait=False)

    async def __aenter__(self) -> "Sked":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class _Opening:
    """What open() returns: await it for a handle, or use it in
    `async with` (closed at the end of the block)."""

    def __init__(self, url: str, options: Dict[str, Any]) -> None:
        self._url, self._options = url, options
        self._db: Optional[Sked] = None

    async def _open(self) -> Sked:
        pool = concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix="sked-aio")
        loop = asyncio.get_running_loop()
        try:
            db = await loop.run_in_executor(
                pool, functools.partial(_Sked, self._url, **self._options))
        except BaseException:
            pool.shutdown(wait=False)
            raise
        return Sked(db, pool)

    def __await__(self) -> Generator[Any, None, Sked]:
        return self._open().__await__()

    async def __aenter__(self) -> Sked:
        self._db = await self._open()
        return self._db

    async def __aexit__(self, *exc: object) -> None:
        if self._db is not None:
            await self._db.close()


def open(url: str, *, prefix: Optional[str] = None,
         strategy: Optional[str] = None, migrate: bool = False) -> _Opening:
    """`async with sked.aio.open(url) as db:` or `db = await
    sked.aio.open(url)`: sked.open's handle, its calls awaited."""
    return _Opening(url, dict(prefix=prefix, strategy=strategy,
                              migrate=migrate))


class Worker(_Registers):
    """Runs tasks with `async def` handlers on the event loop that awaits
    run(). Options are sked.Worker's (concurrency, queues, lease, poll,
    grace, until_empty, ...); concurrency bounds the coroutines running
    at once. The connection is opened when run() starts, on a thread."""

    def __init__(self, url: str, *, db_options: Optional[Dict[str, Any]] = None,
                 handlers: Optional[Handlers] = None,
                 **options: Any) -> None:
        self._url, self._db_options, self._options = url, db_options, options
        self._handlers: Dict[str, AsyncHandler] = {}
        self._w: Optional[_Worker] = None
        self._stopping: Optional[bool] = None
        if handlers is not None:
            self.include(handlers)

    def handle(self, kind: str, fn: _F) -> _F:
        """Run tasks of kind with fn(job): an `async def` (run on the
        loop) or a plain function (run on the worker's thread)."""
        if not callable(fn):
            raise TypeError("sked: a handler must be callable")
        if self._w is not None:
            raise StateError(_code("STATE"), "sked: add handlers before "
                             "run()")
        self._handlers[kind] = fn
        return fn

    @staticmethod
    def _bridge(fn: AsyncHandler, loop: asyncio.AbstractEventLoop
                ) -> Callable[[Job], Any]:
        if not (inspect.iscoroutinefunction(fn)
                or inspect.iscoroutinefunction(getattr(fn, "__call__",
                                                       None))):
            return fn

        def call(job: Job) -> Any:
            # on a worker thread: the coroutine runs on the loop, this
            # thread (one of `concurrency`) waits for it; its exception
            # is raised here, traceback and all
            coro: Any = fn(job)
            return asyncio.run_coroutine_threadsafe(coro, loop).result()
        return call

    async def run(self) -> None:
        """Run until stop() (or, with until_empty, until nothing is due).
        Cancelling the await stops the worker gracefully (running
        handlers get the grace period), then raises CancelledError."""
        loop = asyncio.get_running_loop()
        self._stopping = False
        try:
            w = await loop.run_in_executor(None, functools.partial(
                _Worker, self._url, db_options=self._db_options,
                **self._options))
        except BaseException:
            self._stopping = None
            raise
        self._w = w
        try:
            for kind, fn in self._handlers.items():
                w.handle(kind, self._bridge(fn, loop))
            if self._stopping:
                return
            done = loop.run_in_executor(None, w.run)
            try:
                await asyncio.shield(done)
            except asyncio.CancelledError:
                w.stop()
                await asyncio.wait([done])
                raise
        finally:
            self._w = None
            self._stopping = None
            await loop.run_in_executor(None, w.close)

    def stop(self, immediate: bool = False) -> None:
        """Ask a running worker to stop (from the loop or any thread)."""
        if self._stopping is not None:
            self._stopping = True
        if self._w is not None:
            self._w.stop(immediate)

    def counters(self) -> Dict[str, int]:
        return self._w.counters() if self._w is not None else {}


__all__ = ["open", "Sked", "Worker", "AsyncHandler"]
