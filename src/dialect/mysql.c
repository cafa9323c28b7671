/*
 * dialect/mysql.c — SQL for MySQL and MariaDB (one dialect for both).
 *
 * Layer: a dialect (see dialect.h). Times are DATETIME(3) in UTC, read
 * from UTC_TIMESTAMP(3); epoch milliseconds are computed with
 * TIMESTAMPDIFF from a literal epoch, so no expression here depends on the
 * session's time zone (session_init sets it to UTC anyway, for the column
 * defaults). UPDATE has no RETURNING: ids of inserts come from the driver
 * (mysql_stmt_insert_id) and claims read their rows back.
 *
 * Claims. MySQL has no partial index, so the schema keeps a stored column
 * due_prio (-priority while status is 0 or 4, else NULL) and indexes
 * (due_prio, run_at, id). The claim statements below say
 * "due_prio IS NOT NULL … ORDER BY due_prio, run_at, id": the same rows in
 * the same order as the generic "status IN (0, 4) … ORDER BY priority
 * DESC, run_at, id", but an index range InnoDB walks in order and leaves
 * after LIMIT rows, so FOR UPDATE SKIP LOCKED locks only the rows it
 * returns, finished rows are never scanned, and no DESC index is needed.
 * claim_one_statement is 0: skip-locked claims run in three steps
 * (claim/threestep.c) in one READ COMMITTED transaction — under REPEATABLE
 * READ, gap locks would make claimers wait on each other.
 *
 * Migration: DDL commits implicitly here, so ddl_in_tx is 0, every step is
 * idempotent (CREATE TABLE IF NOT EXISTS, indexes inside the CREATE; an
 * index added later counts as done when it exists, ddl_exists_error), and
 * the migration runs under a named lock (GET_LOCK) per database.
 * Row locks held by the statements: see dialect.c; the claim locks its
 * task rows in due order, the same order every claimer uses.
 */
#include "dialect/dialect.h"

#define EPOCH "'1970-01-01 00:00:00'"
#define NOW   "UTC_TIMESTAMP(3)"
#define NOWMS "(TIMESTAMPDIFF(MICROSECOND, " EPOCH ", " NOW ") DIV 1000)"

#define DUE_MY         "due_prio IS NOT NULL AND run_at <= {now}"
#define ORDER_MY       " ORDER BY due_prio, run_at, id"
#define NOT_LIMITED_MY " AND queue NOT IN (SELECT queue FROM {p}queue_limit)"

/* a GET_LOCK name is at most 64 characters */
#define MIGRATE_NAME "CONCAT('sked-migrate:', LEFT(DATABASE(), 48))"

/* Statements on a batch of task ids name the primary key outright: the
 * task table's statistics are always stale (its rows come and go by the
 * thousand), and InnoDB, believing it holds a row or two, would scan the
 * table or the status index instead, locking (and waiting on) rows other
 * sessions hold that have nothing to do with these ids. */
#define BY_ID "{p}task t FORCE INDEX (PRIMARY)"

#define DONE_COPY_MY                                                           \
	"INSERT INTO {p}task_done (" SKED__DONE_COLS                           \
	") SELECT " SKED__DONE_COLS " FROM " BY_ID                             \
	" WHERE t.id IN ({ids}) AND t.status "                                 \
	"IN (2, 3, 5)"
#define DONE_COPY_RUN_MY                                                       \
	"INSERT INTO {p}task_done (" SKED__DONE_COLS ", outcome, exit_code, "  \
	"error, output) SELECT STRAIGHT_JOIN " SKED__DONE_T_COLS               \
	", v.c8, v.c4, v.c5, v.c6, v.c7 FROM ({rows8}) v JOIN " BY_ID          \
	" ON t.id = v.c1 AND t.attempts = v.c2 WHERE t.status IN (2, 3)"

