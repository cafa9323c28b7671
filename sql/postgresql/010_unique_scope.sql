-- sked schema, version 10, PostgreSQL: unique keys with a scope
-- (enqueue --unique KEY, docs/unique.md).
--
-- unique_scope says how long a task holds its key: NULL while it is
-- live (in {p}task: pending, retrying, running or blocked; the default,
-- and what a plain INSERT gets), 1 until it first starts (pending:
-- attempts = 0), 2 for a period from its enqueue. The first two are one
-- unique index on {p}task whose predicate is the scope: an enqueue
-- learns whether the key is free by its insert alone, and the claim,
-- which already moves attempts, does nothing more. A task that ends
-- leaves {p}task, and with it the index: an ended task no longer holds
-- its key (before schema 10 it held it until retention removed it).
-- {p}task_done does not keep the scope: a task that retry brings back
-- holds its key while live, the default.
ALTER TABLE {p}task ADD COLUMN IF NOT EXISTS unique_scope smallint;
DROP INDEX IF EXISTS {p}task_unique;
CREATE UNIQUE INDEX IF NOT EXISTS {p}task_unique_held ON {p}task (unique_key)
	WHERE unique_key IS NOT NULL AND (unique_scope IS NULL OR (unique_scope = 1 AND attempts = 0));
-- A key held for a period (enqueue --unique-for D): its row says which
-- task holds it until when. The enqueue's one upsert of this row decides
-- (a row whose period is over is taken over); retention removes rows
-- whose period ended.
CREATE TABLE IF NOT EXISTS {p}unique_for (
	unique_key text PRIMARY KEY,
	task_id bigint NOT NULL,
	held_until timestamptz NOT NULL
);
-- A task's own timeout in ms (enqueue --timeout D), NULL for none: the
-- claim hands it to the worker, which stops the handler after the
-- shorter of it and the kind's (docs/handlers.md).
ALTER TABLE {p}task ADD COLUMN IF NOT EXISTS timeout_ms bigint;
