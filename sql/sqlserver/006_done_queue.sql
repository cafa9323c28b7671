-- sked schema, version 6, SQL Server: ended tasks counted per queue.
-- sked stats and the dashboard count {p}task_done per queue and status
-- from this covering index, not from the table's rows.
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'{p}task_done_queue' AND object_id = OBJECT_ID(N'{p}task_done'))
	CREATE INDEX {p}task_done_queue ON {p}task_done (queue, status);
