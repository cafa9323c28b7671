-- sked schema, version 13, PostgreSQL: fair queues (sked queue set
-- --fair on, docs/limits.md "Fair queues"). fair = 1: a claim of the
-- queue takes its tasks round-robin across their concurrency keys. A
-- fair queue has a row here (its limits may all be NULL), so it is
-- claimed by the limited claim, which reads the flag from the row it
-- locks; the claim of every other queue is unchanged.
ALTER TABLE {p}queue_limit ADD COLUMN IF NOT EXISTS fair integer NOT NULL DEFAULT 0;
-- The waiting tasks of a queue by key, in claim order within the key:
-- a fair claim finds the next key with waiting tasks (one probe) and
-- reads the first few due tasks of each key, never a key's whole
-- backlog.
CREATE INDEX IF NOT EXISTS {p}task_fair ON {p}task (queue, concurrency_key, priority DESC, run_at, id)
	WHERE status IN (0, 4);
