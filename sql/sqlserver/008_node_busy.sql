-- sked schema, version 8, SQL Server: what a node's handlers run now.
-- See sql/postgresql/008_node_busy.sql.
IF COL_LENGTH(N'{p}node', N'busy') IS NULL
	ALTER TABLE {p}node ADD busy INT NOT NULL DEFAULT 0;
