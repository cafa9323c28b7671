-- sked schema, version 4, PostgreSQL: ended tasks leave the hot table.
-- A task that ends (succeeded 2, dead 3, cancelled 5) moves, in the
-- transaction that ends it, from {p}task to {p}task_done, same columns.
-- {p}task then holds only live work (pending, running, waiting to retry),
-- so claims, renewals and their indexes cost the same after ten million
-- tasks as on a fresh table. show, list, stats and the dashboard read
-- both tables. Retention (sked prune) deletes from {p}task_done only.
-- A task id is drawn once, from {p}task's identity, and kept by the move.
CREATE TABLE IF NOT EXISTS {p}task_done (
	id bigint PRIMARY KEY,
	queue text NOT NULL,
	kind text NOT NULL,
	payload text NOT NULL DEFAULT '',
	status integer NOT NULL,
	priority integer NOT NULL DEFAULT 0,
	run_at timestamptz NOT NULL,
	attempts integer NOT NULL DEFAULT 0,
	max_attempts integer NOT NULL DEFAULT 5,
	node_id text,
	lease_until timestamptz,
	started_at timestamptz,
	version bigint NOT NULL DEFAULT 0,
	unique_key text,
	schedule_name text,
	fire_time timestamptz,
	last_error text,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL,
	finished_at timestamptz,
	concurrency_key text
);
-- retention by status and age
CREATE INDEX IF NOT EXISTS {p}task_done_ended ON {p}task_done (status, finished_at);
-- a unique key and a schedule's fire stay taken until retention removes
-- the ended task (docs/design.md, "Ended tasks"): sked's enqueue and fire
-- look here. Not UNIQUE: a task another program inserted with a key an
-- ended task holds must still be able to end (and move here)
CREATE INDEX IF NOT EXISTS {p}task_done_unique ON {p}task_done (unique_key)
	WHERE unique_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS {p}task_done_fire ON {p}task_done (schedule_name, fire_time)
	WHERE schedule_name IS NOT NULL;
-- tasks that ended before this version move now, in this step's
-- transaction
INSERT INTO {p}task_done (id, queue, kind, payload, status, priority, run_at, attempts, max_attempts, node_id, lease_until, started_at, version, unique_key, schedule_name, fire_time, last_error, created_at, updated_at, finished_at, concurrency_key)
	SELECT id, queue, kind, payload, status, priority, run_at, attempts, max_attempts, node_id, lease_until, started_at, version, unique_key, schedule_name, fire_time, last_error, created_at, updated_at, finished_at, concurrency_key FROM {p}task WHERE status IN (2, 3, 5)
	ON CONFLICT (id) DO NOTHING;
DELETE FROM {p}task WHERE status IN (2, 3, 5);
-- the hot table is inserted into and deleted from far more than it is
-- updated in place now: let autovacuum look after both promptly
ALTER TABLE {p}task SET (autovacuum_vacuum_insert_scale_factor = 0.02);
DROP INDEX IF EXISTS {p}task_ended;
