-- sked schema, version 15, PostgreSQL: a schedule's unique key (sked
-- cron add --unique KEY, docs/schedules.md "Unique keys") and the
-- per-key weights of fair queues (sked queue set --weight KEY=N,
-- docs/limits.md "Fair queues").
-- A schedule's unique key, scope (NULL or 0 live, 1 pending, 2 a
-- period of unique_for_ms) and replace mode: each fire enqueues as
-- sked enqueue --unique would. NULL key: none (every schedule before).
ALTER TABLE {p}schedule ADD COLUMN IF NOT EXISTS unique_key text;
ALTER TABLE {p}schedule ADD COLUMN IF NOT EXISTS unique_scope integer;
ALTER TABLE {p}schedule ADD COLUMN IF NOT EXISTS unique_for_ms bigint;
ALTER TABLE {p}schedule ADD COLUMN IF NOT EXISTS unique_replace integer NOT NULL DEFAULT 0;
-- A key of a fair queue with a weight other than 1 (2 to 100): it takes
-- that many turns a round. At most 10,000 rows a queue (limits.c).
CREATE TABLE IF NOT EXISTS {p}queue_weight (
	queue text NOT NULL,
	concurrency_key text NOT NULL,
	weight integer NOT NULL,
	PRIMARY KEY (queue, concurrency_key)
);
