-- sked schema, version 16, PostgreSQL: webhooks (on_end, docs/operations.md
-- "Webhooks"). The leader follows the events feed's task ends with a
-- cursor kept here (one row, name 'on_end': the feed position read up
-- to, and the turn that last moved it), moved in the transaction that
-- enqueues the deliveries (kind sked.hook) of the ends it passed. Nothing
-- here is read or written on the hot path.
CREATE TABLE IF NOT EXISTS {p}hook_cursor (
	name text PRIMARY KEY,
	pos bigint NOT NULL,
	turn text NOT NULL
);
