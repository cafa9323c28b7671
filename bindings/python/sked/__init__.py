"""sked — Python bindings for libsked, the task scheduler on your database.

A pure-Python module over ctypes: no compiler, no packages beyond the
standard library. It loads libsked.so (the path in SKED_LIBRARY, else the
loader's search path), checks that the library speaks the ABI this module
was written for, and wraps the calls a Python program needs:

    with sked.open("sqlite:/tmp/sked.db", migrate=True) as db:
        db.enqueue("email", '{"to": "ada@example.com"}', priority=5)

    handlers = sked.Handlers()

    @handlers("email")
    def send(job: sked.Job) -> None:
        ...

    with db.worker(concurrency=4, handlers=handlers) as w:
        w.stop_on_signals()
        w.run()          # until stop() or a signal

Everything here follows include/sked.h, include/sked_abi.h and docs/abi.md: option objects
with setters instead of mirrored option structs, codes read by name,
struct mirrors checked against sked_struct_size().

The package's modules, each with one job (this file only re-exports):
_ffi (loading libsked, the ABI check, struct mirrors, function types),
_errors (the exceptions and the code -> exception mapping), _values
(conversions and option objects), _log (set_log), _rows (Task, Run,
Schedule, ...), _core (one connection, which both of the next build
on), _worker (Job, Handlers, Worker), _wait (Sked.wait, TaskHandle) and
_client (open, Sked, Lock). Import from `sked`, not from them.
"""

from __future__ import annotations

from ._ffi import ABI_VERSION, library, version
from ._ffi import _lib as _lib  # tests and tools call libsked directly
from ._errors import (Busy, DatabaseError, GiveUp, InvalidArgument, Locked,
                      LockLost, NotFound, ResultNotStored, RetryIn,
                      SchemaError, SkedError, StateError, TooBig,
                      Unavailable, Unsupported)
from ._values import Duration as Duration, Payload as Payload
from ._log import set_log
from ._rows import LockRow, LockState, QueueInfo, Run, Schedule, Task
from ._client import KEEP, Lock, Sked, open
from ._worker import Handler as Handler
from ._worker import PREFETCH_OFF, Handlers, Job, Worker
from ._wait import TaskFailed, TaskHandle, WaitTimeout
from ._tx import Wrapped, wrap
from ._app import App, TaskFunction
from . import aio as aio  # asyncio: sked.aio.open, sked.aio.Worker

__all__ = [
    "ABI_VERSION", "PREFETCH_OFF", "KEEP", "open", "Sked", "Task", "Run",
    "Job", "Worker", "Handlers", "Schedule", "Lock", "LockState", "LockRow",
    "QueueInfo", "SkedError", "InvalidArgument", "TooBig", "NotFound",
    "StateError", "Unavailable", "DatabaseError", "Busy", "SchemaError",
    "Unsupported", "Locked", "LockLost", "ResultNotStored", "GiveUp",
    "RetryIn", "library", "version", "set_log",
    "TaskHandle", "TaskFailed", "WaitTimeout", "wrap", "Wrapped",
    "App", "TaskFunction",
]

# The public names keep the module they always had: sked.Task, not
# sked._rows.Task, in reprs, tracebacks and pickles.
for _name in __all__:
    _obj = globals()[_name]
    if isinstance(_obj, type) or callable(_obj):
        _obj.__module__ = __name__
del _name, _obj
