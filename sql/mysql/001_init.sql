-- sked schema, version 1, MySQL and MariaDB (InnoDB, utf8mb4).
-- Times are DATETIME(3) in UTC: sked writes them from UTC_TIMESTAMP(3) and
-- every sked session runs with time_zone '+00:00', so the column defaults
-- below are UTC for sked too. A program that enqueues with a plain INSERT
-- should set time_zone = '+00:00' or name run_at itself (docs/mysql.md).
-- Statuses: 0 pending, 1 running, 2 succeeded, 3 dead, 4 waiting to retry,
-- 5 cancelled.
-- DDL is not transactional here: every statement is idempotent and the
-- whole step runs under GET_LOCK, so nodes may start together.
CREATE TABLE IF NOT EXISTS {p}task (
	id BIGINT NOT NULL AUTO_INCREMENT,
	queue VARCHAR(128) NOT NULL DEFAULT 'default',
	kind VARCHAR(128) NOT NULL,
	payload MEDIUMTEXT NOT NULL,
	status TINYINT NOT NULL DEFAULT 0,
	priority INT NOT NULL DEFAULT 0,
	run_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
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
	created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
	updated_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
	finished_at DATETIME(3) NULL,
	-- MySQL has no partial index. This stored column stands in for one:
	-- minus the priority while the task is claimable (status 0 or 4),
	-- NULL otherwise. Finished rows all sit in the NULL range, which a
	-- claim never scans, and ascending order on it is "priority DESC"
	-- on every version (MariaDB < 10.8 ignores DESC in an index).
	due_prio INT GENERATED ALWAYS AS
		(CASE WHEN status IN (0, 4) THEN -priority ELSE NULL END) STORED,
	PRIMARY KEY (id),
	-- claims: due_prio IS NOT NULL AND run_at <= now ORDER BY due_prio,
	-- run_at, id LIMIT n walks this index in order and stops after n
	-- rows, so FOR UPDATE SKIP LOCKED locks only the rows it returns.
	KEY {p}task_due (due_prio, run_at, id),
	KEY {p}task_due_q (queue, due_prio, run_at, id),
	-- running rows by lease expiry (recovery) and by owner (renewal)
	KEY {p}task_lease (status, lease_until),
	KEY {p}task_node (node_id, status),
	UNIQUE KEY {p}task_unique (unique_key),
	UNIQUE KEY {p}task_fire (schedule_name, fire_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE TABLE IF NOT EXISTS {p}run (
	id BIGINT NOT NULL AUTO_INCREMENT,
	task_id BIGINT NOT NULL,
	attempt INT NOT NULL,
	node_id VARCHAR(128) NULL,
	started_at DATETIME(3) NULL,
	finished_at DATETIME(3) NULL,
	outcome VARCHAR(32) NOT NULL,
	exit_code INT NULL,
	error TEXT NULL,
	output MEDIUMTEXT NULL,
	PRIMARY KEY (id),
	KEY {p}run_task (task_id, attempt)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE TABLE IF NOT EXISTS {p}node (
	id VARCHAR(128) NOT NULL,
	host VARCHAR(255) NOT NULL,
	pid INT NOT NULL,
	started_at DATETIME(3) NOT NULL,
	heartbeat DATETIME(3) NOT NULL,
	lease_ms BIGINT NOT NULL,
	strategy VARCHAR(32) NOT NULL,
	version VARCHAR(64) NOT NULL,
	PRIMARY KEY (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE TABLE IF NOT EXISTS {p}schedule (
	name VARCHAR(128) NOT NULL,
	cron VARCHAR(255) NOT NULL,
	tz VARCHAR(64) NOT NULL DEFAULT 'UTC',
	kind VARCHAR(128) NOT NULL,
	payload MEDIUMTEXT NOT NULL,
	queue VARCHAR(128) NOT NULL DEFAULT 'default',
	priority INT NOT NULL DEFAULT 0,
	max_attempts INT NOT NULL DEFAULT 5,
	misfire VARCHAR(32) NOT NULL DEFAULT 'fire-once',
	overlap VARCHAR(32) NOT NULL DEFAULT 'allow',
	enabled TINYINT NOT NULL DEFAULT 1,
	next_fire DATETIME(3) NULL,
	last_fire DATETIME(3) NULL,
	version BIGINT NOT NULL DEFAULT 0,
	created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
	updated_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
	PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE TABLE IF NOT EXISTS {p}lock (
	name VARCHAR(128) NOT NULL,
	owner VARCHAR(128) NULL,
	locked_until DATETIME(3) NULL,
	locked_at DATETIME(3) NULL,
	fencing_token BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
