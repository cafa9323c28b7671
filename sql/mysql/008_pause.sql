-- sked schema, version 8, MySQL and MariaDB: a queue paused
-- cluster-wide. See sql/postgresql/008_pause.sql and docs/limits.md.
ALTER TABLE {p}queue_limit ADD COLUMN paused TINYINT NOT NULL DEFAULT 0;
