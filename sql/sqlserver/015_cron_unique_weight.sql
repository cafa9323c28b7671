-- sked schema, version 15, SQL Server: a schedule's unique key and the
-- per-key weights of fair queues. See
-- sql/postgresql/015_cron_unique_weight.sql.
IF COL_LENGTH(N'{p}schedule', N'unique_key') IS NULL
	ALTER TABLE {p}schedule ADD unique_key NVARCHAR(128) NULL;
IF COL_LENGTH(N'{p}schedule', N'unique_scope') IS NULL
	ALTER TABLE {p}schedule ADD unique_scope INT NULL;
IF COL_LENGTH(N'{p}schedule', N'unique_for_ms') IS NULL
	ALTER TABLE {p}schedule ADD unique_for_ms BIGINT NULL;
IF COL_LENGTH(N'{p}schedule', N'unique_replace') IS NULL
	ALTER TABLE {p}schedule ADD unique_replace INT NOT NULL DEFAULT 0;
IF OBJECT_ID(N'{p}queue_weight', N'U') IS NULL CREATE TABLE {p}queue_weight (
	queue NVARCHAR(128) NOT NULL,
	concurrency_key NVARCHAR(128) NOT NULL,
	weight INT NOT NULL,
	PRIMARY KEY (queue, concurrency_key)
);
