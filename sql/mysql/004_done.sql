-- sked schema, version 4, MySQL and MariaDB: ended tasks leave the hot
-- table. A task that ends (succeeded 2, dead 3, cancelled 5) moves, in
-- the transaction that ends it, from {p}task to {p}task_done, same
-- columns (less the generated due_prio). {p}task then holds only live
-- work, so claims and renewals cost the same however many tasks have
-- ended. show, list, stats and the dashboard read both tables. Retention
-- (sked prune) deletes from {p}task_done only. A task id is drawn once,
-- from {p}task's AUTO_INCREMENT, and kept by the move.
-- (No semicolon in these comments: the drivers split steps at every one.)
CREATE TABLE IF NOT EXISTS {p}task_done (
	id BIGINT NOT NULL,
	queue VARCHAR(128) NOT NULL,
	kind VARCHAR(128) NOT NULL,
	payload MEDIUMTEXT NOT NULL,
	status TINYINT NOT NULL,
	priority INT NOT NULL DEFAULT 0,
	run_at DATETIME(3) NOT NULL,
	attempts INT NOT NULL DEFAULT 0,
	max_attempts INT NOT NULL DEFAULT 5,
	node_id VARCHAR(128) NULL,
	lease_until DATETIME(3) NULL,
	started_at DATETIME(3) NULL,
	version BIGINT NOT NULL DEFAULT 0,
	unique_key VARCHAR(128) NULL,
	schedule_name VARCHAR(128) NULL,
	fire_time DATETIME(3) NULL,
	last_error TEXT NULL,
	created_at DATETIME(3) NOT NULL,
	updated_at DATETIME(3) NOT NULL,
	finished_at DATETIME(3) NULL,
	concurrency_key VARCHAR(128) NULL,
	PRIMARY KEY (id),
	KEY {p}task_done_ended (status, finished_at),
	KEY {p}task_done_unique (unique_key),
	KEY {p}task_done_fire (schedule_name, fire_time)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
INSERT IGNORE INTO {p}task_done (id, queue, kind, payload, status, priority, run_at, attempts, max_attempts, node_id, lease_until, started_at, version, unique_key, schedule_name, fire_time, last_error, created_at, updated_at, finished_at, concurrency_key)
	SELECT id, queue, kind, payload, status, priority, run_at, attempts, max_attempts, node_id, lease_until, started_at, version, unique_key, schedule_name, fire_time, last_error, created_at, updated_at, finished_at, concurrency_key FROM {p}task WHERE status IN (2, 3, 5);
DELETE FROM {p}task WHERE status IN (2, 3, 5);
-- every write to the hot table paid for this index: ended rows are gone
ALTER TABLE {p}task DROP INDEX {p}task_ended;
