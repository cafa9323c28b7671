-- sked schema, version 7, MySQL/MariaDB: tasks that wait for other
-- tasks. See sql/postgresql/007_deps.sql and docs/workflows.md.
ALTER TABLE {p}task ADD COLUMN dependents INT NOT NULL DEFAULT 0;
ALTER TABLE {p}task ADD COLUMN open_parents INT NOT NULL DEFAULT 0;
ALTER TABLE {p}task ADD COLUMN on_parent_failure TINYINT NOT NULL DEFAULT 0;
ALTER TABLE {p}task ADD COLUMN result MEDIUMTEXT NULL;
ALTER TABLE {p}task_done ADD COLUMN dependents INT NOT NULL DEFAULT 0;
ALTER TABLE {p}task_done ADD COLUMN open_parents INT NOT NULL DEFAULT 0;
ALTER TABLE {p}task_done ADD COLUMN on_parent_failure TINYINT NOT NULL DEFAULT 0;
ALTER TABLE {p}task_done ADD COLUMN result MEDIUMTEXT NULL;
CREATE TABLE IF NOT EXISTS {p}task_dep (
	parent_id BIGINT NOT NULL,
	child_id BIGINT NOT NULL,
	PRIMARY KEY (parent_id, child_id),
	KEY {p}task_dep_child (child_id)
) ENGINE = InnoDB;
