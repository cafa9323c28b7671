"""Waiting for tasks to end: Sked.wait and the task handle that
Sked.submit and Sked.task return (.wait(), .result()).

Layer: the Python binding, over sked_wait (include/sked.h): on PostgreSQL
the waiter is woken by the transaction that ends the task, elsewhere it
reads with a back-off (docs/cli.md, "wait"). The call releases the GIL
(ctypes does), so other threads run while one waits; a handle is used by
one thread at a time, as always.
"""

from __future__ import annotations

import ctypes
from typing import Any, Iterable, List, Optional, Protocol

from ._errors import SkedError, _error
from ._ffi import _I64P, _P, _POINTER, _fn, _lib, c_int, c_int64, c_size_t
from ._rows import Task
from ._values import Duration, _ms, _str


class _Db(Protocol):
    """What a wait needs of a Sked: its handle and get(). A protocol,
    not an import of _client, which imports this module."""

    def _handle(self) -> ctypes.c_void_p: ...

    def get(self, task_id: int) -> Task: ...


_fn("sked_wait", c_int, _P, _I64P, c_size_t, c_int64, _POINTER(c_size_t),
    _I64P)
_TIMEOUT = _lib.sked_errcode(b"SKED_ETIMEOUT")
WAIT_MAX = 1000


class WaitTimeout(SkedError, TimeoutError):
    """The time ran out before every task ended; .tasks holds them as
    they were then."""

    tasks: List[Task]


class TaskFailed(Exception):
    """result() of a task that ended dead or cancelled; .task is it."""

    def __init__(self, task: Task) -> None:
        self.task = task
        super().__init__("sked: task %d ended %s%s" % (
            task.id, task.status,
            ": " + task.last_error if task.last_error else ""))


def wait(db: _Db, ids: Iterable[int],
         timeout: Optional[Duration] = None) -> List[Task]:
    """Block until each task of ids has ended (succeeded, dead or
    cancelled) and return them, in the order given. timeout: seconds or a
    timedelta (None: no bound); WaitTimeout when it runs out first,
    NotFound for an id of no task."""
    ids = [int(i) for i in ids]
    if not ids or len(ids) > WAIT_MAX:
        raise ValueError("sked: wait for 1 to %d tasks, not %d"
                         % (WAIT_MAX, len(ids)))
    ms = -1 if timeout is None else max(0, _ms(timeout, "timeout"))
    arr = (c_int64 * len(ids))(*ids)
    nended, bad = c_size_t(), c_int64()
    rc = _lib.sked_wait(db._handle(), arr, len(ids), ms,
                        ctypes.byref(nended), ctypes.byref(bad))
    if rc != 0 and rc != _TIMEOUT:
        raise _error(rc, _str(_lib.sked_errmsg(db._handle())))
    tasks = [db.get(i) for i in ids]
    if rc == _TIMEOUT:
        e = WaitTimeout(rc, _str(_lib.sked_errmsg(db._handle())))
        e.tasks = tasks
        raise e
    return tasks


class TaskHandle:
    """A task by its id, as the enqueuer holds it: wait for its end,
    read its result. Sked.submit enqueues and returns one; Sked.task
    makes one of an id."""

    __slots__ = ("db", "id")

    def __init__(self, db: _Db, task_id: int) -> None:
        self.db = db
        self.id = int(task_id)

    def __repr__(self) -> str:
        return "<sked.TaskHandle %d>" % self.id

    def get(self) -> Task:
        """The task as it is now."""
        return self.db.get(self.id)

    def wait(self, timeout: Optional[Duration] = None) -> Task:
        """Block until the task has ended; the task then (WaitTimeout when
        timeout runs out first)."""
        return wait(self.db, [self.id], timeout)[0]

    def result(self, timeout: Optional[Duration] = None) -> Any:
        """Wait, then the result its handler left when it succeeded, as
        Task.result gives it (a JSON value decoded, other text as str,
        None: none); TaskFailed when it ended dead or cancelled."""
        t = self.wait(timeout)
        if t.status != "succeeded":
            raise TaskFailed(t)
        return t.result
