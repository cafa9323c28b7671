-- sked schema, version 7, SQLite: tasks that wait for other tasks. See
-- sql/postgresql/007_deps.sql and docs/workflows.md: status 6 blocked,
-- open_parents, dependents (edges as a parent), on_parent_failure (0
-- cancel, 1 ignore), result, and the edge table.
ALTER TABLE {p}task ADD COLUMN dependents INTEGER NOT NULL DEFAULT 0;
ALTER TABLE {p}task ADD COLUMN open_parents INTEGER NOT NULL DEFAULT 0;
ALTER TABLE {p}task ADD COLUMN on_parent_failure INTEGER NOT NULL DEFAULT 0;
ALTER TABLE {p}task ADD COLUMN result TEXT;
ALTER TABLE {p}task_done ADD COLUMN dependents INTEGER NOT NULL DEFAULT 0;
ALTER TABLE {p}task_done ADD COLUMN open_parents INTEGER NOT NULL DEFAULT 0;
ALTER TABLE {p}task_done ADD COLUMN on_parent_failure INTEGER NOT NULL DEFAULT 0;
ALTER TABLE {p}task_done ADD COLUMN result TEXT;
CREATE TABLE IF NOT EXISTS {p}task_dep (
	parent_id INTEGER NOT NULL,
	child_id INTEGER NOT NULL,
	PRIMARY KEY (parent_id, child_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS {p}task_dep_child ON {p}task_dep (child_id);
-- blocked tasks per queue (sked stats, /metrics) without reading the
-- rest of the hot table
CREATE INDEX IF NOT EXISTS {p}task_blocked ON {p}task (queue) WHERE status = 6;
