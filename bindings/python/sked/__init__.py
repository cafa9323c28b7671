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
"""

from __future__ import annotations

import ctypes
import ctypes.util
import datetime as _dt
import json
import os
import re
import signal as _signal
import socket
import threading
from typing import (Any, Callable, Dict, Iterable, Iterator, List, Optional,
                    Sequence, Tuple, Type, TypeVar, Union)

__all__ = [
    "ABI_VERSION", "PREFETCH_OFF", "KEEP", "open", "Sked", "Task", "Run",
    "Job", "Worker", "Handlers", "Schedule", "Lock", "LockState", "LockRow",
    "QueueInfo", "SkedError", "InvalidArgument", "TooBig", "NotFound",
    "StateError", "Unavailable", "DatabaseError", "Busy", "SchemaError",
    "Unsupported", "Locked", "LockLost", "ResultNotStored", "GiveUp",
    "RetryIn", "library",
    "version", "set_log",
]

#: The SKED_ABI_VERSION this module was written against.
ABI_VERSION = 4
#: Worker(prefetch=PREFETCH_OFF): claim only for free threads
PREFETCH_OFF = -1

#: A duration: seconds (int or float) or a timedelta.
Duration = Union[int, float, _dt.timedelta]
#: A payload: text (UTF-8) or bytes.
Payload = Union[str, bytes]
#: A handler: called with the Job; returning is success.
Handler = Callable[["Job"], Any]
_F = TypeVar("_F", bound=Callable[..., Any])

# ---------------------------------------------------------------- loading


def _load() -> ctypes.CDLL:
    path = os.environ.get("SKED_LIBRARY")
    names: List[str] = [path] if path else ["libsked.so.%d" % ABI_VERSION, "libsked.so"]
    found = ctypes.util.find_library("sked")
    if not path and found:
        names.append(found)
    err: Optional[OSError] = None
    for name in names:
        try:
            return ctypes.CDLL(name)
        except OSError as e:
            err = e
    raise ImportError(
        "sked: cannot load libsked (%s); set SKED_LIBRARY to the path of "
        "libsked.so" % err)


_lib = _load()

c_int, c_int64, c_size_t = ctypes.c_int, ctypes.c_int64, ctypes.c_size_t
c_char_p, c_void_p = ctypes.c_char_p, ctypes.c_void_p
_POINTER = ctypes.POINTER


def _fn(name: str, restype: Any, *argtypes: Any) -> Any:
    f = getattr(_lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


_fn("sked_abi_version", c_int)
_fn("sked_abi_check", c_int, c_int)
_fn("sked_version", c_char_p)
if _lib.sked_abi_check(ABI_VERSION) != 0:
    raise ImportError(
        "sked: libsked speaks ABI %d, this module ABI %d: use the module "
        "that came with the library" % (_lib.sked_abi_version(), ABI_VERSION))

# ------------------------------------------------------- struct mirrors

_NAME_BYTES = 128 + 1  # SKED_MAX_NAME + 1


class _Task(ctypes.Structure):
    _fields_ = [
        ("id", c_int64), ("queue", c_char_p), ("kind", c_char_p),
        ("payload", c_void_p), ("payload_len", c_size_t),
        ("status", c_int), ("priority", c_int), ("run_at_ms", c_int64),
        ("attempts", c_int), ("max_attempts", c_int),
        ("node_id", c_char_p), ("lease_until_ms", c_int64),
        ("unique_key", c_char_p), ("schedule_name", c_char_p),
        ("fire_time_ms", c_int64), ("last_error", c_char_p),
        ("created_ms", c_int64), ("updated_ms", c_int64),
        ("finished_ms", c_int64), ("result", c_char_p),
        ("traceparent", c_char_p),
    ]


class _Run(ctypes.Structure):
    _fields_ = [
        ("id", c_int64), ("task_id", c_int64), ("attempt", c_int),
        ("node_id", c_char_p), ("started_ms", c_int64),
        ("finished_ms", c_int64), ("outcome", c_char_p),
        ("exit_code", c_int), ("error", c_char_p), ("output", c_char_p),
    ]


class _Counters(ctypes.Structure):
    _fields_ = [(n, c_int64) for n in
                ("claimed", "succeeded", "failed", "dead", "lost", "late",
                 "released")]


class _Info(ctypes.Structure):
    _fields_ = [
        ("driver", ctypes.c_char * 16), ("dialect", ctypes.c_char * 16),
        ("product", ctypes.c_char * 64), ("version", ctypes.c_char * 64),
        ("strategy", ctypes.c_char * 16), ("reason", ctypes.c_char * 512),
        ("url", ctypes.c_char * 512), ("schema_version", c_int),
        ("schema_expected", c_int),
    ]


class _Schedule(ctypes.Structure):
    _fields_ = [
        ("name", c_char_p), ("expr", c_char_p), ("tz", c_char_p),
        ("kind", c_char_p), ("payload", c_void_p), ("queue", c_char_p),
        ("payload_len", c_size_t), ("priority", c_int),
        ("max_attempts", c_int), ("misfire", c_int), ("overlap", c_int),
        ("enabled", c_int), ("next_fire_ms", c_int64),
        ("last_fire_ms", c_int64),
    ]


class _LockRow(ctypes.Structure):
    _fields_ = [
        ("name", c_char_p), ("owner", c_char_p), ("locked_at_ms", c_int64),
        ("locked_until_ms", c_int64), ("token", c_int64), ("held", c_int),
    ]


class _LockState(ctypes.Structure):
    _fields_ = [
        ("owner", ctypes.c_char * _NAME_BYTES), ("locked_at_ms", c_int64),
        ("locked_until_ms", c_int64), ("token", c_int64),
        ("now_ms", c_int64), ("held", c_int),
    ]


class _QueueInfo(ctypes.Structure):
    _fields_ = [
        ("queue", c_char_p), ("limited", c_int), ("concurrency", c_int),
        ("per_key", c_int), ("rate_n", c_int), ("rate_window_ms", c_int64),
        ("running", c_int), ("keys_running", c_int), ("keys_full", c_int),
        ("rate_used", c_int), ("paused", c_int),
    ]


_fn("sked_struct_size", c_size_t, c_char_p)
for _sname, _mirror in (("sked_task", _Task), ("sked_run", _Run),
                        ("sked_worker_counters", _Counters),
                        ("sked_info", _Info), ("sked_schedule", _Schedule),
                        ("sked_lock_row", _LockRow),
                        ("sked_lock_state", _LockState),
                        ("sked_queue_info", _QueueInfo)):
    if _lib.sked_struct_size(_sname.encode()) != ctypes.sizeof(_mirror):
        raise ImportError("sked: struct %s is %d bytes in libsked, %d here"
                          % (_sname, _lib.sked_struct_size(_sname.encode()),
                             ctypes.sizeof(_mirror)))

# ------------------------------------------------------------ functions

_P = c_void_p
_I64P = _POINTER(c_int64)
_fn("sked_errcode", c_int, c_char_p)
_fn("sked_errname", c_char_p, c_int)
_fn("sked_strerror", c_char_p, c_int)
_fn("sked_errmsg", c_char_p, _P)
_fn("sked_open", c_int, c_char_p, _P, _POINTER(_P))
_fn("sked_close", None, _P)
_fn("sked_migrate", c_int, _P)
_fn("sked_get_info", c_int, _P, _POINTER(_Info))
_fn("sked_now", c_int, _P, _I64P)
_fn("sked_enqueue", c_int, _P, c_char_p, c_char_p, c_size_t, _P, _I64P,
    _POINTER(c_int))
_fn("sked_enqueue_many", c_int, _P, c_char_p, c_size_t, _POINTER(c_char_p),
    _POINTER(c_size_t), _P, _I64P)
_fn("sked_task_get", c_int, _P, c_int64, _POINTER(_POINTER(_Task)))
_fn("sked_task_list", c_int, _P, _P, _POINTER(_POINTER(_Task)),
    _POINTER(c_size_t))
_fn("sked_tasks_free", None, _POINTER(_Task), c_size_t)
_fn("sked_task_find_unique", c_int, _P, c_char_p, _I64P)
_fn("sked_task_count", c_int, _P, _P, _I64P)
_fn("sked_runs_get", c_int, _P, c_int64, _POINTER(_POINTER(_Run)),
    _POINTER(c_size_t))
_fn("sked_runs_free", None, _POINTER(_Run), c_size_t)
_fn("sked_cancel", c_int, _P, c_int64)
_fn("sked_retry", c_int, _P, c_int64)
_fn("sked_cancel_ids", c_int, _P, _I64P, c_size_t, _I64P)
_fn("sked_retry_ids", c_int, _P, _I64P, c_size_t, _I64P)
_fn("sked_cancel_where", c_int, _P, _P, _I64P)
_fn("sked_retry_where", c_int, _P, _P, _I64P)
_fn("sked_status_name", c_char_p, c_int)
_fn("sked_status_parse", c_int, c_char_p)

_fn("sked_schedule_put", c_int, _P, c_char_p, c_char_p, c_char_p, _P,
    _POINTER(c_int))
_fn("sked_schedule_remove", c_int, _P, c_char_p)
_fn("sked_schedule_pause", c_int, _P, c_char_p)
_fn("sked_schedule_resume", c_int, _P, c_char_p)
_fn("sked_schedule_run", c_int, _P, c_char_p, _I64P)
_fn("sked_schedule_list", c_int, _P, _POINTER(_POINTER(_Schedule)),
    _POINTER(c_size_t))
_fn("sked_schedules_free", None, _POINTER(_Schedule), c_size_t)
_fn("sked_schedule_tick", c_int, _P, _POINTER(c_int), _I64P)
_fn("sked_misfire_parse", c_int, c_char_p)
_fn("sked_misfire_name", c_char_p, c_int)
_fn("sked_overlap_parse", c_int, c_char_p)
_fn("sked_overlap_name", c_char_p, c_int)

_fn("sked_queue_set", c_int, _P, c_char_p, c_int, c_int, c_int, c_int64)
_fn("sked_queue_pause", c_int, _P, c_char_p, c_int)
_fn("sked_queue_list", c_int, _P, _POINTER(_POINTER(_QueueInfo)),
    _POINTER(c_size_t))
_fn("sked_queue_info_free", None, _POINTER(_QueueInfo), c_size_t)
_fn("sked_parse_rate", c_int, c_char_p, _POINTER(c_int), _I64P)

_fn("sked_lock_acquire", c_int, _P, c_char_p, c_char_p, c_int64, _P, _I64P)
_fn("sked_lock_extend", c_int, _P, c_char_p, c_char_p, c_int64, c_int64)
_fn("sked_lock_release", c_int, _P, c_char_p, c_char_p, c_int64, _P)
_fn("sked_lock_get", c_int, _P, c_char_p, _POINTER(_LockState))
_fn("sked_lock_list", c_int, _P, _POINTER(_POINTER(_LockRow)),
    _POINTER(c_size_t))
_fn("sked_lock_rows_free", None, _POINTER(_LockRow), c_size_t)
_fn("sked_name_valid", c_int, c_char_p)

_HANDLER = ctypes.CFUNCTYPE(c_int, _P, _P)
_fn("sked_worker_new", c_int, _P, _P, _POINTER(_P))
_fn("sked_worker_free", None, _P)
_fn("sked_worker_handle", c_int, _P, c_char_p, _HANDLER, _P)
_fn("sked_worker_run", c_int, _P)
_fn("sked_worker_stop", None, _P, c_int)
_fn("sked_worker_get_counters", None, _P, _POINTER(_Counters))
_fn("sked_worker_node_id", c_char_p, _P)
_fn("sked_job_id", c_int64, _P)
_fn("sked_job_kind", c_char_p, _P)
_fn("sked_job_queue", c_char_p, _P)
_fn("sked_job_payload", c_void_p, _P, _POINTER(c_size_t))
_fn("sked_job_attempt", c_int, _P)
_fn("sked_job_max_attempts", c_int, _P)
_fn("sked_job_traceparent", c_char_p, _P)
_fn("sked_job_cancelled", c_int, _P)
_fn("sked_job_set_error_msg", None, _P, c_char_p)
_fn("sked_job_give_up", None, _P)
_fn("sked_job_set_retry_in", None, _P, c_int64)
_fn("sked_job_set_result", c_int, _P, c_char_p, c_size_t)
_fn("sked_job_parent_count", c_size_t, _P)
_fn("sked_job_parents_json", c_char_p, _P)
_fn("sked_enqueue_opts_set_after", c_int, _P, _POINTER(c_int64), c_size_t)

# The option objects: name -> {field: setter}; strings and integers.
_OPTION_FIELDS: Dict[str, Dict[str, Any]] = {
    "sked_options": {"strategy": c_char_p, "prefix": c_char_p,
                     "migrate": c_int},
    "sked_enqueue_opts": {"queue": c_char_p, "unique_key": c_char_p,
                          "priority": c_int, "run_at_ms": c_int64,
                          "delay_ms": c_int64, "max_attempts": c_int,
                          "concurrency_key": c_char_p,
                          "on_parent_failure": c_int,
                          "traceparent": c_char_p},
    "sked_list_filter": {"queue": c_char_p, "kind": c_char_p,
                         "node_id": c_char_p, "status": c_int,
                         "limit": c_int, "before_id": c_int64,
                         "created_after_ms": c_int64,
                         "created_before_ms": c_int64},
    "sked_worker_options": {"node_id": c_char_p, "queues": c_char_p,
                            "concurrency": c_int, "lease_ms": c_int64,
                            "poll_ms": c_int64, "grace_ms": c_int64,
                            "retry_base_ms": c_int64,
                            "retry_max_ms": c_int64, "until_empty": c_int,
                            "timeout_ms": c_int64, "prefetch": c_int,
                            "lock_wait_warn_ms": c_int64},
    "sked_schedule_opts": {"tz": c_char_p, "payload": c_char_p,
                           "queue": c_char_p, "priority": c_int,
                           "max_attempts": c_int, "misfire": c_int,
                           "overlap": c_int},
    "sked_lock_opts": {"wait_ms": c_int64, "at_least_ms": c_int64},
}
for _obj, _fields in _OPTION_FIELDS.items():
    _fn(_obj + "_new", _P)
    _fn(_obj + "_free", None, _P)
    for _field, _ctype in _fields.items():
        _fn("%s_set_%s" % (_obj, _field), c_int, _P, _ctype)

# ---------------------------------------------------------------- errors


class SkedError(Exception):
    """A libsked call failed: code (negative), name ("SKED_EDB"), message
    (the one-line detail, sked_errmsg)."""

    code: int
    name: str
    message: str

    def __init__(self, code: int, message: str) -> None:
        self.code = code
        self.name = _lib.sked_errname(code).decode()
        self.message = message
        super().__init__("%s (%s)" % (message, self.name))


class InvalidArgument(SkedError, ValueError):
    """Bad input: a name, URL, option or value the library refused."""


class TooBig(InvalidArgument):
    """A payload or value over its limit."""


class NotFound(SkedError, LookupError):
    """No such task (or lock, schedule)."""


class StateError(SkedError):
    """Not allowed in the task's current state."""


