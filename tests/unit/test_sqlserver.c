/*
 * test_sqlserver.c — the SQL Server dialect short of a server.
 *
 * Layer: tests (pure: no database). No SQL Server runs where sked is
 * built, so this checks what can be checked without one: every statement
 * renders, says what SQL Server understands (TOP/OFFSET-FETCH, OUTPUT,
 * the READPAST hints, DATEDIFF_BIG) and nothing it does not (LIMIT,
 * RETURNING, IF NOT EXISTS, unnumbered '?'), the schema step has the
 * guarded DDL and filtered unique indexes, the enqueue chunks stay under
 * 2,100 parameters, and the decision table picks readpast for SQL Server
 * 2012 to 2022 as the ODBC driver reports their versions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "dialect/detect.h"
#include "dialect/dialect.h"
#include "sked.h"

/* from src/model/queue.c (the chunks of a SKED_CAP_INSERT_ROWS enqueue) */
int sked__rows_per_stmt(int shared, int per_row, int max_params);
size_t sked__rows_chunks(size_t n, int rows_per_stmt);

static const sked_dialect *d = &sked__dialect_sqlserver;

static int
has(const char *s, const char *needle)
{
	return strcasestr(s, needle) != NULL;
}

/* Every '?' outside quotes is followed by a number. */
static void
markers_numbered(const char *s, int id)
{
	char q = 0;
	for (const char *p = s; *p; p++) {
		if (q) {
			if (*p == q)
				q = 0;
			continue;
		}
		if (*p == '\'' || *p == '"') {
			q = *p;
			continue;
		}
		if (*p == '?' && !(p[1] >= '1' && p[1] <= '9'))
			fail_msg("statement %d has an unnumbered '?': %s", id,
			         s);
	}
}

static void
every_statement(void **state)
{
	char *sql[SKED_SQL__COUNT] = {0};
	assert_int_equal(sked__dialect_render(d, "sk_", sql, NULL, 0), SKED_OK);
	for (int i = 0; i < SKED_SQL__COUNT; i++) {
		if (!sql[i]) { /* only what this dialect never runs */
			assert_false(sked__sql_needed(d, (sked_sql)i));
			continue;
		}
		const char *s = sql[i];
		if (has(s, " LIMIT ")) /* the keyword, not queue_limit */
			fail_msg("statement %d says LIMIT: %s", i, s);
		if (has(s, "RETURNING"))
			fail_msg("statement %d says RETURNING: %s", i, s);
		if (has(s, "IF NOT EXISTS") || has(s, "SKIP LOCKED"))
			fail_msg("statement %d is not T-SQL: %s", i, s);
		if (has(s, "strftime") || has(s, "now()") || has(s, "interval"))
			fail_msg("statement %d has a foreign clock: %s", i, s);
		/* {ids}, {rows} and {arg} are filled per call
		 * (sked__sql_fill) */
		for (const char *tl = strchr(s, '{'); tl;
		     tl = strchr(tl + 1, '{'))
			if (strncmp(tl, "{ids}", 5) != 0 &&
			    strncmp(tl, "{rows}", 6) != 0 &&
			    strncmp(tl, "{rows7}", 7) != 0 &&
			    strncmp(tl, "{rows8}", 7) != 0 &&
			    strncmp(tl, "{arg}", 5) != 0)
				fail_msg("statement %d has a template left: %s",
				         i, s);
		/* filter fragments and the list's tail join a head that
		 * names the table */
		int fragment =
		        (i >= SKED_SQL_AND_STATUS && i <= SKED_SQL_LIST_TAIL) ||
		        i == SKED_SQL_LIST_BOTH_TAIL;
		/* the lock-wait watchdog's statements read the server's
		 * own views */
		int session =
		        i == SKED_SQL_BACKEND_ID || i == SKED_SQL_BLOCKERS;
		if (!has(s, "sk_") && i != SKED_SQL_NOW && !fragment &&
		    !session)
			fail_msg("statement %d names no table: %s", i, s);
		markers_numbered(s, i);
	}
	sked__dialect_free_rendered(sql);
}

static void
claims(void **state)
{
	char *sql[SKED_SQL__COUNT] = {0};
	assert_int_equal(sked__dialect_render(d, "sk_", sql, NULL, 0), SKED_OK);
	for (int i = SKED_SQL_CLAIM_ANY; i <= SKED_SQL_CLAIM_Q; i++) {
		const char *s = sql[i];
		assert_true(has(s, "SELECT TOP (?3)"));
		assert_true(has(s, "WITH (UPDLOCK, READPAST, ROWLOCK)"));
		assert_true(has(s, "ORDER BY priority DESC, run_at, id)"));
		assert_true(has(s, "UPDATE c SET status = 1, node_id = ?1"));
		/* the claimed rows come back in the CLAIMED_COLS order */
		assert_true(has(s, "OUTPUT inserted.id, inserted.queue, "
		                   "inserted.kind, inserted.payload, "
		                   "inserted.attempts, inserted.max_attempts, "
		                   "DATEDIFF_BIG(millisecond"));
		/* OUTPUT belongs after SET, and the CTE is what is updated */
		assert_true(strstr(s, "OUTPUT") > strstr(s, " SET "));
		assert_true(has(s, "status IN (0, 4) AND run_at <= "
		                   "SYSUTCDATETIME()"));
	}
	assert_true(has(sql[SKED_SQL_CLAIM_Q], "queue = ?4"));
	assert_false(has(sql[SKED_SQL_CLAIM_ANY], "?4"));
	/* the locked-candidates form is the same hints, for steps */
	assert_true(has(sql[SKED_SQL_LOCK_ANY],
	                "SELECT TOP (?3) id FROM sk_task WITH (UPDLOCK, "
	                "READPAST, ROWLOCK)"));
	sked__dialect_free_rendered(sql);
}