/* The claim's lock answers the claimed columns (dialect.c's
 * CLAIMED_COLS) as the claim will leave them: one more attempt, started
 * at this statement's clock (UTC_TIMESTAMP is fixed for a statement),
 * which SKED_SQL_IDS_CLAIM then stores. The rows are locked until the
 * claim commits, so what is read is what is claimed. */
#define LOCK_READS                                                             \
	"SELECT id, queue, kind, payload, attempts + 1, max_attempts, "        \
	"{nowms}, open_parents, traceparent, timeout_ms FROM {p}task WHERE "

static const char *const sql_mysql[SKED_SQL__COUNT] = {
        [SKED_SQL_FIN_LOCK] = "SELECT t.id, t.attempts FROM " BY_ID
                              " WHERE t.id IN ({ids}) AND t.node_id = ?1 "
                              "AND t.status = 1 FOR UPDATE",
        [SKED_SQL_FIN_OK_IDS] =
                "UPDATE " BY_ID " SET t.status = 2, t.lease_until = NULL, "
                "t.finished_at = {now}, t.updated_at = {now}, "
                "t.version = t.version + 1 WHERE t.id IN ({ids}) "
                "AND t.status = 1",
        [SKED_SQL_DONE_COPY] = DONE_COPY_MY,
        /* SKED_CAP_INSERT_RETURNING (MariaDB 10.5): the same copies,
         * answering what the release of children needs */
        [SKED_SQL_DONE_COPY_RET] = DONE_COPY_MY " RETURNING id, status, "
                                                "dependents",
        [SKED_SQL_DONE_COPY_RUN_RET] =
                DONE_COPY_RUN_MY " RETURNING id, status, dependents",
        /* the outcomes' rows first, then each task by its primary key */
        [SKED_SQL_DONE_COPY_RUN] = DONE_COPY_RUN_MY,
        /* the primary key's ranges, walked in ascending order */
        [SKED_SQL_DEP_LOCK] = "SELECT t.id FROM " BY_ID
                              " WHERE t.id IN ({ids}) AND t.status = 6 "
                              "ORDER BY t.id FOR UPDATE",
        /* single-table: MySQL assigns left to right (status first) */
        [SKED_SQL_DEP_RELEASE_IDS] =
                "UPDATE " BY_ID " SET t.status = CASE WHEN t.open_parents <= "
                "1 THEN 0 ELSE 6 END, t.updated_at = {now}, t.version = "
                "t.version + 1, t.open_parents = CASE WHEN t.open_parents <= "
                "1 THEN -1 ELSE t.open_parents - 1 END WHERE t.status = 6 "
                "AND t.id IN ({ids})",
        [SKED_SQL_DEP_RELEASE_IDS_IGN] =
                "UPDATE " BY_ID " SET t.status = CASE WHEN t.open_parents <= "
                "1 THEN 0 ELSE 6 END, t.updated_at = {now}, t.version = "
                "t.version + 1, t.open_parents = CASE WHEN t.open_parents <= "
                "1 THEN -1 ELSE t.open_parents - 1 END WHERE t.status = 6 "
                "AND t.on_parent_failure = 1 AND t.id IN ({ids})",
        [SKED_SQL_DONE_DROP] = "DELETE t FROM " BY_ID " WHERE t.id IN ({ids}) "
                               "AND t.status IN (2, 3, 5)",
        [SKED_SQL_META_CREATE] = "CREATE TABLE IF NOT EXISTS {p}meta ("
                                 "name VARCHAR(64) NOT NULL PRIMARY KEY, "
                                 "value VARCHAR(255) NOT NULL) ENGINE=InnoDB "
                                 "DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin",
        [SKED_SQL_CAND_ANY] =
                "SELECT id, version FROM {p}task WHERE {kinds:?5} AND " DUE_MY
                        ORDER_MY " LIMIT ?3",
        [SKED_SQL_CAND_Q] = "SELECT id, version FROM {p}task WHERE queue = ?4 "
                            "AND {kinds:?5} AND " DUE_MY ORDER_MY " LIMIT ?3",
        /* SKED_CAP_LOCK_READS: the rows as the claim leaves them */
        [SKED_SQL_LOCK_ANY] = LOCK_READS "{kinds:?5} AND " DUE_MY ORDER_MY
                                         " LIMIT ?3 FOR UPDATE SKIP LOCKED",
        [SKED_SQL_LOCK_Q] =
                LOCK_READS "queue = ?4 AND {kinds:?5} AND " DUE_MY ORDER_MY
                           " LIMIT ?3 FOR UPDATE SKIP LOCKED",
        /* the locked ids claimed, started at the lock's clock ?3 */
        [SKED_SQL_IDS_CLAIM] =
                "UPDATE " BY_ID " SET t.status = 1, t.node_id = ?1, "
                "t.lease_until = {now+?2}, t.started_at = {ts:?3}, "
                "t.attempts = t.attempts + 1, t.version = t.version + 1, "
                "t.updated_at = {now} WHERE t.id IN ({ids}) "
                "AND t.status IN (0, 4)",
        /* limits (limits.c): the running rows through their index, never
         * the queue's finished ones; candidates in due order */
        [SKED_SQL_LIM_RUNNING] =
                "SELECT concurrency_key, COUNT(*) FROM {p}task FORCE INDEX "
                "({p}task_lease) WHERE status = 1 AND queue = ?1 "
                "GROUP BY concurrency_key",
        [SKED_SQL_LIM_CAND] =
                "SELECT id, concurrency_key FROM {p}task WHERE queue = ?4 "
                "AND {kinds:?5} AND " DUE_MY ORDER_MY " LIMIT ?3",
        [SKED_SQL_LIM_CAND_KEY] =
                "SELECT id, concurrency_key FROM {p}task WHERE queue = ?4 "
                "AND {kinds:?5} AND " DUE_MY
                " AND (concurrency_key IS NULL OR concurrency_key NOT IN "
                "(SELECT r.concurrency_key FROM {p}task r FORCE INDEX "
                "({p}task_lease) WHERE r.status = 1 AND r.queue = ?4 AND "
                "r.concurrency_key IS NOT NULL GROUP BY r.concurrency_key "
                "HAVING COUNT(*) >= ?6))" ORDER_MY " LIMIT ?3",
        /* fair queues: {p}task_fair on (queue, key, due_prio, …) */
        [SKED_SQL_FAIR_KEY_FIRST] =
                "SELECT concurrency_key FROM {p}task WHERE queue = ?1 AND "
                "concurrency_key IS NOT NULL AND due_prio IS NOT NULL "
                "ORDER BY concurrency_key LIMIT 1",
        [SKED_SQL_FAIR_KEY_NEXT] =
                "SELECT concurrency_key FROM {p}task WHERE queue = ?1 AND "
                "concurrency_key > ?2 AND due_prio IS NOT NULL "
                "ORDER BY concurrency_key LIMIT 1",
        [SKED_SQL_FAIR_CAND] =
                "SELECT id, concurrency_key, priority, {ms:run_at} FROM "
                "{p}task WHERE queue = ?4 AND concurrency_key = ?6 AND "
                "{kinds:?5} AND " DUE_MY ORDER_MY " LIMIT ?3",
        [SKED_SQL_FAIR_CAND_NULL] =
                "SELECT id, concurrency_key, priority, {ms:run_at} FROM "
                "{p}task WHERE queue = ?4 AND concurrency_key IS NULL AND "
                "{kinds:?5} AND " DUE_MY ORDER_MY " LIMIT ?3",
        [SKED_SQL_FAIR_CAND_SKIP] =
                "SELECT id, concurrency_key, priority, {ms:run_at} FROM "
                "{p}task WHERE queue = ?4 AND concurrency_key = ?6 AND "
                "{kinds:?5} AND " DUE_MY ORDER_MY
                " LIMIT ?3 FOR UPDATE SKIP LOCKED",
        [SKED_SQL_FAIR_CAND_NULL_SKIP] =
                "SELECT id, concurrency_key, priority, {ms:run_at} FROM "
                "{p}task WHERE queue = ?4 AND concurrency_key IS NULL AND "
                "{kinds:?5} AND " DUE_MY ORDER_MY
                " LIMIT ?3 FOR UPDATE SKIP LOCKED",
        [SKED_SQL_CAND_XQ] =
                "SELECT id, version FROM {p}task WHERE "
                "{kinds:?5} AND " DUE_MY NOT_LIMITED_MY ORDER_MY " LIMIT ?3",
        [SKED_SQL_LOCK_XQ] =
                LOCK_READS "{kinds:?5} AND " DUE_MY NOT_LIMITED_MY ORDER_MY
                           " LIMIT ?3 FOR UPDATE SKIP LOCKED",
        [SKED_SQL_CLAIM_XQ] = "SELECT NULL FROM {p}task WHERE 1 = 0",
        /* never run here (claim_one_statement = 0); kept free of RETURNING
         * so that no statement of this dialect is one MySQL cannot parse */
        [SKED_SQL_CLAIM_ANY] = "SELECT NULL FROM {p}task WHERE 1 = 0",
        [SKED_SQL_CLAIM_Q] = "SELECT NULL FROM {p}task WHERE 1 = 0",
        [SKED_SQL_BACKEND_ID] = "SELECT CONNECTION_ID()",
        [SKED_SQL_RUNS_WINDOW] = SKED__RUNS_WINDOW("DIV"),
        [SKED_SQL_DONE_WINDOW] = SKED__DONE_WINDOW("DIV"),
        /* MariaDB: InnoDB's lock waits in information_schema (reading
         * them needs the PROCESS privilege) */
        [SKED_SQL_BLOCKERS] =
                "SELECT b.trx_mysql_thread_id, '', COALESCE(p.HOST, ''), "
                "CONCAT(COALESCE(p.COMMAND, ''), ' ', COALESCE(p.TIME, 0), "
                "' s'), COALESCE(p.USER, '') "
                "FROM information_schema.INNODB_LOCK_WAITS w "
                "JOIN information_schema.INNODB_TRX r "
                "ON r.trx_id = w.requesting_trx_id "
                "JOIN information_schema.INNODB_TRX b "
                "ON b.trx_id = w.blocking_trx_id "
                "LEFT JOIN information_schema.PROCESSLIST p "
                "ON p.ID = b.trx_mysql_thread_id "
                "WHERE r.trx_mysql_thread_id = ?1 "
                "ORDER BY b.trx_mysql_thread_id",
        /* MySQL 8: the same from the performance schema */
        [SKED_SQL_BLOCKERS_PS] =
                "SELECT bt.PROCESSLIST_ID, COALESCE(ca.ATTR_VALUE, ''), "
                "COALESCE(bt.PROCESSLIST_HOST, ''), "
                "CONCAT(COALESCE(bt.PROCESSLIST_COMMAND, ''), ' ', "
                "COALESCE(bt.PROCESSLIST_TIME, 0), ' s'), "
                "COALESCE(bt.PROCESSLIST_USER, '') "
                "FROM performance_schema.data_lock_waits w "
                "JOIN performance_schema.threads rt "
                "ON rt.THREAD_ID = w.REQUESTING_THREAD_ID "
                "JOIN performance_schema.threads bt "
                "ON bt.THREAD_ID = w.BLOCKING_THREAD_ID "
                "LEFT JOIN performance_schema.session_connect_attrs ca "
                "ON ca.PROCESSLIST_ID = bt.PROCESSLIST_ID "
                "AND ca.ATTR_NAME = 'program_name' "
                "WHERE rt.PROCESSLIST_ID = ?1 ORDER BY bt.PROCESSLIST_ID",
        /* the generated column unique_held is the key while held
         * (sql/mysql/010_unique_scope.sql) */
        [SKED_SQL_UNIQUE_HELD] =
                "SELECT id FROM {p}task WHERE unique_held = ?1",
        [SKED_SQL_LIVE_UNIQUE] =
                "SELECT id FROM {p}task WHERE unique_held = ?1",
        /* the assignments run in order and see what the earlier ones
         * set: held_until is tested before it is assigned */
        [SKED_SQL_UNIQUE_FOR_PUT] =
                "INSERT INTO {p}unique_for (unique_key, task_id, held_until) "
                "VALUES (?1, ?2, {now+?3}) ON DUPLICATE KEY UPDATE task_id "
                "= IF(held_until <= {now}, VALUES(task_id), task_id), "
                "held_until = IF(held_until <= {now}, VALUES(held_until), "
                "held_until)",
};

