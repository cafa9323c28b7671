"""Shared set-up of the Python binding's tests: which database, which table
prefix, and a way to read a row without going through libsked.

SKED_TEST_BACKEND is "sqlite" (a file in a scratch folder) or "pg"
(SKED_TEST_PG_URL, as the integration tests use it, with a table prefix of
this test's own, dropped afterwards). A pg run without SKED_TEST_PG_URL
exits 77, which CTest reports as skipped.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import sked  # noqa: E402

BACKEND = os.environ.get("SKED_TEST_BACKEND", "sqlite")
SKIP = 77


def require_backend():
    if BACKEND == "pg" and not os.environ.get("SKED_TEST_PG_URL"):
        # as tests/integration/lib.sh: in CI a missing server fails
        if (os.environ.get("CI") == "true"
                and os.environ.get("SKED_ALLOW_SKIP") != "1"):
            print("FAIL (would skip, but CI must run it): pg: no "
                  "PostgreSQL server given (SKED_TEST_PG_URL)",
                  file=sys.stderr)
            sys.exit(1)
        print("SKIP: pg: no PostgreSQL server given (SKED_TEST_PG_URL)",
              file=sys.stderr)
        sys.exit(SKIP)
    if BACKEND not in ("sqlite", "pg"):
        print("unknown SKED_TEST_BACKEND %r" % BACKEND, file=sys.stderr)
        sys.exit(2)


class DbCase(unittest.TestCase):
    """A fresh database (sqlite) or a fresh table prefix (pg) per test."""

    def setUp(self):
        root = os.environ.get("SKED_TEST_TMP") or tempfile.gettempdir()
        os.makedirs(root, exist_ok=True)
        self.tmp = tempfile.mkdtemp(prefix="py-", dir=root)
        self.prefix = "py%s_" % os.urandom(4).hex()
        if BACKEND == "sqlite":
            self.url = "sqlite:" + os.path.join(self.tmp, "sked.db")
        else:
            self.url = os.environ["SKED_TEST_PG_URL"]
        self.db = sked.open(self.url, prefix=self.prefix, migrate=True)

    def tearDown(self):
        self.db.close()
        if BACKEND == "pg":
            self.sql("DO $$DECLARE t text; BEGIN FOR t IN SELECT tablename "
                     "FROM pg_tables WHERE tablename LIKE '%s%%' LOOP "
                     "EXECUTE 'DROP TABLE IF EXISTS ' || quote_ident(t) || "
                     "' CASCADE'; END LOOP; END$$" % self.prefix)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def sql(self, query):
        """Rows of query (tables as {p}task), read beside libsked: sqlite3
        from the standard library, psql for PostgreSQL."""
        query = query.replace("{p}", self.prefix)
        if BACKEND == "sqlite":
            import sqlite3
            con = sqlite3.connect(self.url[len("sqlite:"):], timeout=30)
            try:
                rows = con.execute(query).fetchall()
                con.commit()
            finally:
                con.close()
            return [tuple("" if v is None else str(v) for v in r)
                    for r in rows]
        out = subprocess.run(
            ["psql", "-X", "-q", "-At", "-F", "\t", "-v", "ON_ERROR_STOP=1",
             os.environ["SKED_TEST_PG_URL"], "-c", query],
            check=True, capture_output=True, text=True).stdout
        return [tuple(line.split("\t")) for line in out.splitlines() if line]


def main():
    require_backend()
    unittest.main(verbosity=2)
