-- sked schema, version 1, SQLite.
-- Times are INTEGER milliseconds since the Unix epoch, UTC, from SQLite's
-- own clock. Statuses: 0 pending, 1 running, 2 succeeded, 3 dead,
-- 4 waiting to retry, 5 cancelled.
CREATE TABLE IF NOT EXISTS {p}task (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	queue TEXT NOT NULL DEFAULT 'default',
	kind TEXT NOT NULL,
	payload TEXT NOT NULL DEFAULT '',
	status INTEGER NOT NULL DEFAULT 0,
	priority INTEGER NOT NULL DEFAULT 0,
	run_at INTEGER NOT NULL DEFAULT ({now}),
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
	created_at INTEGER NOT NULL DEFAULT ({now}),
	updated_at INTEGER NOT NULL DEFAULT ({now}),
	finished_at INTEGER
);
-- Claimable rows only: finished rows never enter these indexes, so a claim
-- costs the same however many finished rows pile up.
CREATE INDEX IF NOT EXISTS {p}task_due ON {p}task (priority DESC, run_at, id)
	WHERE status IN (0, 4);
CREATE INDEX IF NOT EXISTS {p}task_due_q ON {p}task (queue, priority DESC, run_at, id)
	WHERE status IN (0, 4);
-- Running rows by lease expiry (recovery) and by owner (lease renewal).
CREATE INDEX IF NOT EXISTS {p}task_lease ON {p}task (lease_until)
	WHERE status = 1;
CREATE INDEX IF NOT EXISTS {p}task_node ON {p}task (node_id)
	WHERE status = 1;
CREATE UNIQUE INDEX IF NOT EXISTS {p}task_unique ON {p}task (unique_key)
	WHERE unique_key IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS {p}task_fire ON {p}task (schedule_name, fire_time)
	WHERE schedule_name IS NOT NULL;
CREATE TABLE IF NOT EXISTS {p}run (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	task_id INTEGER NOT NULL,
	attempt INTEGER NOT NULL,
	node_id TEXT,
	started_at INTEGER,
	finished_at INTEGER,
	outcome TEXT NOT NULL,
	exit_code INTEGER,
	error TEXT,
	output TEXT
);
CREATE INDEX IF NOT EXISTS {p}run_task ON {p}run (task_id, attempt);
CREATE TABLE IF NOT EXISTS {p}node (
	id TEXT PRIMARY KEY,
	host TEXT NOT NULL,
	pid INTEGER NOT NULL,
	started_at INTEGER NOT NULL,
	heartbeat INTEGER NOT NULL,
	lease_ms INTEGER NOT NULL,
	strategy TEXT NOT NULL,
	version TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS {p}schedule (
	name TEXT PRIMARY KEY,
	cron TEXT NOT NULL,
	tz TEXT NOT NULL DEFAULT 'UTC',
	kind TEXT NOT NULL,
	payload TEXT NOT NULL DEFAULT '',
	queue TEXT NOT NULL DEFAULT 'default',
	priority INTEGER NOT NULL DEFAULT 0,
	max_attempts INTEGER NOT NULL DEFAULT 5,
	misfire TEXT NOT NULL DEFAULT 'fire-once',
	overlap TEXT NOT NULL DEFAULT 'allow',
	enabled INTEGER NOT NULL DEFAULT 1,
	next_fire INTEGER,
	last_fire INTEGER,
	version INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL DEFAULT ({now}),
	updated_at INTEGER NOT NULL DEFAULT ({now})
);
CREATE TABLE IF NOT EXISTS {p}lock (
	name TEXT PRIMARY KEY,
	owner TEXT,
	locked_until INTEGER,
	locked_at INTEGER,
	fencing_token INTEGER NOT NULL DEFAULT 0
);