class Unavailable(SkedError, ConnectionError):
    """The database cannot be reached."""


class DatabaseError(SkedError):
    """The server refused a statement."""


class Busy(DatabaseError):
    """A deadlock or busy database rolled the call back: try again."""


class SchemaError(SkedError):
    """The schema is missing or at another version (migrate=True, or
    `sked init`)."""


class Unsupported(SkedError):
    """Not supported by this build or database, or the strategy asked
    for cannot work on it."""


class Locked(SkedError):
    """The cluster lock is held by another owner (the message names it
    and until when)."""


class LockLost(SkedError):
    """The lock is no longer ours: it expired, or another owner took it
    (a newer fencing token holds it)."""


class GiveUp(Exception):
    """Raise from a handler to fail the attempt for good: no retry,
    whatever max_attempts says, so the task ends dead now (its error
    starts "no retry (the handler said so)"). For input that can never
    work; docs/handlers.md, "No retry"."""


class RetryIn(Exception):
    """Raise from a handler to fail the attempt and have it retried after
    `seconds` instead of the backoff (at most the worker's retry_max).
    The attempt still counts against max_attempts."""

    def __init__(self, seconds: float, message: str = "") -> None:
        super().__init__(message or "retry in %gs" % seconds)
        self.seconds = seconds


class ResultNotStored(RuntimeWarning):
    """No longer raised: a handler's return value is the task's result
    (kept for code that filters it)."""


