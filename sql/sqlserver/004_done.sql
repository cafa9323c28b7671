-- sked schema, version 4, SQL Server: ended tasks leave the hot table.
-- A task that ends (succeeded 2, dead 3, cancelled 5) moves, in the
-- transaction that ends it, from {p}task to {p}task_done, same columns.
-- {p}task then holds only live work. show, list, stats and the dashboard
-- read both tables. Retention (sked prune) deletes from {p}task_done only.
-- A task id is drawn once, from {p}task's IDENTITY, and kept by the move.
IF OBJECT_ID(N'{p}task_done', N'U') IS NULL CREATE TABLE {p}task_done (
	id BIGINT NOT NULL PRIMARY KEY,
	queue NVARCHAR(128) NOT NULL,
	kind NVARCHAR(128) NOT NULL,
	payload NVARCHAR(MAX) NOT NULL DEFAULT N'',
	status INT NOT NULL,
	priority INT NOT NULL DEFAULT 0,
	run_at DATETIME2(3) NOT NULL,
	attempts INT NOT NULL DEFAULT 0,
	max_attempts INT NOT NULL DEFAULT 5,
	node_id NVARCHAR(128) NULL,
	lease_until DATETIME2(3) NULL,
	started_at DATETIME2(3) NULL,
	version BIGINT NOT NULL DEFAULT 0,
	unique_key NVARCHAR(128) NULL,
	schedule_name NVARCHAR(128) NULL,
	fire_time DATETIME2(3) NULL,
	last_error NVARCHAR(MAX) NULL,
	created_at DATETIME2(3) NOT NULL,
	updated_at DATETIME2(3) NOT NULL,
	finished_at DATETIME2(3) NULL,
	concurrency_key NVARCHAR(128) NULL
);
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'{p}task_done_ended' AND object_id = OBJECT_ID(N'{p}task_done'))
	CREATE INDEX {p}task_done_ended ON {p}task_done (status, finished_at);
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'{p}task_done_unique' AND object_id = OBJECT_ID(N'{p}task_done'))
	CREATE INDEX {p}task_done_unique ON {p}task_done (unique_key)
	WHERE unique_key IS NOT NULL;
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'{p}task_done_fire' AND object_id = OBJECT_ID(N'{p}task_done'))
	CREATE INDEX {p}task_done_fire ON {p}task_done (schedule_name, fire_time)
	WHERE schedule_name IS NOT NULL;
INSERT INTO {p}task_done (id, queue, kind, payload, status, priority, run_at, attempts, max_attempts, node_id, lease_until, started_at, version, unique_key, schedule_name, fire_time, last_error, created_at, updated_at, finished_at, concurrency_key)
	SELECT id, queue, kind, payload, status, priority, run_at, attempts, max_attempts, node_id, lease_until, started_at, version, unique_key, schedule_name, fire_time, last_error, created_at, updated_at, finished_at, concurrency_key FROM {p}task t WHERE t.status IN (2, 3, 5)
	AND NOT EXISTS (SELECT 1 FROM {p}task_done d WHERE d.id = t.id);
DELETE FROM {p}task WHERE status IN (2, 3, 5);
IF EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'{p}task_ended' AND object_id = OBJECT_ID(N'{p}task'))
	DROP INDEX {p}task_ended ON {p}task;
