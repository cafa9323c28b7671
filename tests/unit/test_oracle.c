/*
 * test_oracle.c — the Oracle dialect short of a server.
 *
 * Layer: tests (pure: no database). No Oracle runs where sked is built,
 * so this checks what can be checked without one: every statement
 * renders, numbers its markers and says nothing Oracle rejects on sight
 * (LIMIT, RETURNING without INTO, a SELECT without FROM, another
 * product's clock); no statement that locks rows also limits them (the
 * claim is a cursor FOR UPDATE SKIP LOCKED fetched BULK COLLECT LIMIT n,
 * never ROWNUM or FETCH FIRST beside the lock); {ids} lists are chunked
 * at 1,000 and the typed {rows8t} rows say FROM DUAL; the schema steps
 * are plain DDL the step splitter can cut, in Oracle's types, with names
 * that fit 12.1's 30 bytes; and the decision table picks skip-locked for
 * 12c and later, optimistic before, and the oracle dialect for `sked
 * info`.
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
#include "util/buf.h"
#include "util/sqlsplit.h"

static const sked_dialect *d = &sked__dialect_oracle;

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

static int
count(const char *s, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(s, needle); p;
	     p = strstr(p + strlen(needle), needle))
		n++;
	return n;
}

static void
every_statement(void **state)
{
	(void)state;
	char *sql[SKED_SQL__COUNT] = {0};
	char err[256] = "";
	assert_int_equal(sked__dialect_render(d, "sk_", sql, err, sizeof err),
	                 SKED_OK);
	for (int i = 0; i < SKED_SQL__COUNT; i++) {
		if (!sql[i] || !sked__sql_needed(d, (sked_sql)i)) {
			assert_false(!sql[i] &&
			             sked__sql_needed(d, (sked_sql)i));
			continue;
		}
		const char *s = sql[i];
		if (has(s, " LIMIT ") && !has(s, "BULK COLLECT"))
			fail_msg("statement %d says LIMIT: %s", i, s);
		if (has(s, "RETURNING") && !has(s, "RETURN_RESULT"))
			fail_msg("statement %d says RETURNING: %s", i, s);
		if (has(s, "IF NOT EXISTS") || has(s, "OUTPUT inserted") ||
		    has(s, "TOP ("))
			fail_msg("statement %d is not Oracle's: %s", i, s);
		if (has(s, "strftime") || has(s, "now()") ||
		    has(s, "SYSUTCDATETIME") || has(s, "CURRENT_TIMESTAMP"))
			fail_msg("statement %d has a foreign clock: %s", i, s);
		/* Oracle's SELECT always has a FROM */
		if (strncmp(s, "SELECT", 6) == 0 && !has(s, " FROM "))
			fail_msg("statement %d selects from nothing: %s", i, s);
		/* a derived table is never "AS alias" (T-SQL's VALUES) */
		if (has(s, ") AS v"))
			fail_msg("statement %d aliases a table with AS: %s", i,
			         s);
		for (const char *tl = strchr(s, '{'); tl;
		     tl = strchr(tl + 1, '{'))
			if (strncmp(tl, "{ids}", 5) != 0 &&
			    strncmp(tl, "{rows7t}", 8) != 0 &&
			    strncmp(tl, "{rows8t}", 8) != 0 &&
			    strncmp(tl, "{arg}", 5) != 0)
				fail_msg("statement %d has a template left: %s",
				         i, s);
		/* the untyped rows would be a SELECT without FROM */
		assert_null(strstr(s, "{rows7}"));
		assert_null(strstr(s, "{rows8}"));
		markers_numbered(s, i);
	}
	sked__dialect_free_rendered(sql);
}

/* The trap: ROWNUM or FETCH FIRST in a statement that locks with SKIP
 * LOCKED limits the rows before they are locked. */
