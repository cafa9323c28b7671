-- sked schema, version 16, SQL Server: webhooks (on_end, docs/operations.md
-- "Webhooks"). The leader follows the events feed's task ends with a
-- cursor kept here (one row, name 'on_end': the feed position read up
-- to, and the turn that last moved it), moved in the transaction that
-- enqueues the deliveries (kind sked.hook) of the ends it passed. Nothing
-- here is read or written on the hot path.
IF OBJECT_ID(N'{p}hook_cursor', N'U') IS NULL CREATE TABLE {p}hook_cursor (
	name NVARCHAR(64) NOT NULL PRIMARY KEY,
	pos BIGINT NOT NULL,
	turn NVARCHAR(255) NOT NULL
);