/* Both products' dialect, but for its capabilities (below). */
/* clang-format off */
#define MYSQL_DIALECT(extra_caps)                                              \
	{                                                                      \
		.name = "mysql",                                               \
		.now = NOW,                                                    \
		.nowms = NOWMS,                                                \
		.now_plus = "(" NOW " + INTERVAL ({}) * 1000 MICROSECOND)",    \
		.ts = "(CAST(" EPOCH " AS DATETIME(3)) + INTERVAL ({}) * "     \
		      "1000 MICROSECOND)",                                     \
		.ms = "(TIMESTAMPDIFF(MICROSECOND, " EPOCH ", {}) DIV 1000)",  \
		.ret = "",                                                     \
		.limit = NULL,                                                 \
		.last_id = "SELECT LAST_INSERT_ID()",                          \
		.kinds_in = "({} IS NULL OR INSTR({}, CONCAT(',', kind, "      \
		            "',')) > 0)",                                      \
		.begin = "START TRANSACTION",                                  \
		.begin_claim = "START TRANSACTION",                            \
		.commit = "COMMIT",                                            \
		.rollback = "ROLLBACK",                                        \
		.migrate_lock = "SELECT GET_LOCK(" MIGRATE_NAME ", 60)",       \
		.migrate_unlock = "SELECT RELEASE_LOCK(" MIGRATE_NAME ")",     \
		.ddl_in_tx = 0,                                                \
		.ddl_exists_error = 1061,  /* ER_DUP_KEYNAME */                \
		.ddl_exists_error2 = 1060, /* ER_DUP_FIELDNAME */              \
		/* two statements: the driver's text path splits them */      \
		.session_init = "SET time_zone = '+00:00'; SET SESSION "       \
		                "TRANSACTION ISOLATION LEVEL READ COMMITTED",  \
		.listen = NULL,                                                \
		.notify = NULL,                                                \
		.schema = sked__schema_mysql,                                  \
		.sql = sql_mysql,                                              \
		.caps = SKED_CAP_SKIP_LOCKED | SKED_CAP_WAIT_HOLDER |          \
		        SKED_CAP_BATCH_FINISH | SKED_CAP_LOCK_READS |          \
		        (extra_caps),                                          \
		.claim_one_statement = 0,                                      \
		.max_params = 65535,                                           \
	}
/* clang-format on */

const sked_dialect sked__dialect_mysql = MYSQL_DIALECT(0);

/* MariaDB 10.5 and later (sked__dialect_for_version): INSERT …
 * RETURNING, which MySQL has not. The copy of the ended rows to
 * {p}task_done answers (id, status, dependents) (done.c), so a finished
 * batch needs no read of its own to find its parents. DELETE …
 * RETURNING (10.0.5) would do the same, but a single-table DELETE takes
 * no index hint, and with the task table's statistics stale (a table
 * believed to hold a row or two) InnoDB scans it, waiting on rows
 * other sessions hold (t_mysql_skiplocked caught it). */
const sked_dialect sked__dialect_mariadb =
        MYSQL_DIALECT(SKED_CAP_INSERT_RETURNING);
