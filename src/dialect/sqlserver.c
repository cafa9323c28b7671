/*
 * dialect/sqlserver.c — SQL for Microsoft SQL Server (2016 or newer),
 * reached through the ODBC driver.
 *
 * Layer: a dialect (see dialect.h). Times are DATETIME2(3) in UTC from
 * SYSUTCDATETIME(); templates turn them into epoch milliseconds with
 * DATEDIFF_BIG (2016 and later) and back with DATEADD in minutes plus a
 * millisecond remainder (DATEADD takes an INT, and seconds since 1970 no
 * longer fit one in 2038). What differs from the generic texts:
 *
 *   claim         readpast: one autocommit statement. A CTE selects
 *                 TOP (n) rows in claim order WITH (UPDLOCK, READPAST,
 *                 ROWLOCK) and is updated in place, OUTPUT inserted.…
 *                 returning the claimed rows. READPAST skips rows another
 *                 claimer holds; it is honoured only at READ COMMITTED or
 *                 REPEATABLE READ, so session_init sets READ COMMITTED.
 *   {ret}         SQL Server has no RETURNING: the enqueue INSERTs carry
 *                 OUTPUT inserted.id before VALUES, and {ret} is empty.
 *   {lim:X}       OFFSET 0 ROWS FETCH NEXT X ROWS ONLY (every use follows
 *                 an ORDER BY, which FETCH requires).
 *   DDL           guarded by OBJECT_ID / sys.indexes (no IF NOT EXISTS).
 *   migration     sp_getapplock on the session; DDL is transactional.
 *   many rows     SKED_CAP_INSERT_ROWS: SKED_SQL_ENQ_ROWS_* are INSERT …
 *                 OUTPUT inserted.id SELECT … FROM (VALUES {rows})
 *                 ORDER BY the input position; enqueue.c runs them in
 *                 chunks that keep every statement under SQL Server's
 *                 2,100 parameters, in one transaction.
 *
 * Row locks: a claim takes update locks on the rows it returns only,
 * skipping locked ones, and holds them until its statement commits.
 *
 * Not yet run against a real SQL Server (none is available where it was
 * written); see docs/odbc.md and scripts/verify-sqlserver.sh.
 */
#include "dialect/dialect.h"

#define EPOCH "CAST('1970-01-01T00:00:00' AS DATETIME2(3))"
/* X ms after base: minutes (an INT to the year 6053) plus the rest */
#define ADD_MS(base)                                                           \
	"DATEADD(millisecond, CAST({} % 60000 AS INT), DATEADD(minute, "       \
	"CAST({} / 60000 AS INT), " base "))"

#define CLAIM_SET                                                              \
	"status = 1, node_id = ?1, lease_until = {now+?2}, "                   \
	"started_at = {now}, attempts = attempts + 1, version = version + 1, " \
	"updated_at = {now}"

#define CLAIM_HEAD                                                             \
	"WITH c AS (SELECT TOP (?3) id, queue, kind, payload, status, "        \
	"node_id, lease_until, started_at, attempts, max_attempts, version, "  \
	"updated_at, open_parents, traceparent, timeout_ms FROM {p}task "      \
	"WITH (UPDLOCK, "                                                      \
	"READPAST, "                                                           \
	"ROWLOCK) "                                                            \
	"WHERE status IN (0, 4) AND run_at <= {now} "
#define CLAIM_TAIL                                                             \
	"ORDER BY priority DESC, run_at, id) UPDATE c SET " CLAIM_SET          \
	" OUTPUT inserted.id, inserted.queue, inserted.kind, "                 \
	"inserted.payload, inserted.attempts, inserted.max_attempts, "         \
	"{ms:inserted.started_at}, inserted.open_parents, "                    \
	"inserted.traceparent, inserted.timeout_ms"

#define LOCK_HEAD                                                              \
	"SELECT TOP (?3) id FROM {p}task WITH (UPDLOCK, READPAST, ROWLOCK) "   \
	"WHERE status IN (0, 4) AND run_at <= {now} "
#define CLAIM_ORDER    "ORDER BY priority DESC, run_at, id"
#define NOT_LIMITED_MS "AND queue NOT IN (SELECT queue FROM {p}queue_limit) "

