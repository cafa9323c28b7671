-- sked schema, version 15, MySQL and MariaDB: a schedule's unique key
-- and the per-key weights of fair queues. See
-- sql/postgresql/015_cron_unique_weight.sql.
ALTER TABLE {p}schedule ADD COLUMN unique_key VARCHAR(128) NULL,
	ADD COLUMN unique_scope INT NULL,
	ADD COLUMN unique_for_ms BIGINT NULL,
	ADD COLUMN unique_replace TINYINT NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS {p}queue_weight (
	queue VARCHAR(128) NOT NULL,
	concurrency_key VARCHAR(128) NOT NULL,
	weight INT NOT NULL,
	PRIMARY KEY (queue, concurrency_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
