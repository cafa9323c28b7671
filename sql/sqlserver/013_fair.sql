-- sked schema, version 13, SQL Server: fair queues (sked queue set
-- --fair on, docs/limits.md "Fair queues"). See
-- sql/postgresql/013_fair.sql.
IF COL_LENGTH(N'{p}queue_limit', N'fair') IS NULL
	ALTER TABLE {p}queue_limit ADD fair INT NOT NULL DEFAULT 0;
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'{p}task_fair' AND object_id = OBJECT_ID(N'{p}task'))
	CREATE INDEX {p}task_fair ON {p}task (queue, concurrency_key, priority DESC, run_at, id)
	WHERE status IN (0, 4);