#define ENQ_HEAD                                                               \
	"INSERT INTO {p}task (queue, kind, payload, status, priority, "        \
	"run_at, attempts, max_attempts, version, unique_key, created_at, "    \
	"updated_at, concurrency_key, traceparent, unique_scope, timeout_ms) " \
	"OUTPUT "                                                              \
	"inserted.id VALUES (?1, ?2, ?3, 0, ?4, "

#define ROWS_HEAD                                                              \
	"INSERT INTO {p}task (queue, kind, payload, status, priority, "        \
	"run_at, attempts, max_attempts, version, unique_key, created_at, "    \
	"updated_at) OUTPUT inserted.id SELECT ?1, ?2, v.payload, 0, ?3, "
#define ROWS_TAIL                                                              \
	", 0, ?5, 0, NULL, {now}, {now} FROM (VALUES {rows}) AS v(payload, "   \
	"ord) ORDER BY v.ord"

static const char *const mssql_sql[SKED_SQL__COUNT] = {
        [SKED_SQL_META_CREATE] =
                "IF OBJECT_ID(N'{p}meta', N'U') IS NULL CREATE TABLE {p}meta ("
                "name NVARCHAR(64) NOT NULL PRIMARY KEY, "
                "value NVARCHAR(255) NOT NULL)",
        [SKED_SQL_ENQ_IN] = ENQ_HEAD
        "{now+?5}, 0, ?6, 0, ?7, {now}, {now}, ?8, ?9, ?10, ?11)",
        [SKED_SQL_ENQ_AT] = ENQ_HEAD
        "{ts:?5}, 0, ?6, 0, ?7, {now}, {now}, ?8, ?9, ?10, ?11)",
        [SKED_SQL_CLAIM_ANY] = CLAIM_HEAD "AND {kinds:?5} " CLAIM_TAIL,
        [SKED_SQL_CLAIM_Q] =
                CLAIM_HEAD "AND queue = ?4 AND {kinds:?5} " CLAIM_TAIL,
        /* what FOR UPDATE SKIP LOCKED says elsewhere, for a claim in steps */
        [SKED_SQL_LOCK_ANY] = LOCK_HEAD "AND {kinds:?5} " CLAIM_ORDER,
        [SKED_SQL_LOCK_Q] =
                LOCK_HEAD "AND queue = ?4 AND {kinds:?5} " CLAIM_ORDER,
        /* queue ?1, kind ?2, priority ?3, run-at or delay ?4 (twice:
         * minutes and the remainder), max attempts ?5, then one payload a
         * row from ?6. Identity values of INSERT … SELECT … ORDER BY
         * follow the ORDER BY, so the sorted ids are the input order;
         * OUTPUT itself promises no order. */
        [SKED_SQL_ENQ_ROWS_IN] = ROWS_HEAD "{now+?4}" ROWS_TAIL,
        [SKED_SQL_ENQ_ROWS_AT] = ROWS_HEAD "{ts:?4}" ROWS_TAIL,
        /* a retried task goes back with its own id: IDENTITY_INSERT is a
         * session setting, so it is switched off again whatever the
         * insert does (THROW passes the error on) */
        [SKED_SQL_DONE_DROP_RET] =
                "DELETE FROM {p}task OUTPUT deleted.id, deleted.status, "
                "deleted.dependents WHERE id IN ({ids}) AND status + 0 IN "
                "(2, 3, 5)",
        [SKED_SQL_RETRY_BACK] =
                "SET IDENTITY_INSERT {p}task ON; BEGIN TRY " SKED__RETRY_BACK
                "; END TRY BEGIN CATCH SET IDENTITY_INSERT {p}task OFF; "
                "THROW; END CATCH; SET IDENTITY_INSERT {p}task OFF",
        /* limits (limits.c): the limit row under an update lock, which
         * every limited claim of the queue takes first and holds to its
         * commit; plain readers (S locks) are not kept out by it */
        /* the clustered index's seeks, in ascending order */
        [SKED_SQL_DEP_LOCK] = "SELECT id FROM {p}task WITH (UPDLOCK, ROWLOCK) "
                              "WHERE id IN ({ids}) AND status = 6 ORDER BY id",
        [SKED_SQL_LIM_LOCK] =
                "SELECT concurrency, per_key, rate_n, rate_ms, "
                "rate_log, {nowms}, paused, fair FROM {p}queue_limit WITH "
                "(UPDLOCK, ROWLOCK) WHERE queue = ?1",
        [SKED_SQL_CLAIM_XQ] =
                CLAIM_HEAD "AND {kinds:?5} " NOT_LIMITED_MS CLAIM_TAIL,
        [SKED_SQL_LOCK_XQ] =
                LOCK_HEAD "AND {kinds:?5} " NOT_LIMITED_MS CLAIM_ORDER,
        [SKED_SQL_BACKEND_ID] = "SELECT CAST(@@SPID AS BIGINT)",
        [SKED_SQL_BLOCKERS] =
                "SELECT CAST(s.session_id AS BIGINT), "
                "COALESCE(s.program_name, ''), "
                "COALESCE(c.client_net_address, s.host_name, ''), "
                "COALESCE(s.status, ''), COALESCE(s.login_name, '') "
                "FROM sys.dm_exec_requests r "
                "JOIN sys.dm_exec_sessions s "
                "ON s.session_id = r.blocking_session_id "
                "LEFT JOIN sys.dm_exec_connections c "
                "ON c.session_id = s.session_id "
                "WHERE r.session_id = ?1 AND r.blocking_session_id <> 0 "
                "ORDER BY s.session_id",
        /* the computed column unique_held is the key while held
         * (sql/sqlserver/010_unique_scope.sql) */
        [SKED_SQL_UNIQUE_HELD] =
                "SELECT id FROM {p}task WHERE unique_held = ?1",
        [SKED_SQL_LIVE_UNIQUE] =
                "SELECT id FROM {p}task WHERE unique_held = ?1",
        /* HOLDLOCK: the key's range stays locked from the match to the
         * insert, so two enqueuers of a new key take turns */
        [SKED_SQL_UNIQUE_FOR_PUT] =
                "MERGE {p}unique_for WITH (HOLDLOCK) AS u USING (SELECT "
                "?1 AS k) AS s ON u.unique_key = s.k WHEN MATCHED AND "
                "u.held_until <= {now} THEN UPDATE SET task_id = ?2, "
                "held_until = {now+?3} WHEN NOT MATCHED THEN INSERT "
                "(unique_key, task_id, held_until) VALUES (?1, ?2, "
                "{now+?3});",
};