static void
no_limit_beside_a_lock(void **state)
{
	(void)state;
	char *sql[SKED_SQL__COUNT] = {0};
	assert_int_equal(sked__dialect_render(d, "sk_", sql, NULL, 0), SKED_OK);
	int locking = 0;
	for (int i = 0; i < SKED_SQL__COUNT; i++) {
		if (!sql[i] || !has(sql[i], "FOR UPDATE"))
			continue;
		locking++;
		if (has(sql[i], "ROWNUM") || has(sql[i], "FETCH FIRST") ||
		    has(sql[i], "FETCH NEXT") || has(sql[i], "OFFSET "))
			fail_msg("statement %d limits the rows it locks: %s", i,
			         sql[i]);
	}
	/* the three claims, the three locking cursors, the limit row */
	assert_true(locking >= 7);
	sked__dialect_free_rendered(sql);
}

static void
claims(void **state)
{
	(void)state;
	char *sql[SKED_SQL__COUNT] = {0};
	assert_int_equal(sked__dialect_render(d, "sk_", sql, NULL, 0), SKED_OK);
	/* one statement claims: the three-step forms are not run */
	assert_true(d->claim_one_statement);
	assert_true(d->caps & SKED_CAP_SKIP_LOCKED);
	assert_false(sked__sql_needed(d, SKED_SQL_LOCK_ANY));
	const sked_sql ids[] = {SKED_SQL_CLAIM_ANY, SKED_SQL_CLAIM_Q,
	                        SKED_SQL_CLAIM_XQ};
	for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++) {
		const char *s = sql[ids[k]];
		assert_true(sked__sql_needed(d, ids[k]));
		assert_true(strncmp(s,
		                    "DECLARE CURSOR c IS SELECT id FROM "
		                    "sk_task WHERE ",
		                    48) == 0);
		/* the cursor locks in claim order, unlimited ... */
		assert_true(has(s, "ORDER BY priority DESC, run_at, id FOR "
		                   "UPDATE SKIP LOCKED;"));
		/* ... and is fetched n rows, each locked as it is fetched */
		assert_true(has(s, "OPEN c; FETCH c BULK COLLECT INTO ids "
		                   "LIMIT ?3; CLOSE c;"));
		assert_int_equal(count(s, "FETCH "), 1);
		assert_true(has(s, "FORALL i IN 1 .. ids.COUNT UPDATE sk_task "
		                   "SET status = 1, node_id = ?1"));
		/* still due when it is updated */
		assert_true(has(s, "WHERE id = ids(i) AND status IN (0, 4) AND "
		                   "run_at <= SYS_EXTRACT_UTC(SYSTIMESTAMP);"));
		/* the rows this claim set, as the statement's rows, in the
		 * CLAIMED_COLS order */
		assert_true(has(s,
		                "OPEN r FOR SELECT id, queue, kind, payload, "
		                "attempts, max_attempts, (EXTRACT(DAY FROM "
		                "(started_at"));
		/* ... ending with the task's own timeout (schema 10), which
		 * the worker enforces; it was once left out here, and a task's
		 * --timeout was ignored on Oracle */
		assert_true(has(s, "open_parents, traceparent, timeout_ms FROM "
		                   "sk_task WHERE id IN"));
		assert_true(has(s, "TABLE(ids)) AND node_id = ?1 AND status = "
		                   "1; DBMS_SQL.RETURN_RESULT(r); END;"));
		assert_true(has(s, "status IN (0, 4) AND run_at <= "
		                   "SYS_EXTRACT_UTC(SYSTIMESTAMP)"));
		assert_true(has(s, "(?5 IS NULL OR INSTR(?5, ',' || kind || "
		                   "',') > 0)"));
	}
	assert_true(has(sql[SKED_SQL_CLAIM_Q], "queue = ?4"));
	assert_false(has(sql[SKED_SQL_CLAIM_ANY], "?4"));
	assert_true(has(sql[SKED_SQL_CLAIM_XQ],
	                "queue NOT IN (SELECT queue FROM sk_queue_limit)"));
	/* the optimistic override: candidates limited (nothing locked), one
	 * conditional update each */
	assert_true(has(sql[SKED_SQL_CAND_ANY], "ORDER BY priority DESC, "
	                                        "run_at, id FETCH FIRST ?3 "
	                                        "ROWS ONLY"));
	assert_true(has(sql[SKED_SQL_OPT_CLAIM], "WHERE id = ?3 AND version = "
	                                         "?4"));
	sked__dialect_free_rendered(sql);
}

