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
 *   enqueue_many  INSERT … OUTPUT inserted.id SELECT … FROM (VALUES …)
 *                 ORDER BY the input position, in chunks that keep every
 *                 statement under SQL Server's 2,100 parameters.
 *
 * Row locks: a claim takes update locks on the rows it returns only,
 * skipping locked ones, and holds them until its statement commits.
 *
 * Not yet run against a real SQL Server (none is available where it was
 * written); see docs/odbc.md and scripts/verify-sqlserver.sh.
 */
#include "dialect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The chunk arithmetic, pure so the unit test can check it. Declared
 * again in tests/unit/test_sqlserver.c. */
int sked__mssql_rows_per_stmt(int shared, int per_row, int max_params);
size_t sked__mssql_chunks(size_t n, int rows_per_stmt);

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
	"updated_at FROM {p}task WITH (UPDLOCK, READPAST, ROWLOCK) "           \
	"WHERE status IN (0, 4) AND run_at <= {now} "
#define CLAIM_TAIL                                                             \
	"ORDER BY priority DESC, run_at, id) UPDATE c SET " CLAIM_SET          \
	" OUTPUT inserted.id, inserted.queue, inserted.kind, "                 \
	"inserted.payload, inserted.attempts, inserted.max_attempts, "         \
	"{ms:inserted.started_at}"

#define LOCK_HEAD                                                              \
	"SELECT TOP (?3) id FROM {p}task WITH (UPDLOCK, READPAST, ROWLOCK) "   \
	"WHERE status IN (0, 4) AND run_at <= {now} "
#define CLAIM_ORDER "ORDER BY priority DESC, run_at, id"

#define ENQ_HEAD                                                               \
	"INSERT INTO {p}task (queue, kind, payload, status, priority, "        \
	"run_at, attempts, max_attempts, version, unique_key, created_at, "    \
	"updated_at) OUTPUT inserted.id VALUES (?1, ?2, ?3, 0, ?4, "

static const char *const mssql_sql[SKED_SQL__COUNT] = {
        [SKED_SQL_META_CREATE] =
                "IF OBJECT_ID(N'{p}meta', N'U') IS NULL CREATE TABLE {p}meta ("
                "name NVARCHAR(64) NOT NULL PRIMARY KEY, "
                "value NVARCHAR(255) NOT NULL)",
        [SKED_SQL_ENQ_IN] = ENQ_HEAD "{now+?5}, 0, ?6, 0, ?7, {now}, {now})",
        [SKED_SQL_ENQ_AT] = ENQ_HEAD "{ts:?5}, 0, ?6, 0, ?7, {now}, {now})",
        [SKED_SQL_CLAIM_ANY] = CLAIM_HEAD CLAIM_TAIL,
        [SKED_SQL_CLAIM_Q] = CLAIM_HEAD "AND queue = ?4 " CLAIM_TAIL,
        /* what FOR UPDATE SKIP LOCKED says elsewhere, for a claim in steps */
        [SKED_SQL_LOCK_ANY] = LOCK_HEAD CLAIM_ORDER,
        [SKED_SQL_LOCK_Q] = LOCK_HEAD "AND queue = ?4 " CLAIM_ORDER,
};

/* ---- enqueue_many ---- */

/* Parameters a statement may carry: SQL Server refuses a request with
 * more than 2,100, and the driver's sp_prepexec call takes some of its
 * own, so stay strictly below. */
int
sked__mssql_rows_per_stmt(int shared, int per_row, int max_params)
{
	if (per_row <= 0 || max_params - 1 - shared < per_row)
		return 0;
	return (max_params - 1 - shared) / per_row;
}

size_t
sked__mssql_chunks(size_t n, int rows_per_stmt)
{
	if (rows_per_stmt <= 0)
		return 0;
	return (n + (size_t)rows_per_stmt - 1) / (size_t)rows_per_stmt;
}

/* Shared markers: queue ?1, kind ?2, priority ?3, run-at or delay ?4
 * (twice: minutes and the remainder), max attempts ?5. Then one payload
 * per row. */
#define SHARED_MARKERS 6
#define ROW_MARKERS    1

static int
cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* One statement for rows [off, off + m). Identity values of INSERT …
 * SELECT … ORDER BY follow the ORDER BY, so the sorted ids are the
 * input order; OUTPUT itself promises no order. */
