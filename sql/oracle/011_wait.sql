-- sked schema, version 11, Oracle. Waiting for a task's end (sked wait)
-- reads the tables with a back-off here; only PostgreSQL needs a mark and
-- a trigger (sql/postgresql/011_wait.sql). What each node serves
-- (docs/operations.md, "Why work waits"): ",a,b,", NULL for every one.
ALTER TABLE {p}node ADD (serves_kinds VARCHAR2(4000) NULL);
ALTER TABLE {p}node ADD (serves_queues VARCHAR2(4000) NULL);
