-- sked schema, version 8, Oracle: what a node's handlers run now.
-- See sql/postgresql/008_node_busy.sql.
ALTER TABLE {p}node ADD (busy NUMBER(10) DEFAULT 0 NOT NULL);