def _code(name: str) -> int:
    c: int = _lib.sked_errcode(("SKED_E" + name).encode())
    if c > 0:
        raise ImportError("sked: libsked has no code SKED_E" + name)
    return c


_CLASSES: Dict[int, Type[SkedError]] = {}
for _names, _cls in ((("INVAL", "URL", "CRON", "TZ"), InvalidArgument),
                     (("TOOBIG",), TooBig), (("NOTFOUND",), NotFound),
                     (("STATE",), StateError),
                     (("UNAVAILABLE",), Unavailable),
                     (("DB", "READONLY", "PERM"), DatabaseError), (("BUSY",), Busy),
                     (("SCHEMA",), SchemaError),
                     (("UNSUPPORTED", "STRATEGY"), Unsupported),
                     (("LOCKED",), Locked), (("LOST",), LockLost)):
    for _n in _names:
        _CLASSES[_code(_n)] = _cls
_EINVAL = _code("INVAL")


def _error(code: int, message: str) -> SkedError:
    return _CLASSES.get(code, SkedError)(code, message)


def _text(b: Optional[bytes]) -> Optional[str]:
    return None if b is None else b.decode("utf-8", "surrogateescape")


def _str(b: Optional[bytes]) -> str:
    return "" if b is None else b.decode("utf-8", "surrogateescape")


def _bytes(value: object, what: str) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    raise TypeError("sked: %s must be str or bytes, not %s"
                    % (what, type(value).__name__))


def _name(value: object, what: str) -> bytes:
    if not isinstance(value, str):
        raise TypeError("sked: %s must be a str, not %s"
                        % (what, type(value).__name__))
    return value.encode("utf-8", "surrogateescape")


def _int(value: object, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError("sked: %s must be an int, not %s"
                        % (what, type(value).__name__))
    return value


def _ms(value: object, what: str) -> int:
    """A duration: seconds (int or float) or a timedelta, in ms."""
    if isinstance(value, _dt.timedelta):
        return int(round(value.total_seconds() * 1000))
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError("sked: %s must be seconds or a timedelta, not %s"
                        % (what, type(value).__name__))
    return int(round(value * 1000))


def _epoch_ms(value: object, what: str) -> int:
    """A point in time: an aware datetime (a naive one is UTC)."""
    if not isinstance(value, _dt.datetime):
        raise TypeError("sked: %s must be a datetime, not %s"
                        % (what, type(value).__name__))
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.timezone.utc)
    return int(round(value.timestamp() * 1000))


def _time(ms: int) -> Optional[_dt.datetime]:
    if not ms:
        return None
    return _dt.datetime.fromtimestamp(ms / 1000, _dt.timezone.utc)


class _Options:
    """An option object of libsked, filled through its setters."""

    def __init__(self, obj: str, **values: Any) -> None:
        self._obj = obj
        self.ptr: Optional[int] = getattr(_lib, obj + "_new")()
        if not self.ptr:
            raise MemoryError("sked: out of memory")
        try:
            for field, value in values.items():
                if value is None:
                    continue
                ctype = _OPTION_FIELDS[obj][field]
                if ctype is c_char_p:
                    value = _name(value, field)
                else:
                    value = _int(value, field)
                    bits = 8 * ctypes.sizeof(ctype) - 1
                    if not -(1 << bits) <= value < (1 << bits):
                        raise InvalidArgument(
                            _EINVAL, "sked: %s %d is out of range"
                            % (field, value))
                rc = getattr(_lib, "%s_set_%s" % (obj, field))(self.ptr, value)
                if rc != 0:
                    raise _error(rc, _lib.sked_strerror(rc).decode())
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self.ptr:
            getattr(_lib, self._obj + "_free")(self.ptr)
            self.ptr = None

    def __enter__(self) -> "_Options":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_LOGFN = ctypes.CFUNCTYPE(None, c_int, c_char_p, c_void_p)
_fn("sked_set_log", None, _LOGFN, c_void_p, c_int)
_fn("sked_log_level_from_name", c_int, c_char_p)
_log_sink = None  # the ctypes callback in use: kept alive while it is set
_LEVELS = {0: 40, 1: 30, 2: 20, 3: 10}  # SKED_LOG_* -> logging levels


def set_log(logger: Any = None, level: str = "info") -> None:
    """Send libsked's log lines to logger (a logging.Logger, or any
    callable taking (levelno, line) with levelno as in the logging module)
    instead of stderr; None restores stderr. level ("error", "warn",
    "info", "debug") drops the lines above it. Lines come from sked's
    threads, the worker's pool threads among them."""
    global _log_sink
    threshold = _lib.sked_log_level_from_name(_name(level, "level"))
    if threshold < 0:
        raise InvalidArgument(_EINVAL, "sked: unknown log level %r" % level)
    if logger is None:
        _lib.sked_set_log(_LOGFN(0), None, threshold)  # NULL: stderr
        _log_sink = None
        return
    emit = logger.log if hasattr(logger, "log") else logger
    if not callable(emit):
        raise TypeError("sked: a log sink must be a Logger or callable")

    def sink(lvl: int, line: bytes, _userdata: object) -> None:
        try:
            emit(_LEVELS.get(lvl, 10), _text(line))
        except BaseException:
            pass  # a log line is never worth a crash in a sked thread

    cb = _LOGFN(sink)
    _lib.sked_set_log(cb, None, threshold)
    _log_sink = cb


def library() -> str:
    """The path or name libsked was loaded from."""
    return str(_lib._name)


def version() -> str:
    """libsked's version, e.g. "0.1.0"."""
    return str(_lib.sked_version().decode())

# ----------------------------------------------------------------- rows


class Task:
    """One task as read from the database (a copy: it does not change)."""

    __slots__ = ("id", "queue", "kind", "payload_bytes", "status",
                 "priority", "run_at_ms", "attempts", "max_attempts",
                 "node_id", "lease_until_ms", "unique_key", "schedule_name",
                 "fire_time_ms", "last_error", "created_ms", "updated_ms",
                 "finished_ms", "result", "traceparent")

    id: int
    queue: str
    kind: str
    payload_bytes: bytes
    status: str
    priority: int
    run_at_ms: int
    attempts: int
    max_attempts: int
    node_id: Optional[str]
    lease_until_ms: int
    unique_key: Optional[str]
    schedule_name: Optional[str]
    fire_time_ms: int
    last_error: Optional[str]
    created_ms: int
    updated_ms: int
    finished_ms: int
    result: Optional[str]
    traceparent: Optional[str]

    def __init__(self, t: _Task) -> None:
        self.id = t.id
        self.queue = _str(t.queue)
        self.kind = _str(t.kind)
        self.payload_bytes = (ctypes.string_at(t.payload, t.payload_len)
                              if t.payload else b"")
        self.status = _lib.sked_status_name(t.status).decode()
        for f in ("priority", "run_at_ms", "attempts", "max_attempts",
                  "lease_until_ms", "fire_time_ms", "created_ms",
                  "updated_ms", "finished_ms"):
            setattr(self, f, getattr(t, f))
        for f in ("node_id", "unique_key", "schedule_name", "last_error",
                  "result", "traceparent"):
            setattr(self, f, _text(getattr(t, f)))

    @property
    def payload(self) -> str:
        """The payload as text (UTF-8)."""
        return self.payload_bytes.decode("utf-8", "surrogateescape")

    @property
    def run_at(self) -> Optional[_dt.datetime]:
        return _time(self.run_at_ms)

    @property
    def created(self) -> Optional[_dt.datetime]:
        return _time(self.created_ms)

    @property
    def finished(self) -> Optional[_dt.datetime]:
        return _time(self.finished_ms)

    @property
    def fire_time(self) -> Optional[_dt.datetime]:
        """The schedule fire that made it (None: not a schedule's)."""
        return _time(self.fire_time_ms)

    def __repr__(self) -> str:
        return "<sked.Task %d %s %s>" % (self.id, self.kind, self.status)


