-- sked schema, version 11, PostgreSQL: waiting for a task's end
-- (sked wait, GET /api/tasks/ID?wait=D; docs/cli.md). A waiter sets
-- waited = 1 on the live rows it waits for and LISTENs on {p}end; every
-- path that ends a task deletes its row from {p}task (done.c, the array
-- finish), and the trigger below, which fires only for a row someone
-- waits on (the WHEN clause is read before any function is called),
-- sends NOTIFY {p}end with the id, delivered when the ending transaction
-- commits. Nobody waiting costs the hot path the test of one column of
-- the deleted row; no statement of sked's changes. The function's body
-- stands on one line: a schema step has one statement per line that ends
-- in ';' (unit/test_sqlsplit).
ALTER TABLE {p}task ADD COLUMN IF NOT EXISTS waited smallint NOT NULL DEFAULT 0;
CREATE OR REPLACE FUNCTION {p}ended_notify() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_notify('{p}end', OLD.id::text); RETURN NULL; END
$$;
DROP TRIGGER IF EXISTS {p}ended ON {p}task;
CREATE TRIGGER {p}ended AFTER DELETE ON {p}task FOR EACH ROW
  WHEN (OLD.waited <> 0) EXECUTE PROCEDURE {p}ended_notify();
-- What each node serves (docs/operations.md, "Why work waits"): the kinds
-- it has handlers for and the queues it claims from, each as ",a,b,",
-- NULL for every one (a catch-all handler, no --queues) or a node of an
-- older sked. Written once when the node registers, never on the hot
-- path; stats, the dashboard and /metrics name the due work no live node
-- serves.
ALTER TABLE {p}node ADD COLUMN IF NOT EXISTS serves_kinds text;
ALTER TABLE {p}node ADD COLUMN IF NOT EXISTS serves_queues text;
