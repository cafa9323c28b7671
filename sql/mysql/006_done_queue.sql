-- sked schema, version 6, MySQL and MariaDB: ended tasks counted per
-- queue. sked stats and the dashboard count {p}task_done per queue and
-- status from this covering index, not from the table's rows. (DDL is not
-- transactional here: run again after a crash, the index that exists
-- counts as done, ER_DUP_KEYNAME.)
ALTER TABLE {p}task_done ADD INDEX {p}task_done_queue (queue, status);
