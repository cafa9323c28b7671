-- sked schema, version 14, SQLite: the events feed (sked events, GET
-- /api/events, docs/operations.md "Events"). Ended tasks are read from
-- {p}task_done through its (status, finished_at) index and running ones
-- through the indexes on running rows: no new index there, so ending a
-- task costs what it did. The attempts that did not end their task
-- ({p}run: failures that retry, lost leases, releases) are read by their
-- end time through this index, written only when such an attempt ends.
CREATE INDEX IF NOT EXISTS {p}run_ended ON {p}run (finished_at);
