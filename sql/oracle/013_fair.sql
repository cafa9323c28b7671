-- sked schema, version 13, Oracle: fair queues (sked queue set --fair
-- on, docs/limits.md "Fair queues"). See sql/postgresql/013_fair.sql.
-- No partial index: status first, as task_due_q has it.
ALTER TABLE {p}queue_limit ADD (fair NUMBER(10) DEFAULT 0 NOT NULL);
CREATE INDEX {p}task_fair ON {p}task (queue, status, concurrency_key, priority DESC, run_at, id);