class Run:
    """One attempt at a task."""

    __slots__ = ("id", "task_id", "attempt", "node_id", "started_ms",
                 "finished_ms", "outcome", "exit_code", "error", "output")

    id: int
    task_id: int
    attempt: int
    node_id: Optional[str]
    started_ms: int
    finished_ms: int
    outcome: Optional[str]
    exit_code: int
    error: Optional[str]
    output: Optional[str]

    def __init__(self, r: _Run) -> None:
        for f in ("id", "task_id", "attempt", "started_ms", "finished_ms",
                  "exit_code"):
            setattr(self, f, getattr(r, f))
        for f in ("node_id", "outcome", "error", "output"):
            setattr(self, f, _text(getattr(r, f)))

    def __repr__(self) -> str:
        return "<sked.Run task %d attempt %d %s>" % (self.task_id,
                                                     self.attempt,
                                                     self.outcome)


class Schedule:
    """A named cron schedule as read from the database."""

    __slots__ = ("name", "cron", "tz", "kind", "payload_bytes", "queue",
                 "priority", "max_attempts", "misfire", "overlap",
                 "enabled", "next_fire_ms", "last_fire_ms")

    name: str
    cron: str
    tz: str
    kind: str
    payload_bytes: bytes
    queue: str
    priority: int
    max_attempts: int
    misfire: str
    overlap: str
    enabled: bool
    next_fire_ms: int
    last_fire_ms: int

    def __init__(self, s: _Schedule) -> None:
        self.name = _str(s.name)
        self.cron = _str(s.expr)
        self.tz = _str(s.tz)
        self.kind = _str(s.kind)
        self.payload_bytes = (ctypes.string_at(s.payload, s.payload_len)
                              if s.payload else b"")
        self.queue = _str(s.queue)
        self.priority = s.priority
        self.max_attempts = s.max_attempts
        self.misfire = _lib.sked_misfire_name(s.misfire).decode()
        self.overlap = _lib.sked_overlap_name(s.overlap).decode()
        self.enabled = bool(s.enabled)
        self.next_fire_ms = s.next_fire_ms
        self.last_fire_ms = s.last_fire_ms

    @property
    def payload(self) -> str:
        return self.payload_bytes.decode("utf-8", "surrogateescape")

    @property
    def next_fire(self) -> Optional[_dt.datetime]:
        return _time(self.next_fire_ms)

    @property
    def last_fire(self) -> Optional[_dt.datetime]:
        return _time(self.last_fire_ms)

    def __repr__(self) -> str:
        return "<sked.Schedule %s %r %s%s>" % (
            self.name, self.cron, self.kind,
            "" if self.enabled else " paused")


class LockState:
    """A cluster lock as read (sked_lock_get)."""

    __slots__ = ("name", "owner", "locked_at_ms", "locked_until_ms",
                 "token", "now_ms", "held")

    def __init__(self, name: str, s: _LockState) -> None:
        self.name: str = name
        self.owner: Optional[str] = _text(s.owner) or None
        self.locked_at_ms: int = s.locked_at_ms
        self.locked_until_ms: int = s.locked_until_ms
        self.token: int = s.token
        self.now_ms: int = s.now_ms
        self.held: bool = bool(s.held)

    def __repr__(self) -> str:
        return "<sked.LockState %s %s>" % (
            self.name, "held by %s" % self.owner if self.held else "free")


class LockRow:
    """One row of sked_lock_list."""

    __slots__ = ("name", "owner", "locked_at_ms", "locked_until_ms",
                 "token", "held")

    def __init__(self, r: _LockRow) -> None:
        self.name: str = _str(r.name)
        self.owner: Optional[str] = _text(r.owner)
        self.locked_at_ms: int = r.locked_at_ms
        self.locked_until_ms: int = r.locked_until_ms
        self.token: int = r.token
        self.held: bool = bool(r.held)

    def __repr__(self) -> str:
        return "<sked.LockRow %s %s>" % (
            self.name, "held by %s" % self.owner if self.held else "free")


class QueueInfo:
    """A queue's cluster-wide limits and their use (sked_queue_list).
    A limit of 0 is no limit."""

    __slots__ = ("queue", "limited", "concurrency", "per_key", "rate_n",
                 "rate_window_ms", "running", "keys_running", "keys_full",
                 "rate_used", "paused")

    def __init__(self, q: _QueueInfo) -> None:
        self.queue: str = _str(q.queue)
        self.limited: bool = bool(q.limited)
        self.concurrency: int = q.concurrency
        self.per_key: int = q.per_key
        self.rate_n: int = q.rate_n
        self.rate_window_ms: int = q.rate_window_ms
        self.running: int = q.running
        self.keys_running: int = q.keys_running
        self.keys_full: int = q.keys_full
        self.rate_used: int = q.rate_used
        self.paused: bool = bool(q.paused)

    @property
    def rate(self) -> Optional[Tuple[int, _dt.timedelta]]:
        """(starts, window) or None."""
        if not self.rate_n:
            return None
        return (self.rate_n,
                _dt.timedelta(milliseconds=self.rate_window_ms))

    def __repr__(self) -> str:
        return ("<sked.QueueInfo %s%s concurrency=%d per_key=%d rate=%s>"
                % (self.queue, " paused" if self.paused else "",
                   self.concurrency, self.per_key, self.rate))


class _Keep:
    """The type of KEEP: leave a queue's limit as it is."""

    def __repr__(self) -> str:
        return "sked.KEEP"


#: Sked.set_queue_limits(): leave this limit as it is.
KEEP = _Keep()
_LIMIT_KEEP = -1  # SKED_LIMIT_KEEP

_STEER_STATUSES = {"retry": ("dead", "cancelled", "retry"),
                   "cancel": ("pending", "retry", "running")}

# ---------------------------------------------------------------- handle


def open(url: str, *, prefix: Optional[str] = None,
         strategy: Optional[str] = None, migrate: bool = False) -> "Sked":
    """Connect to the database at url ("sqlite:PATH", "postgres://…",
    "mysql://…", "odbc:…"). migrate=True creates or upgrades the schema.
    The handle is a context manager: `with sked.open(url) as db:`."""
    return Sked(url, prefix=prefix, strategy=strategy, migrate=migrate)


def _owner() -> str:
    """HOST-PID-RANDOM, made a valid sked name."""
    host = re.sub(r"[^A-Za-z0-9_.:-]", "-", socket.gethostname())[:80]
    return "%s-%d-%s" % (host.lstrip("._:-") or "host", os.getpid(),
                         os.urandom(4).hex())


