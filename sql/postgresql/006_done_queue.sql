-- sked schema, version 6, PostgreSQL: ended tasks counted per queue.
-- sked stats and the dashboard count {p}task_done per queue and status
-- from this index alone (an index-only scan once autovacuum has marked
-- the pages all-visible), not from the table's rows.
CREATE INDEX IF NOT EXISTS {p}task_done_queue ON {p}task_done (queue, status);
