-- sked schema, version 9, Oracle: a queue paused cluster-wide. See
-- sql/postgresql/009_pause.sql and docs/limits.md.
ALTER TABLE {p}queue_limit ADD (paused NUMBER(10) DEFAULT 0 NOT NULL);
-- A task's W3C trace context (enqueue --traceparent), NULL for none.
ALTER TABLE {p}task ADD (traceparent VARCHAR2(55) NULL);
ALTER TABLE {p}task_done ADD (traceparent VARCHAR2(55) NULL);
