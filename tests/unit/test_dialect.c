/*
 * test_dialect.c — the statement registry, rendered for every dialect.
 *
 * Layer: tests (pure: no database). Every statement of every dialect
 * (sqlite, postgresql, mysql, sqlserver, oracle) is rendered for a prefix; the
 * test fails on a token left in the SQL (other than the per-call ones
 * sked__sql_fill fills), on a statement a dialect's capability flags or
 * claim shape need but that has no text, and on a renderer that lets an
 * unknown token through; SQLite's batch lists are padded only where the
 * padding matches nothing, and never past ?999.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dialect/detect.h"
#include "dialect/dialect.h"
#include "sked.h"
#include "util/buf.h"

static const sked_dialect *const dialects[] = {
        &sked__dialect_sqlite, &sked__dialect_postgresql,
        &sked__dialect_mysql,  &sked__dialect_sqlserver,
        &sked__dialect_oracle, &sked__dialect_mariadb,
};
#define NDIALECTS (sizeof dialects / sizeof dialects[0])

/* a fragment joins a head that names the table */
static int
fragment(int id)
{
	return (id >= SKED_SQL_AND_STATUS && id <= SKED_SQL_LIST_TAIL) ||
	       id == SKED_SQL_LIST_BOTH_TAIL;
}

/* a statement about the session itself, from the server's own views:
 * no table of sked's (the lock-wait watchdog's) */
static int
about_the_session(int id)
{
	return id == SKED_SQL_BACKEND_ID || id == SKED_SQL_BLOCKERS ||
	       id == SKED_SQL_BLOCKERS_PS || id == SKED_SQL_APP_NAME ||
	       id == SKED_SQL_GENERIC_PLANS;
}

/* Fail on any '{' that does not open a per-call token. */
static void
no_token_left(const char *dname, int id, const char *s)
{
	for (const char *t = strchr(s, '{'); t; t = strchr(t + 1, '{'))
		if (strncmp(t, "{arg}", 5) != 0 &&
		    strncmp(t, "{ids}", 5) != 0 &&
		    strncmp(t, "{rows}", 6) != 0 &&
		    strncmp(t, "{rows7}", 7) != 0 &&
		    strncmp(t, "{rows8}", 7) != 0 &&
		    strncmp(t, "{rows7t}", 8) != 0 &&
		    strncmp(t, "{rows8t}", 8) != 0)
			fail_msg("%s statement %d has a token left at '%.20s': "
			         "%s",
			         dname, id, t, s);
}

static void
every_statement_of_every_dialect(void **state)
{
	(void)state;
	for (size_t k = 0; k < NDIALECTS; k++) {
		const sked_dialect *d = dialects[k];
		char *sql[SKED_SQL__COUNT];
		char err[256] = "";
		int rc = sked__dialect_render(d, "pfx_", sql, err, sizeof err);
		if (rc != SKED_OK)
			fail_msg("%s: render failed: %s", d->name, err);
		for (int i = 0; i < SKED_SQL__COUNT; i++) {
			if (!sql[i]) {
				if (sked__sql_needed(d, (sked_sql)i))
					fail_msg(
					        "%s has no text for statement "
					        "%d, which its capabilities or "
					        "claim shape need",
					        d->name, i);
				assert_null(sked__sql_text(d, (sked_sql)i));
				continue;
			}
			no_token_left(d->name, i, sql[i]);
			if (i != SKED_SQL_NOW && !fragment(i) &&
			    !about_the_session(i) && !strstr(sql[i], "pfx_"))
				fail_msg("%s statement %d names no table: %s",
				         d->name, i, sql[i]);
		}
		sked__dialect_free_rendered(sql);
		/* the other templates a dialect carries */
		const char *more[] = {d->migrate_lock, d->migrate_unlock,
		                      d->listen, d->notify};
		for (size_t j = 0; j < sizeof more / sizeof more[0]; j++) {
			if (!more[j])
				continue;
			char *s = sked__dialect_expand(d, "pfx_", more[j]);
			assert_non_null(s);
			assert_null(strchr(s, '{'));
			free(s);
		}
		for (const sked_schema_step *st = d->schema; st && st->version;
		     st++) {
			char *s = sked__dialect_expand(d, "pfx_", st->sql);
			if (!s)
				fail_msg("%s schema step %d does not render",
				         d->name, st->version);
			assert_null(strchr(s, '{'));
			free(s);
		}
	}
}

