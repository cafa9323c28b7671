-- sked schema, version 8, SQLite: what a node's handlers run now.
-- See sql/postgresql/008_node_busy.sql.
ALTER TABLE {p}node ADD COLUMN busy INTEGER NOT NULL DEFAULT 0;
