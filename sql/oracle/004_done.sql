-- sked schema, version 4, Oracle: ended tasks leave the hot table.
-- A task that ends (succeeded 2, dead 3, cancelled 5) moves, in the
-- transaction that ends it, from {p}task to {p}task_done, same columns.
-- A task id is drawn once, from sked_task_id_seq, and kept by the move.
CREATE TABLE {p}task_done (
	id NUMBER(19) NOT NULL PRIMARY KEY,
	queue VARCHAR2(128) NOT NULL,
	kind VARCHAR2(128) NOT NULL,
	payload CLOB NULL,
	status NUMBER(10) NOT NULL,
	priority NUMBER(10) DEFAULT 0 NOT NULL,
	run_at TIMESTAMP(3) NOT NULL,
	attempts NUMBER(10) DEFAULT 0 NOT NULL,
	max_attempts NUMBER(10) DEFAULT 5 NOT NULL,
	node_id VARCHAR2(128) NULL,
	lease_until TIMESTAMP(3) NULL,
	started_at TIMESTAMP(3) NULL,
	version NUMBER(19) DEFAULT 0 NOT NULL,
	unique_key VARCHAR2(128) NULL,
	schedule_name VARCHAR2(128) NULL,
	fire_time TIMESTAMP(3) NULL,
	last_error CLOB NULL,
	created_at TIMESTAMP(3) NOT NULL,
	updated_at TIMESTAMP(3) NOT NULL,
	finished_at TIMESTAMP(3) NULL,
	concurrency_key VARCHAR2(128) NULL
);
CREATE INDEX {p}task_done_ended ON {p}task_done (status, finished_at);
CREATE INDEX {p}task_done_unique ON {p}task_done (unique_key);
CREATE INDEX {p}task_done_fire ON {p}task_done (schedule_name, fire_time);
INSERT INTO {p}task_done (id, queue, kind, payload, status, priority, run_at, attempts, max_attempts, node_id, lease_until, started_at, version, unique_key, schedule_name, fire_time, last_error, created_at, updated_at, finished_at, concurrency_key)
	SELECT id, queue, kind, payload, status, priority, run_at, attempts, max_attempts, node_id, lease_until, started_at, version, unique_key, schedule_name, fire_time, last_error, created_at, updated_at, finished_at, concurrency_key FROM {p}task t WHERE t.status IN (2, 3, 5)
	AND NOT EXISTS (SELECT 1 FROM {p}task_done d WHERE d.id = t.id);
DELETE FROM {p}task WHERE status IN (2, 3, 5);
