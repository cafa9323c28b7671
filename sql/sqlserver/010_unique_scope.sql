-- sked schema, version 10, SQL Server: unique keys with a scope. See
-- sql/postgresql/010_unique_scope.sql and docs/unique.md. A filtered
-- index cannot say OR, so the scope is a persisted computed column,
-- unique_held (the key while the task holds it, else NULL), as on MySQL.
IF COL_LENGTH(N'{p}task', N'unique_scope') IS NULL
	ALTER TABLE {p}task ADD unique_scope SMALLINT NULL;
IF COL_LENGTH(N'{p}task', N'unique_held') IS NULL
	ALTER TABLE {p}task ADD unique_held AS (CASE WHEN unique_scope IS NULL THEN unique_key WHEN unique_scope = 1 AND attempts = 0 THEN unique_key END) PERSISTED;
IF EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'{p}task_unique' AND object_id = OBJECT_ID(N'{p}task'))
	DROP INDEX {p}task_unique ON {p}task;
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'{p}task_unique_held' AND object_id = OBJECT_ID(N'{p}task'))
	CREATE UNIQUE INDEX {p}task_unique_held ON {p}task (unique_held)
	WHERE unique_held IS NOT NULL;
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'{p}task_unique_key' AND object_id = OBJECT_ID(N'{p}task'))
	CREATE INDEX {p}task_unique_key ON {p}task (unique_key)
	WHERE unique_key IS NOT NULL;
IF OBJECT_ID(N'{p}unique_for', N'U') IS NULL CREATE TABLE {p}unique_for (
	unique_key NVARCHAR(128) NOT NULL PRIMARY KEY,
	task_id BIGINT NOT NULL,
	held_until DATETIME2(3) NOT NULL
);
-- A task's own timeout in ms (enqueue --timeout D), NULL for none.
IF COL_LENGTH(N'{p}task', N'timeout_ms') IS NULL
	ALTER TABLE {p}task ADD timeout_ms BIGINT NULL;
