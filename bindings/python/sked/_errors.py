"""The exceptions: SkedError and its subclasses, one per family of
libsked codes (the mapping from a code, read from the library by name,
to its class), and those a handler raises (GiveUp, RetryIn).
"""

from __future__ import annotations

from typing import Dict, Type

from ._ffi import _lib


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