static void
times_and_ids(void **state)
{
	(void)state;
	char *sql[SKED_SQL__COUNT] = {0};
	assert_int_equal(sked__dialect_render(d, "sk_", sql, NULL, 0), SKED_OK);
	assert_string_equal(
	        sql[SKED_SQL_NOW],
	        "SELECT (EXTRACT(DAY FROM (SYS_EXTRACT_UTC(SYSTIMESTAMP) - "
	        "TIMESTAMP '1970-01-01 00:00:00')) * 86400000 + EXTRACT(HOUR "
	        "FROM (SYS_EXTRACT_UTC(SYSTIMESTAMP) - TIMESTAMP '1970-01-01 "
	        "00:00:00')) * 3600000 + EXTRACT(MINUTE FROM "
	        "(SYS_EXTRACT_UTC(SYSTIMESTAMP) - TIMESTAMP '1970-01-01 "
	        "00:00:00')) * 60000 + FLOOR(EXTRACT(SECOND FROM "
	        "(SYS_EXTRACT_UTC(SYSTIMESTAMP) - TIMESTAMP '1970-01-01 "
	        "00:00:00')) * 1000)) FROM DUAL");
	assert_true(has(sql[SKED_SQL_ENQ_AT],
	                "(TIMESTAMP '1970-01-01 00:00:00' + "
	                "NUMTODSINTERVAL(?5 / 1000, 'SECOND'))"));
	assert_true(has(sql[SKED_SQL_ENQ_IN],
	                "(SYS_EXTRACT_UTC(SYSTIMESTAMP) + "
	                "NUMTODSINTERVAL(?5 / 1000, 'SECOND'))"));
	/* the new task's id: the sequence its DEFAULT draws from */
	assert_false(has(sql[SKED_SQL_ENQ_IN], "RETURNING"));
	assert_string_equal(d->last_id,
	                    "SELECT sked_task_id_seq.CURRVAL FROM DUAL");
	/* minutes are whole: '/' is exact division on NUMBER */
	assert_true(has(sql[SKED_SQL_RUNS_WINDOW], "GROUP BY TRUNC(f / "
	                                           "60000), o"));
	assert_true(has(sql[SKED_SQL_DONE_WINDOW], "GROUP BY TRUNC(f / "
	                                           "60000), o"));
	/* META_CREATE may run on every start: only "exists" is swallowed */
	assert_true(has(sql[SKED_SQL_META_CREATE], "IF SQLCODE <> -955 THEN "
	                                           "RAISE;"));
	sked__dialect_free_rendered(sql);
}

static void
chunks(void **state)
{
	(void)state;
	/* ORA-01795: at most 1,000 expressions in a list. Every {ids}
	 * caller chunks by max_params (less what it binds besides) or by a
	 * batch of 500 */
	assert_int_equal(d->max_params, 1000);
	char *sql[SKED_SQL__COUNT] = {0};
	assert_int_equal(sked__dialect_render(d, "sk_", sql, NULL, 0), SKED_OK);
	/* done.c's chunk: max_params - 1 ids from ?1 */
	sked_buf b = {0};
	sked__sql_fill(&b, sql[SKED_SQL_DONE_COPY], 1, d->max_params - 1);
	assert_false(b.oom);
	const char *in = strstr(b.p, "IN (?1,");
	assert_non_null(in);
	const char *end = strchr(in, ')');
	int n = 1;
	for (const char *p = in; p < end; p++)
		n += *p == ',';
	assert_int_equal(n, 999);
	assert_true(n <= 1000);
	assert_non_null(strstr(b.p, ",?999)"));
	sked__buf_free(&b);
	/* the typed rows of an ended task's attempt: one type per column,
	 * FROM DUAL after each row, and the numbering runs on */
	sked__sql_fill(&b, sql[SKED_SQL_DONE_COPY_RUN], 1, 2);
	assert_false(b.oom);
	assert_non_null(strstr(
	        b.p, "FROM (SELECT CAST(?1 AS NUMBER(19)) AS c1, CAST(?2 AS "
	             "NUMBER(19)) AS c2, CAST(?3 AS NUMBER(19)) AS c3, "
	             "CAST(?4 AS VARCHAR2(32)) AS c4, CAST(?5 AS NUMBER(19)) "
	             "AS c5, TO_CLOB(?6) AS c6, TO_CLOB(?7) AS c7, TO_CLOB(?8) "
	             "AS c8 FROM DUAL UNION ALL SELECT CAST(?9 AS NUMBER(19)), "
	             "CAST(?10 AS NUMBER(19)), CAST(?11 AS NUMBER(19)), "
	             "CAST(?12 AS VARCHAR2(32)), CAST(?13 AS NUMBER(19)), "
	             "TO_CLOB(?14), TO_CLOB(?15), TO_CLOB(?16) FROM DUAL) v"));
	/* outcome.c's rows8 chunk stays under the limit too: 125 rows */
	assert_true(d->max_params / 8 * 8 <= 1000);
	sked__buf_free(&b);
	sked__dialect_free_rendered(sql);
}

