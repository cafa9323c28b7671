-- sked schema, version 5, Oracle: the attempt that ends a task is
-- recorded on its {p}task_done row. See sql/postgresql/005_attempt.sql.
ALTER TABLE {p}task_done ADD (outcome VARCHAR2(32) NULL);
ALTER TABLE {p}task_done ADD (exit_code NUMBER(10) NULL);
ALTER TABLE {p}task_done ADD (error CLOB NULL);
ALTER TABLE {p}task_done ADD (output CLOB NULL);