static void
limits_and_inserts(void **state)
{
	char *sql[SKED_SQL__COUNT] = {0};
	assert_int_equal(sked__dialect_render(d, "sk_", sql, NULL, 0), SKED_OK);
	assert_true(has(sql[SKED_SQL_CAND_ANY],
	                "ORDER BY priority DESC, run_at, id OFFSET 0 ROWS "
	                "FETCH NEXT ?3 ROWS ONLY"));
	assert_true(has(sql[SKED_SQL_REAP_SELECT],
	                "ORDER BY lease_until OFFSET 0 ROWS FETCH NEXT 100 "
	                "ROWS ONLY"));
	for (int i = SKED_SQL_ENQ_IN; i <= SKED_SQL_ENQ_AT; i++) {
		const char *s = sql[i];
		const char *out = strstr(s, "OUTPUT inserted.id");
		const char *values = strstr(s, "VALUES");
		assert_non_null(out);
		assert_non_null(values);
		assert_true(out < values);
		assert_true(has(s, "DATEADD(minute, CAST(?5 / 60000 AS INT)"));
	}
	assert_true(has(sql[SKED_SQL_META_CREATE],
	                "IF OBJECT_ID(N'sk_meta', N'U') IS NULL CREATE TABLE"));
	assert_string_equal(d->ret, "");
	assert_true(d->caps & SKED_CAP_READPAST);
	assert_true(d->caps & SKED_CAP_RETURNING);
	assert_false(d->caps & SKED_CAP_SKIP_LOCKED);
	assert_int_equal(d->max_params, 2100);
	assert_true(has(d->session_init, "READ COMMITTED"));
	assert_true(has(d->migrate_lock, "sp_getapplock"));
	assert_true(has(d->migrate_unlock, "sp_releaseapplock"));
	assert_true(d->caps & SKED_CAP_INSERT_ROWS);
	assert_int_equal(d->rows_shared_params, 6);
	assert_true(
	        has(sql[SKED_SQL_ENQ_ROWS_IN], "OUTPUT inserted.id SELECT"));
	assert_true(has(sql[SKED_SQL_ENQ_ROWS_AT], "FROM (VALUES {rows})"));
	sked__dialect_free_rendered(sql);
}

static void
schema_step(void **state)
{
	assert_int_equal(d->schema[0].version, 1);
	char *s = sked__dialect_expand(d, "sk_", d->schema[0].sql);
	assert_non_null(s);
	assert_true(has(s, "IF OBJECT_ID(N'sk_task', N'U') IS NULL CREATE "
	                   "TABLE sk_task"));
	assert_true(has(s, "id BIGINT IDENTITY(1, 1) NOT NULL PRIMARY KEY"));
	assert_true(has(s, "payload NVARCHAR(MAX)"));
	assert_true(has(s, "run_at DATETIME2(3) NOT NULL DEFAULT "
	                   "SYSUTCDATETIME()"));
	assert_true(has(s, "CREATE UNIQUE INDEX sk_task_unique ON sk_task "
	                   "(unique_key)\n\tWHERE unique_key IS NOT NULL;"));
	assert_true(has(s, "CREATE UNIQUE INDEX sk_task_fire ON sk_task "
	                   "(schedule_name, fire_time)"));
	for (const char *t = s; (t = strstr(t, "CREATE ")) != NULL; t++) {
		/* every CREATE is guarded: the line (or the one before)
		 * holds an IF */
		const char *line = t;
		int lines = 0;
		while (line > s && lines < 2) {
			line--;
			if (*line == '\n')
				lines++;
		}
		if (!strstr(line, "IF ") || strstr(line, "IF ") > t)
			fail_msg("unguarded DDL at: %.60s", t);
	}
	assert_false(has(s, "IF NOT EXISTS sk_"));
	assert_false(has(s, "AUTOINCREMENT"));
	free(s);
}

/* The DDL at "at" is guarded when its line or the one before holds an IF
 * (IF OBJECT_ID, IF COL_LENGTH, IF NOT EXISTS (SELECT …)). */
static void
guarded(const char *s, const char *at, int version)
{
	const char *line = at;
	int lines = 0;
	while (line > s && lines < 2) {
		line--;
		if (*line == '\n')
			lines++;
	}
	const char *g = strstr(line, "IF ");
	if (!g || g > at)
		fail_msg("step %d: unguarded DDL at: %.60s", version, at);
}

