"""The connection core: one libsked handle opened on a URL, a failed
call turned into its exception, closed once. Sked (_client) and Worker
(_worker, which holds a connection of its own) both build on it.

Layer: below _client and _worker, above _ffi, _errors and _values; it
imports neither of the two above it, so the package's imports go one
way (build/layers checks it).
"""

from __future__ import annotations

import ctypes
from typing import Any, Dict, Optional, TypeVar

from ._ffi import _lib, c_void_p
from ._errors import _error
from ._values import _Options, _name, _str

_C = TypeVar("_C", bound="_Conn")



def _opened(rc: int, h: ctypes.c_void_p) -> ctypes.c_void_p:
    """The handle sked_open or sked_open_borrowed made, or its error
    raised (the handle, if any, closed)."""
    if rc != 0:
        msg = (_lib.sked_errmsg(h).decode() if h.value
               else _lib.sked_strerror(rc).decode())
        _lib.sked_close(h)
        raise _error(rc, msg)
    return h

class _Conn:
    """One database connection (sked_open .. sked_close). Use it from one
    thread at a time. A context manager: leaving the block closes it."""

    url: str

    def __init__(self, url: str, *, prefix: Optional[str] = None,
                 strategy: Optional[str] = None,
                 migrate: bool = False) -> None:
        url_b = _name(url, "url")
        self._args: Dict[str, Any] = dict(prefix=prefix, strategy=strategy,
                                          migrate=migrate)
        self.url = url
        self._h: Optional[ctypes.c_void_p] = None
        self._native: object = None
        with _Options("sked_options", prefix=prefix, strategy=strategy,
                      migrate=1 if migrate else 0) as o:
            h = c_void_p()
            rc = _lib.sked_open(url_b, o.ptr, ctypes.byref(h))
        self._h = _opened(rc, h)

    @classmethod
    def _borrow(cls: "type[_C]", driver: str, native: int, keep: object,
                prefix: Optional[str]) -> _C:
        """A handle on a connection the application holds
        (sked_open_borrowed): native is the driver's connection pointer,
        keep the Python object that owns it (kept alive with the
        handle)."""
        self = cls.__new__(cls)
        self._args = dict(prefix=prefix, strategy=None, migrate=False)
        self.url = "borrowed:" + driver
        self._h = None
        self._native = keep
        with _Options("sked_options", prefix=prefix) as o:
            h = c_void_p()
            rc = _lib.sked_open_borrowed(_name(driver, "driver"),
                                         c_void_p(native), o.ptr,
                                         ctypes.byref(h))
        self._h = _opened(rc, h)
        return self

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

    def __enter__(self: _C) -> _C:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
