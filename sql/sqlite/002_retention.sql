-- sked schema, version 2, SQLite: retention (sked prune) finds ended tasks
-- by status and age through this index, never by scanning the table.
CREATE INDEX IF NOT EXISTS {p}task_ended ON {p}task (status, finished_at)
	WHERE status IN (2, 3, 5);
-- and how many slots each node has (sked nodes, the dashboard)
ALTER TABLE {p}node ADD COLUMN slots INTEGER NOT NULL DEFAULT 0;