/* What each capability promises, statement by statement. */
static void
capabilities_name_their_statements(void **state)
{
	(void)state;
	assert_true(sked__sql_needed(&sked__dialect_postgresql,
	                             SKED_SQL_FINISH_ARRAYS));
	assert_true(sked__sql_needed(&sked__dialect_postgresql,
	                             SKED_SQL_ENQ_ARRAYS));
	assert_false(sked__sql_needed(&sked__dialect_sqlite,
	                              SKED_SQL_FINISH_ARRAYS));
	assert_true(sked__sql_needed(&sked__dialect_sqlserver,
	                             SKED_SQL_ENQ_ROWS_IN));
	assert_false(
	        sked__sql_needed(&sked__dialect_mysql, SKED_SQL_ENQ_ROWS_AT));
	/* MySQL claims in three steps, the others in one statement */
	assert_true(sked__sql_needed(&sked__dialect_mysql, SKED_SQL_IDS_GET));
	assert_false(sked__sql_needed(&sked__dialect_mysql, SKED_SQL_CLAIM_Q));
	assert_true(sked__sql_needed(&sked__dialect_sqlite, SKED_SQL_CLAIM_Q));
	assert_false(sked__sql_needed(&sked__dialect_sqlite, SKED_SQL_IDS_GET));
	/* generic statements are everyone's */
	for (size_t k = 0; k < NDIALECTS; k++)
		assert_true(sked__sql_needed(dialects[k], SKED_SQL_LOCK_TAKE));
}

/* MariaDB 10.5 and later get the variant with INSERT … RETURNING; MySQL,
 * older MariaDB and a version not understood keep the shared dialect,
 * none of whose needed statements says RETURNING (MySQL cannot parse
 * it); both read the claimed rows while they lock. */
static void
mariadb_variant_by_version(void **state)
{
	(void)state;
	assert_ptr_equal(sked__dialect_for_version(SKED_PROD_MARIADB, 10, 11),
	                 &sked__dialect_mariadb);
	assert_ptr_equal(sked__dialect_for_version(SKED_PROD_MARIADB, 11, 4),
	                 &sked__dialect_mariadb);
	assert_ptr_equal(sked__dialect_for_version(SKED_PROD_MARIADB, 10, 4),
	                 &sked__dialect_mysql);
	assert_ptr_equal(sked__dialect_for_version(SKED_PROD_MARIADB, 0, 0),
	                 &sked__dialect_mysql);
	assert_ptr_equal(sked__dialect_for_version(SKED_PROD_MYSQL, 11, 0),
	                 &sked__dialect_mysql);
	assert_ptr_equal(sked__dialect_for_version(SKED_PROD_POSTGRESQL, 16, 0),
	                 &sked__dialect_postgresql);
	assert_true(sked__sql_needed(&sked__dialect_mariadb,
	                             SKED_SQL_DONE_COPY_RUN_RET));
	assert_false(sked__sql_needed(&sked__dialect_mysql,
	                              SKED_SQL_DONE_COPY_RUN_RET));
	for (int id = 0; id < SKED_SQL__COUNT; id++) {
		const char *t = sked__sql_text(&sked__dialect_mysql, id);
		if (!t || !sked__sql_needed(&sked__dialect_mysql, id) ||
		    id == SKED_SQL_DONE_DROP_RET) /* SKED_CAP_RETURNING's */
			continue;
		if (strstr(t, "RETURNING"))
			fail_msg("mysql statement %d says RETURNING: %s", id,
			         t);
	}
	assert_non_null(strstr(sked__sql_text(&sked__dialect_mariadb,
	                                      SKED_SQL_DONE_COPY_RUN_RET),
	                       "RETURNING id, status, dependents"));
	assert_true(sked__dialect_mysql.caps & SKED_CAP_LOCK_READS);
	assert_non_null(
	        strstr(sked__sql_text(&sked__dialect_mysql, SKED_SQL_LOCK_Q),
	               "attempts + 1"));
}