/* The name after "CREATE TABLE|INDEX|SEQUENCE " at p, its length. */
static size_t
name_len(const char *p)
{
	size_t n = 0;
	while (p[n] && p[n] != ' ' && p[n] != '(' && p[n] != '\n')
		n++;
	return n;
}

/* Blank out "-- …" comments (sked's own texts hold no "--" in quotes). */
static void
uncomment(char *s)
{
	for (char *c = strstr(s, "--"); c; c = strstr(c, "--"))
		while (*c && *c != '\n')
			*c++ = ' ';
}

static void
schema_steps(void **state)
{
	(void)state;
	int steps = 0, last = 0;
	for (const sked_schema_step *st = d->schema; st->version; st++) {
		assert_int_equal(st->version, last + 1);
		last = st->version;
		steps++;
		char *s = sked__dialect_expand(d, "sked_", st->sql);
		assert_non_null(s);
		uncomment(s);
		if (has(s, "IF NOT EXISTS") || has(s, "NVARCHAR") ||
		    has(s, "DATETIME") || has(s, "IDENTITY(") ||
		    has(s, "SERIAL") || has(s, "AUTO_INCREMENT") ||
		    has(s, " TEXT") || has(s, "BIGINT"))
			fail_msg("step %d is not Oracle's: %s", st->version, s);
		/* DEFAULT comes before NOT NULL; '' is NULL, so no text
		 * column defaults to it */
		if (has(s, "NOT NULL DEFAULT") || has(s, "DEFAULT ''"))
			fail_msg("step %d: %s", st->version, s);
		if (has(s, "payload CLOB NOT NULL"))
			fail_msg("step %d: an empty payload is NULL",
			         st->version);
		/* each statement is plain SQL the splitter may cut at ';' */
		const char *at = s, *b, *e;
		int stmts = 0;
		while (sked__sql_next(&at, &b, &e)) {
			stmts++;
			char *one = strndup(b, (size_t)(e - b));
			assert_non_null(one);
			if (has(one, "BEGIN") || has(one, "DECLARE"))
				fail_msg("step %d has PL/SQL: %s", st->version,
				         one);
			/* 12.1 names: 30 bytes, with the default prefix */
			static const char *const kw[] = {
			        "CREATE TABLE ", "CREATE INDEX ",
			        "CREATE UNIQUE INDEX ", "CREATE SEQUENCE "};
			for (size_t k = 0; k < 4; k++) {
				const char *p = strstr(one, kw[k]);
				if (p && name_len(p + strlen(kw[k])) > 30)
					fail_msg("step %d: a name longer than "
					         "30 bytes: %s",
					         st->version, one);
			}
			free(one);
		}
		assert_true(stmts > 0);
		free(s);
	}
	/* as many steps as the other dialects */
	int others = 0;
	for (const sked_schema_step *st = sked__schema_sqlserver; st->version;
	     st++)
		others++;
	assert_int_equal(steps, others);
	/* the first step: ids from the shared sequence, times in UTC */
	char *s1 = sked__dialect_expand(d, "sked_", d->schema[0].sql);
	assert_true(has(s1, "CREATE SEQUENCE sked_task_id_seq"));
	assert_true(has(s1, "id NUMBER(19) DEFAULT sked_task_id_seq.NEXTVAL "
	                    "NOT NULL PRIMARY KEY"));
	assert_true(has(s1, "run_at TIMESTAMP(3) DEFAULT "
	                    "SYS_EXTRACT_UTC(SYSTIMESTAMP) NOT NULL"));
	assert_true(has(s1, "CREATE UNIQUE INDEX sked_task_unique ON "
	                    "sked_task (unique_key)"));
	free(s1);
	/* a step run again: these mean "already done" */
	assert_int_equal(d->ddl_exists_error, 955);
	assert_int_equal(d->ddl_exists_error2, 1430);
	assert_false(d->ddl_in_tx);
}

