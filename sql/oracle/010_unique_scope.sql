-- sked schema, version 10, Oracle: unique keys with a scope and a
-- task's own timeout. See sql/postgresql/010_unique_scope.sql and
-- docs/unique.md. As on MySQL, the scope is a virtual column,
-- unique_held (the key while the task holds it, else NULL), and the
-- unique index is on it: Oracle leaves all-NULL keys out of an index.
-- (The period scope's upsert is still the generic ON CONFLICT text: an
-- Oracle MERGE for it is to come with the Oracle dialect.)
ALTER TABLE {p}task ADD (unique_scope NUMBER(5) NULL, timeout_ms NUMBER(19) NULL);
ALTER TABLE {p}task ADD (unique_held VARCHAR2(128) GENERATED ALWAYS AS (CASE WHEN unique_scope IS NULL THEN unique_key WHEN unique_scope = 1 AND attempts = 0 THEN unique_key END) VIRTUAL);
DROP INDEX {p}task_unique;
CREATE UNIQUE INDEX {p}task_unique_held ON {p}task (unique_held);
CREATE INDEX {p}task_unique_key ON {p}task (unique_key);
CREATE TABLE {p}unique_for (
	unique_key VARCHAR2(128) NOT NULL PRIMARY KEY,
	task_id NUMBER(19) NOT NULL,
	held_until TIMESTAMP(3) NOT NULL
);
