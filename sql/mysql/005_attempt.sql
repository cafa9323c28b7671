-- sked schema, version 5, MySQL and MariaDB: the attempt that ends a
-- task is recorded on its {p}task_done row (node_id, started_at,
-- finished_at and attempts were there already, these four columns
-- complete it), so the common case writes one row, not two. {p}run keeps
-- the attempts that did not end the task (failures that retry, releases,
-- lost leases, late results) and every attempt recorded before this
-- version. A row whose outcome is NULL has its attempts in {p}run only.
-- (No semicolon in these comments: the drivers split steps at every one.)
ALTER TABLE {p}task_done ADD COLUMN outcome VARCHAR(32) NULL;
ALTER TABLE {p}task_done ADD COLUMN exit_code INT NULL;
ALTER TABLE {p}task_done ADD COLUMN error TEXT NULL;
ALTER TABLE {p}task_done ADD COLUMN output MEDIUMTEXT NULL;
