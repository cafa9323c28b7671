-- sked schema, version 9, PostgreSQL: a queue paused cluster-wide
-- (sked queue pause, docs/limits.md). paused = 1: no claim takes the
-- queue's tasks until it is resumed. A paused queue always has a row
-- here (its limits may all be NULL), so the claim of every queue, which
-- already leaves out the queues this table names, leaves it out too,
-- and the limited claim of the queue reads the flag from the row it
-- locks.
ALTER TABLE {p}queue_limit ADD COLUMN IF NOT EXISTS paused integer NOT NULL DEFAULT 0;
-- A task's W3C trace context (enqueue --traceparent, docs/handlers.md):
-- "00-<32 hex>-<16 hex>-<2 hex>", NULL for none; the claim reads it
-- with the row and hands it to the handler as TRACEPARENT.
ALTER TABLE {p}task ADD COLUMN IF NOT EXISTS traceparent text;
ALTER TABLE {p}task_done ADD COLUMN IF NOT EXISTS traceparent text;
