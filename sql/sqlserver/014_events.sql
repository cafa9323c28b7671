-- sked schema, version 14, SQL Server: the events feed (sked events, GET
-- /api/events; docs/operations.md "Events"). Ended tasks are read from
-- {p}task_done through its (status, finished_at) index and running ones
-- through the indexes on running rows: no new index there, so ending a
-- task costs what it did. The attempts that did not end their task
-- ({p}run: failures that retry, lost leases, releases) are read by their
-- end time through this index, written only when such an attempt ends.
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'{p}run_ended' AND object_id = OBJECT_ID(N'{p}run'))
	CREATE INDEX {p}run_ended ON {p}run (finished_at);