/* Every step, the later ones too: numbered 1 to SKED_SCHEMA_VERSION with
 * no gap, every CREATE and ALTER guarded so a step can run twice, and
 * what the workflow (7) and node load (8) steps must create. */
static void
all_steps(void **state)
{
	int v = 0;
	int seen_deps = 0, seen_busy = 0;
	for (const struct sked_schema_step *st = d->schema; st->version; st++) {
		assert_int_equal(st->version, ++v);
		char *s = sked__dialect_expand(d, "sk_", st->sql);
		assert_non_null(s);
		for (const char *k = s; (k = strstr(k, "CREATE ")) != NULL; k++)
			guarded(s, k, v);
		for (const char *k = s; (k = strstr(k, "ALTER TABLE ")) != NULL;
		     k++)
			guarded(s, k, v);
		assert_false(has(s, "ADD COLUMN"));
		assert_false(has(s, "IF NOT EXISTS sk_"));
		if (has(s, "CREATE TABLE sk_task_dep")) {
			seen_deps = v;
			assert_true(
			        has(s, "PRIMARY KEY (parent_id, child_id)"));
			assert_true(has(s, "CREATE INDEX sk_task_blocked ON "
			                   "sk_task (queue) WHERE status = 6"));
		}
		if (has(s, "ALTER TABLE sk_node ADD busy INT"))
			seen_busy = v;
		free(s);
	}
	assert_int_equal(v, SKED_SCHEMA_VERSION);
	assert_int_equal(seen_deps, 7);
	assert_int_equal(seen_busy, 8);
}

static void
chunks(void **state)
{
	/* seven markers a row, as a multi-row VALUES with every value
	 * bound would have: 299 rows is the most under 2,100 */
	int per7 = sked__rows_per_stmt(0, 7, 2100);
	assert_int_equal(per7, 299);
	assert_true(per7 * 7 < 2100);
	assert_true((per7 + 1) * 7 >= 2100);
	assert_int_equal(sked__rows_chunks(1, per7), 1);
	assert_int_equal(sked__rows_chunks(299, per7), 1);
	assert_int_equal(sked__rows_chunks(300, per7), 2);
	assert_int_equal(sked__rows_chunks(301, per7), 2);
	assert_int_equal(sked__rows_chunks(5000, per7), 17);
	assert_int_equal(sked__rows_chunks(0, per7), 0);
	/* what enqueue_many binds: six shared markers, one payload a row */
	int per = sked__rows_per_stmt(d->rows_shared_params, 1, d->max_params);
	assert_int_equal(per, 2093);
	assert_true(6 + per < 2100);
	assert_int_equal(sked__rows_chunks(1, per), 1);
	assert_int_equal(sked__rows_chunks(300, per), 1);
	assert_int_equal(sked__rows_chunks(2093, per), 1);
	assert_int_equal(sked__rows_chunks(2094, per), 2);
	assert_int_equal(sked__rows_chunks(5000, per), 3);
	/* nothing fits: no statements rather than a division by zero */
	assert_int_equal(sked__rows_per_stmt(2099, 1, 2100), 0);
	assert_int_equal(sked__rows_per_stmt(0, 0, 2100), 0);
	assert_int_equal(sked__rows_chunks(10, 0), 0);
}

static void
decisions(void **state)
{
	/* SQL_DBMS_VER as Microsoft's ODBC driver reports it */
	static const struct {
		const char *ver;
		int major;
	} v[] = {
	        {"11.00.2100", 11}, /* 2012 */
	        {"12.00.2000", 12}, /* 2014 */
	        {"13.00.1601", 13}, /* 2016 */
	        {"14.00.1000", 14}, /* 2017 */
	        {"15.00.2000", 15}, /* 2019 */
	        {"16.00.1000", 16}, /* 2022 */
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		sked_decision dec;
		sked__decide("Microsoft SQL Server", v[i].ver, &dec);
		assert_int_equal(dec.product, SKED_PROD_SQLSERVER);
		assert_int_equal(dec.major, v[i].major);
		assert_int_equal(dec.strategy, SKED_STRAT_READPAST);
		assert_int_equal(dec.warn, 0);
		char why[256];
		assert_true(sked__strategy_allowed(&dec, SKED_STRAT_OPTIMISTIC,
		                                   why, sizeof why));
		assert_false(sked__strategy_allowed(
		        &dec, SKED_STRAT_SKIP_LOCKED, why, sizeof why));
	}
#ifdef SKED_HAVE_DIALECT_MSSQL
	assert_ptr_equal(sked__dialect_for(SKED_PROD_SQLSERVER), d);
#endif
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(every_statement),
	        cmocka_unit_test(claims),
	        cmocka_unit_test(limits_and_inserts),
	        cmocka_unit_test(schema_step),
	        cmocka_unit_test(all_steps),
	        cmocka_unit_test(chunks),
	        cmocka_unit_test(decisions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
