-- sked schema, version 7, PostgreSQL: tasks that wait for other tasks
-- (docs/workflows.md). A task enqueued with parents is blocked (status
-- 6, which no claim reads) while open_parents > 0; each parent's ending
-- transaction decrements its children's open_parents (one row update,
-- row-locked, so however many parents end at once exactly one
-- transaction takes a child from 1 to 0 and makes it pending).
-- dependents counts a task's edges as a parent: 0 (every task without
-- children) lets the finish skip the edge table entirely.
-- on_parent_failure: 0 cancel (a dead or cancelled parent cancels the
-- child), 1 ignore (it counts as ended). result: what the handler left.
ALTER TABLE {p}task ADD COLUMN IF NOT EXISTS dependents integer NOT NULL DEFAULT 0;
ALTER TABLE {p}task ADD COLUMN IF NOT EXISTS open_parents integer NOT NULL DEFAULT 0;
ALTER TABLE {p}task ADD COLUMN IF NOT EXISTS on_parent_failure integer NOT NULL DEFAULT 0;
ALTER TABLE {p}task ADD COLUMN IF NOT EXISTS result text;
ALTER TABLE {p}task_done ADD COLUMN IF NOT EXISTS dependents integer NOT NULL DEFAULT 0;
ALTER TABLE {p}task_done ADD COLUMN IF NOT EXISTS open_parents integer NOT NULL DEFAULT 0;
ALTER TABLE {p}task_done ADD COLUMN IF NOT EXISTS on_parent_failure integer NOT NULL DEFAULT 0;
ALTER TABLE {p}task_done ADD COLUMN IF NOT EXISTS result text;
-- one row per (parent, child) edge; by parent for the ending parent, by
-- child for show
CREATE TABLE IF NOT EXISTS {p}task_dep (
	parent_id bigint NOT NULL,
	child_id bigint NOT NULL,
	PRIMARY KEY (parent_id, child_id)
);
CREATE INDEX IF NOT EXISTS {p}task_dep_child ON {p}task_dep (child_id);
-- blocked tasks per queue (sked stats, /metrics) without reading the
-- rest of the hot table
CREATE INDEX IF NOT EXISTS {p}task_blocked ON {p}task (queue) WHERE status = 6;
