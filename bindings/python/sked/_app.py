"""sked.App: handlers declared with the database they enqueue on, so a
handler can be enqueued by name-free sugar: `send.delay({"to": "ada"})`.

    app = sked.App("postgres://…")

    @app.task("email.send", max_attempts=5)
    def send(job: sked.Job) -> None: ...

    send.delay({"to": "ada"}, priority=5)     # a TaskHandle
    app.worker(concurrency=4).run()            # runs every app.task

Layer: the Python binding, over _client (Sked), _worker (Handlers,
Worker) and _wait (TaskHandle). A handle is one connection used by one
thread at a time, so the app opens one per thread that enqueues (lazily,
kept for the thread's life); close() closes them all.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, Generic, List, Optional, TypeVar

from ._client import Sked
from ._values import Payload
from ._wait import TaskHandle
from ._worker import Handlers, Job, Worker

_R = TypeVar("_R")


class TaskFunction(Generic[_R]):
    """A handler declared with App.task: still callable as the function
    (fn(job)), and enqueued with .delay()."""

    def __init__(self, app: "App", kind: str, fn: Callable[[Job], _R],
                 defaults: Dict[str, Any]) -> None:
        self.app, self.kind, self.fn = app, kind, fn
        self.defaults = defaults
        self.__name__ = getattr(fn, "__name__", kind)
        self.__doc__ = fn.__doc__

    def __call__(self, job: Job) -> _R:
        return self.fn(job)

    def delay(self, payload: Payload = None, **options: Any) -> TaskHandle:
        """Enqueue a task of this kind on the app's database (the options
        of Sked.enqueue, over the defaults given to App.task); a
        TaskHandle: .id, .wait(), .result()."""
        return self.app.db.submit(self.kind, payload,
                                  **{**self.defaults, **options})

    def __repr__(self) -> str:
        return "<sked.TaskFunction %s>" % self.kind


class App:
    """Handlers and the database they are enqueued on. url and the
    options are sked.open's (the schema must exist unless migrate)."""

    def __init__(self, url: str, *, prefix: Optional[str] = None,
                 strategy: Optional[str] = None,
                 migrate: bool = False) -> None:
        self.url = url
        self._options: Dict[str, Any] = dict(prefix=prefix,
                                             strategy=strategy,
                                             migrate=migrate)
        self.handlers = Handlers()
        self._local = threading.local()
        self._opened: List[Sked] = []
        self._lock = threading.Lock()

    @property
    def db(self) -> Sked:
        """The calling thread's handle (opened on first use)."""
        db: Optional[Sked] = getattr(self._local, "db", None)
        if db is None or db._h is None:
            db = Sked(self.url, **self._options)
            self._local.db = db
            with self._lock:
                self._opened.append(db)
        return db

    def task(self, kind: Optional[str] = None, **defaults: Any
             ) -> Callable[[Callable[[Job], _R]], TaskFunction[_R]]:
        """Decorator: fn handles tasks of kind (default: the function's
        name); defaults are enqueue options .delay() uses (queue,
        priority, max_attempts, …)."""
        def register(fn: Callable[[Job], _R]) -> TaskFunction[_R]:
            name = kind if kind is not None else fn.__name__
            t = TaskFunction(self, name, fn, defaults)
            self.handlers.add(name, fn)
            return t
        return register

    def worker(self, **options: Any) -> Worker:
        """A Worker on the app's database running every app.task (the
        options of sked.Worker)."""
        return Worker(self.url, db_options=self._options,
                      handlers=self.handlers, **options)

    def close(self) -> None:
        """Close every handle the app opened (when no thread uses one)."""
        with self._lock:
            opened, self._opened = self._opened, []
        for db in opened:
            db.close()

    def __enter__(self) -> "App":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