class Sked:
    """A handle: one database connection. Use it from one thread at a time
    (a Worker opens its own). A context manager: leaving the block closes
    it."""

    url: str

    def __init__(self, url: str, *, prefix: Optional[str] = None,
                 strategy: Optional[str] = None,
                 migrate: bool = False) -> None:
        url_b = _name(url, "url")
        self._args: Dict[str, Any] = dict(prefix=prefix, strategy=strategy,
                                          migrate=migrate)
        self.url = url
        self._h: Optional[ctypes.c_void_p] = None
        with _Options("sked_options", prefix=prefix, strategy=strategy,
                      migrate=1 if migrate else 0) as o:
            h = c_void_p()
            rc = _lib.sked_open(url_b, o.ptr, ctypes.byref(h))
        if rc != 0:
            msg = (_lib.sked_errmsg(h).decode() if h.value
                   else _lib.sked_strerror(rc).decode())
            _lib.sked_close(h)
            raise _error(rc, msg)
        self._h = h

    def _check(self, rc: int) -> None:
        if rc != 0:
            raise _error(rc, _str(_lib.sked_errmsg(self._h)))

    def _handle(self) -> ctypes.c_void_p:
        if self._h is None:
            raise ValueError("sked: the handle is closed")
        return self._h

    def close(self) -> None:
        if self._h is not None:
            _lib.sked_close(self._h)
            self._h = None

    def __enter__(self) -> "Sked":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def migrate(self) -> None:
        self._check(_lib.sked_migrate(self._handle()))

    def info(self) -> Dict[str, Any]:
        """What was detected and chosen: a dict of driver, dialect,
        product, version, strategy, reason, url, schema versions."""
        i = _Info()
        self._check(_lib.sked_get_info(self._handle(), ctypes.byref(i)))
        d: Dict[str, Any] = {f: _text(getattr(i, f)) for f, t in
                             _Info._fields_
                             if f not in ("schema_version",
                                          "schema_expected")}
        d["schema_version"] = i.schema_version
        d["schema_expected"] = i.schema_expected
        return d

    def now(self) -> int:
        """The database's clock, in ms since the epoch."""
        ms = c_int64()
        self._check(_lib.sked_now(self._handle(), ctypes.byref(ms)))
        return ms.value

    # ---- enqueue

    @staticmethod
    def _enqueue_opts(queue: Optional[str], priority: int,
                      run_at: Optional[_dt.datetime],
                      delay: Optional[Duration], max_attempts: Optional[int],
                      unique_key: Optional[str],
                      concurrency_key: Optional[str],
                      after: Optional[Sequence[int]] = None,
                      on_parent_failure: str = "cancel",
                      traceparent: Optional[str] = None) -> _Options:
        if run_at is not None and delay is not None:
            raise InvalidArgument(_EINVAL,
                                  "sked: give run_at or delay, not both")
        _int(priority, "priority")
        if max_attempts is not None:
            _int(max_attempts, "max_attempts")
            if max_attempts < 1:
                raise InvalidArgument(_EINVAL, "sked: max_attempts must be "
                                      "at least 1, not %d" % max_attempts)
        policies = {"cancel": 0, "ignore": 1}
        if on_parent_failure not in policies:
            raise InvalidArgument(_EINVAL, "sked: on_parent_failure: give "
                                  "'cancel' or 'ignore', not %r"
                                  % (on_parent_failure,))
        ids = [_int(x, "after") for x in (after or [])]
        o = _Options(
            "sked_enqueue_opts", queue=queue, unique_key=unique_key,
            priority=priority,
            run_at_ms=None if run_at is None else _epoch_ms(run_at, "run_at"),
            delay_ms=None if delay is None else _ms(delay, "delay"),
            max_attempts=max_attempts, concurrency_key=concurrency_key,
            on_parent_failure=policies[on_parent_failure],
            traceparent=traceparent)
        if ids:
            arr = (c_int64 * len(ids))(*ids)
            rc = _lib.sked_enqueue_opts_set_after(o.ptr, arr, len(ids))
            if rc != 0:
                o.close()
                raise _error(rc, _lib.sked_strerror(rc).decode())
        return o

    def enqueue(self, kind: str, payload: Optional[Payload] = b"", *,
                queue: Optional[str] = None, priority: int = 0,
                run_at: Optional[_dt.datetime] = None,
                delay: Optional[Duration] = None,
                max_attempts: Optional[int] = None,
                unique_key: Optional[str] = None,
                concurrency_key: Optional[str] = None,
                after: Optional[Sequence[int]] = None,
                on_parent_failure: str = "cancel",
                traceparent: Optional[str] = None) -> int:
        """Enqueue one task and return its id. payload is str or bytes;
        run_at a datetime (naive = UTC) or delay seconds/timedelta from
        the database's now; an existing unique_key returns its task's id;
        concurrency_key is what the queue's per-key limit counts it under
        (set_queue_limits(per_key=…)); after: parent task ids, the task
        is blocked until each has ended, on_parent_failure "cancel" or
        "ignore" (docs/workflows.md); traceparent: a W3C trace context
        ("00-<32 hex>-<16 hex>-<2 hex>") the handler receives."""
        return self.enqueue_ex(kind, payload, queue=queue, priority=priority,
                               run_at=run_at, delay=delay,
                               max_attempts=max_attempts,
                               unique_key=unique_key,
                               concurrency_key=concurrency_key,
                               after=after,
                               on_parent_failure=on_parent_failure,
                               traceparent=traceparent)[0]

    def enqueue_ex(self, kind: str, payload: Optional[Payload] = b"", *,
                   queue: Optional[str] = None, priority: int = 0,
                   run_at: Optional[_dt.datetime] = None,
                   delay: Optional[Duration] = None,
                   max_attempts: Optional[int] = None,
                   unique_key: Optional[str] = None,
                   concurrency_key: Optional[str] = None,
                   after: Optional[Sequence[int]] = None,
                   on_parent_failure: str = "cancel",
                   traceparent: Optional[str] = None) -> Tuple[int, bool]:
        """As enqueue, returning (id, existed): existed is True when
        unique_key matched a task that was there already."""
        kind_b = _name(kind, "kind")
        data = _bytes(b"" if payload is None else payload, "payload")
        tid, existed = c_int64(), c_int()
        with self._enqueue_opts(queue, priority, run_at, delay, max_attempts,
                                unique_key, concurrency_key, after,
                                on_parent_failure, traceparent) as o:
            self._check(_lib.sked_enqueue(self._handle(), kind_b, data,
                                          len(data), o.ptr,
                                          ctypes.byref(tid),
                                          ctypes.byref(existed)))
        return tid.value, bool(existed.value)

    def enqueue_many(self, kind: str, payloads: Iterable[Payload], *,
                     queue: Optional[str] = None, priority: int = 0,
                     run_at: Optional[_dt.datetime] = None,
                     delay: Optional[Duration] = None,
                     max_attempts: Optional[int] = None,
                     concurrency_key: Optional[str] = None,
                     after: Optional[Sequence[int]] = None,
                     on_parent_failure: str = "cancel",
                     traceparent: Optional[str] = None) -> List[int]:
        """Enqueue one task per payload, all in one transaction (all or
        none). Returns the ids, in order. (unique keys are per task:
        enqueue them one by one.)"""
        kind_b = _name(kind, "kind")
        data = [_bytes(p, "payload") for p in payloads]
        if not data:
            return []
        n = len(data)
        arr = (c_char_p * n)(*data)
        lens = (c_size_t * n)(*[len(d) for d in data])
        ids = (c_int64 * n)()
        with self._enqueue_opts(queue, priority, run_at, delay, max_attempts,
                                None, concurrency_key, after,
                                on_parent_failure, traceparent) as o:
            self._check(_lib.sked_enqueue_many(self._handle(), kind_b, n, arr,
                                               lens, o.ptr, ids))
        return list(ids)

    # ---- inspect

    def get(self, task_id: int) -> Task:
        """The task with this id; NotFound when there is none."""
        out = _POINTER(_Task)()
        self._check(_lib.sked_task_get(self._handle(),
                                       int(task_id),
                                       ctypes.byref(out)))
        try:
            return Task(out[0])
        finally:
            _lib.sked_tasks_free(out, 1)

    def find_unique(self, key: str) -> int:
        """The id of the task with this unique key; NotFound if none."""
        tid = c_int64()
        self._check(_lib.sked_task_find_unique(self._handle(),
                                               _name(key, "key"),
                                               ctypes.byref(tid)))
        return tid.value

    @staticmethod
    def _status(status: Optional[str]) -> int:
        if status is None:
            return -1
        st: int = _lib.sked_status_parse(_name(status, "status"))
        if st < 0:
            raise InvalidArgument(_EINVAL, "sked: unknown status %r" % status)
        return st

    def _filter(self, status: Optional[str], queue: Optional[str],
                kind: Optional[str], node_id: Optional[str] = None,
                created_after: Optional[_dt.datetime] = None,
                created_before: Optional[_dt.datetime] = None,
                older_than: Optional[Duration] = None, limit: int = 0,
                before_id: Optional[int] = None) -> _Options:
        if older_than is not None:
            if created_before is not None:
                raise InvalidArgument(_EINVAL, "sked: give older_than or "
                                      "created_before, not both")
            age = _ms(older_than, "older_than")
            if age <= 0:
                raise InvalidArgument(_EINVAL, "sked: older_than must be "
                                      "above zero")
            before_ms: Optional[int] = self.now() - age
        else:
            before_ms = (None if created_before is None
                         else _epoch_ms(created_before, "created_before"))
        return _Options("sked_list_filter", status=self._status(status),
                        queue=queue, kind=kind, limit=limit,
                        before_id=before_id, node_id=node_id,
                        created_after_ms=None if created_after is None
                        else _epoch_ms(created_after, "created_after"),
                        created_before_ms=before_ms)

    def list(self, *, status: Optional[str] = None,
             queue: Optional[str] = None, kind: Optional[str] = None,
             limit: int = 100, before_id: Optional[int] = None,
             node_id: Optional[str] = None,
             created_after: Optional[_dt.datetime] = None,
             created_before: Optional[_dt.datetime] = None) -> List[Task]:
        """Tasks, newest first. status is a name ("pending", "dead", …)."""
        with self._filter(status, queue, kind, node_id, created_after,
                          created_before, limit=limit,
                          before_id=before_id) as f:
            out, n = _POINTER(_Task)(), c_size_t()
            self._check(_lib.sked_task_list(self._handle(), f.ptr,
                                            ctypes.byref(out),
                                            ctypes.byref(n)))
        try:
            return [Task(out[i]) for i in range(n.value)]
        finally:
            _lib.sked_tasks_free(out, n.value)

    def count(self, *, status: Optional[str] = None,
              queue: Optional[str] = None, kind: Optional[str] = None,
              node_id: Optional[str] = None,
              created_after: Optional[_dt.datetime] = None,
              created_before: Optional[_dt.datetime] = None,
              older_than: Optional[Duration] = None) -> int:
        """How many tasks match (status None: any); older_than counts
        tasks created more than that long ago (database clock)."""
        with self._filter(status, queue, kind, node_id, created_after,
                          created_before, older_than) as f:
            n = c_int64()
            self._check(_lib.sked_task_count(self._handle(), f.ptr,
                                             ctypes.byref(n)))
        return n.value

    def runs(self, task_id: int) -> List[Run]:
        """The attempts at a task, oldest first ([] if none or no task)."""
        out, n = _POINTER(_Run)(), c_size_t()
        self._check(_lib.sked_runs_get(self._handle(),
                                       int(task_id),
                                       ctypes.byref(out), ctypes.byref(n)))
        try:
            return [Run(out[i]) for i in range(n.value)]
        finally:
            _lib.sked_runs_free(out, n.value)

    # ---- steer

    def cancel(self, task_id: int) -> None:
        """Cancel a pending, retrying or running task. StateError when it
        has ended, NotFound when there is none."""
        self._check(_lib.sked_cancel(self._handle(),
                                     int(task_id)))

    def retry(self, task_id: int) -> None:
        """Run a dead, cancelled or waiting task again now. StateError when
        it is running or succeeded."""
        self._check(_lib.sked_retry(self._handle(),
                                    int(task_id)))

    def _ids(self, fn: Any, ids: Iterable[int]) -> int:
        arr = [_int(i, "task id") for i in ids]
        if not arr:
            return 0
        done = c_int64()
        self._check(fn(self._handle(), (c_int64 * len(arr))(*arr), len(arr),
                       ctypes.byref(done)))
        return done.value

    def cancel_many(self, ids: Iterable[int]) -> int:
        """Cancel these tasks in one transaction, skipping those that
        have ended; returns how many were cancelled."""
        return self._ids(_lib.sked_cancel_ids, ids)

    def retry_many(self, ids: Iterable[int]) -> int:
        """Retry these tasks in one transaction, skipping those whose
        state does not allow it; returns how many will run again."""
        return self._ids(_lib.sked_retry_ids, ids)

    def _where(self, verb: str, fn: Any, status: Optional[str],
               queue: Optional[str], kind: Optional[str],
               older_than: Optional[Duration]) -> int:
        statuses = _STEER_STATUSES[verb]
        if status is not None and status not in statuses:
            raise InvalidArgument(_EINVAL, "sked: %s takes status %s, not %r"
                                  % (verb, ", ".join(statuses), status))
        with self._filter(status or statuses[0], queue, kind,
                          older_than=older_than) as f:
            done = c_int64()
            self._check(fn(self._handle(), f.ptr, ctypes.byref(done)))
        return done.value

    def cancel_where(self, *, status: str = "pending",
                     queue: Optional[str] = None, kind: Optional[str] = None,
                     older_than: Optional[Duration] = None) -> int:
        """Cancel every task of status ("pending", "retry" or "running")
        matching the filters, in batches of 500 (each its own
        transaction); returns how many were cancelled. count() with the
        same filters says how many match first."""
        return self._where("cancel", _lib.sked_cancel_where, status, queue,
                           kind, older_than)

    def retry_where(self, *, status: str = "dead",
                    queue: Optional[str] = None, kind: Optional[str] = None,
                    older_than: Optional[Duration] = None) -> int:
        """Retry every task of status ("dead", "cancelled" or "retry")
        matching the filters; returns how many will run again. A task a
        live task's unique key or fire holds again raises StateError
        saying how many stayed ended (the others were retried)."""
        return self._where("retry", _lib.sked_retry_where, status, queue,
                           kind, older_than)

    # ---- schedules

    def schedule(self, name: str, cron: str, kind: str,
                 payload: Optional[str] = None, *, tz: Optional[str] = None,
                 queue: Optional[str] = None, priority: int = 0,
                 max_attempts: Optional[int] = None,
                 misfire: str = "fire-once", overlap: str = "allow") -> bool:
        """Add the named schedule, or replace its definition: one task of
        kind per fire of the cron expression (5 fields, 6 with seconds, or
        an @alias) in zone tz (default UTC), enqueued exactly once across
        the cluster by whichever worker ticks first. misfire:
        "fire-once", "fire-all" or "skip"; overlap: "allow" or "skip".
        Returns True when it is new. A bad expression or zone raises
        InvalidArgument with the field and the problem."""
        mf = _lib.sked_misfire_parse(_name(misfire, "misfire"))
        ov = _lib.sked_overlap_parse(_name(overlap, "overlap"))
        if mf < 0:
            raise InvalidArgument(_EINVAL, "sked: misfire must be fire-once, "
                                  "fire-all or skip, not %r" % misfire)
        if ov < 0:
            raise InvalidArgument(_EINVAL, "sked: overlap must be allow or "
                                  "skip, not %r" % overlap)
        if max_attempts is not None and _int(max_attempts,
                                             "max_attempts") < 1:
            raise InvalidArgument(_EINVAL, "sked: max_attempts must be at "
                                  "least 1, not %d" % max_attempts)
        created = c_int()
        with _Options("sked_schedule_opts", tz=tz, payload=payload,
                      queue=queue, priority=priority,
                      max_attempts=max_attempts, misfire=mf,
                      overlap=ov) as o:
            self._check(_lib.sked_schedule_put(
                self._handle(), _name(name, "name"), _name(cron, "cron"),
                _name(kind, "kind"), o.ptr, ctypes.byref(created)))
        return bool(created.value)

    def unschedule(self, name: str) -> None:
        """Remove a schedule (its tasks stay). NotFound if none."""
        self._check(_lib.sked_schedule_remove(self._handle(),
                                              _name(name, "name")))

    def pause_schedule(self, name: str) -> None:
        """No fires until resumed. NotFound if no such schedule."""
        self._check(_lib.sked_schedule_pause(self._handle(),
                                             _name(name, "name")))

    def resume_schedule(self, name: str) -> None:
        """Fire again, from the first fire after now."""
        self._check(_lib.sked_schedule_resume(self._handle(),
                                              _name(name, "name")))

    def run_schedule(self, name: str) -> int:
        """Enqueue the schedule's task now, one per call (paused or not);
        returns its id. Its fire time is the database's now, never a whole
        second, so it never takes a cron fire's place."""
        tid = c_int64()
        self._check(_lib.sked_schedule_run(self._handle(),
                                           _name(name, "name"),
                                           ctypes.byref(tid)))
        return tid.value

    def schedules(self) -> List[Schedule]:
        """Every schedule, by name."""
        out, n = _POINTER(_Schedule)(), c_size_t()
        self._check(_lib.sked_schedule_list(self._handle(),
                                            ctypes.byref(out),
                                            ctypes.byref(n)))
        try:
            return [Schedule(out[i]) for i in range(n.value)]
        finally:
            _lib.sked_schedules_free(out, n.value)

    def tick(self) -> Tuple[int, Optional[_dt.datetime]]:
        """Fire what is due now, as a worker does between claims: for a
        program that enqueues from schedules without running a worker.
        Returns (tasks made, the earliest next fire or None)."""
        fired, nxt = c_int(), c_int64()
        self._check(_lib.sked_schedule_tick(self._handle(),
                                            ctypes.byref(fired),
                                            ctypes.byref(nxt)))
        return fired.value, _time(nxt.value)

    # ---- queue limits

    def set_queue_limits(self, queue: str, *,
                         concurrency: Union[int, None, _Keep] = KEEP,
                         per_key: Union[int, None, _Keep] = KEEP,
                         rate: Union[str, Tuple[int, Duration], None,
                                     _Keep] = KEEP) -> None:
        """Set queue's cluster-wide limits: concurrency (tasks running at
        once), per_key (running per concurrency key) and rate (starts per
        window: "100/1m" or (100, 60)). None or 0 removes a limit; KEEP
        (the default) leaves it as it is."""
        def limit(v: Union[int, None, _Keep], what: str) -> int:
            if isinstance(v, _Keep):
                return _LIMIT_KEEP
            return 0 if v is None else _int(v, what)
        c, k = limit(concurrency, "concurrency"), limit(per_key, "per_key")
        if c < -1 or k < -1:
            raise InvalidArgument(_EINVAL, "sked: a limit is a number from "
                                  "1, None or KEEP")
        rn, rms = _LIMIT_KEEP, 0
        if rate is None:
            rn = 0
        elif isinstance(rate, str):
            n_, ms_ = c_int(), c_int64()
            if _lib.sked_parse_rate(_name(rate, "rate"), ctypes.byref(n_),
                                    ctypes.byref(ms_)) != 0:
                raise InvalidArgument(_EINVAL, "sked: rate %r is not "
                                      "N/DURATION (100/1m)" % rate)
            rn, rms = n_.value, ms_.value
        elif isinstance(rate, tuple):
            if len(rate) != 2:
                raise TypeError("sked: rate is (starts, window)")
            rn, rms = _int(rate[0], "rate"), _ms(rate[1], "rate window")
        elif not isinstance(rate, _Keep):
            raise TypeError("sked: rate must be \"N/DURATION\", (N, window), "
                            "None or KEEP")
        self._check(_lib.sked_queue_set(self._handle(), _name(queue, "queue"),
                                        c, k, rn, rms))

    def pause_queue(self, queue: str) -> None:
        """Stop every worker of the cluster claiming queue's tasks (within
        2 s) until resume_queue; running tasks finish, enqueueing goes
        on."""
        self._check(_lib.sked_queue_pause(self._handle(),
                                          _name(queue, "queue"), 1))

    def resume_queue(self, queue: str) -> None:
        """Let workers claim a paused queue's tasks again."""
        self._check(_lib.sked_queue_pause(self._handle(),
                                          _name(queue, "queue"), 0))

    def queues(self) -> List[QueueInfo]:
        """The limited queues, the paused ones and those with running
        tasks, by name."""
        out, n = _POINTER(_QueueInfo)(), c_size_t()
        self._check(_lib.sked_queue_list(self._handle(), ctypes.byref(out),
                                         ctypes.byref(n)))
        try:
            return [QueueInfo(out[i]) for i in range(n.value)]
        finally:
            _lib.sked_queue_info_free(out, n.value)

    # ---- cluster locks

    def acquire_lock(self, name: str, owner: str, ttl: Duration, *,
                     wait: Optional[Duration] = None,
                     at_least: Optional[Duration] = None) -> int:
        """Take lock name for owner until the database's now + ttl;
        returns the fencing token. Locked when another owner holds it
        (after waiting up to wait)."""
        token = c_int64()
        with _Options("sked_lock_opts",
                      wait_ms=None if wait is None else _ms(wait, "wait"),
                      at_least_ms=None if at_least is None
                      else _ms(at_least, "at_least")) as o:
            self._check(_lib.sked_lock_acquire(
                self._handle(), _name(name, "name"), _name(owner, "owner"),
                _ms(ttl, "ttl"), o.ptr, ctypes.byref(token)))
        return token.value

    def extend_lock(self, name: str, owner: str, token: int,
                    ttl: Duration) -> None:
        """Push the lock's expiry to now + ttl. LockLost when it is no
        longer owner's with this token."""
        self._check(_lib.sked_lock_extend(
            self._handle(), _name(name, "name"), _name(owner, "owner"),
            _int(token, "token"), _ms(ttl, "ttl")))

    def release_lock(self, name: str, owner: str, token: int, *,
                     at_least: Optional[Duration] = None) -> None:
        """Give the lock up (with at_least: keep it until acquired +
        at_least). LockLost when someone else took it meanwhile."""
        with _Options("sked_lock_opts",
                      at_least_ms=None if at_least is None
                      else _ms(at_least, "at_least")) as o:
            self._check(_lib.sked_lock_release(
                self._handle(), _name(name, "name"), _name(owner, "owner"),
                _int(token, "token"), o.ptr))

    def lock_state(self, name: str) -> LockState:
        """Read a lock. NotFound when it was never taken."""
        s = _LockState()
        self._check(_lib.sked_lock_get(self._handle(), _name(name, "name"),
                                       ctypes.byref(s)))
        return LockState(name, s)

    def locks(self) -> List[LockRow]:
        """Every cluster lock, by name."""
        out, n = _POINTER(_LockRow)(), c_size_t()
        self._check(_lib.sked_lock_list(self._handle(), ctypes.byref(out),
                                        ctypes.byref(n)))
        try:
            return [LockRow(out[i]) for i in range(n.value)]
        finally:
            _lib.sked_lock_rows_free(out, n.value)

    def lock(self, name: str, ttl: Duration, *, owner: Optional[str] = None,
             wait: Optional[Duration] = None,
             at_least: Optional[Duration] = None) -> "Lock":
        """A cluster lock as a context manager:

            with db.lock("nightly-export", ttl=60) as lk:
                export(fencing_token=lk.token)
                lk.extend()           # for work longer than ttl

        Entering takes it (Locked when held elsewhere after wait), leaving
        gives it up. It is not renewed by itself: call extend() within
        each ttl, or use `sked lock run` for a program."""
        return Lock(self, name, ttl, owner=owner or _owner(), wait=wait,
                    at_least=at_least)

    def worker(self, **options: Any) -> "Worker":
        """A Worker on this database, with a connection of its own (see
        Worker for the options)."""
        return Worker(self.url, db_options=self._args, **options)


