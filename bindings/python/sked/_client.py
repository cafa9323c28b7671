"""The handle: open() and Sked (enqueue, bulk, show, list, steer,
schedules, locks, queue limits and pause), and Lock, a cluster lock
held for a with block.
"""

from __future__ import annotations

import ctypes
import datetime as _dt
import os
import re
import socket
from typing import (
    Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union)

from ._ffi import (
    _GraphTask, _Info, _TaskLive, _LockRow, _LockState, _POINTER, _QueueInfo, _Run,
    _Schedule, _Task, _lib, c_char_p, c_int, c_int64, c_size_t)
from ._errors import InvalidArgument, _EINVAL, _error
from ._values import (
    Duration, Payload, _Options, _encode, _epoch_ms, _int, _ms, _name,
    _text, _time)
from ._rows import Live, LockRow, LockState, QueueInfo, Run, Schedule, Task
from ._core import _Conn
from ._unique import _unique_fields
from ._wait import TaskHandle, wait as _wait
from ._worker import Worker


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


class Sked(_Conn):
    """A handle: one database connection. Use it from one thread at a time
    (a Worker opens its own). A context manager: leaving the block closes
    it. Opening, closing and turning a failed call into its exception are
    the connection core's (_core._Conn)."""

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
                      traceparent: Optional[str] = None,
                      unique: Optional[Dict[str, Any]] = None) -> _Options:
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
            traceparent=traceparent, **_unique_fields(unique))
        if ids:
            arr = (c_int64 * len(ids))(*ids)
            rc = _lib.sked_enqueue_opts_set_after(o.ptr, arr, len(ids))
            if rc != 0:
                o.close()
                raise _error(rc, _lib.sked_strerror(rc).decode())
        return o

    def enqueue(self, kind: str, payload: Payload = None, *,
                queue: Optional[str] = None, priority: int = 0,
                run_at: Optional[_dt.datetime] = None,
                delay: Optional[Duration] = None,
                max_attempts: Optional[int] = None,
                unique_key: Optional[str] = None,
                concurrency_key: Optional[str] = None,
                after: Optional[Sequence[int]] = None,
                on_parent_failure: str = "cancel",
                traceparent: Optional[str] = None,
                unique_scope: Optional[str] = None,
                unique_for: Optional[Duration] = None,
                unique_replace: bool = False,
                timeout: Optional[Duration] = None) -> int:
        """Enqueue one task and return its id. payload: str or bytes as
        they are, a dict, list, number or bool as its compact JSON, None
        (the default) empty;
        run_at a datetime (naive = UTC) or delay seconds/timedelta from
        the database's now; an existing unique_key returns its task's id;
        concurrency_key is what the queue's per-key limit counts it under
        (set_queue_limits(per_key=…)); after: parent task ids, the task
        is blocked until each has ended, on_parent_failure "cancel" or
        "ignore" (docs/workflows.md); traceparent: a W3C trace context
        ("00-<32 hex>-<16 hex>-<2 hex>") the handler receives.
        unique_scope "live" (the key is held while its task is live) or
        "pending" (until it starts); unique_for: held for this period
        from the enqueue instead; unique_replace: a holder that has not
        started takes this payload and run time (debounce; the scope is
        "pending" unless given). docs/unique.md. timeout: seconds or a
        timedelta after which the handler is stopped (the kind's, if
        shorter, still holds)."""
        return self.enqueue_ex(kind, payload, queue=queue, priority=priority,
                               run_at=run_at, delay=delay,
                               max_attempts=max_attempts,
                               unique_key=unique_key,
                               concurrency_key=concurrency_key,
                               after=after,
                               on_parent_failure=on_parent_failure,
                               traceparent=traceparent,
                               unique_scope=unique_scope,
                               unique_for=unique_for,
                               unique_replace=unique_replace,
                               timeout=timeout)[0]

    def enqueue_ex(self, kind: str, payload: Payload = None, *,
                   queue: Optional[str] = None, priority: int = 0,
                   run_at: Optional[_dt.datetime] = None,
                   delay: Optional[Duration] = None,
                   max_attempts: Optional[int] = None,
                   unique_key: Optional[str] = None,
                   concurrency_key: Optional[str] = None,
                   after: Optional[Sequence[int]] = None,
                   on_parent_failure: str = "cancel",
                   traceparent: Optional[str] = None,
                   unique_scope: Optional[str] = None,
                   unique_for: Optional[Duration] = None,
                   unique_replace: bool = False,
                   timeout: Optional[Duration] = None) -> Tuple[int, bool]:
        """As enqueue, returning (id, existed): existed is True when
        unique_key was held by a task (replaced or not)."""
        kind_b = _name(kind, "kind")
        data = _encode(payload, "payload")
        tid, existed = c_int64(), c_int()
        with self._enqueue_opts(queue, priority, run_at, delay, max_attempts,
                                unique_key, concurrency_key, after,
                                on_parent_failure, traceparent,
                                {"scope": unique_scope, "for": unique_for,
                                 "replace": unique_replace,
                                 "timeout": timeout}) as o:
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
        data = [_encode(p, "payload") for p in payloads]
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

    _GRAPH_FIELDS = frozenset((
        "name", "kind", "payload", "after", "queue", "priority", "run_at",
        "delay", "max_attempts", "concurrency_key", "timeout",
        "on_parent_failure", "traceparent"))

    def enqueue_graph(self, tasks: Sequence[Dict[str, Any]]) -> Dict[str, int]:
        """Enqueue a workflow in one transaction, all or none
        (docs/workflows.md, "A graph in one transaction"). Each task is a
        dict with a "name" (unique in the graph) and a "kind", and
        optionally "payload" (str or bytes as it is; any other value as
        its compact JSON, as the JSON format does), "after" (names of the
        graph's tasks and/or ids of existing tasks), and the options of
        enqueue: "queue", "priority", "run_at", "delay", "max_attempts",
        "concurrency_key", "timeout", "on_parent_failure", "traceparent".
        Returns {name: id}. An unknown name, a name used twice, a cycle
        or a task the library refuses raises InvalidArgument, and nothing
        is written."""
        tasks = list(tasks)
        index: Dict[str, int] = {}
        for i, t in enumerate(tasks):
            if not isinstance(t, dict):
                raise TypeError("sked: a graph's task must be a dict, not %s"
                                % type(t).__name__)
            extra = set(t) - self._GRAPH_FIELDS
            if extra:
                raise InvalidArgument(_EINVAL, "sked: task %d: unknown "
                                      "field(s) %s" % (i, sorted(extra)))
            name = t.get("name")
            if not isinstance(name, str) or not name:
                raise InvalidArgument(_EINVAL, "sked: task %d has no name" % i)
            if name in index:
                raise InvalidArgument(_EINVAL, "sked: two tasks are named %r: "
                                      "a name is unique in a graph" % name)
            index[name] = i
        if not tasks:
            return {}
        n = len(tasks)
        arr = (_GraphTask * n)()
        keep: List[Any] = []  # what arr points to, alive for the call
        opts: List[_Options] = []
        try:
            for i, t in enumerate(tasks):
                names, ids = [], []
                for a in t.get("after") or []:
                    if isinstance(a, str):
                        if a not in index:
                            raise InvalidArgument(
                                _EINVAL, "sked: task %r: 'after' names %r, "
                                "no task of the graph" % (t["name"], a))
                        names.append(index[a])
                    else:
                        ids.append(_int(a, "after"))
                data = _encode(t.get("payload"), "payload")
                o = self._enqueue_opts(
                    t.get("queue"), t.get("priority", 0), t.get("run_at"),
                    t.get("delay"), t.get("max_attempts"), None,
                    t.get("concurrency_key"), ids,
                    t.get("on_parent_failure", "cancel"),
                    t.get("traceparent"), {"timeout": t.get("timeout")})
                opts.append(o)
                idx = (c_size_t * max(len(names), 1))(*names)
                name_b, kind_b = _name(t["name"], "name"), _name(t.get("kind"),
                                                                 "kind")
                keep += [idx, name_b, kind_b, data]
                arr[i].name, arr[i].kind = name_b, kind_b
                arr[i].payload, arr[i].payload_len = data, len(data)
                arr[i].after_index, arr[i].n_after_index = idx, len(names)
                arr[i].opts = o.ptr
            out = (c_int64 * n)()
            self._check(_lib.sked_enqueue_graph(self._handle(), arr, n, out))
            return {t["name"]: out[i] for i, t in enumerate(tasks)}
        finally:
            for o in opts:
                o.close()

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

    def live(self, task_id: int) -> Live:
        """What the running task is doing now: node, start, elapsed
        time and progress (Live); NotFound when it is not running."""
        out = _TaskLive()
        self._check(_lib.sked_task_live_get(self._handle(), int(task_id),
                                            ctypes.byref(out)))
        try:
            return Live(out)
        finally:
            _lib.sked_task_live_clear(ctypes.byref(out))

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
                 payload: Payload = None, *, tz: Optional[str] = None,
                 queue: Optional[str] = None, priority: int = 0,
                 max_attempts: Optional[int] = None,
                 misfire: str = "fire-once", overlap: str = "allow",
                 unique_key: Optional[str] = None,
                 unique_scope: Optional[str] = None,
                 unique_for: Optional[Duration] = None,
                 unique_replace: bool = False) -> bool:
        """Add the named schedule, or replace its definition: one task of
        kind per fire of the cron expression (5 fields, 6 with seconds, or
        an @alias) in zone tz (default UTC), enqueued exactly once across
        the cluster by whichever worker ticks first. misfire:
        "fire-once", "fire-all" or "skip"; overlap: "allow" or "skip".
        unique_key (with unique_scope, unique_for, unique_replace as for
        enqueue): each fire enqueues as enqueue(unique_key=…) would; a
        fire whose key is held is skipped, or with unique_replace moves
        the waiting holder to now with this payload (docs/schedules.md,
        "Unique keys"). Without unique_key a schedule has none (a key it
        had is cleared). Returns True when it is new. A bad expression or
        zone raises InvalidArgument with the field and the problem."""
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
        text = (None if payload is None else
                _encode(payload, "payload").decode("utf-8", "surrogateescape"))
        with _Options("sked_schedule_opts", tz=tz, payload=text,
                      queue=queue, priority=priority,
                      max_attempts=max_attempts, misfire=mf,
                      overlap=ov) as o:
            if unique_key is None:
                self._check(_lib.sked_schedule_put(
                    self._handle(), _name(name, "name"), _name(cron, "cron"),
                    _name(kind, "kind"), o.ptr, ctypes.byref(created)))
                return bool(created.value)
            with _Options("sked_enqueue_opts", unique_key=unique_key,
                          **_unique_fields({"scope": unique_scope,
                                            "for": unique_for,
                                            "replace": unique_replace})
                          ) as u:
                self._check(_lib.sked_schedule_put_unique(
                    self._handle(), _name(name, "name"), _name(cron, "cron"),
                    _name(kind, "kind"), o.ptr, u.ptr,
                    ctypes.byref(created)))
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

    def set_queue_fair(self, queue: str, fair: bool = True, *,
                       weights: Optional[Dict[str, int]] = None) -> None:
        """Make queue fair across its concurrency keys (claims take its
        tasks round-robin across keys; docs/limits.md, "Fair queues"), or
        not with fair=False. weights: {key: N} gives a key N turns a round
        (1 to 100; 1 removes the key's weight); keys not named keep
        theirs."""
        q = _name(queue, "queue")
        self._check(_lib.sked_queue_set_fair(self._handle(), q,
                                             1 if fair else 0))
        for key, w in (weights or {}).items():
            self._check(_lib.sked_queue_set_weight(
                self._handle(), q, _name(key, "key"), _int(w, "weight")))

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

    # ---- waiting (_wait.py)

    def wait(self, ids: Iterable[int],
             timeout: Optional[Duration] = None) -> List[Task]:
        """Block until each task has ended; see sked._wait.wait."""
        return _wait(self, ids, timeout)

    def task(self, task_id: int) -> TaskHandle:
        """A handle on task task_id: .wait(), .result(), .get()."""
        return TaskHandle(self, task_id)

    def submit(self, kind: str, payload: Payload = None,
               **options: Any) -> TaskHandle:
        """enqueue(kind, payload, **options), as a TaskHandle."""
        return TaskHandle(self, self.enqueue(kind, payload, **options))

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
