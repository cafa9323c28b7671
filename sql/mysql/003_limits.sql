-- sked schema, version 3, MySQL and MariaDB: cluster-wide limits of a
-- queue (docs/limits.md). One row per limited queue: at most concurrency
-- tasks of it running at once, at most per_key running per concurrency
-- key, at most rate_n starts in any rate_ms window. NULL: that limit is
-- off. A queue without a row is unlimited and is claimed as before.
-- rate_log is the sliding window's record (ms:count pairs), the claims
-- of the last rate_ms. A limited claim locks this row (SELECT ... FOR
-- UPDATE) in its transaction, counts the queue's running tasks through
-- the running rows' index and claims what is left.
-- (No semicolon in these comments: the drivers split steps at every one.)
CREATE TABLE IF NOT EXISTS {p}queue_limit (
	queue VARCHAR(128) NOT NULL,
	concurrency INT NULL,
	per_key INT NULL,
	rate_n INT NULL,
	rate_ms BIGINT NULL,
	rate_log MEDIUMTEXT NULL,
	updated_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
	PRIMARY KEY (queue)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
-- the key a task shares with others for --per-key (NULL: none)
ALTER TABLE {p}task ADD COLUMN concurrency_key VARCHAR(128) NULL;