class Lock:
    """A cluster lock held for a with block (Sked.lock)."""

    def __init__(self, db: Sked, name: str, ttl: Duration, *, owner: str,
                 wait: Optional[Duration], at_least: Optional[Duration]):
        self.db, self.name, self.ttl, self.owner = db, name, ttl, owner
        self._wait, self._at_least = wait, at_least
        #: the fencing token of this acquisition (0 while not held)
        self.token = 0

    def acquire(self) -> "Lock":
        self.token = self.db.acquire_lock(self.name, self.owner, self.ttl,
                                          wait=self._wait,
                                          at_least=self._at_least)
        return self

    def extend(self, ttl: Optional[Duration] = None) -> None:
        """Push the expiry to now + ttl (default: the lock's ttl).
        LockLost when it is no longer ours."""
        self.db.extend_lock(self.name, self.owner, self.token,
                            self.ttl if ttl is None else ttl)

    def release(self) -> None:
        if self.token:
            token, self.token = self.token, 0
            self.db.release_lock(self.name, self.owner, token,
                                 at_least=self._at_least)

    def __enter__(self) -> "Lock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

# ---------------------------------------------------------------- worker


class Job:
    """A claimed task as a handler sees it; valid during the call only."""

    __slots__ = ("_j", "id", "kind", "queue", "attempt", "max_attempts",
                 "payload_bytes", "parents", "traceparent")

    def __init__(self, j: int) -> None:
        self._j: Optional[int] = j
        self.id: int = _lib.sked_job_id(j)
        self.kind: str = _str(_lib.sked_job_kind(j))
        self.queue: str = _str(_lib.sked_job_queue(j))
        self.attempt: int = _lib.sked_job_attempt(j)
        self.max_attempts: int = _lib.sked_job_max_attempts(j)
        self.traceparent: Optional[str] = _text(_lib.sked_job_traceparent(j))
        n = c_size_t()
        p = _lib.sked_job_payload(j, ctypes.byref(n))
        self.payload_bytes: bytes = (ctypes.string_at(p, n.value) if n.value
                                     else b"")
        # a task that waited for others: [{"id", "kind", "result"}, ...]
        self.parents: List[Dict[str, Any]] = (
            json.loads(_lib.sked_job_parents_json(j).decode())
            if _lib.sked_job_parent_count(j) else [])

    @property
    def payload(self) -> str:
        return self.payload_bytes.decode("utf-8", "surrogateescape")

    def cancelled(self) -> bool:
        """True once the worker is stopping or lost the lease: return."""
        if self._j is None:
            return True
        return bool(_lib.sked_job_cancelled(self._j))


