"""Enqueue inside the application's own transaction: sked.wrap(conn) on a
psycopg (3) or psycopg2 connection to PostgreSQL.

Layer: the Python binding, over _client (Sked) and sked_open_borrowed
(include/sked.h): the handle runs its statements on the application's
connection and never begins, commits, rolls back or closes it, so a task
enqueued through it commits or rolls back with the application's data.
Nothing imports this module but the package's __init__.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Iterable, List, Optional

from ._client import Sked
from ._errors import StateError, Unsupported, _code
from ._rows import Task
from ._values import Duration
from ._wait import TaskHandle
from ._worker import Worker

_IDLE = 0  # PQTRANS_IDLE: no transaction open


class Wrapped(Sked):
    """A Sked on a connection the application holds (sked.wrap): enqueue,
    inspect and steer; no worker, no wait. Leaving a `with` block (or
    close()) lets go of the handle; the connection stays open and its
    transaction as it was."""

    _conn: Any

    def _handle(self) -> Any:
        # psycopg opens a transaction with the connection's first
        # statement unless it is in autocommit mode; libsked's statements
        # bypass psycopg, so open it as psycopg would, or an enqueue made
        # before any statement of the application's would commit alone
        conn = self._conn
        if self._h is not None and not conn.autocommit \
                and self._tx_status() == _IDLE:
            conn.cursor().execute("SELECT 1")
        return super()._handle()

    def _tx_status(self) -> int:
        conn = self._conn
        if hasattr(conn, "info"):  # psycopg 3
            return int(conn.info.transaction_status)
        return int(conn.get_transaction_status())  # psycopg2

    def worker(self, **options: Any) -> Worker:
        raise StateError(_code("STATE"), "sked: a wrapped connection runs "
                         "no worker: open one with sked.open(url)")

    def wait(self, ids: Iterable[int],
             timeout: Optional[Duration] = None) -> List[Task]:
        raise StateError(_code("STATE"), "sked: wait on a handle of its own "
                         "(sked.open(url)), not inside the application's "
                         "transaction: its tasks are not visible to "
                         "workers before it commits")

    def task(self, task_id: int) -> TaskHandle:
        raise StateError(_code("STATE"), "sked: task handles wait; use "
                         "sked.open(url).task(id)")

    def submit(self, kind: str, payload: Any = None,
               **options: Any) -> TaskHandle:
        raise StateError(_code("STATE"), "sked: use enqueue() on a wrapped "
                         "connection, and wait from a handle of its own")

    def migrate(self) -> None:
        raise StateError(_code("STATE"), "sked: a wrapped connection never "
                         "migrates: run `sked init` or sked.open(url, "
                         "migrate=True) once")


def _libpq_pointer(conn: Any) -> int:
    """The PGconn * of a psycopg 3 or psycopg2 connection, refusing one
    whose libpq is not the system's (a binary wheel brings its own, and
    libsked's libpq must not touch another copy's connection)."""
    mod = type(conn).__module__.split(".")[0]
    if mod == "psycopg":
        pq = sys.modules.get("psycopg.pq")  # loaded: conn is psycopg's
        impl = getattr(pq, "__impl__", "?")
        if impl == "binary":
            raise Unsupported(_code("UNSUPPORTED"), "sked: psycopg[binary] "
                              "bundles its own libpq, which libsked cannot "
                              "share: install psycopg without [binary] "
                              "(Debian: python3-psycopg)")
        return int(conn.pgconn.pgconn_ptr or 0)
    if mod == "psycopg2":
        pkg = getattr(sys.modules.get("psycopg2"), "__file__", None) or ""
        libs = os.path.join(os.path.dirname(os.path.dirname(
            os.path.abspath(pkg))), "psycopg2_binary.libs")
        if os.path.isdir(libs):
            raise Unsupported(_code("UNSUPPORTED"), "sked: psycopg2-binary "
                              "bundles its own libpq, which libsked cannot "
                              "share: install psycopg2 (Debian: "
                              "python3-psycopg2)")
        return int(conn.pgconn_ptr or 0)
    raise TypeError("sked: wrap takes a psycopg or psycopg2 connection to "
                    "PostgreSQL, not %s" % type(conn).__name__)


def wrap(connection: Any, *, prefix: Optional[str] = None) -> Wrapped:
    """A handle on the application's own PostgreSQL connection (psycopg 3
    or psycopg2), so that tasks are enqueued inside its transaction:

        with conn.transaction(), sked.wrap(conn) as tasks:
            conn.execute("INSERT INTO orders ...")
            tasks.enqueue("ship", {"order": 42})

    The task exists for workers once the application commits, and never
    if it rolls back. The handle never commits or closes the connection;
    use it on the thread that uses the connection. The schema must exist
    (`sked init`). prefix: the tables' prefix, as sked.open's."""
    ptr = _libpq_pointer(connection)
    if not ptr:
        raise StateError(_code("STATE"), "sked: the connection is closed")
    db = Wrapped._borrow("libpq", ptr, connection, prefix)
    db._conn = connection
    return db
