-- sked schema, version 5, PostgreSQL: the attempt that ends a task is
-- recorded on its {p}task_done row (node_id, started_at, finished_at and
-- attempts were there already, these four columns complete it), so the
-- common case writes one row, not two. {p}run keeps the attempts that
-- did not end the task (failures that retry, releases, lost leases, late
-- results) and every attempt recorded before this version. A row whose
-- outcome is NULL (ended before this version, by a cancel, or by a lease
-- taken back) has its attempts in {p}run only. show, --json and the
-- dashboard list both alike (docs/design.md, "Ended tasks").
ALTER TABLE {p}task_done ADD COLUMN IF NOT EXISTS outcome text;
ALTER TABLE {p}task_done ADD COLUMN IF NOT EXISTS exit_code integer;
ALTER TABLE {p}task_done ADD COLUMN IF NOT EXISTS error text;
ALTER TABLE {p}task_done ADD COLUMN IF NOT EXISTS output text;