static int
insert_chunk(sked *h, size_t off, size_t m, const char *const *payloads,
             const size_t *lens, sked_val *p, int at, int64_t *ids)
{
	/* constant fragments and our own row numbers only */
	size_t cap = 1024 + m * 32;
	char *t = malloc(cap);
	if (!t)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	int len = snprintf(
	        t, cap,
	        "INSERT INTO {p}task (queue, kind, payload, status, priority, "
	        "run_at, attempts, max_attempts, version, unique_key, "
	        "created_at, updated_at) OUTPUT inserted.id SELECT ?1, ?2, "
	        "v.payload, 0, ?3, %s, 0, ?5, 0, NULL, {now}, {now} FROM "
	        "(VALUES ",
	        at ? "{ts:?4}" : "{now+?4}");
	for (size_t i = 0; i < m; i++)
		len += snprintf(t + len, cap - (size_t)len, "%s(?%zu, %zu)",
		                i ? ", " : "", i + 6, i);
	snprintf(t + len, cap - (size_t)len,
	         ") AS v(payload, ord) ORDER BY v.ord");
	char *sql = sked__dialect_expand(h->dialect, h->prefix, t);
	free(t);
	if (!sql)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	for (size_t i = 0; i < m; i++) {
		const char *s = payloads[off + i] ? payloads[off + i] : "";
		size_t n = lens ? lens[off + i] : strlen(s);
		p[5 + i] = SKED_BLOBV(s, payloads[off + i] ? n : 0);
	}
	sked_res r = {0};
	int rc = sked__qdyn(h, sql, p, (int)(5 + m), &r);
	free(sql);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot enqueue");
	if ((size_t)r.nrows != m) {
		sked__res_clear(&r);
		return sked__fail(h, SKED_EDB,
		                  "the server returned %d ids for %zu tasks",
		                  r.nrows, m);
	}
	for (size_t i = 0; i < m; i++)
		ids[off + i] = sked__res_int(&r, (int)i, 0);
	sked__res_clear(&r);
	qsort(ids + off, m, sizeof *ids, cmp_id);
	return SKED_OK;
}

static int
mssql_enqueue_many(sked *h, const char *kind, size_t n,
                   const char *const *payloads, const size_t *lens,
                   const sked_enqueue_opts *opts, int64_t *ids_out)
{
	static const sked_enqueue_opts defaults = {0};
	const sked_enqueue_opts *o = opts ? opts : &defaults;
	int per = sked__mssql_rows_per_stmt(SHARED_MARKERS, ROW_MARKERS,
	                                    h->dialect->max_params);
	int at = o->run_at_ms != 0;
	size_t rows = n < (size_t)per ? n : (size_t)per;
	sked_val *p = malloc((5 + rows) * sizeof *p);
	if (!p)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	p[0] = SKED_TEXTV(o->queue ? o->queue : SKED_DEFAULT_QUEUE);
	p[1] = SKED_TEXTV(kind);
	p[2] = SKED_INTV(o->priority);
	p[3] = SKED_INTV(at ? o->run_at_ms : o->delay_ms);
	p[4] = SKED_INTV(o->max_attempts ? o->max_attempts
	                                 : SKED_DEFAULT_MAX_ATTEMPTS);
	int rc = sked__begin(h, 0);
	if (rc != SKED_OK) {
		free(p);
		return sked__fail_db(h, rc, "cannot begin the enqueue");
	}
	for (size_t off = 0; off < n && rc == SKED_OK; off += (size_t)per) {
		size_t m = n - off < (size_t)per ? n - off : (size_t)per;
		rc = insert_chunk(h, off, m, payloads, lens, p, at, ids_out);
	}
	free(p);
	if (rc != SKED_OK) {
		sked__rollback(h);
		return rc;
	}
	rc = sked__commit(h);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot commit the enqueue");
	return SKED_OK;
}

const sked_dialect sked__dialect_sqlserver = {
        .name = "sqlserver",
        .now = "SYSUTCDATETIME()",
        .nowms = "DATEDIFF_BIG(millisecond, " EPOCH ", SYSUTCDATETIME())",
        .now_plus = ADD_MS("SYSUTCDATETIME()"),
        .ts = ADD_MS(EPOCH),
        .ms = "DATEDIFF_BIG(millisecond, " EPOCH ", {})",
        .ret = "",
        .limit = " OFFSET 0 ROWS FETCH NEXT {} ROWS ONLY",
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
        .caps = SKED_CAP_READPAST | SKED_CAP_RETURNING,
        .claim_one_statement = 1,
        .max_params = 2100,
        .finish_batch = NULL,
        .enqueue_many = mssql_enqueue_many,
};
