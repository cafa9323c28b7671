-- sked schema, version 16, Oracle: webhooks (on_end, docs/operations.md
-- "Webhooks"). The leader follows the events feed's task ends with a
-- cursor kept here (one row, name 'on_end': the feed position read up
-- to, and the turn that last moved it), moved in the transaction that
-- enqueues the deliveries (kind sked.hook) of the ends it passed. Nothing
-- here is read or written on the hot path.
CREATE TABLE {p}hook_cursor (
	name VARCHAR2(64) NOT NULL PRIMARY KEY,
	pos NUMBER(19) NOT NULL,
	turn VARCHAR2(255) NOT NULL
);
