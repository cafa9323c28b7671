-- sked schema, version 1, Microsoft SQL Server (2016 or later: the
-- dialect reads times back with DATEDIFF_BIG).
-- Times are DATETIME2(3) in UTC from SYSUTCDATETIME(). Payloads and texts
-- are NVARCHAR; names NVARCHAR(128). Every statement is guarded so that a
-- step can run again (IF OBJECT_ID … IS NULL, IF NOT EXISTS … sys.indexes).
-- Statuses: 0 pending, 1 running, 2 succeeded, 3 dead, 4 waiting to retry,
-- 5 cancelled.
IF OBJECT_ID(N'{p}task', N'U') IS NULL CREATE TABLE {p}task (
	id BIGINT IDENTITY(1, 1) NOT NULL PRIMARY KEY,
	queue NVARCHAR(128) NOT NULL DEFAULT N'default',
	kind NVARCHAR(128) NOT NULL,
	payload NVARCHAR(MAX) NOT NULL DEFAULT N'',
	status INT NOT NULL DEFAULT 0,
	priority INT NOT NULL DEFAULT 0,
	run_at DATETIME2(3) NOT NULL DEFAULT SYSUTCDATETIME(),
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
	created_at DATETIME2(3) NOT NULL DEFAULT SYSUTCDATETIME(),
	updated_at DATETIME2(3) NOT NULL DEFAULT SYSUTCDATETIME(),
	finished_at DATETIME2(3) NULL
);
-- Claimable rows only (filtered indexes): finished rows never enter them,
-- so a claim costs the same however many finished rows pile up, and the
-- claim's TOP (n) … READPAST scan walks this index in claim order.
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'{p}task_due' AND object_id = OBJECT_ID(N'{p}task'))
	CREATE INDEX {p}task_due ON {p}task (priority DESC, run_at, id)
	WHERE status IN (0, 4);
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'{p}task_due_q' AND object_id = OBJECT_ID(N'{p}task'))
	CREATE INDEX {p}task_due_q ON {p}task (queue, priority DESC, run_at, id)
	WHERE status IN (0, 4);
-- Running rows by lease expiry (recovery) and by owner (lease renewal).
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'{p}task_lease' AND object_id = OBJECT_ID(N'{p}task'))
	CREATE INDEX {p}task_lease ON {p}task (lease_until) WHERE status = 1;
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'{p}task_node' AND object_id = OBJECT_ID(N'{p}task'))
	CREATE INDEX {p}task_node ON {p}task (node_id) WHERE status = 1;
-- Unique when set: filtered, because a plain UNIQUE index on SQL Server
-- admits only one NULL.
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'{p}task_unique' AND object_id = OBJECT_ID(N'{p}task'))
	CREATE UNIQUE INDEX {p}task_unique ON {p}task (unique_key)
	WHERE unique_key IS NOT NULL;
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'{p}task_fire' AND object_id = OBJECT_ID(N'{p}task'))
	CREATE UNIQUE INDEX {p}task_fire ON {p}task (schedule_name, fire_time)
	WHERE schedule_name IS NOT NULL;
IF OBJECT_ID(N'{p}run', N'U') IS NULL CREATE TABLE {p}run (
	id BIGINT IDENTITY(1, 1) NOT NULL PRIMARY KEY,
	task_id BIGINT NOT NULL,
	attempt INT NOT NULL,
	node_id NVARCHAR(128) NULL,
	started_at DATETIME2(3) NULL,
	finished_at DATETIME2(3) NULL,
	outcome NVARCHAR(32) NOT NULL,
	exit_code INT NULL,
	error NVARCHAR(MAX) NULL,
	output NVARCHAR(MAX) NULL
);
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'{p}run_task' AND object_id = OBJECT_ID(N'{p}run'))
	CREATE INDEX {p}run_task ON {p}run (task_id, attempt);
IF OBJECT_ID(N'{p}node', N'U') IS NULL CREATE TABLE {p}node (
	id NVARCHAR(128) NOT NULL PRIMARY KEY,
	host NVARCHAR(255) NOT NULL,
	pid BIGINT NOT NULL,
	started_at DATETIME2(3) NOT NULL,
	heartbeat DATETIME2(3) NOT NULL,
	lease_ms BIGINT NOT NULL,
	strategy NVARCHAR(32) NOT NULL,
	version NVARCHAR(64) NOT NULL
);
IF OBJECT_ID(N'{p}schedule', N'U') IS NULL CREATE TABLE {p}schedule (
	name NVARCHAR(128) NOT NULL PRIMARY KEY,
	cron NVARCHAR(255) NOT NULL,
	tz NVARCHAR(64) NOT NULL DEFAULT N'UTC',
	kind NVARCHAR(128) NOT NULL,
	payload NVARCHAR(MAX) NOT NULL DEFAULT N'',
	queue NVARCHAR(128) NOT NULL DEFAULT N'default',
	priority INT NOT NULL DEFAULT 0,
	max_attempts INT NOT NULL DEFAULT 5,
	misfire NVARCHAR(32) NOT NULL DEFAULT N'fire-once',
	overlap NVARCHAR(32) NOT NULL DEFAULT N'allow',
	enabled INT NOT NULL DEFAULT 1,
	next_fire DATETIME2(3) NULL,
	last_fire DATETIME2(3) NULL,
	version BIGINT NOT NULL DEFAULT 0,
	created_at DATETIME2(3) NOT NULL DEFAULT SYSUTCDATETIME(),
	updated_at DATETIME2(3) NOT NULL DEFAULT SYSUTCDATETIME()
);
IF OBJECT_ID(N'{p}lock', N'U') IS NULL CREATE TABLE {p}lock (
	name NVARCHAR(128) NOT NULL PRIMARY KEY,
	owner NVARCHAR(128) NULL,
	locked_until DATETIME2(3) NULL,
	locked_at DATETIME2(3) NULL,
	fencing_token BIGINT NOT NULL DEFAULT 0
);