static void
unknown_tokens_are_refused(void **state)
{
	(void)state;
	static const char *bad[] = {
	        "SELECT {bogus} FROM {p}task",
	        "SELECT id FROM {p}task WHERE run_at <= {now",
	        "SELECT id FROM {p}task ORDER BY id{lim:{nope}}",
	        "SELECT {ms:{x}} FROM {p}task",
	        "SELECT {P} FROM {p}task",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *over[SKED_SQL__COUNT] = {0};
		over[SKED_SQL_TASK_GET] = bad[i];
		sked_dialect d = sked__dialect_sqlite;
		d.sql = over;
		char *sql[SKED_SQL__COUNT];
		char err[256] = "";
		assert_int_equal(
		        sked__dialect_render(&d, "pfx_", sql, err, sizeof err),
		        SKED_EINVAL);
		/* nothing is left allocated, and the message says what */
		for (int k = 0; k < SKED_SQL__COUNT; k++)
			assert_null(sql[k]);
		if (!strstr(err, "sqlite") || !strchr(err, '{'))
			fail_msg("unclear message for '%s': %s", bad[i], err);
		assert_null(sked__dialect_expand(&d, "pfx_", bad[i]));
	}
	/* what is known renders */
	char *s = sked__dialect_expand(&sked__dialect_sqlite, "pfx_",
	                               "SELECT {ms:c} FROM {p}t{lim:{arg}}");
	assert_non_null(s);
	assert_string_equal(s, "SELECT c FROM pfx_t LIMIT {arg}");
	free(s);
}

static void
per_call_tokens(void **state)
{
	(void)state;
	sked_buf b = {0};
	sked__sql_fill(&b, "UPDATE t SET x = 1 WHERE id IN ({ids})", 3, 3);
	assert_string_equal(b.p, "UPDATE t SET x = 1 WHERE id IN (?3,?4,?5)");
	sked__buf_free(&b);
	sked__sql_fill(&b, "VALUES {rows} AS v", 6, 2);
	assert_string_equal(b.p, "VALUES (?6, 0), (?7, 1) AS v");
	sked__buf_free(&b);
	sked__sql_fill(&b, "FROM ({rows7}) v", 2, 2);
	assert_string_equal(b.p, "FROM (SELECT ?2 AS c1, ?3 AS c2, ?4 AS c3, "
	                         "?5 AS c4, ?6 AS c5, ?7 AS c6, ?8 AS c7 "
	                         "UNION ALL SELECT ?9, ?10, ?11, ?12, ?13, "
	                         "?14, ?15) v");
	sked__buf_free(&b);
	sked__sql_fill(&b, "FROM ({rows8}) v", 1, 2);
	assert_string_equal(b.p, "FROM (SELECT ?1 AS c1, ?2 AS c2, ?3 AS c3, "
	                         "?4 AS c4, ?5 AS c5, ?6 AS c6, ?7 AS c7, ?8 "
	                         "AS c8 UNION ALL SELECT ?9, ?10, ?11, ?12, "
	                         "?13, ?14, ?15, ?16) v");
	sked__buf_free(&b);
	sked__sql_fill(&b, "SELECT 1 WHERE 1 = 1", 0, 0);
	sked__sql_fill(&b, " AND q = {arg}", 2, 1);
	assert_string_equal(b.p, "SELECT 1 WHERE 1 = 1 AND q = ?2");
	sked__buf_free(&b);
	/* a time fragment on SQL Server uses its marker twice */
	char *sql[SKED_SQL__COUNT];
	assert_int_equal(sked__dialect_render(&sked__dialect_sqlserver, "p_",
	                                      sql, NULL, 0),
	                 SKED_OK);
	sked__sql_fill(&b, sql[SKED_SQL_AND_CREATED_FROM], 4, 1);
	assert_non_null(strstr(b.p, "CAST(?4 % 60000 AS INT)"));
	assert_non_null(strstr(b.p, "CAST(?4 / 60000 AS INT)"));
	assert_null(strchr(b.p, '{'));
	sked__buf_free(&b);
	sked__sql_fill(&b, sql[SKED_SQL_LIST_TAIL], 9, 1);
	assert_string_equal(b.p, " ORDER BY id DESC OFFSET 0 ROWS FETCH "
	                         "NEXT ?9 ROWS ONLY");
	sked__buf_free(&b);
	sked__dialect_free_rendered(sql);
	/* a statement a dialect lacks cannot be filled */
	sked__sql_fill(&b, NULL, 1, 1);
	assert_true(b.oom);
	sked__buf_free(&b);
}

