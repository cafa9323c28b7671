-- sked schema, version 4, SQLite: ended tasks leave the hot table.
-- A task that ends (succeeded 2, dead 3, cancelled 5) moves, in the
-- transaction that ends it, from {p}task to {p}task_done, same columns.
-- {p}task then holds only live work, so claims and renewals cost the same
-- however many tasks have ended. show, list, stats and the dashboard read
-- both tables. Retention (sked prune) deletes from {p}task_done only.
-- A task id is drawn once, from {p}task (AUTOINCREMENT: never reused,
-- even after the row has moved), and kept by the move.
CREATE TABLE IF NOT EXISTS {p}task_done (
	id INTEGER PRIMARY KEY,
	queue TEXT NOT NULL,
	kind TEXT NOT NULL,
	payload TEXT NOT NULL DEFAULT '',
	status INTEGER NOT NULL,
	priority INTEGER NOT NULL DEFAULT 0,
	run_at INTEGER NOT NULL,
	attempts INTEGER NOT NULL DEFAULT 0,
	max_attempts INTEGER NOT NULL DEFAULT 5,
	node_id TEXT,
	lease_until INTEGER,
	started_at INTEGER,
	version INTEGER NOT NULL DEFAULT 0,
	unique_key TEXT,
	schedule_name TEXT,
	fire_time INTEGER,
	last_error TEXT,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	finished_at INTEGER,
	concurrency_key TEXT
);
CREATE INDEX IF NOT EXISTS {p}task_done_ended ON {p}task_done (status, finished_at);
CREATE INDEX IF NOT EXISTS {p}task_done_unique ON {p}task_done (unique_key)
	WHERE unique_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS {p}task_done_fire ON {p}task_done (schedule_name, fire_time)
	WHERE schedule_name IS NOT NULL;
INSERT OR IGNORE INTO {p}task_done (id, queue, kind, payload, status, priority, run_at, attempts, max_attempts, node_id, lease_until, started_at, version, unique_key, schedule_name, fire_time, last_error, created_at, updated_at, finished_at, concurrency_key)
	SELECT id, queue, kind, payload, status, priority, run_at, attempts, max_attempts, node_id, lease_until, started_at, version, unique_key, schedule_name, fire_time, last_error, created_at, updated_at, finished_at, concurrency_key FROM {p}task WHERE status IN (2, 3, 5);
DELETE FROM {p}task WHERE status IN (2, 3, 5);
DROP INDEX IF EXISTS {p}task_ended;
