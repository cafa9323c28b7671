"""python-tx/pg: sked.wrap, tasks enqueued inside the application's own
psycopg transaction on PostgreSQL.

A task enqueued through the wrapped connection is invisible to any other
connection (a worker's, another handle's) until the application commits,
and gone if it rolls back; with psycopg's implicit transaction (no
statement run yet) too, and at once in autocommit mode. The wrapped
handle refuses a worker and a wait, a non-psycopg object and a closed
connection, each with one clear error. Needs python3-psycopg (Debian;
scripts/deps.sh test installs it): without it the test skips loudly
(exit 77), and fails in CI.
"""

import os
import sys

try:
    import psycopg
except ImportError:
    # a Python of its own (pyenv, a venv) may not see Debian's package:
    # run again under the system's interpreter if it has psycopg
    alt = "/usr/bin/python3"
    if (os.path.realpath(sys.executable) != os.path.realpath(alt)
            and not os.environ.get("SKED_TX_REEXEC")
            and os.system(alt + " -c 'import psycopg' 2>/dev/null") == 0):
        os.environ["SKED_TX_REEXEC"] = "1"
        os.execv(alt, [alt] + sys.argv)
    psycopg = None

from common import BACKEND, DbCase, SKIP, main, sked  # noqa: E402


def require_psycopg():
    if BACKEND != "pg":
        print("SKIP: python-tx runs on PostgreSQL only (SKED_TEST_BACKEND "
              "pg)", file=sys.stderr)
        sys.exit(SKIP)
    if psycopg is None:
        msg = ("psycopg is not installed (apt-get install python3-psycopg, "
               "or scripts/deps.sh test)")
        if (os.environ.get("CI") == "true"
                and os.environ.get("SKED_ALLOW_SKIP") != "1"):
            print("FAIL (would skip, but CI must run it): " + msg,
                  file=sys.stderr)
            sys.exit(1)
        print("SKIP: " + msg, file=sys.stderr)
        sys.exit(SKIP)


class TestWrap(DbCase):
    def setUp(self):
        super().setUp()
        self.conn = psycopg.connect(os.environ["SKED_TEST_PG_URL"])
        self.table = self.prefix + "orders"
        self.conn.execute("CREATE TABLE %s (id int PRIMARY KEY)" % self.table)
        self.conn.commit()

    def tearDown(self):
        self.conn.close()
        super().tearDown()

    def visible(self, tid):
        try:
            self.db.get(tid)
            return True
        except sked.NotFound:
            return False

    def test_commit_makes_the_task_visible(self):
        with self.conn.transaction(), \
                sked.wrap(self.conn, prefix=self.prefix) as tasks:
            self.conn.execute("INSERT INTO %s VALUES (1)" % self.table)
            tid = tasks.enqueue("ship", {"order": 1}, priority=2)
            self.assertEqual(tasks.get(tid).data, {"order": 1})  # ours
            self.assertFalse(self.visible(tid), "seen before the commit")
            self.assertEqual(self.db.count(kind="ship"), 0)
        self.assertTrue(self.visible(tid))
        t = self.db.get(tid)
        self.assertEqual((t.status, t.data, t.priority),
                         ("pending", {"order": 1}, 2))
        # and a worker runs it
        with self.db.worker(until_empty=True, poll=0.05) as w:
            w.handle("ship", lambda job: job.data["order"])
            w.run()
        self.assertEqual(self.db.get(tid).result, 1)

    def test_rollback_takes_the_task_away(self):
        class Boom(Exception):
            pass

        with self.assertRaises(Boom):
            with self.conn.transaction(), \
                    sked.wrap(self.conn, prefix=self.prefix) as tasks:
                self.conn.execute("INSERT INTO %s VALUES (2)" % self.table)
                tid = tasks.enqueue("ship", {"order": 2})
                tasks.enqueue_many("ship", [{"order": 3}, {"order": 4}])
                raise Boom()
        self.assertFalse(self.visible(tid))
        self.assertEqual(self.db.count(), 0)
        self.assertEqual(self.conn.execute(
            "SELECT count(*) FROM %s" % self.table).fetchone()[0], 0)

    def test_implicit_transaction(self):
        # no statement yet: the enqueue is the transaction's first
        tasks = sked.wrap(self.conn, prefix=self.prefix)
        tid = tasks.enqueue("ship", "first")
        self.assertFalse(self.visible(tid))
        self.conn.rollback()
        self.assertFalse(self.visible(tid))
        tid = tasks.enqueue("ship", "second")
        self.conn.execute("INSERT INTO %s VALUES (5)" % self.table)
        self.assertFalse(self.visible(tid))
        self.conn.commit()
        self.assertTrue(self.visible(tid))
        tasks.close()
        self.assertFalse(self.conn.closed, "close() left the connection")
        self.assertEqual(self.conn.execute("SELECT 7").fetchone()[0], 7)

    def test_autocommit_enqueues_at_once(self):
        self.conn.autocommit = True
        with sked.wrap(self.conn, prefix=self.prefix) as tasks:
            tid = tasks.enqueue("ship")
            self.assertTrue(self.visible(tid))

    def test_refusals(self):
        with sked.wrap(self.conn, prefix=self.prefix) as tasks:
            for call in (lambda: tasks.worker(),
                         lambda: tasks.wait([1]),
                         lambda: tasks.submit("ship"),
                         lambda: tasks.migrate()):
                with self.assertRaises(sked.StateError) as cm:
                    call()
                self.assertNotIn("\n", str(cm.exception))
        with self.assertRaises(TypeError):
            sked.wrap(object())
        import sqlite3
        with self.assertRaises(TypeError):
            sked.wrap(sqlite3.connect(":memory:"))
        with self.assertRaises(sked.SchemaError):
            sked.wrap(self.conn, prefix="py_never_made_")
        self.conn.rollback()  # that failed read aborted the transaction
        other = psycopg.connect(os.environ["SKED_TEST_PG_URL"])
        other.close()
        with self.assertRaises(sked.SkedError):
            sked.wrap(other, prefix=self.prefix)


if __name__ == "__main__":
    require_psycopg()
    main()
