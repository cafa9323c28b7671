/*
 * test_lock_wait.c — the lock-wait watchdog's statements, rendered.
 *
 * Layer: tests (pure: no database). The watchdog (worker/waits.c) asks a
 * server for its id of a connection and for who blocks that connection.
 * PostgreSQL and MariaDB run these statements in t_lock_wait; MySQL 8's
 * performance-schema form and SQL Server's form have no server where
 * sked is tested, so this test is what checks them: each dialect that
 * claims SKED_CAP_WAIT_HOLDER renders both statements, from the views its
 * product has, with the waiting connection as the one parameter and the
 * five columns the watchdog reads; SQLite claims nothing and has none.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dialect/dialect.h"
#include "sked.h"

/* the rendered statement id of d, for prefix "p_" (freed by the caller
 * with sked__dialect_free_rendered) */
static void
render(const sked_dialect *d, char *sql[SKED_SQL__COUNT])
{
	char err[256] = "";
	if (sked__dialect_render(d, "p_", sql, err, sizeof err) != SKED_OK)
		fail_msg("%s: render failed: %s", d->name, err);
}

/* The SELECT list of s has n top-level columns. */
static int
columns(const char *s)
{
	const char *from = strstr(s, " FROM ");
	int depth = 0, n = 1;
	assert_non_null(from);
	for (const char *c = s + 7; c < from; c++) {
		depth += *c == '(';
		depth -= *c == ')';
		n += *c == ',' && depth == 0;
	}
	return n;
}

static void
holder_statements(const sked_dialect *d, sked_sql id, const char *view,
                  const char *backend)
{
	char *sql[SKED_SQL__COUNT];
	render(d, sql);
	assert_true(sked__sql_needed(d, SKED_SQL_BACKEND_ID));
	assert_true(sked__sql_needed(d, id));
	assert_non_null(sql[SKED_SQL_BACKEND_ID]);
	assert_non_null(strstr(sql[SKED_SQL_BACKEND_ID], backend));
	assert_non_null(sql[id]);
	assert_non_null(strstr(sql[id], view));
	/* the waiting connection is the one parameter, read once */
	assert_non_null(strstr(sql[id], "?1"));
	assert_null(strstr(sql[id], "?2"));
	assert_null(strchr(sql[id], '{'));
	assert_int_equal(columns(sql[id]), 5);
	sked__dialect_free_rendered(sql);
}

static void
postgresql_asks_pg_blocking_pids(void **state)
{
	(void)state;
	holder_statements(&sked__dialect_postgresql, SKED_SQL_BLOCKERS,
	                  "pg_blocking_pids", "pg_backend_pid()");
	assert_true(
	        sked__sql_needed(&sked__dialect_postgresql, SKED_SQL_APP_NAME));
	assert_false(sked__sql_needed(&sked__dialect_postgresql,
	                              SKED_SQL_BLOCKERS_PS));
}

static void
mysql_asks_innodb_and_the_performance_schema(void **state)
{
	(void)state;
	/* MariaDB */
	holder_statements(&sked__dialect_mysql, SKED_SQL_BLOCKERS,
	                  "information_schema.INNODB_LOCK_WAITS",
	                  "CONNECTION_ID()");
	/* MySQL 8 */
	holder_statements(&sked__dialect_mysql, SKED_SQL_BLOCKERS_PS,
	                  "performance_schema.data_lock_waits",
	                  "CONNECTION_ID()");
	assert_false(sked__sql_needed(&sked__dialect_mysql, SKED_SQL_APP_NAME));
}

static void
sqlserver_asks_dm_exec_requests(void **state)
{
	(void)state;
	holder_statements(&sked__dialect_sqlserver, SKED_SQL_BLOCKERS,
	                  "sys.dm_exec_requests", "@@SPID");
	char *sql[SKED_SQL__COUNT];
	render(&sked__dialect_sqlserver, sql);
	/* the holder is the session the waiting request names */
	assert_non_null(strstr(sql[SKED_SQL_BLOCKERS],
	                       "s.session_id = r.blocking_session_id"));
	assert_non_null(strstr(sql[SKED_SQL_BLOCKERS], "r.session_id = ?1"));
	sked__dialect_free_rendered(sql);
}

static void
sqlite_names_no_holder(void **state)
{
	(void)state;
	assert_false(
	        sked__sql_needed(&sked__dialect_sqlite, SKED_SQL_BACKEND_ID));
	assert_false(
	        sked__sql_needed(&sked__dialect_sqlite, SKED_SQL_BLOCKERS));
	assert_false(
	        sked__sql_needed(&sked__dialect_sqlite, SKED_SQL_APP_NAME));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(postgresql_asks_pg_blocking_pids),
	        cmocka_unit_test(mysql_asks_innodb_and_the_performance_schema),
	        cmocka_unit_test(sqlserver_asks_dm_exec_requests),
	        cmocka_unit_test(sqlite_names_no_holder),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
