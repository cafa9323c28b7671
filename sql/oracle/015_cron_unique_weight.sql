-- sked schema, version 15, Oracle: a schedule's unique key and the
-- per-key weights of fair queues. See
-- sql/postgresql/015_cron_unique_weight.sql.
ALTER TABLE {p}schedule ADD (unique_key VARCHAR2(128) NULL, unique_scope NUMBER(10) NULL, unique_for_ms NUMBER(19) NULL, unique_replace NUMBER(10) DEFAULT 0 NOT NULL);
CREATE TABLE {p}queue_weight (
	queue VARCHAR2(128) NOT NULL,
	concurrency_key VARCHAR2(128) NOT NULL,
	weight NUMBER(10) NOT NULL,
	PRIMARY KEY (queue, concurrency_key)
);