/* count occurrences of needle in s */
static int occurs(const char *s, const char *needle);

/* Native SQLite reads an unbound marker as NULL, so its batch lists are
 * padded to a few sizes (one prepared text per size, not per batch):
 * only where padding matches nothing (a positive IN, rows joined to the
 * task table), never past ?999, and an insert of the rows themselves is
 * never padded. */
static void
padded_batch_lists(void **state)
{
	(void)state;
	char *sql[SKED_SQL__COUNT];
	assert_int_equal(
	        sked__dialect_render(&sked__dialect_sqlite, "p_", sql, NULL, 0),
	        SKED_OK);
	char *run_rows = strdup(sql[SKED_SQL_RUN_ROWS]);
	/* a list the padding would change the meaning of stays as it is */
	free(sql[SKED_SQL_DONE_DROP]);
	sql[SKED_SQL_DONE_DROP] =
	        strdup("DELETE FROM p_task WHERE id NOT IN ({ids})");
	assert_int_equal(sked__dialect_pad(sql), SKED_OK);
	assert_non_null(strstr(sql[SKED_SQL_DONE_DROP_RET], " IN ({ids+}) "));
	assert_non_null(strstr(sql[SKED_SQL_DONE_COPY], " IN ({ids+}) "));
	assert_non_null(
	        strstr(sql[SKED_SQL_DONE_COPY_RUN], "FROM ({rows8+}) v JOIN "));
	assert_string_equal(sql[SKED_SQL_DONE_DROP],
	                    "DELETE FROM p_task WHERE id NOT IN ({ids})");
	assert_string_equal(sql[SKED_SQL_RUN_ROWS], run_rows);
	free(run_rows);

	sked_buf b = {0};
	/* 5 ids take 6 markers, the sixth unbound (NULL) */
	sked__sql_fill(&b, "IN ({ids+})", 1, 5);
	assert_string_equal(b.p, "IN (?1,?2,?3,?4,?5,?6)");
	sked__buf_free(&b);
	sked__sql_fill(&b, "IN ({ids+})", 1, 1);
	assert_string_equal(b.p, "IN (?1)");
	sked__buf_free(&b);
	/* batches of 17 to 24 share one text */
	sked_buf c = {0};
	sked__sql_fill(&b, sql[SKED_SQL_DONE_DROP_RET], 1, 17);
	sked__sql_fill(&c, sql[SKED_SQL_DONE_DROP_RET], 1, 24);
	assert_string_equal(b.p, c.p);
	assert_non_null(strstr(b.p, ",?24)"));
	assert_null(strstr(b.p, "?25"));
	sked__buf_free(&b);
	sked__buf_free(&c);
	/* rows: 5 take 6, the sixth all NULL, joined to no task */
	sked__sql_fill(&b, sql[SKED_SQL_DONE_COPY_RUN], 1, 5);
	assert_int_equal(occurs(b.p, " UNION ALL SELECT "), 5);
	assert_non_null(strstr(b.p, "?48) v JOIN p_task t"));
	assert_null(strstr(b.p, "?49"));
	sked__buf_free(&b);
	/* never past ?999: 124 rows of 8 fill ?1 … ?992, no more */
	sked__sql_fill(&b, sql[SKED_SQL_DONE_COPY_RUN], 1, 124);
	assert_non_null(strstr(b.p, "?992) v JOIN"));
	sked__buf_free(&b);
	sked__sql_fill(&b, "IN ({ids+})", 1, 990);
	assert_non_null(strstr(b.p, ",?999)"));
	sked__buf_free(&b);
	sked__dialect_free_rendered(sql);
}

static int
occurs(const char *s, const char *needle)
{
	int n = 0;
	for (const char *t = strstr(s, needle); t;
	     t = strstr(t + strlen(needle), needle))
		n++;
	return n;
}

/* Ended tasks live in {p}task_done (schema 4): the statements that read
 * a task read both tables, retention deletes from task_done only, a
 * retry's copy back keeps the id, SQL Server's wraps it in
 * IDENTITY_INSERT and switches that off on every path. */
