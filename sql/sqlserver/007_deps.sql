-- sked schema, version 7, SQL Server: tasks that wait for other tasks.
-- See sql/postgresql/007_deps.sql and docs/workflows.md.
IF COL_LENGTH(N'{p}task', N'dependents') IS NULL
	ALTER TABLE {p}task ADD dependents INT NOT NULL DEFAULT 0;
IF COL_LENGTH(N'{p}task', N'open_parents') IS NULL
	ALTER TABLE {p}task ADD open_parents INT NOT NULL DEFAULT 0;
IF COL_LENGTH(N'{p}task', N'on_parent_failure') IS NULL
	ALTER TABLE {p}task ADD on_parent_failure INT NOT NULL DEFAULT 0;
IF COL_LENGTH(N'{p}task', N'result') IS NULL
	ALTER TABLE {p}task ADD result NVARCHAR(MAX) NULL;
IF COL_LENGTH(N'{p}task_done', N'dependents') IS NULL
	ALTER TABLE {p}task_done ADD dependents INT NOT NULL DEFAULT 0;
IF COL_LENGTH(N'{p}task_done', N'open_parents') IS NULL
	ALTER TABLE {p}task_done ADD open_parents INT NOT NULL DEFAULT 0;
IF COL_LENGTH(N'{p}task_done', N'on_parent_failure') IS NULL
	ALTER TABLE {p}task_done ADD on_parent_failure INT NOT NULL DEFAULT 0;
IF COL_LENGTH(N'{p}task_done', N'result') IS NULL
	ALTER TABLE {p}task_done ADD result NVARCHAR(MAX) NULL;
IF OBJECT_ID(N'{p}task_dep', N'U') IS NULL
	CREATE TABLE {p}task_dep (
		parent_id BIGINT NOT NULL,
		child_id BIGINT NOT NULL,
		PRIMARY KEY (parent_id, child_id)
	);
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'{p}task_dep_child')
	CREATE INDEX {p}task_dep_child ON {p}task_dep (child_id);
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'{p}task_blocked')
	CREATE INDEX {p}task_blocked ON {p}task (queue) WHERE status = 6;
