-- sked schema, version 9, SQLite: a queue paused cluster-wide. See
-- sql/postgresql/009_pause.sql and docs/limits.md.
ALTER TABLE {p}queue_limit ADD COLUMN paused INTEGER NOT NULL DEFAULT 0;
-- A task's W3C trace context (enqueue --traceparent), NULL for none.
ALTER TABLE {p}task ADD COLUMN traceparent TEXT;
ALTER TABLE {p}task_done ADD COLUMN traceparent TEXT;