static void
ended_tasks_across_the_move(void **state)
{
	(void)state;
	for (size_t k = 0; k < NDIALECTS; k++) {
		const sked_dialect *d = dialects[k];
		char *sql[SKED_SQL__COUNT];
		char err[256] = "";
		assert_int_equal(
		        sked__dialect_render(d, "p_", sql, err, sizeof err),
		        SKED_OK);
		const sked_sql both[] = {SKED_SQL_TASK_GET,
		                         SKED_SQL_TASK_STATUS,
		                         SKED_SQL_UNIQUE_GET};
		for (size_t i = 0; i < sizeof both / sizeof both[0]; i++) {
			assert_non_null(strstr(sql[both[i]], "FROM p_task "));
			assert_non_null(
			        strstr(sql[both[i]], "FROM p_task_done "));
		}
		/* stats counts ended tasks per queue and status, which
		 * task_done's (queue, status) index holds (schema 5) */
		assert_int_equal(occurs(sql[SKED_SQL_STATS],
		                        "FROM p_task_done GROUP BY queue, "
		                        "status"),
		                 1);
		assert_non_null(
		        strstr(sql[SKED_SQL_PRUNE_PICK], "FROM p_task_done "));
		assert_non_null(strstr(sql[SKED_SQL_PRUNE_TASKS],
		                       "DELETE FROM p_task_done "));
		/* the hot table is read only for a parent's children, by
		 * key, when it has dependents (schema 7), never deleted from */
		assert_null(strstr(sql[SKED_SQL_PRUNE_TASKS],
		                   "DELETE FROM p_task "));
		assert_non_null(strstr(sql[SKED_SQL_PRUNE_TASKS],
		                       "dependents = 0 OR NOT EXISTS"));
		const char *back = sql[SKED_SQL_RETRY_BACK];
		assert_non_null(strstr(back, "INSERT INTO p_task (id, "));
		assert_non_null(strstr(back, "SELECT id, "));
		assert_non_null(strstr(back, "FROM p_task_done WHERE id IN "
		                             "({ids})"));
		if (strcmp(d->name, "sqlserver") == 0) {
			assert_int_equal(occurs(back, "SET IDENTITY_INSERT "
			                              "p_task ON"),
			                 1);
			/* off after the insert, and in the CATCH before
			 * THROW passes the error on */
			assert_int_equal(occurs(back, "SET IDENTITY_INSERT "
			                              "p_task OFF"),
			                 2);
			assert_true(strstr(back,
			                   "BEGIN CATCH SET IDENTITY_INSERT "
			                   "p_task OFF; THROW;") != NULL);
			const char *end =
			        back + strlen(back) -
			        strlen("SET IDENTITY_INSERT p_task OFF");
			assert_string_equal(end,
			                    "SET IDENTITY_INSERT p_task OFF");
		} else
			assert_null(strstr(back, "IDENTITY_INSERT"));
		/* a list of both tables: the head, filters, the middle, the
		 * same filters on the same markers, the tail */
		sked_buf b = {0};
		sked__sql_fill(&b, sql[SKED_SQL_LIST_BOTH_HEAD], 0, 0);
		sked__sql_fill(&b, sql[SKED_SQL_AND_QUEUE], 1, 1);
		sked__sql_fill(&b, sql[SKED_SQL_LIST_BOTH_MID], 2, 1);
		sked__sql_fill(&b, sql[SKED_SQL_AND_QUEUE], 1, 1);
		sked__sql_fill(&b, sql[SKED_SQL_LIST_BOTH_TAIL], 2, 1);
		assert_false(b.oom);
		assert_null(strchr(b.p, '{'));
		assert_int_equal(occurs(b.p, "queue = ?1"), 2);
		assert_int_equal(occurs(b.p, "?2"), 3);
		assert_non_null(strstr(b.p, " UNION ALL "));
		assert_non_null(strstr(b.p, "FROM p_task WHERE"));
		assert_non_null(strstr(b.p, "FROM p_task_done WHERE"));
		free(b.p);
		sked__dialect_free_rendered(sql);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(every_statement_of_every_dialect),
	        cmocka_unit_test(capabilities_name_their_statements),
	        cmocka_unit_test(mariadb_variant_by_version),
	        cmocka_unit_test(unknown_tokens_are_refused),
	        cmocka_unit_test(per_call_tokens),
	        cmocka_unit_test(ended_tasks_across_the_move),
	        cmocka_unit_test(padded_batch_lists),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
