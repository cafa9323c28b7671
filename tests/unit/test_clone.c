/*
 * test_clone.c — the worker's extra connections are clones of its first
 * (sked__clone, handle.c), not new opens.
 *
 * Layer: tests (a real SQLite database file, sqlite_fixture.h). A worker
 * opens up to five connections (heartbeat, finisher, lanes, pruner) from
 * the one it was given. Each used to run the whole open path again:
 * reading the server's version and deciding, rendering every statement,
 * reading the schema version. A clone takes all of that from the first
 * handle, even what was changed on it after its open (which an open
 * would have found again), and runs no statement on the database while
 * it is made (SQLite has no session setup): with a fault armed for the
 * next statement the clone is made, and the fault is still there for
 * its first statement, where an open fails on it. The clone is a
 * connection of its own that works, and a handle sked did not open
 * itself is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "db/db.h"
#include "handle/internal.h"
#include "model/schema.h"
#include "sqlite_fixture.h"

static void
a_clone_takes_what_the_first_open_found(void **state)
{
	(void)state;
	char url[512];
	fixture_url("clone", url, sizeof url);
	sked *h = fixture_open(url, NULL);
	/* changed after the open: a new open would find them again */
	snprintf(h->product, sizeof h->product, "%s", "not detected");
	free(h->sql[SKED_SQL_NOW]);
	h->sql[SKED_SQL_NOW] = strdup("SELECT 4242");
	h->schema_version = 4242;
	sked__worker_session(h, "node-a");

	sked *c = NULL;
	assert_int_equal(sked__clone(h, &c), SKED_OK);
	assert_string_equal(c->product, "not detected");
	assert_string_equal(c->version, h->version);
	assert_ptr_equal(c->dialect, h->dialect);
	assert_ptr_equal(c->strategy, h->strategy);
	assert_int_equal(c->schema_version, 4242);
	assert_string_equal(c->prefix, h->prefix);
	assert_string_equal(c->app_name, "node-a");
	for (int i = 0; i < SKED_SQL__COUNT; i++) {
		if (!h->sql[i]) {
			assert_null(c->sql[i]);
			continue;
		}
		/* its own copy (each handle frees its own) */
		assert_ptr_not_equal(c->sql[i], h->sql[i]);
		assert_string_equal(c->sql[i], h->sql[i]);
	}
	assert_string_equal(c->sql[SKED_SQL_NOW], "SELECT 4242");
	/* a connection of its own, that works */
	assert_ptr_not_equal(c->db, h->db);
	int v = 0;
	assert_int_equal(sked__schema_version(c, &v), SKED_OK);
	assert_int_equal(v, SKED_SCHEMA_VERSION);
	sked_close(c);
	sked_close(h);
}

static void
a_clone_runs_no_statement(void **state)
{
	(void)state;
	char url[512];
	fixture_url("clone", url, sizeof url);
	sked *h = fixture_open(url, NULL);

	/* an open runs statements: the armed fault fails it */
	sked__db_fault_after(1, SKED_DBE_OTHER);
	sked *o = NULL;
	assert_int_not_equal(sked_open(url, NULL, &o), SKED_OK);
	sked_close(o);

	/* a clone runs none: the fault is still armed for its first */
	sked__db_fault_after(1, SKED_DBE_OTHER);
	sked *c = NULL;
	assert_int_equal(sked__clone(h, &c), SKED_OK);
	int v = 0;
	assert_int_not_equal(sked__schema_version(c, &v), SKED_OK);
	sked__db_fault_after(0, SKED_DBE_NONE);
	assert_int_equal(sked__schema_version(c, &v), SKED_OK);
	sked_close(c);
	sked_close(h);
}

static void
only_a_handle_sked_opened_is_cloned(void **state)
{
	(void)state;
	char url[512];
	fixture_url("clone", url, sizeof url);
	sked *h = fixture_open(url, NULL);
	h->borrowed = 1; /* as sked_open_borrowed marks it */
	sked *c = NULL;
	assert_int_equal(sked__clone(h, &c), SKED_EINVAL);
	assert_non_null(c);
	assert_non_null(strstr(sked_errmsg(c), "cloned"));
	sked_close(c);
	h->borrowed = 0;
	sked_close(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(a_clone_takes_what_the_first_open_found),
	        cmocka_unit_test(a_clone_runs_no_statement),
	        cmocka_unit_test(only_a_handle_sked_opened_is_cloned),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
