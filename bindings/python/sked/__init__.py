"""sked — Python bindings for libsked, the task scheduler on your database.

A pure-Python module over ctypes: no compiler, no packages beyond the
standard library. It loads libsked.so (the path in SKED_LIBRARY, else the
loader's search path), checks that the library speaks the ABI this module
was written for, and wraps the calls a Python program needs:

    db = sked.open("sqlite:/tmp/sked.db", migrate=True)
    db.enqueue("email", '{"to": "ada@example.com"}', priority=5)
    w = db.worker(concurrency=4)
    w.handle("email", lambda job: send(job.payload))
    w.run()              # until stop() or a signal

Everything here follows include/sked.h and docs/abi.md: option objects
with setters instead of mirrored option structs, codes read by name,
struct mirrors checked against sked_struct_size().
"""

import ctypes
import ctypes.util
import datetime as _dt
import os
import signal as _signal
import threading

__all__ = [
    "ABI_VERSION", "open", "Sked", "Task", "Run", "Job", "Worker",
    "SkedError", "InvalidArgument", "TooBig", "NotFound", "StateError",
    "Unavailable", "DatabaseError", "Busy", "SchemaError", "Unsupported",
    "library", "version", "set_log",
]

#: The SKED_ABI_VERSION this module was written against.
ABI_VERSION = 3
# Worker(prefetch=PREFETCH_OFF): claim only for free threads
PREFETCH_OFF = -1

# ---------------------------------------------------------------- loading


def _load():
    path = os.environ.get("SKED_LIBRARY")
    names = [path] if path else ["libsked.so.0", "libsked.so"]
    found = ctypes.util.find_library("sked")
    if not path and found:
        names.append(found)
    err = None
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


def _fn(name, restype, *argtypes):
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
        ("finished_ms", c_int64),
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


_fn("sked_struct_size", c_size_t, c_char_p)
for _name, _mirror in (("sked_task", _Task), ("sked_run", _Run),
                       ("sked_worker_counters", _Counters),
                       ("sked_info", _Info)):
    if _lib.sked_struct_size(_name.encode()) != ctypes.sizeof(_mirror):
        raise ImportError("sked: struct %s is %d bytes in libsked, %d here"
                          % (_name, _lib.sked_struct_size(_name.encode()),
                             ctypes.sizeof(_mirror)))

# ------------------------------------------------------------ functions

_P = c_void_p
_fn("sked_errcode", c_int, c_char_p)
_fn("sked_errname", c_char_p, c_int)
_fn("sked_strerror", c_char_p, c_int)
_fn("sked_errmsg", c_char_p, _P)
_fn("sked_open", c_int, c_char_p, _P, ctypes.POINTER(_P))
_fn("sked_close", None, _P)
_fn("sked_migrate", c_int, _P)
_fn("sked_get_info", c_int, _P, ctypes.POINTER(_Info))
_fn("sked_now", c_int, _P, ctypes.POINTER(c_int64))
_fn("sked_enqueue", c_int, _P, c_char_p, c_char_p, c_size_t, _P,
    ctypes.POINTER(c_int64), ctypes.POINTER(c_int))
_fn("sked_enqueue_many", c_int, _P, c_char_p, c_size_t,
    ctypes.POINTER(c_char_p), ctypes.POINTER(c_size_t), _P,
    ctypes.POINTER(c_int64))
_fn("sked_task_get", c_int, _P, c_int64, ctypes.POINTER(ctypes.POINTER(_Task)))
_fn("sked_task_list", c_int, _P, _P, ctypes.POINTER(ctypes.POINTER(_Task)),
    ctypes.POINTER(c_size_t))
_fn("sked_tasks_free", None, ctypes.POINTER(_Task), c_size_t)
_fn("sked_task_find_unique", c_int, _P, c_char_p, ctypes.POINTER(c_int64))
_fn("sked_runs_get", c_int, _P, c_int64, ctypes.POINTER(ctypes.POINTER(_Run)),
    ctypes.POINTER(c_size_t))
_fn("sked_runs_free", None, ctypes.POINTER(_Run), c_size_t)
_fn("sked_cancel", c_int, _P, c_int64)
_fn("sked_retry", c_int, _P, c_int64)
_fn("sked_status_name", c_char_p, c_int)
_fn("sked_status_parse", c_int, c_char_p)

