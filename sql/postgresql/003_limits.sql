-- sked schema, version 3, PostgreSQL: cluster-wide limits of a queue
-- (docs/limits.md). One row per limited queue: at most concurrency tasks
-- of it running at once, at most per_key running per concurrency key, at
-- most rate_n starts in any rate_ms window. NULL: that limit is off. A
-- queue without a row is unlimited and is claimed exactly as before.
-- rate_log is the sliding window's record, "ms:count,ms:count", the
-- claims of the last rate_ms (epoch ms of the server's now()).
-- A limited claim locks this row (SELECT ... FOR UPDATE) in its
-- transaction, counts the queue's running tasks and claims what is left.
CREATE TABLE IF NOT EXISTS {p}queue_limit (
	queue text PRIMARY KEY,
	concurrency integer,
	per_key integer,
	rate_n integer,
	rate_ms bigint,
	rate_log text,
	updated_at timestamptz NOT NULL DEFAULT now()
);
-- the key a task shares with others for --per-key (NULL: none)
ALTER TABLE {p}task ADD COLUMN IF NOT EXISTS concurrency_key text;