class Handlers:
    """Handlers by kind, declared before any worker exists:

        handlers = sked.Handlers()

        @handlers("email")
        def send(job: sked.Job) -> None: ...

        db.worker(handlers=handlers).run()

    A handler returns None for success, or raises to fail the attempt.
    """

    def __init__(self) -> None:
        self._by_kind: Dict[str, Handler] = {}

    def __call__(self, kind: str) -> Callable[[_F], _F]:
        """Decorator: handle tasks of kind with the function."""
        def register(fn: _F) -> _F:
            self.add(kind, fn)
            return fn
        return register

    def add(self, kind: str, fn: Handler) -> None:
        _name(kind, "kind")
        if not callable(fn):
            raise TypeError("sked: a handler must be callable")
        if kind in self._by_kind:
            raise InvalidArgument(_EINVAL, "sked: kind %r already has a "
                                  "handler" % kind)
        self._by_kind[kind] = fn

    def __iter__(self) -> Iterator[Tuple[str, Handler]]:
        return iter(list(self._by_kind.items()))

    def __len__(self) -> int:
        return len(self._by_kind)

    def __contains__(self, kind: object) -> bool:
        return kind in self._by_kind


def _queues(value: Union[None, str, Sequence[Union[str, Tuple[str, int]]]]
            ) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    parts = []
    for q in value:
        if isinstance(q, tuple):
            parts.append("%s:%d" % q)
        else:
            parts.append(q)
    return ",".join(parts)


