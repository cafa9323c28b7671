/*
 * test_refused.c — a value the database refuses never holds back a batch
 * of outcomes (sked__finish, sked__finish_claim; lease.h).
 *
 * The worker cleans what handlers say before it records it
 * (util/text.h), so these tests hand the model values it was never meant
 * to see: invalid UTF-8, which PostgreSQL and MariaDB refuse, and retry
 * delays past any engine's time range. The batch must be recorded, the
 * refused outcome alone as a failed attempt with SKED_REFUSED_ERROR.
 * Runs on SQLite always, and on PostgreSQL and MariaDB when their test
 * servers are given (SKED_TEST_PG_URL, SKED_TEST_MY_URL).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "handle/internal.h"
#include "model/lease.h"
#include "sked.h"
#include "sqlite_fixture.h"

static sked *
open_db(const char *which)
{
	static char sqlite_url[512];
	const char *url = NULL;
	if (strcmp(which, "sqlite") == 0) {
		fixture_url("refused", sqlite_url, sizeof sqlite_url);
		url = sqlite_url;
	} else {
		url = getenv(strcmp(which, "pg") == 0 ? "SKED_TEST_PG_URL"
		                                      : "SKED_TEST_MY_URL");
		if (!url || !*url) {
			fprintf(stderr, "SKIP: no %s server given\n", which);
			return NULL;
		}
	}
	char prefix[32];
	snprintf(prefix, sizeof prefix, "tref%d_%ld_", (int)getpid(),
	         random() % 100000);
	sked_options o = {.prefix = prefix, .migrate = 1};
	sked *h = NULL;
	if (sked_open(url, &o, &h) != SKED_OK)
		fail_msg("sked_open(%s): %s", which, sked_errmsg(h));
	return h;
}

static void
drop(sked *h)
{
	static const char *const t[] = {"run",  "task",       "task_done",
	                                "node", "schedule",   "lock",
	                                "meta", "queue_limit"};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		char sql[128];
		snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS %s%s",
		         h->prefix, t[i]);
		sked__ignore(sked__qdyn(h, sql, NULL, 0, NULL));
	}
	sked_close(h);
}

static int64_t
count(sked *h, const char *tmpl, int64_t id)
{
	char *sql = sked__dialect_expand(h->dialect, h->prefix, tmpl);
	sked_val p = SKED_INTV(id);
	sked_res r = {0};
	assert_int_equal(sked__qdyn(h, sql, &p, 1, &r), SKED_OK);
	int64_t n = sked__res_int(&r, 0, 0);
	sked__res_clear(&r);
	free(sql);
	return n;
}

enum { N = 6 };

/* Enqueue n tasks on queue q and claim them all for node n1. */
static void
claim_all(sked *h, const char *q, int n, int64_t *ids)
{
	const char *pl[N] = {"0", "1", "2", "3", "4", "5"};
	sked_enqueue_opts eo = {.queue = q, .max_attempts = 3};
	assert_int_equal(
	        sked_enqueue_many(h, "k", (size_t)n, pl, NULL, &eo, ids),
	        SKED_OK);
	sked_claim_req req = {
	        .node_id = "n1", .queue = q, .limit = n, .lease_ms = 60000};
	sked_claimed *c = NULL;
	int got = 0;
	assert_int_equal(sked__claim(h, &req, &c, &got), SKED_OK);
	assert_int_equal(got, n);
	sked__claimed_free(c, got);
}

static void
outcomes(sked_outcome *o, const int64_t *ids, int n)
{
	for (int i = 0; i < n; i++)
		o[i] = (sked_outcome){.id = ids[i],
		                      .attempt = 1,
		                      .max_attempts = 3,
		                      .started_ms = 1700000000000LL,
		                      .what = SKED_FIN_OK,
		                      .exit_code = 0,
		                      .output = "fine"};
	/* a program that printed \xff; a failure whose error is cut in
	 * the middle of a character; a failure asking for a retry in
	 * INT64_MAX ms (pipe: "retry_in_ms": 9223372036854775807) */
	o[1].output = "bad \xff\n";
	o[3].what = SKED_FIN_FAIL;
	o[3].exit_code = 1;
	o[3].error = "caf\xc3";
	o[3].retry_delay_ms = 60000; /* not claimed again at once */
	o[4].what = SKED_FIN_FAIL;
	o[4].exit_code = 1;
	o[4].error = "later";
	o[4].retry_delay_ms = INT64_MAX;
}

