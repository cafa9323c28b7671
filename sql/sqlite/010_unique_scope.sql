-- sked schema, version 10, SQLite: unique keys with a scope. See
-- sql/postgresql/010_unique_scope.sql and docs/unique.md.
ALTER TABLE {p}task ADD COLUMN unique_scope INTEGER;
DROP INDEX IF EXISTS {p}task_unique;
CREATE UNIQUE INDEX IF NOT EXISTS {p}task_unique_held ON {p}task (unique_key)
	WHERE unique_key IS NOT NULL AND (unique_scope IS NULL OR (unique_scope = 1 AND attempts = 0));
CREATE TABLE IF NOT EXISTS {p}unique_for (
	unique_key TEXT PRIMARY KEY,
	task_id INTEGER NOT NULL,
	held_until INTEGER NOT NULL
);
-- A task's own timeout in ms (enqueue --timeout D), NULL for none.
ALTER TABLE {p}task ADD COLUMN timeout_ms INTEGER;