_HANDLER = ctypes.CFUNCTYPE(c_int, _P, _P)
_fn("sked_worker_new", c_int, _P, _P, ctypes.POINTER(_P))
_fn("sked_worker_free", None, _P)
_fn("sked_worker_handle", c_int, _P, c_char_p, _HANDLER, _P)
_fn("sked_worker_run", c_int, _P)
_fn("sked_worker_stop", None, _P, c_int)
_fn("sked_worker_get_counters", None, _P, ctypes.POINTER(_Counters))
_fn("sked_worker_node_id", c_char_p, _P)
_fn("sked_job_id", c_int64, _P)
_fn("sked_job_kind", c_char_p, _P)
_fn("sked_job_queue", c_char_p, _P)
_fn("sked_job_payload", c_void_p, _P, ctypes.POINTER(c_size_t))
_fn("sked_job_attempt", c_int, _P)
_fn("sked_job_max_attempts", c_int, _P)
_fn("sked_job_cancelled", c_int, _P)
_fn("sked_job_set_error_msg", None, _P, c_char_p)

# The option objects: name -> {field: setter}; strings and integers.
_OPTION_FIELDS = {
    "sked_options": {"strategy": c_char_p, "prefix": c_char_p,
                     "migrate": c_int},
    "sked_enqueue_opts": {"queue": c_char_p, "unique_key": c_char_p,
                          "priority": c_int, "run_at_ms": c_int64,
                          "delay_ms": c_int64, "max_attempts": c_int,
                          "concurrency_key": c_char_p},
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

    def __init__(self, code, message):
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


def _code(name):
    c = _lib.sked_errcode(("SKED_E" + name).encode())
    if c > 0:
        raise ImportError("sked: libsked has no code SKED_E" + name)
    return c


_CLASSES = {}
for _names, _cls in ((("INVAL", "URL", "CRON", "TZ"), InvalidArgument),
                     (("TOOBIG",), TooBig), (("NOTFOUND",), NotFound),
                     (("STATE",), StateError),
                     (("UNAVAILABLE",), Unavailable),
                     (("DB", "READONLY"), DatabaseError), (("BUSY",), Busy),
                     (("SCHEMA",), SchemaError),
                     (("UNSUPPORTED", "STRATEGY"), Unsupported)):
    for _n in _names:
        _CLASSES[_code(_n)] = _cls
_EINVAL = _code("INVAL")


def _error(code, message):
    return _CLASSES.get(code, SkedError)(code, message)


def _text(b):
    return None if b is None else b.decode("utf-8", "surrogateescape")


def _bytes(value, what):
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    raise TypeError("sked: %s must be str or bytes, not %s"
                    % (what, type(value).__name__))


def _name(value, what):
    if not isinstance(value, str):
        raise TypeError("sked: %s must be a str, not %s"
                        % (what, type(value).__name__))
    return value.encode("utf-8", "surrogateescape")


def _ms(value, what):
    """A duration: seconds (int or float) or a timedelta, in ms."""
    if isinstance(value, _dt.timedelta):
        return int(round(value.total_seconds() * 1000))
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError("sked: %s must be seconds or a timedelta, not %s"
                        % (what, type(value).__name__))
    return int(round(value * 1000))


def _epoch_ms(value, what):
    """A point in time: an aware datetime (a naive one is UTC)."""
    if not isinstance(value, _dt.datetime):
        raise TypeError("sked: %s must be a datetime, not %s"
                        % (what, type(value).__name__))
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.timezone.utc)
    return int(round(value.timestamp() * 1000))


def _time(ms):
    if not ms:
        return None
    return _dt.datetime.fromtimestamp(ms / 1000, _dt.timezone.utc)


class _Options:
    """An option object of libsked, filled through its setters."""

    def __init__(self, obj, **values):
        self._obj = obj
        self.ptr = getattr(_lib, obj + "_new")()
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
                    if not isinstance(value, int) or isinstance(value, bool):
                        raise TypeError("sked: %s must be an int, not %s"
                                        % (field, type(value).__name__))
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

    def close(self):
        if self.ptr:
            getattr(_lib, self._obj + "_free")(self.ptr)
            self.ptr = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


