-- sked schema, version 12, mysql: what a running task reports
-- (docs/handlers.md, "Progress"). progress is the latest report of the
-- attempt that runs now (at most SKED_PROGRESS_MAX bytes: 1 KiB),
-- progress_at when the worker stored it: with its lease renewal, never
-- a write per report. A report belongs to the running attempt only when
-- progress_at >= started_at, so nothing clears it when an attempt ends.
ALTER TABLE {p}task ADD COLUMN progress TEXT NULL;
ALTER TABLE {p}task ADD COLUMN progress_at DATETIME(3) NULL;
