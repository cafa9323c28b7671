-- sked schema, version 11, sqlite. Waiting for a task's end (sked
-- wait) reads the tables with a back-off here (docs/cli.md); only
-- PostgreSQL, which can notify, needs a mark and a trigger
-- (sql/postgresql/011_wait.sql).
-- What each node serves (docs/operations.md, "Why work waits"): the kinds
-- it has handlers for and the queues it claims from, each as ",a,b,",
-- NULL for every one (a catch-all handler, no --queues) or a node of an
-- older sked. Written once when the node registers, never on the hot
-- path; stats, the dashboard and /metrics name the due work no live node
-- serves.
ALTER TABLE {p}node ADD COLUMN serves_kinds TEXT;
ALTER TABLE {p}node ADD COLUMN serves_queues TEXT;
