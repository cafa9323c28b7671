-- sked schema, version 10, MySQL and MariaDB: unique keys with a scope.
-- See sql/postgresql/010_unique_scope.sql and docs/unique.md. Without
-- partial indexes the scope is a stored generated column, unique_held:
-- the key while the task holds it by its scope, else NULL, and the
-- unique index is on it. The claim's change of attempts recomputes it
-- (a CASE); its index entry changes only for a task with a key.
ALTER TABLE {p}task ADD COLUMN unique_scope TINYINT NULL,
	ADD COLUMN unique_held VARCHAR(128) AS (CASE WHEN unique_scope IS NULL THEN unique_key WHEN unique_scope = 1 AND attempts = 0 THEN unique_key END) STORED,
	DROP INDEX {p}task_unique,
	ADD UNIQUE KEY {p}task_unique_held (unique_held),
	ADD KEY {p}task_unique_key (unique_key);
CREATE TABLE IF NOT EXISTS {p}unique_for (
	unique_key VARCHAR(128) NOT NULL,
	task_id BIGINT NOT NULL,
	held_until DATETIME(3) NOT NULL,
	PRIMARY KEY (unique_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
-- A task's own timeout in ms (enqueue --timeout D), NULL for none.
ALTER TABLE {p}task ADD COLUMN timeout_ms BIGINT NULL;
