"""Where libsked's log lines go: set_log().
"""

from __future__ import annotations

import ctypes
from typing import Any

from ._ffi import _fn, _lib, c_char_p, c_int, c_void_p
from ._errors import InvalidArgument, _EINVAL
from ._values import _name, _text


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
