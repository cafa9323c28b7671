-- sked schema, version 9, MySQL and MariaDB: a queue paused
-- cluster-wide. See sql/postgresql/009_pause.sql and docs/limits.md.
ALTER TABLE {p}queue_limit ADD COLUMN paused TINYINT NOT NULL DEFAULT 0;
-- A task's W3C trace context (enqueue --traceparent), NULL for none.
ALTER TABLE {p}task ADD COLUMN traceparent VARCHAR(55) NULL;
ALTER TABLE {p}task_done ADD COLUMN traceparent VARCHAR(55) NULL;
