-- sked schema, version 12, Oracle: what a running task reports
-- (docs/handlers.md, "Progress"): the latest report of the running
-- attempt (at most 1 KiB), stored with the lease renewal; it belongs to
-- that attempt only when progress_at >= started_at.
ALTER TABLE {p}task ADD (progress VARCHAR2(4000) NULL);
ALTER TABLE {p}task ADD (progress_at TIMESTAMP(3) NULL);
