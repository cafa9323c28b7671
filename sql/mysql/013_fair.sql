-- sked schema, version 13, MySQL and MariaDB: fair queues (sked queue
-- set --fair on, docs/limits.md "Fair queues"). See
-- sql/postgresql/013_fair.sql. The index stands on due_prio as the claim
-- indexes do (001_init.sql): waiting rows only in claim order, the
-- others in its NULL range.
ALTER TABLE {p}queue_limit ADD COLUMN fair TINYINT NOT NULL DEFAULT 0;
ALTER TABLE {p}task ADD INDEX {p}task_fair (queue, concurrency_key, due_prio, run_at, id);
