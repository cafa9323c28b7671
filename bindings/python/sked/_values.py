"""Values across the boundary: Python values checked and turned into what
libsked takes (names, ints, durations in ms, times), its bytes back into
text, and _Options, an option object filled through its setters.
"""

from __future__ import annotations

import ctypes
import datetime as _dt
from typing import Any, Optional, Union

from ._ffi import _OPTION_FIELDS, _lib, c_char_p
from ._errors import InvalidArgument, _EINVAL, _error


#: A duration: seconds (int or float) or a timedelta.
Duration = Union[int, float, _dt.timedelta]
#: A payload: text (UTF-8) or bytes.
Payload = Union[str, bytes]



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
