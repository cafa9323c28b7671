"""Loading libsked with ctypes: the library's path, the ABI check, the
struct mirrors (checked against sked_struct_size()), the argument and
result types of every function this package calls, and the option
objects' setters. library() and version() report what was loaded.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from typing import Any, Dict, List, Optional


#: The SKED_ABI_VERSION this module was written against.
ABI_VERSION = 4

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
        ("rate_used", c_int), ("paused", c_int), ("fair", c_int),
    ]


class _TaskLive(ctypes.Structure):
    """sked_task_live: what a running task is doing now."""
    _fields_ = [
        ("node_id", c_char_p), ("started_ms", c_int64),
        ("elapsed_ms", c_int64), ("progress", c_char_p),
        ("progress_ms", c_int64),
    ]


class _GraphTask(ctypes.Structure):
    """sked_graph_task: filled here, its options an option object."""
    _fields_ = [
        ("name", c_char_p), ("kind", c_char_p), ("payload", c_char_p),
        ("payload_len", c_size_t), ("after_index", _POINTER(c_size_t)),
        ("n_after_index", c_size_t), ("opts", c_void_p),
    ]


_fn("sked_struct_size", c_size_t, c_char_p)
for _sname, _mirror in (("sked_task", _Task), ("sked_run", _Run),
                        ("sked_worker_counters", _Counters),
                        ("sked_info", _Info), ("sked_schedule", _Schedule),
                        ("sked_lock_row", _LockRow),
                        ("sked_lock_state", _LockState),
                        ("sked_queue_info", _QueueInfo),
                        ("sked_graph_task", _GraphTask),
                        ("sked_task_live", _TaskLive)):
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
_fn("sked_open_borrowed", c_int, c_char_p, _P, _P, _POINTER(_P))
_fn("sked_close", None, _P)
_fn("sked_migrate", c_int, _P)
_fn("sked_get_info", c_int, _P, _POINTER(_Info))
_fn("sked_now", c_int, _P, _I64P)
_fn("sked_enqueue", c_int, _P, c_char_p, c_char_p, c_size_t, _P, _I64P,
    _POINTER(c_int))
_fn("sked_enqueue_many", c_int, _P, c_char_p, c_size_t, _POINTER(c_char_p),
    _POINTER(c_size_t), _P, _I64P)
_fn("sked_enqueue_graph", c_int, _P, _POINTER(_GraphTask), c_size_t, _I64P)
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
_fn("sked_schedule_put_unique", c_int, _P, c_char_p, c_char_p, c_char_p,
    _P, _P, _POINTER(c_int))
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
_fn("sked_queue_set_fair", c_int, _P, c_char_p, c_int)
_fn("sked_queue_set_weight", c_int, _P, c_char_p, c_char_p, c_int)
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
_fn("sked_job_set_progress", c_int, _P, c_char_p)
_fn("sked_task_live_get", c_int, _P, c_int64, _POINTER(_TaskLive))
_fn("sked_task_live_clear", None, _POINTER(_TaskLive))
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
                          "traceparent": c_char_p,
                          "unique_scope": c_int, "unique_for_ms": c_int64,
                          "unique_replace": c_int, "timeout_ms": c_int64},
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




def library() -> str:
    """The path or name libsked was loaded from."""
    return str(_lib._name)


def version() -> str:
    """libsked's version, e.g. "0.1.0"."""
    return str(_lib.sked_version().decode())