/* What each task ended as: succeeded, or waiting to retry. An engine
 * may take a poisoned value (SQLite keeps any bytes; MariaDB takes some
 * invalid sequences, replacing them): then that outcome is recorded as
 * the handler gave it. refuses: the engine refuses every one of them. */
static void
check(sked *h, const int64_t *ids, const sked_outcome *o, int n, int refuses)
{
	for (int i = 0; i < n; i++) {
		assert_true(o[i].recorded);
		assert_true(o[i].applied);
		sked_task *t = NULL;
		assert_int_equal(sked_task_get(h, ids[i], &t), SKED_OK);
		int refused = t->last_error &&
		              strcmp(t->last_error, SKED_REFUSED_ERROR) == 0;
		if (i != 1 && i != 3)
			assert_false(refused);
		if (refuses && (i == 1 || i == 3))
			assert_true(refused);
		int failed = i == 3 || i == 4 || refused;
		assert_int_equal(t->status, failed ? 4 : 2);
		if (i == 4) {
			/* the delay is bounded: due within 366 days */
			assert_string_equal(t->last_error, "later");
			int64_t now = 0;
			assert_int_equal(sked__now(h, &now), SKED_OK);
			assert_true(t->run_at_ms > now);
			assert_true(t->run_at_ms <=
			            now + SKED_RETRY_DELAY_MAX_MS + 60000);
		}
		sked_tasks_free(t, 1);
		/* one run row per attempt, whatever became of its values */
		assert_int_equal(
		        count(h,
		              "SELECT COUNT(*) FROM (SELECT task_id, "
		              "attempt FROM {p}run UNION ALL SELECT id, "
		              "attempts FROM {p}task_done WHERE outcome "
		              "IS NOT NULL) r WHERE "
		              "task_id = ?1 AND attempt = 1",
		              ids[i]),
		        1);
	}
}

static void
finish_batch(const char *which)
{
	sked *h = open_db(which);
	if (!h)
		skip();
	assert_int_equal(sked__node_register(h, "n1", 60000, N), SKED_OK);
	int64_t ids[N];
	claim_all(h, "q1", N, ids);
	sked_outcome o[N];
	outcomes(o, ids, N);
	int rc = sked__finish(h, "n1", o, N);
	if (rc != SKED_OK)
		fail_msg("%s: sked__finish: %s", which, sked_errmsg(h));
	check(h, ids, o, N, strcmp(which, "pg") == 0);
	drop(h);
}

/* The same through the fused finish and claim: the claim still comes
 * back, and the batch is recorded. */
static void
finish_claim_batch(const char *which)
{
	sked *h = open_db(which);
	if (!h)
		skip();
	assert_int_equal(sked__node_register(h, "n1", 60000, N), SKED_OK);
	int64_t ids[N], more[2];
	claim_all(h, "q2", N, ids);
	const char *pl[2] = {"a", "b"};
	sked_enqueue_opts eo = {.queue = "q2", .max_attempts = 3};
	assert_int_equal(sked_enqueue_many(h, "k", 2, pl, NULL, &eo, more),
	                 SKED_OK);
	sked_outcome o[N];
	outcomes(o, ids, N);
	sked_claim_req req = {
	        .node_id = "n1", .queue = "q2", .limit = 2, .lease_ms = 60000};
	sked_claimed *c = NULL;
	int got = 0;
	int rc = sked__finish_claim(h, "n1", o, N, &req, &c, &got);
	if (rc != SKED_OK)
		fail_msg("%s: sked__finish_claim: %s", which, sked_errmsg(h));
	assert_int_equal(got, 2);
	sked__claimed_free(c, got);
	check(h, ids, o, N, strcmp(which, "pg") == 0);
	drop(h);
}

static void
sqlite_finish(void **s)
{
	(void)s;
	finish_batch("sqlite");
}
static void
sqlite_finish_claim(void **s)
{
	(void)s;
	finish_claim_batch("sqlite");
}
static void
pg_finish(void **s)
{
	(void)s;
	finish_batch("pg");
}
static void
pg_finish_claim(void **s)
{
	(void)s;
	finish_claim_batch("pg");
}
static void
mariadb_finish(void **s)
{
	(void)s;
	finish_batch("mariadb");
}
static void
mariadb_finish_claim(void **s)
{
	(void)s;
	finish_claim_batch("mariadb");
}

int
main(void)
{
	srandom((unsigned)getpid());
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(sqlite_finish),
	        cmocka_unit_test(sqlite_finish_claim),
	        cmocka_unit_test(pg_finish),
	        cmocka_unit_test(pg_finish_claim),
	        cmocka_unit_test(mariadb_finish),
	        cmocka_unit_test(mariadb_finish_claim),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
