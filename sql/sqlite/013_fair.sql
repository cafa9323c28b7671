-- sked schema, version 13, sqlite: fair queues (sked queue set --fair
-- on, docs/limits.md "Fair queues"). See sql/postgresql/013_fair.sql.
ALTER TABLE {p}queue_limit ADD COLUMN fair INTEGER NOT NULL DEFAULT 0;
-- The waiting tasks of a queue by key, in claim order within the key.
CREATE INDEX IF NOT EXISTS {p}task_fair ON {p}task (queue, concurrency_key, priority DESC, run_at, id)
	WHERE status IN (0, 4);
