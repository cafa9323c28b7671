-- sked schema, version 2, MySQL and MariaDB: retention (sked prune) finds
-- ended tasks by status and age through this index. InnoDB has no partial
-- indexes, and the claim uses its own index on due_prio, not this one.
-- (No semicolon in these comments: the drivers split steps at every one.)
ALTER TABLE {p}task ADD INDEX {p}task_ended (status, finished_at);
-- and how many slots each node has (sked nodes, the dashboard)
ALTER TABLE {p}node ADD COLUMN slots INT NOT NULL DEFAULT 0;
