-- sked schema, version 2, PostgreSQL: retention (sked prune) finds ended
-- tasks by status and age through this partial index; claims never use it.
CREATE INDEX IF NOT EXISTS {p}task_ended ON {p}task (status, finished_at)
	WHERE status IN (2, 3, 5);
-- and how many slots each node has (sked nodes, the dashboard)
ALTER TABLE {p}node ADD COLUMN IF NOT EXISTS slots integer NOT NULL DEFAULT 0;
