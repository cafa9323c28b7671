"""Values across the boundary: Python values checked and turned into what
libsked takes (names, ints, durations in ms, times), its bytes back into
text, and _Options, an option object filled through its setters.
"""

from __future__ import annotations

import ctypes
import datetime as _dt
import json
from typing import Any, Dict, List, Optional, Tuple, Union

from ._ffi import _OPTION_FIELDS, _lib, c_char_p
from ._errors import InvalidArgument, _EINVAL, _error


#: A duration: seconds (int or float) or a timedelta.
Duration = Union[int, float, _dt.timedelta]
#: A payload (or a handler's result): text (UTF-8) and bytes as they
#: are; a dict, list, tuple, number or bool as its compact JSON; None
#: is the empty payload (no result).
Payload = Union[str, bytes, Dict[str, Any], List[Any], Tuple[Any, ...],
                int, float, bool, None]

_JSON = (dict, list, tuple, int, float, bool)


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


def _encode(value: object, what: str) -> bytes:
    """A payload or a result as libsked stores it: the one encoding of
    the package (enqueue, enqueue_many, enqueue_graph, schedules, a
    handler's return value). str (UTF-8) and bytes pass as they are, so
    text that happens to be JSON is not quoted again; None is empty;
    dict, list, tuple, int, float and bool become compact JSON (no NaN
    or infinity: they are not JSON)."""
    if value is None:
        return b""
    if isinstance(value, (bytes, str)):
        return _bytes(value, what)
    if isinstance(value, _JSON):
        try:
            text = json.dumps(value, separators=(",", ":"),
                              ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise TypeError("sked: %s is not JSON-able: %s" % (what, e)
                            ) from None
        return text.encode("utf-8", "surrogateescape")
    raise TypeError("sked: %s must be str, bytes or a JSON-able value "
                    "(dict, list, number, bool, None), not %s"
                    % (what, type(value).__name__))


def _decode(text: Optional[str]) -> Any:
    """A stored result back as a value: valid JSON decoded (a dict,
    list, number, str, bool, None), other text as it is."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def _data(payload: bytes, task_id: int) -> Any:
    """A payload as a value: its JSON decoded, None when empty. A
    payload that is not JSON raises ValueError naming the task (a
    handler that wants the text reads .payload)."""
    if not payload:
        return None
    try:
        return json.loads(payload)
    except ValueError as e:
        raise ValueError("sked: the payload of task %d is not JSON (%s); "
                         "read it as .payload" % (task_id, e)) from None


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
