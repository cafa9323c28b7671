-- sked schema, version 7, Oracle: tasks that wait for other tasks.
-- See sql/postgresql/007_deps.sql and docs/workflows.md.
ALTER TABLE {p}task ADD (dependents NUMBER(10) DEFAULT 0 NOT NULL);
ALTER TABLE {p}task ADD (open_parents NUMBER(10) DEFAULT 0 NOT NULL);
ALTER TABLE {p}task ADD (on_parent_failure NUMBER(10) DEFAULT 0 NOT NULL);
ALTER TABLE {p}task ADD (result CLOB NULL);
ALTER TABLE {p}task_done ADD (dependents NUMBER(10) DEFAULT 0 NOT NULL);
ALTER TABLE {p}task_done ADD (open_parents NUMBER(10) DEFAULT 0 NOT NULL);
ALTER TABLE {p}task_done ADD (on_parent_failure NUMBER(10) DEFAULT 0 NOT NULL);
ALTER TABLE {p}task_done ADD (result CLOB NULL);
CREATE TABLE {p}task_dep (
	parent_id NUMBER(19) NOT NULL,
	child_id NUMBER(19) NOT NULL,
	PRIMARY KEY (parent_id, child_id)
);
CREATE INDEX {p}task_dep_child ON {p}task_dep (child_id);
-- blocked tasks (status 6) by queue, for the gauges
CREATE INDEX {p}task_blocked ON {p}task (status, queue);
