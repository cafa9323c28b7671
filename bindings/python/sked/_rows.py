"""The rows libsked returns, as Python objects: Task, Run, Live, Schedule,
LockState, LockRow and QueueInfo.
"""

from __future__ import annotations

import ctypes
import datetime as _dt
from typing import Any, Optional, Tuple

from ._ffi import (
    _LockRow, _LockState, _QueueInfo, _Run, _Schedule, _Task, _TaskLive,
    _lib)
from ._values import _data, _decode, _str, _text, _time


# ----------------------------------------------------------------- rows


class Task:
    """One task as read from the database (a copy: it does not change)."""

    __slots__ = ("id", "queue", "kind", "payload_bytes", "status",
                 "priority", "run_at_ms", "attempts", "max_attempts",
                 "node_id", "lease_until_ms", "unique_key", "schedule_name",
                 "fire_time_ms", "last_error", "created_ms", "updated_ms",
                 "finished_ms", "result", "result_text", "traceparent")

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
    # the result as left (text), and as a value: valid JSON decoded (a
    # dict, list, number, str, bool), other text as it is
    result: Any
    result_text: Optional[str]
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
                  "traceparent"):
            setattr(self, f, _text(getattr(t, f)))
        self.result_text = _text(t.result)
        self.result = _decode(self.result_text)

    @property
    def payload(self) -> str:
        """The payload as text (UTF-8)."""
        return self.payload_bytes.decode("utf-8", "surrogateescape")

    @property
    def data(self) -> Any:
        """The payload as a value: its JSON decoded (None when empty);
        ValueError when it is not JSON."""
        return _data(self.payload_bytes, self.id)

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
                 "rate_used", "paused", "fair")

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
        self.fair: bool = bool(q.fair)

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


class Live:
    """What a running task is doing now (sked_task_live_get): its node,
    its attempt's start and elapsed time by the database's clock, and
    the latest progress its handler reported (stored with the worker's
    lease renewal, so up to a third of the lease late)."""

    __slots__ = ("node_id", "started_ms", "elapsed_ms", "progress_text",
                 "progress_ms")

    def __init__(self, l: _TaskLive) -> None:
        self.node_id: Optional[str] = _text(l.node_id)
        self.started_ms: int = l.started_ms
        self.elapsed_ms: int = l.elapsed_ms
        self.progress_text: Optional[str] = _text(l.progress)
        self.progress_ms: int = l.progress_ms

    @property
    def progress(self) -> Any:
        """The latest report as a value: its JSON decoded, other text as
        it is; None before the first report of this attempt."""
        return _decode(self.progress_text)

    @property
    def started(self) -> Optional[_dt.datetime]:
        return _time(self.started_ms)

    @property
    def elapsed(self) -> _dt.timedelta:
        return _dt.timedelta(milliseconds=self.elapsed_ms)

    @property
    def progress_at(self) -> Optional[_dt.datetime]:
        return _time(self.progress_ms)

    def __repr__(self) -> str:
        return ("<sked.Live on %s for %.1fs progress=%r>"
                % (self.node_id, self.elapsed_ms / 1000.0,
                   self.progress_text))
