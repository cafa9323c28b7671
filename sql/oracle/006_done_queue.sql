-- sked schema, version 6, Oracle: ended tasks counted per queue and
-- status from this index, not from the table's rows.
CREATE INDEX {p}task_done_queue ON {p}task_done (queue, status);
