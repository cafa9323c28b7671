-- sked schema, version 8, SQL Server: a queue paused cluster-wide. See
-- sql/postgresql/008_pause.sql and docs/limits.md.
IF COL_LENGTH(N'{p}queue_limit', N'paused') IS NULL
	ALTER TABLE {p}queue_limit ADD paused INT NOT NULL DEFAULT 0;