static void
decisions(void **state)
{
	(void)state;
	/* SQL_DBMS_NAME / SQL_DBMS_VER as an Oracle ODBC driver may report
	 * them, and the banner's "Release" */
	static const struct {
		const char *product, *ver;
		int major;
		sked_strategy s;
	} v[] = {
	        {"Oracle", "12.01.0020", 12, SKED_STRAT_SKIP_LOCKED},
	        {"Oracle",
	         "Oracle Database 12c Enterprise Edition Release 12.2.0.1.0 "
	         "- 64bit Production",
	         12, SKED_STRAT_SKIP_LOCKED},
	        {"Oracle",
	         "Oracle Database 19c Enterprise Edition Release 19.0.0.0.0 "
	         "- Production Version 19.3.0.0.0",
	         19, SKED_STRAT_SKIP_LOCKED},
	        {"Oracle",
	         "Oracle Database 23ai Free Release 23.0.0.0.0 - Develop, "
	         "Version 23.4.0.24.05",
	         23, SKED_STRAT_SKIP_LOCKED},
	        {"Oracle",
	         "Oracle Database 11g Enterprise Edition Release 11.2.0.4.0 "
	         "- 64bit Production",
	         11, SKED_STRAT_OPTIMISTIC},
	        {"Oracle", "10.02.0050", 10, SKED_STRAT_OPTIMISTIC},
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		sked_decision dec;
		char why[256];
		sked__decide(v[i].product, v[i].ver, &dec);
		assert_int_equal(dec.product, SKED_PROD_ORACLE);
		assert_int_equal(dec.major, v[i].major);
		assert_int_equal(dec.strategy, v[i].s);
		assert_int_equal(dec.warn, 0);
		assert_string_equal(sked__strategy_name(dec.strategy),
		                    v[i].s == SKED_STRAT_SKIP_LOCKED
		                            ? "skip-locked"
		                            : "optimistic");
		/* optimistic is always an allowed override; readpast never */
		assert_true(sked__strategy_allowed(&dec, SKED_STRAT_OPTIMISTIC,
		                                   why, sizeof why));
		assert_false(sked__strategy_allowed(&dec, SKED_STRAT_READPAST,
		                                    why, sizeof why));
		assert_int_equal(sked__strategy_allowed(&dec,
		                                        SKED_STRAT_SKIP_LOCKED,
		                                        why, sizeof why),
		                 v[i].s == SKED_STRAT_SKIP_LOCKED);
#ifdef SKED_HAVE_DIALECT_ORACLE
		/* what `sked info` prints as the dialect (sked_get_info
		 * copies the chosen dialect's name) */
		const sked_dialect *od = sked__dialect_for(dec.product);
		assert_ptr_equal(od, d);
		assert_string_equal(od->name, "oracle");
#endif
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(every_statement),
	        cmocka_unit_test(no_limit_beside_a_lock),
	        cmocka_unit_test(claims),
	        cmocka_unit_test(times_and_ids),
	        cmocka_unit_test(chunks),
	        cmocka_unit_test(schema_steps),
	        cmocka_unit_test(decisions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
