-- sked schema, version 5, SQL Server: the attempt that ends a task is
-- recorded on its {p}task_done row (node_id, started_at, finished_at and
-- attempts were there already, these four columns complete it), so the
-- common case writes one row, not two. {p}run keeps the attempts that
-- did not end the task and every attempt recorded before this version.
IF COL_LENGTH(N'{p}task_done', N'outcome') IS NULL
	ALTER TABLE {p}task_done ADD outcome NVARCHAR(32) NULL;
IF COL_LENGTH(N'{p}task_done', N'exit_code') IS NULL
	ALTER TABLE {p}task_done ADD exit_code INT NULL;
IF COL_LENGTH(N'{p}task_done', N'error') IS NULL
	ALTER TABLE {p}task_done ADD error NVARCHAR(MAX) NULL;
IF COL_LENGTH(N'{p}task_done', N'output') IS NULL
	ALTER TABLE {p}task_done ADD output NVARCHAR(MAX) NULL;
