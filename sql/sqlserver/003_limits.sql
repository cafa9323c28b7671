-- sked schema, version 3, SQL Server: cluster-wide limits of a queue
-- (docs/limits.md). One row per limited queue: at most concurrency tasks
-- of it running at once, at most per_key running per concurrency key, at
-- most rate_n starts in any rate_ms window. NULL: that limit is off. A
-- queue without a row is unlimited and is claimed exactly as before.
-- rate_log is the sliding window's record (ms:count pairs), the claims
-- of the last rate_ms. A limited claim locks this row WITH (UPDLOCK,
-- ROWLOCK) in its transaction, counts the queue's running tasks and
-- claims what is left.
IF OBJECT_ID(N'{p}queue_limit', N'U') IS NULL CREATE TABLE {p}queue_limit (
	queue NVARCHAR(128) NOT NULL PRIMARY KEY,
	concurrency INT NULL,
	per_key INT NULL,
	rate_n INT NULL,
	rate_ms BIGINT NULL,
	rate_log NVARCHAR(MAX) NULL,
	updated_at DATETIME2(3) NOT NULL DEFAULT SYSUTCDATETIME()
);
-- the key a task shares with others for --per-key (NULL: none)
IF COL_LENGTH(N'{p}task', N'concurrency_key') IS NULL
	ALTER TABLE {p}task ADD concurrency_key NVARCHAR(128) NULL;
