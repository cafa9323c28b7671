-- sked schema, version 2, Oracle: how many slots each node has (sked
-- nodes, the dashboard). The other dialects also add an index of ended
-- tasks here, which step 4 drops again when ended tasks move to their
-- own table; an Oracle database starts at step 1 with this sked, so the
-- index is never made (a DROP INDEX run again would fail: ORA-01418).
ALTER TABLE {p}node ADD (slots NUMBER(10) DEFAULT 0 NOT NULL);
