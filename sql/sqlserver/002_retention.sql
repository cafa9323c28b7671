-- sked schema, version 2, SQL Server: retention (sked prune) finds ended
-- tasks by status and age through this filtered index.
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'{p}task_ended' AND object_id = OBJECT_ID(N'{p}task'))
	CREATE INDEX {p}task_ended ON {p}task (status, finished_at)
	WHERE status IN (2, 3, 5);
-- and how many slots each node has (sked nodes, the dashboard)
IF COL_LENGTH(N'{p}node', N'slots') IS NULL
	ALTER TABLE {p}node ADD slots INT NOT NULL DEFAULT 0;
