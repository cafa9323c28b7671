"""The worker: Job (a claimed task as a handler sees it), Handlers (the
handler decorator), and Worker, which runs tasks with Python functions
as handlers.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal as _signal
import threading
import traceback
from typing import (
    Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, TypeVar,
    Union)

from ._ffi import _Counters, _HANDLER, _lib, c_size_t, c_void_p
from ._errors import (
    GiveUp, InvalidArgument, RetryIn, StateError, _EINVAL, _code)
from ._values import (
    Duration, Payload, _Options, _data, _encode, _ms, _name, _str, _text)
from ._core import _Conn


#: Worker(prefetch=PREFETCH_OFF): claim only for free threads
PREFETCH_OFF = -1

#: A handler: called with the Job; returning is success.
Handler = Callable[["Job"], Any]
_F = TypeVar("_F", bound=Callable[..., Any])


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
        """The payload as text (UTF-8); .payload_bytes as it is."""
        return self.payload_bytes.decode("utf-8", "surrogateescape")

    @property
    def data(self) -> Any:
        """The payload as a value: its JSON decoded (what
        db.enqueue(kind, {...}) was given), None when empty; ValueError
        (failing the attempt) when it is not JSON."""
        return _data(self.payload_bytes, self.id)

    def progress(self, value: Payload) -> None:
        """Report how far the task has come: text, or a JSON-able value
        ({"done": 40, "of": 100}), at most 1 KiB once encoded. Kept in
        memory and stored with the worker's next lease renewal, never a
        write per call, so call it as often as you like; each report
        replaces the last. InvalidArgument for a value over the bound
        (the previous report stands)."""
        if self._j is None:
            raise RuntimeError("sked: a Job is valid during its handler "
                               "call only")
        raw = _encode(value, "a progress report")
        if b"\0" in raw:
            raise InvalidArgument(_EINVAL,
                                  "sked: a progress report holds no NUL")
        if _lib.sked_job_set_progress(self._j, raw) != 0:
            raise InvalidArgument(
                _EINVAL, "sked: a progress report is 1 to %d bytes of UTF-8 "
                "(this one: %d)" % (PROGRESS_MAX, len(raw)))

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


#: the most libsked keeps of an attempt's error (sked_job_set_error_msg)
ERROR_MAX = 1023
#: the most a progress report may be (SKED_PROGRESS_MAX), in bytes
PROGRESS_MAX = 1024
_SUMMARY_MAX = 300
_HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_FUTURES = os.sep + os.path.join("concurrent", "futures") + os.sep


def _cut(text: str, limit: int) -> str:
    """text in at most limit bytes of UTF-8, "..." marking a cut."""
    raw = text.encode("utf-8", "replace")
    if len(raw) <= limit:
        return text
    return raw[:limit - 3].decode("utf-8", "ignore") + "..."


def _frames(frames: List[traceback.FrameSummary]) -> List[str]:
    """One entry per frame, without the column carets of 3.11; a frame
    repeated more than three times in a row is said once, with the
    count (deep recursion)."""
    out: List[str] = []
    last, repeats = None, 0
    for f in frames:
        key = (f.filename, f.lineno, f.name)
        if key == last:
            repeats += 1
            if repeats >= 3:
                continue
        else:
            if repeats >= 3:
                out.append("  [Previous line repeated %d more times]\n"
                           % (repeats - 2))
            last, repeats = key, 0
        out.append('  File "%s", line %s, in %s\n' % key
                   + ("    %s\n" % f.line.strip() if f.line else ""))
    if repeats >= 3:
        out.append("  [Previous line repeated %d more times]\n"
                   % (repeats - 2))
    return out


def _error_text(e: BaseException, with_traceback: bool = True) -> str:
    """An attempt's error: "Type: message" on the first line (what lists
    and logs show), then the traceback of the handler's frames, the
    newest last, in at most ERROR_MAX bytes: when it does not fit the
    oldest frames are left out (and counted), so the frame that raised
    is always there. The package's own frames (the call into the
    handler, the asyncio bridge) are left out."""
    try:
        summary = "%s: %s" % (type(e).__name__, e)
    except BaseException:
        summary = type(e).__name__
    summary = _cut(summary.rstrip("\n"), _SUMMARY_MAX)
    if not with_traceback:
        return summary
    try:
        frames = [f for f in traceback.extract_tb(e.__traceback__)
                  if not f.filename.startswith(_HERE)
                  and _FUTURES not in f.filename]
        lines = _frames(frames)
    except BaseException:
        return summary
    if not lines:
        return summary
    room = ERROR_MAX - len(summary.encode("utf-8", "replace")) - 1
    n = len(lines)

    def render(k: int) -> str:  # the newest k frames
        left = n - k
        return ("Traceback (most recent call last%s):\n"
                % ("" if not left else ", %d frame%s left out"
                   % (left, "" if left == 1 else "s"))
                + "".join(lines[left:])).rstrip("\n")

    k = min(n, 40)
    while k > 1 and len(render(k).encode("utf-8", "replace")) > room:
        k -= 1
    return summary + "\n" + _cut(render(k), room)


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
            raw = _encode(result, "a handler's result")
            _lib.sked_job_set_result(j, raw, len(raw))
        return 0
    except BaseException as e:  # a failed attempt, whatever it is
        # GiveUp and RetryIn are the handler's word, not a bug: no
        # traceback
        msg = _error_text(e, not isinstance(e, (GiveUp, RetryIn)))
        _lib.sked_job_set_error_msg(j, msg.encode("utf-8", "replace"))
        if isinstance(e, GiveUp):
            _lib.sked_job_give_up(j)
        elif isinstance(e, RetryIn) and e.seconds >= 0:
            _lib.sked_job_set_retry_in(j, int(e.seconds * 1000))
        return 1
    finally:
        if job is not None:
            job._j = None


class _Registers:
    """What every worker offers on top of its handle(kind, fn): the
    decorator form and adding a Handlers (Worker and sked.aio.Worker)."""

    def handle(self, kind: str, fn: _F) -> _F:
        raise NotImplementedError

    def handler(self, kind: str) -> Callable[[_F], _F]:
        """Decorator form of handle()."""
        return lambda fn: self.handle(kind, fn)

    def include(self, handlers: Handlers) -> None:
        """Add every handler of a Handlers."""
        for kind, fn in handlers:
            self.handle(kind, fn)


class Worker(_Registers):
    """Runs tasks with Python functions as handlers.

    Options: concurrency (threads, default 4), queues ("a,b:2" or a list
    of names and (name, slots) pairs), node_id, lease, poll, grace,
    retry_base, retry_max, timeout (seconds or timedelta), until_empty,
    prefetch (None or 0: adaptive, the default; N: N tasks ahead of free
    threads; PREFETCH_OFF: none), handlers (a Handlers to include).

    A handler is called with a Job on one of the worker's threads, several
    at once (each holds the GIL while it runs Python). Returning normally
    is success; an exception fails the attempt with "Type: message" and
    the handler's traceback in the run record; it is retried with
    backoff until max_attempts. A value returned is the task's result (a
    str as it is, bytes as UTF-8, a dict, list, number or bool as its
    compact JSON; at most 64 KiB); job.data is the payload's JSON
    decoded, job.payload its text; job.parents has the
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
        self._db = _Conn(url, **(db_options or {}))
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
