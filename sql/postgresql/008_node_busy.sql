-- sked schema, version 8, PostgreSQL: what a node's handlers run now.
-- A worker may hold tasks ahead of its free threads (docs/design.md,
-- "Prefetch"): they are running in the task table (its lease) but no
-- handler has them yet. Each heartbeat writes how many handlers run, so
-- `sked nodes` and the dashboard tell running from held ahead.
ALTER TABLE {p}node ADD COLUMN IF NOT EXISTS busy integer NOT NULL DEFAULT 0;
