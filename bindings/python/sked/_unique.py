"""Unique keys' scopes for enqueue (docs/unique.md), and a task's own
timeout: the keyword arguments unique_scope, unique_for, unique_replace
and timeout as the fields of libsked's enqueue options. Layer: the binding's value helpers, beside
_values.py; it knows nothing of the client or the worker."""
from __future__ import annotations

from typing import Any, Dict, Optional

from ._errors import InvalidArgument, _EINVAL
from ._values import _ms

# sked.h's SKED_UNIQUE_LIVE and SKED_UNIQUE_PENDING
_SCOPES = {"live": 0, "pending": 1}


def _unique_fields(unique: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """{"scope": None|"live"|"pending", "for": None|Duration,
    "replace": bool} as option fields (None: left as it is). The library
    checks the rest (a key is needed, 1 ms to 100 years)."""
    if not unique:
        return {}
    own = unique.get("timeout")
    timeout = None if own is None else _ms(own, "timeout")
    if timeout is not None and timeout <= 0:
        raise InvalidArgument(_EINVAL, "sked: timeout must be above 0")
    scope, period = unique.get("scope"), unique.get("for")
    replace = bool(unique.get("replace"))
    if scope is not None and scope not in _SCOPES:
        raise InvalidArgument(_EINVAL, "sked: unique_scope: give 'live' or "
                              "'pending', not %r (a period is unique_for)"
                              % (scope,))
    if scope is not None and period is not None:
        raise InvalidArgument(_EINVAL, "sked: unique_scope and unique_for "
                              "conflict (a key is held by state or for a "
                              "period)")
    ms = None if period is None else _ms(period, "unique_for")
    if ms is not None and ms <= 0:
        raise InvalidArgument(_EINVAL, "sked: unique_for must be above 0")
    # a replace holds the key until the task starts unless told
    if scope is None and replace and ms is None:
        scope = "pending"
    return {"unique_scope": _SCOPES[scope] if scope else None,
            "unique_for_ms": ms, "unique_replace": 1 if replace else None,
            "timeout_ms": timeout}
