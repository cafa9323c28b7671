-- sked schema, version 3, Oracle: cluster-wide limits of a queue
-- (docs/limits.md). One row per limited queue; NULL: that limit is off.
-- A limited claim locks this row (SELECT … FOR UPDATE) in its
-- transaction, counts the queue's running tasks and claims what is left.
CREATE TABLE {p}queue_limit (
	queue VARCHAR2(128) NOT NULL PRIMARY KEY,
	concurrency NUMBER(10) NULL,
	per_key NUMBER(10) NULL,
	rate_n NUMBER(10) NULL,
	rate_ms NUMBER(19) NULL,
	rate_log CLOB NULL,
	updated_at TIMESTAMP(3) DEFAULT SYS_EXTRACT_UTC(SYSTIMESTAMP) NOT NULL
);
-- the key a task shares with others for --per-key (NULL: none)
ALTER TABLE {p}task ADD (concurrency_key VARCHAR2(128) NULL);
