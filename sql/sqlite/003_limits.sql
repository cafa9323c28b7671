-- sked schema, version 3, SQLite: cluster-wide limits of a queue
-- (docs/limits.md). One row per limited queue: at most concurrency tasks
-- of it running at once, at most per_key running per concurrency key, at
-- most rate_n starts in any rate_ms window. NULL: that limit is off. A
-- queue without a row is unlimited and is claimed exactly as before.
-- rate_log is the sliding window's record, "ms:count,ms:count", the
-- claims of the last rate_ms (times are SQLite's clock, epoch ms).
-- A limited claim takes SQLite's write lock (BEGIN IMMEDIATE), reads
-- this row, counts the queue's running tasks and claims what is left.
CREATE TABLE IF NOT EXISTS {p}queue_limit (
	queue TEXT PRIMARY KEY,
	concurrency INTEGER,
	per_key INTEGER,
	rate_n INTEGER,
	rate_ms INTEGER,
	rate_log TEXT,
	updated_at INTEGER NOT NULL DEFAULT ({now})
);
-- the key a task shares with others for --per-key (NULL: none)
ALTER TABLE {p}task ADD COLUMN concurrency_key TEXT;
