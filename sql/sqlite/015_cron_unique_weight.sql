-- sked schema, version 15, sqlite: a schedule's unique key and the
-- per-key weights of fair queues. See
-- sql/postgresql/015_cron_unique_weight.sql.
ALTER TABLE {p}schedule ADD COLUMN unique_key TEXT;
ALTER TABLE {p}schedule ADD COLUMN unique_scope INTEGER;
ALTER TABLE {p}schedule ADD COLUMN unique_for_ms INTEGER;
ALTER TABLE {p}schedule ADD COLUMN unique_replace INTEGER NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS {p}queue_weight (
	queue TEXT NOT NULL,
	concurrency_key TEXT NOT NULL,
	weight INTEGER NOT NULL,
	PRIMARY KEY (queue, concurrency_key)
);
