-- sked schema, version 9, SQL Server: a queue paused cluster-wide. See
-- sql/postgresql/009_pause.sql and docs/limits.md.
IF COL_LENGTH(N'{p}queue_limit', N'paused') IS NULL
	ALTER TABLE {p}queue_limit ADD paused INT NOT NULL DEFAULT 0;
-- A task's W3C trace context (enqueue --traceparent), NULL for none.
IF COL_LENGTH(N'{p}task', N'traceparent') IS NULL
	ALTER TABLE {p}task ADD traceparent VARCHAR(55) NULL;
IF COL_LENGTH(N'{p}task_done', N'traceparent') IS NULL
	ALTER TABLE {p}task_done ADD traceparent VARCHAR(55) NULL;