_LOGFN = ctypes.CFUNCTYPE(None, c_int, c_char_p, c_void_p)
_fn("sked_set_log", None, _LOGFN, c_void_p, c_int)
_fn("sked_log_level_from_name", c_int, c_char_p)
_log_sink = None  # the ctypes callback in use: kept alive while it is set
_LEVELS = {0: 40, 1: 30, 2: 20, 3: 10}  # SKED_LOG_* -> logging levels


def set_log(logger=None, level="info"):
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
        _lib.sked_set_log(ctypes.cast(None, _LOGFN), None, threshold)
        _log_sink = None
        return
    emit = logger.log if hasattr(logger, "log") else logger
    if not callable(emit):
        raise TypeError("sked: a log sink must be a Logger or callable")

    def sink(lvl, line, _userdata):
        try:
            emit(_LEVELS.get(lvl, 10), _text(line))
        except BaseException:
            pass  # a log line is never worth a crash in a sked thread

    cb = _LOGFN(sink)
    _lib.sked_set_log(cb, None, threshold)
    _log_sink = cb


def library():
    """The path or name libsked was loaded from."""
    return _lib._name


def version():
    """libsked's version, e.g. "0.1.0"."""
    return _lib.sked_version().decode()

# ----------------------------------------------------------------- tasks


class Task:
    """One task as read from the database (a copy: it does not change)."""

    __slots__ = ("id", "queue", "kind", "payload_bytes", "status",
                 "priority", "run_at_ms", "attempts", "max_attempts",
                 "node_id", "lease_until_ms", "unique_key", "schedule_name",
                 "fire_time_ms", "last_error", "created_ms", "updated_ms",
                 "finished_ms")

    def __init__(self, t):
        self.id = t.id
        self.queue = _text(t.queue)
        self.kind = _text(t.kind)
        self.payload_bytes = (ctypes.string_at(t.payload, t.payload_len)
                              if t.payload else b"")
        self.status = _lib.sked_status_name(t.status).decode()
        for f in ("priority", "run_at_ms", "attempts", "max_attempts",
                  "lease_until_ms", "fire_time_ms", "created_ms",
                  "updated_ms", "finished_ms"):
            setattr(self, f, getattr(t, f))
        for f in ("node_id", "unique_key", "schedule_name", "last_error"):
            setattr(self, f, _text(getattr(t, f)))

    @property
    def payload(self):
        """The payload as text (UTF-8)."""
        return self.payload_bytes.decode("utf-8", "surrogateescape")

    @property
    def run_at(self):
        return _time(self.run_at_ms)

    @property
    def created(self):
        return _time(self.created_ms)

    @property
    def finished(self):
        return _time(self.finished_ms)

    def __repr__(self):
        return "<sked.Task %d %s %s>" % (self.id, self.kind, self.status)


class Run:
    """One attempt at a task."""

    __slots__ = ("id", "task_id", "attempt", "node_id", "started_ms",
                 "finished_ms", "outcome", "exit_code", "error", "output")

    def __init__(self, r):
        for f in ("id", "task_id", "attempt", "started_ms", "finished_ms",
                  "exit_code"):
            setattr(self, f, getattr(r, f))
        for f in ("node_id", "outcome", "error", "output"):
            setattr(self, f, _text(getattr(r, f)))

    def __repr__(self):
        return "<sked.Run task %d attempt %d %s>" % (self.task_id,
                                                     self.attempt,
                                                     self.outcome)


# ---------------------------------------------------------------- handle


def open(url, *, prefix=None, strategy=None, migrate=False):
    """Connect to the database at url ("sqlite:PATH", "postgres://…",
    "mysql://…", "odbc:…"). migrate=True creates or upgrades the schema."""
    return Sked(url, prefix=prefix, strategy=strategy, migrate=migrate)