def _call_handler(fn: Handler, j: int, warned: Dict[str, bool]) -> int:
    """Run fn on job j: 0 for success, 1 (with the error set) for a
    failure. Nothing may escape: ctypes would print it and return 0,
    which is success."""
    job = None
    try:
        job = Job(j)
        result = fn(job)
        if result is not None:
            # the task's result: text as it is, anything else as JSON
            if isinstance(result, bytes):
                raw = result
            elif isinstance(result, str):
                raw = result.encode("utf-8", "surrogateescape")
            else:
                raw = json.dumps(result).encode()
            _lib.sked_job_set_result(j, raw, len(raw))
        return 0
    except BaseException as e:  # a failed attempt, whatever it is
        try:
            msg = "%s: %s" % (type(e).__name__, e)
        except BaseException:
            msg = type(e).__name__
        _lib.sked_job_set_error_msg(j, msg.encode("utf-8", "replace"))
        if isinstance(e, GiveUp):
            _lib.sked_job_give_up(j)
        elif isinstance(e, RetryIn) and e.seconds >= 0:
            _lib.sked_job_set_retry_in(j, int(e.seconds * 1000))
        return 1
    finally:
        if job is not None:
            job._j = None


class Worker:
    """Runs tasks with Python functions as handlers.

    Options: concurrency (threads, default 4), queues ("a,b:2" or a list
    of names and (name, slots) pairs), node_id, lease, poll, grace,
    retry_base, retry_max, timeout (seconds or timedelta), until_empty,
    prefetch (None or 0: adaptive, the default; N: N tasks ahead of free
    threads; PREFETCH_OFF: none), handlers (a Handlers to include).

    A handler is called with a Job on one of the worker's threads, several
    at once (each holds the GIL while it runs Python). Returning normally
    is success; an exception fails the attempt with "Type: message" in
    the run record; it is retried with backoff until max_attempts. A
    value returned is the task's result (a str as it is, bytes as UTF-8,
    anything else as its JSON; at most 64 KiB); job.parents has the
    parents' ids, kinds and results of a task that waited for others.
    """

    _DURATIONS = ("lease", "poll", "grace", "retry_base", "retry_max",
                  "timeout")

    def __init__(self, url: str, *, db_options: Optional[Dict[str, Any]] = None,
                 concurrency: Optional[int] = None,
                 queues: Union[None, str,
                               Sequence[Union[str, Tuple[str, int]]]] = None,
                 node_id: Optional[str] = None, until_empty: bool = False,
                 prefetch: Optional[int] = None,
                 handlers: Optional[Handlers] = None,
                 **durations: Optional[Duration]) -> None:
        bad = set(durations) - set(self._DURATIONS)
        if bad:
            raise TypeError("sked: unknown worker option %s" % sorted(bad)[0])
        self._db = Sked(url, **(db_options or {}))
        self._w: Optional[ctypes.c_void_p] = None
        self._callbacks: List[Any] = []
        self._warned: Dict[str, bool] = {}
        self._running = threading.Lock()
        values: Dict[str, Any] = dict(
            concurrency=concurrency, queues=_queues(queues), node_id=node_id,
            until_empty=1 if until_empty else 0, prefetch=prefetch)
        for d, v in durations.items():
            if v is not None:
                values[d + "_ms"] = _ms(v, d)
        try:
            with _Options("sked_worker_options", **values) as o:
                w = c_void_p()
                self._db._check(_lib.sked_worker_new(self._db._h, o.ptr,
                                                     ctypes.byref(w)))
            self._w = w
            if handlers is not None:
                self.include(handlers)
        except BaseException:
            self.close()
            raise

    @property
    def node_id(self) -> str:
        return _str(_lib.sked_worker_node_id(self._w))

    def handle(self, kind: str, fn: _F) -> _F:
        """Run tasks of kind with fn(job)."""
        if not callable(fn):
            raise TypeError("sked: a handler must be callable")
        warned = self._warned

        def call(j: int, _userdata: object) -> int:
            return _call_handler(fn, j, warned)

        cb = _HANDLER(call)
        self._db._check(_lib.sked_worker_handle(self._w, _name(kind, "kind"),
                                                cb, None))
        self._callbacks.append(cb)
        return fn

    def handler(self, kind: str) -> Callable[[_F], _F]:
        """Decorator form of handle()."""
        return lambda fn: self.handle(kind, fn)

    def include(self, handlers: Handlers) -> None:
        """Add every handler of a Handlers."""
        for kind, fn in handlers:
            self.handle(kind, fn)

    def run(self) -> None:
        """Run until stop() (or, with until_empty, until nothing is due or
        running). The C loop runs on a thread of its own, so that the
        calling thread keeps running Python signal handlers: a
        KeyboardInterrupt stops the worker gracefully and is raised again
        once it has stopped."""
        if not self._running.acquire(blocking=False):
            raise StateError(_code("STATE"), "sked: the worker is running")
        try:
            result: List[int] = []
            t = threading.Thread(
                target=lambda: result.append(_lib.sked_worker_run(self._w)),
                name="sked-worker", daemon=True)
            t.start()
            interrupted = None
            while t.is_alive():
                try:
                    t.join(0.2)
                except KeyboardInterrupt as e:
                    interrupted = e
                    self.stop()
            if result and result[0] != 0:
                self._db._check(result[0])
            if interrupted is not None:
                raise interrupted
        finally:
            self._running.release()

    def stop(self, immediate: bool = False) -> None:
        """Ask the worker to stop (from any thread or a signal handler):
        no more claims; running handlers get the grace period (immediate:
        their tasks are given back at once)."""
        if self._w is not None:
            _lib.sked_worker_stop(self._w, 1 if immediate else 0)

    def stop_on_signals(self, *signums: int) -> None:
        """Install Python handlers that stop the worker on these signals
        (default SIGTERM and SIGINT). Main thread only, as for signal."""
        for s in signums or (_signal.SIGTERM, _signal.SIGINT):
            _signal.signal(s, lambda *_: self.stop())

    def counters(self) -> Dict[str, int]:
        c = _Counters()
        _lib.sked_worker_get_counters(self._w, ctypes.byref(c))
        return {f: getattr(c, f) for f, _ in _Counters._fields_}

    def close(self) -> None:
        """Free the worker and its connection (not while it runs)."""
        if self._w is not None:
            if not self._running.acquire(blocking=False):
                raise StateError(_code("STATE"),
                                 "sked: stop the worker before closing it")
            _lib.sked_worker_free(self._w)
            self._w = None
            self._running.release()
        self._db.close()

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