const sked_dialect sked__dialect_sqlserver = {
        .name = "sqlserver",
        .now = "SYSUTCDATETIME()",
        .nowms = "DATEDIFF_BIG(millisecond, " EPOCH ", SYSUTCDATETIME())",
        .now_plus = ADD_MS("SYSUTCDATETIME()"),
        .ts = ADD_MS(EPOCH),
        .ms = "DATEDIFF_BIG(millisecond, " EPOCH ", {})",
        .len = "LEN({})",
        .ret = "",
        .limit = " OFFSET 0 ROWS FETCH NEXT {} ROWS ONLY",
        /* @@IDENTITY: SCOPE_IDENTITY() is NULL after a prepared
         * statement, which runs in a scope of its own */
        .last_id = "SELECT CAST(@@IDENTITY AS BIGINT)",
        .kinds_in = "({} IS NULL OR CHARINDEX(',' + kind + ',', {}) > 0)",
        .begin = "BEGIN TRANSACTION",
        .begin_claim = "BEGIN TRANSACTION",
        .commit = "COMMIT TRANSACTION",
        /* a deadlock victim's transaction is already gone */
        .rollback = "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION",
        .migrate_lock =
                "DECLARE @r INT; EXEC @r = sp_getapplock "
                "@Resource = N'sked_migrate', @LockMode = N'Exclusive', "
                "@LockOwner = N'Session', @LockTimeout = 120000; "
                "IF @r < 0 THROW 51000, N'timed out waiting for the sked "
                "migration lock', 1",
        .migrate_unlock = "EXEC sp_releaseapplock @Resource = N'sked_migrate', "
                          "@LockOwner = N'Session'",
        .ddl_in_tx = 1,
        .session_init = "SET TRANSACTION ISOLATION LEVEL READ COMMITTED",
        .listen = NULL,
        .notify = NULL,
        .schema = sked__schema_sqlserver,
        .sql = mssql_sql,
        .caps = SKED_CAP_READPAST | SKED_CAP_RETURNING | SKED_CAP_INSERT_ROWS |
                SKED_CAP_WAIT_HOLDER,
        .claim_one_statement = 1,
        .max_params = 2100,
        /* ?1, ?2, ?3, ?4 twice, ?5 */
        .rows_shared_params = 6,
};