class Sked:
    """A handle: one database connection. Use it from one thread at a time
    (a Worker opens its own)."""

    def __init__(self, url, *, prefix=None, strategy=None, migrate=False):
        url_b = _name(url, "url")
        self._args = dict(prefix=prefix, strategy=strategy, migrate=migrate)
        self.url = url
        self._h = None
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

    def _check(self, rc):
        if rc != 0:
            raise _error(rc, _text(_lib.sked_errmsg(self._h)))

    def _handle(self):
        if self._h is None:
            raise ValueError("sked: the handle is closed")
        return self._h

    def close(self):
        if self._h is not None:
            _lib.sked_close(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def migrate(self):
        self._check(_lib.sked_migrate(self._handle()))

    def info(self):
        """What was detected and chosen: a dict of driver, dialect,
        product, version, strategy, reason, url, schema versions."""
        i = _Info()
        self._check(_lib.sked_get_info(self._handle(), ctypes.byref(i)))
        d = {f: _text(getattr(i, f)) for f, t in _Info._fields_
             if f not in ("schema_version", "schema_expected")}
        d["schema_version"] = i.schema_version
        d["schema_expected"] = i.schema_expected
        return d

    def now(self):
        """The database's clock, in ms since the epoch."""
        ms = c_int64()
        self._check(_lib.sked_now(self._handle(), ctypes.byref(ms)))
        return ms.value

    def _enqueue_opts(self, queue, priority, run_at, delay, max_attempts,
                      unique_key):
        if run_at is not None and delay is not None:
            raise InvalidArgument(_EINVAL,
                                  "sked: give run_at or delay, not both")
        if not isinstance(priority, int) or isinstance(priority, bool):
            raise TypeError("sked: priority must be an int")
        if max_attempts is not None and (not isinstance(max_attempts, int)
                                         or isinstance(max_attempts, bool)):
            raise TypeError("sked: max_attempts must be an int")
        if max_attempts is not None and max_attempts < 1:
            raise InvalidArgument(_EINVAL, "sked: max_attempts must be at "
                                  "least 1, not %d" % max_attempts)
        return _Options(
            "sked_enqueue_opts", queue=queue, unique_key=unique_key,
            priority=priority,
            run_at_ms=None if run_at is None else _epoch_ms(run_at, "run_at"),
            delay_ms=None if delay is None else _ms(delay, "delay"),
            max_attempts=max_attempts)

    def enqueue(self, kind, payload=b"", *, queue=None, priority=0,
                run_at=None, delay=None, max_attempts=None, unique_key=None):
        """Enqueue one task and return its id. payload is str or bytes;
        run_at a datetime (naive = UTC) or delay seconds/timedelta from
        the database's now; an existing unique_key returns its task's id."""
        return self.enqueue_ex(kind, payload, queue=queue, priority=priority,
                               run_at=run_at, delay=delay,
                               max_attempts=max_attempts,
                               unique_key=unique_key)[0]

    def enqueue_ex(self, kind, payload=b"", **opts):
        """As enqueue, returning (id, existed): existed is True when
        unique_key matched a task that was there already."""
        kind_b = _name(kind, "kind")
        data = _bytes(b"" if payload is None else payload, "payload")
        tid, existed = c_int64(), c_int()
        with self._enqueue_opts(opts.get("queue"), opts.get("priority", 0),
                                opts.get("run_at"), opts.get("delay"),
                                opts.get("max_attempts"),
                                opts.get("unique_key")) as o:
            self._check(_lib.sked_enqueue(self._handle(), kind_b, data,
                                          len(data), o.ptr,
                                          ctypes.byref(tid),
                                          ctypes.byref(existed)))
        return tid.value, bool(existed.value)

    def enqueue_many(self, kind, payloads, *, queue=None, priority=0,
                     run_at=None, delay=None, max_attempts=None):
        """Enqueue one task per payload, all in one transaction (all or
        none). Returns the ids, in order."""
        kind_b = _name(kind, "kind")
        data = [_bytes(p, "payload") for p in payloads]
        if not data:
            return []
        n = len(data)
        arr = (c_char_p * n)(*data)
        lens = (c_size_t * n)(*[len(d) for d in data])
        ids = (c_int64 * n)()
        with self._enqueue_opts(queue, priority, run_at, delay, max_attempts,
                                None) as o:
            self._check(_lib.sked_enqueue_many(self._handle(), kind_b, n, arr,
                                               lens, o.ptr, ids))
        return list(ids)

    def get(self, task_id):
        """The task with this id; NotFound when there is none."""
        out = ctypes.POINTER(_Task)()
        self._check(_lib.sked_task_get(self._handle(), int(task_id),
                                       ctypes.byref(out)))
        try:
            return Task(out[0])
        finally:
            _lib.sked_tasks_free(out, 1)

    def find_unique(self, key):
        """The id of the task with this unique key; NotFound if none."""
        tid = c_int64()
        self._check(_lib.sked_task_find_unique(self._handle(),
                                               _name(key, "key"),
                                               ctypes.byref(tid)))
        return tid.value

    def list(self, *, status=None, queue=None, kind=None, limit=100,
             before_id=None, node_id=None, created_after=None,
             created_before=None):
        """Tasks, newest first. status is a name ("pending", "dead", …)."""
        st = -1
        if status is not None:
            st = _lib.sked_status_parse(_name(status, "status"))
            if st < 0:
                raise InvalidArgument(_EINVAL,
                                      "sked: unknown status %r" % status)
        with _Options("sked_list_filter", status=st, queue=queue, kind=kind,
                      limit=limit, before_id=before_id, node_id=node_id,
                      created_after_ms=None if created_after is None
                      else _epoch_ms(created_after, "created_after"),
                      created_before_ms=None if created_before is None
                      else _epoch_ms(created_before, "created_before")) as f:
            out, n = ctypes.POINTER(_Task)(), c_size_t()
            self._check(_lib.sked_task_list(self._handle(), f.ptr,
                                            ctypes.byref(out),
                                            ctypes.byref(n)))
        try:
            return [Task(out[i]) for i in range(n.value)]
        finally:
            _lib.sked_tasks_free(out, n.value)

    def runs(self, task_id):
        """The attempts at a task, oldest first ([] if none or no task)."""
        out, n = ctypes.POINTER(_Run)(), c_size_t()
        self._check(_lib.sked_runs_get(self._handle(), int(task_id),
                                       ctypes.byref(out), ctypes.byref(n)))
        try:
            return [Run(out[i]) for i in range(n.value)]
        finally:
            _lib.sked_runs_free(out, n.value)

    def cancel(self, task_id):
        """Cancel a pending, retrying or running task. StateError when it
        has ended, NotFound when there is none."""
        self._check(_lib.sked_cancel(self._handle(), int(task_id)))

    def retry(self, task_id):
        """Run a dead, cancelled or waiting task again now. StateError when
        it is running or succeeded."""
        self._check(_lib.sked_retry(self._handle(), int(task_id)))

    def worker(self, **options):
        """A Worker on this database, with a connection of its own (see
        Worker for the options)."""
        return Worker(self.url, db_options=self._args, **options)


# ---------------------------------------------------------------- worker


class Job:
    """A claimed task as a handler sees it; valid during the call only."""

    __slots__ = ("_j", "id", "kind", "queue", "attempt", "max_attempts",
                 "payload_bytes")

    def __init__(self, j):
        self._j = j
        self.id = _lib.sked_job_id(j)
        self.kind = _text(_lib.sked_job_kind(j))
        self.queue = _text(_lib.sked_job_queue(j))
        self.attempt = _lib.sked_job_attempt(j)
        self.max_attempts = _lib.sked_job_max_attempts(j)
        n = c_size_t()
        p = _lib.sked_job_payload(j, ctypes.byref(n))
        self.payload_bytes = ctypes.string_at(p, n.value) if n.value else b""

    @property
    def payload(self):
        return self.payload_bytes.decode("utf-8", "surrogateescape")

    def cancelled(self):
        """True once the worker is stopping or lost the lease: return."""
        if self._j is None:
            return True
        return bool(_lib.sked_job_cancelled(self._j))


def _queues(value):
    if value is None or isinstance(value, str):
        return value
    parts = []
    for q in value:
        if isinstance(q, tuple):
            parts.append("%s:%d" % q)
        else:
            parts.append(q)
    return ",".join(parts)


class Worker:
    """Runs tasks with Python functions as handlers.

    Options: concurrency (threads, default 4), queues ("a,b:2" or a list
    of names and (name, slots) pairs), node_id, lease, poll, grace,
    retry_base, retry_max, timeout (seconds or timedelta), until_empty,
    prefetch (None or 0: adaptive, the default; N: N tasks ahead of free
    threads; PREFETCH_OFF: none).

    A handler is called with a Job on one of the worker's threads, several
    at once (each holds the GIL while it runs Python). Returning normally
    is success; an exception fails the attempt with "Type: message" in
    the run record; it is retried with backoff until max_attempts.
    """

    _DURATIONS = ("lease", "poll", "grace", "retry_base", "retry_max",
                  "timeout")

    def __init__(self, url, *, db_options=None, concurrency=None, queues=None,
                 node_id=None, until_empty=False, prefetch=None, **durations):
        bad = set(durations) - set(self._DURATIONS)
        if bad:
            raise TypeError("sked: unknown worker option %s" % sorted(bad)[0])
        self._db = Sked(url, **(db_options or {}))
        self._w = None
        self._callbacks = []
        self._running = threading.Lock()
        values = dict(concurrency=concurrency, queues=_queues(queues),
                      node_id=node_id, until_empty=1 if until_empty else 0,
                      prefetch=prefetch)
        for d, v in durations.items():
            if v is not None:
                values[d + "_ms"] = _ms(v, d)
        try:
            with _Options("sked_worker_options", **values) as o:
                w = c_void_p()
                self._db._check(_lib.sked_worker_new(self._db._h, o.ptr,
                                                     ctypes.byref(w)))
            self._w = w
        except BaseException:
            self._db.close()
            raise

    @property
    def node_id(self):
        return _text(_lib.sked_worker_node_id(self._w))

    def handle(self, kind, fn):
        """Run tasks of kind with fn(job)."""
        if not callable(fn):
            raise TypeError("sked: a handler must be callable")

        def call(j, _userdata):
            # Nothing may escape: ctypes would print it and return 0,
            # which is success.
            job = None
            try:
                job = Job(j)
                fn(job)
                return 0
            except BaseException as e:  # a failed attempt, whatever it is
                try:
                    msg = "%s: %s" % (type(e).__name__, e)
                except BaseException:
                    msg = type(e).__name__
                _lib.sked_job_set_error_msg(
                    j, msg.encode("utf-8", "replace"))
                return 1
            finally:
                if job is not None:
                    job._j = None

        cb = _HANDLER(call)
        self._db._check(_lib.sked_worker_handle(self._w, _name(kind, "kind"),
                                                cb, None))
        self._callbacks.append(cb)
        return fn

    def handler(self, kind):
        """Decorator form of handle()."""
        return lambda fn: self.handle(kind, fn)

    def run(self):
        """Run until stop() (or, with until_empty, until nothing is due or
        running). The C loop runs on a thread of its own, so that the
        calling thread keeps running Python signal handlers: a
        KeyboardInterrupt stops the worker gracefully and is raised again
        once it has stopped."""
        if not self._running.acquire(blocking=False):
            raise StateError(_code("STATE"), "sked: the worker is running")
        try:
            result = []
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

    def stop(self, immediate=False):
        """Ask the worker to stop (from any thread or a signal handler):
        no more claims; running handlers get the grace period (immediate:
        their tasks are given back at once)."""
        if self._w is not None:
            _lib.sked_worker_stop(self._w, 1 if immediate else 0)

    def stop_on_signals(self, *signums):
        """Install Python handlers that stop the worker on these signals
        (default SIGTERM and SIGINT). Main thread only, as for signal."""
        for s in signums or (_signal.SIGTERM, _signal.SIGINT):
            _signal.signal(s, lambda *_: self.stop())

    def counters(self):
        c = _Counters()
        _lib.sked_worker_get_counters(self._w, ctypes.byref(c))
        return {f: getattr(c, f) for f, _ in _Counters._fields_}

    def close(self):
        """Free the worker and its connection (not while it runs)."""
        if self._w is not None:
            if not self._running.acquire(blocking=False):
                raise StateError(_code("STATE"),
                                 "sked: stop the worker before closing it")
            _lib.sked_worker_free(self._w)
            self._w = None
            self._running.release()
        self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
