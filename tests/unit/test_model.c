/*
 * test_model.c — the task model on real SQLite files.
 *
 * What a user relies on, checked below the command line: a batch enqueue
 * is all or nothing (the third insert is made to fail through the driver
 * seam's fault injection); two handles never claim the same task; a
 * finish by a node that lost its lease is recorded as late, not applied;
 * an expired lease is taken back and its attempt recorded; renewal lists
 * only what the node still holds; unique keys return the existing task;
 * the one claim entry picks the limited claim for a limited queue and
 * records the outcomes handed with it; a graph (sked_enqueue_graph) is
 * all or nothing whichever statement fails, and refuses a bad shape; a
 * task's workflow (sked_task_graph_get) is read a layer at a time, not a
 * task at a time, and a bound counts what it leaves out; SQLite's clock
 * expression gives its milliseconds exactly.
 * Both SQLite claim strategies run every test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "sqlite_fixture.h"

#include "db/driver/driver.h"
#include "handle/internal.h"
#include "model/lease.h"
#include "model/take.h"

static const char *strategy = "sqlite";

static char *
tmp_url(void)
{
	static char url[512];
	fixture_url("model", url, sizeof url);
	return url;
}

static sked *
open_db(const char *url)
{
	return fixture_open(url, strategy);
}

static int64_t
count(sked *h, const char *sql_tmpl)
{
	char *sql = sked__dialect_expand(h->dialect, h->prefix, sql_tmpl);
	sked_res r = {0};
	assert_int_equal(sked__qdyn(h, sql, NULL, 0, &r), SKED_OK);
	int64_t n = sked__res_int(&r, 0, 0);
	sked__res_clear(&r);
	free(sql);
	return n;
}

static void
enqueue_many_is_atomic(void **state)
{
	sked *h = open_db(tmp_url());
	const char *p[5] = {"a", "b", "c", "d", "e"};
	int64_t ids[5];
	/* statements: BEGIN, insert, insert, insert <- fails */
	sked__db_fault_after(4, SKED_DBE_OTHER);
	int rc = sked_enqueue_many(h, "k", 5, p, NULL, NULL, ids);
	sked__db_fault_after(0, SKED_DBE_NONE);
	assert_int_not_equal(rc, SKED_OK);
	assert_int_equal(count(h, "SELECT COUNT(*) FROM {p}task"), 0);
	/* and without the fault all five land, in order */
	assert_int_equal(sked_enqueue_many(h, "k", 5, p, NULL, NULL, ids),
	                 SKED_OK);
	assert_int_equal(count(h, "SELECT COUNT(*) FROM {p}task"), 5);
	for (int i = 1; i < 5; i++)
		assert_true(ids[i] > ids[i - 1]);
	sked_close(h);
}

static void
claims_never_overlap(void **state)
{
	const char *url = tmp_url();
	sked *a = open_db(url), *b = open_db(url);
	const char *p[50];
	int64_t ids[50];
	for (int i = 0; i < 50; i++)
		p[i] = "x";
	assert_int_equal(sked_enqueue_many(a, "k", 50, p, NULL, NULL, ids),
	                 SKED_OK);
	int seen[51] = {0};
	int total = 0;
	for (int round = 0; round < 10; round++) {
		sked *h = round % 2 ? b : a;
		sked_claim_req req = {.node_id = round % 2 ? "nb" : "na",
		                      .limit = 7,
		                      .lease_ms = 30000};
		sked_claimed *c = NULL;
		int n = 0;
		assert_int_equal(sked__claim(h, &req, &c, &n), SKED_OK);
		assert_true(n <= 7);
		for (int i = 0; i < n; i++) {
			assert_true(c[i].id >= 1 && c[i].id <= 50);
			seen[c[i].id]++;
			assert_int_equal(c[i].attempt, 1);
		}
		total += n;
		sked__claimed_free(c, n);
	}
	assert_int_equal(total, 50);
	for (int i = 1; i <= 50; i++)
		assert_int_equal(seen[i], 1);
	sked_close(a);
	sked_close(b);
}

static void
late_finish_is_recorded_not_applied(void **state)
{
	sked *h = open_db(tmp_url());
	int64_t id;
	assert_int_equal(sked_enqueue(h, "k", "p", 1, NULL, &id, NULL),
	                 SKED_OK);
	sked_claim_req req = {.node_id = "n1", .limit = 1, .lease_ms = 30000};
	sked_claimed *c = NULL;
	int n = 0;
	assert_int_equal(sked__claim(h, &req, &c, &n), SKED_OK);
	assert_int_equal(n, 1);
	/* the lease runs out (made so with SQL) and n2 takes the task back */
	char *sql = sked__dialect_expand(
	        h->dialect, h->prefix,
	        "UPDATE {p}task SET lease_until = {nowms} - 1000");
	assert_int_equal(sked__qdyn(h, sql, NULL, 0, NULL), SKED_OK);
	free(sql);
	int taken = 0;
	assert_int_equal(sked__reap(h, &taken), SKED_OK);
	assert_int_equal(taken, 1);
	req.node_id = "n2";
	sked_claimed *c2 = NULL;
	int n2 = 0;
	assert_int_equal(sked__claim(h, &req, &c2, &n2), SKED_OK);
	assert_int_equal(n2, 1);
	assert_int_equal(c2[0].attempt, 2);
	/* n1 finishes late: recorded, not applied */
	sked_outcome o = {.id = id,
	                  .attempt = 1,
	                  .max_attempts = 5,
	                  .started_ms = c[0].started_ms,
	                  .what = SKED_FIN_OK,
	                  .exit_code = 0};
	assert_int_equal(sked__finish(h, "n1", &o, 1), SKED_OK);
	assert_int_equal(o.applied, 0);
	sked_task *t = NULL;
	assert_int_equal(sked_task_get(h, id, &t), SKED_OK);
	assert_int_equal(t->status, SKED_RUNNING);
	assert_string_equal(t->node_id, "n2");
	sked_tasks_free(t, 1);
	/* n2 finishes: applied */
	o.attempt = 2;
	assert_int_equal(sked__finish(h, "n2", &o, 1), SKED_OK);
	assert_int_equal(o.applied, 1);
	assert_int_equal(sked_task_get(h, id, &t), SKED_OK);
	assert_int_equal(t->status, SKED_SUCCEEDED);
	sked_tasks_free(t, 1);
	sked_run *runs = NULL;
	size_t nr = 0;
	assert_int_equal(sked_runs_get(h, id, &runs, &nr), SKED_OK);
	assert_int_equal(nr, 3);
	assert_string_equal(runs[0].outcome, "lease-expired");
	assert_string_equal(runs[1].outcome, "late");
	assert_string_equal(runs[2].outcome, "succeeded");
	sked_runs_free(runs, nr);
	sked__claimed_free(c, n);
	sked__claimed_free(c2, n2);
	sked_close(h);
}

static void
failures_retry_then_die(void **state)
{
	sked *h = open_db(tmp_url());
	int64_t id;
	sked_enqueue_opts eo = {.max_attempts = 2};
	assert_int_equal(sked_enqueue(h, "k", NULL, 0, &eo, &id, NULL),
	                 SKED_OK);
	for (int attempt = 1; attempt <= 2; attempt++) {
		sked_claim_req req = {
		        .node_id = "n", .limit = 5, .lease_ms = 30000};
		sked_claimed *c = NULL;
		int n = 0;
		assert_int_equal(sked__claim(h, &req, &c, &n), SKED_OK);
		assert_int_equal(n, 1);
		assert_int_equal(c[0].attempt, attempt);
		sked_outcome o = {.id = id,
		                  .attempt = attempt,
		                  .max_attempts = 2,
		                  .started_ms = c[0].started_ms,
		                  .what = SKED_FIN_FAIL,
		                  .retry_delay_ms = 0,
		                  .exit_code = 3,
		                  .error = "exit status 3"};
		assert_int_equal(sked__finish(h, "n", &o, 1), SKED_OK);
		assert_int_equal(o.applied, 1);
		assert_int_equal(o.dead, attempt == 2);
		sked__claimed_free(c, n);
	}
	sked_task *t = NULL;
	assert_int_equal(sked_task_get(h, id, &t), SKED_OK);
	assert_int_equal(t->status, SKED_DEAD);
	assert_string_equal(t->last_error, "exit status 3");
	sked_tasks_free(t, 1);
	/* retry gives it one more attempt */
	assert_int_equal(sked_retry(h, id), SKED_OK);
	assert_int_equal(sked_task_get(h, id, &t), SKED_OK);
	assert_int_equal(t->status, SKED_PENDING);
	assert_int_equal(t->max_attempts, 3);
	sked_tasks_free(t, 1);
	sked_close(h);
}

static void
renew_lists_what_is_held(void **state)
{
	sked *h = open_db(tmp_url());
	const char *p[3] = {"a", "b", "c"};
	int64_t ids[3];
	assert_int_equal(sked_enqueue_many(h, "k", 3, p, NULL, NULL, ids),
	                 SKED_OK);
	sked_claim_req req = {.node_id = "n", .limit = 3, .lease_ms = 5000};
	sked_claimed *c = NULL;
	int n = 0;
	assert_int_equal(sked__claim(h, &req, &c, &n), SKED_OK);
	assert_int_equal(n, 3);
	/* a user cancels one of them while it runs */
	assert_int_equal(sked_cancel(h, ids[1]), SKED_OK);
	int64_t *held = NULL;
	int *att = NULL;
	int nh = 0;
	assert_int_equal(sked__renew(h, "n", 60000, &held, &att, &nh), SKED_OK);
	assert_int_equal(nh, 2);
	for (int i = 0; i < nh; i++)
		assert_true(held[i] == ids[0] || held[i] == ids[2]);
	/* the renewal moved the lease to about now + 60 s */
	assert_true(count(h, "SELECT MIN(lease_until) - {nowms} FROM "
	                     "{p}task WHERE status = 1") > 50000);
	/* a cancelled task cannot be cancelled again */
	assert_int_equal(sked_cancel(h, ids[1]), SKED_ESTATE);
	free(held);
	free(att);
	/* a renewal the database turns away as busy or deadlocked is tried
	 * again, as claims and finishes are, instead of failing the round */
	unsigned long before = h->retries;
	sked__db_fault_after(1, SKED_DBE_RETRY);
	assert_int_equal(sked__renew(h, "n", 60000, &held, &att, &nh), SKED_OK);
	sked__db_fault_after(0, SKED_DBE_NONE);
	assert_int_equal(nh, 2);
	assert_int_equal(h->retries, before + 1);
	free(held);
	free(att);
	sked__claimed_free(c, n);
	sked_close(h);
}

static void
unique_key_returns_existing(void **state)
{
	sked *h = open_db(tmp_url());
	sked_enqueue_opts eo = {.unique_key = "once"};
	int64_t a, b;
	int dup = -1;
	assert_int_equal(sked_enqueue(h, "k", "1", 1, &eo, &a, &dup), SKED_OK);
	assert_int_equal(dup, 0);
	assert_int_equal(sked_enqueue(h, "k", "2", 1, &eo, &b, &dup), SKED_OK);
	assert_int_equal(dup, 1);
	assert_true(a == b);
	assert_int_equal(count(h, "SELECT COUNT(*) FROM {p}task"), 1);
	sked_close(h);
}

static void
bad_input_is_refused_before_sql(void **state)
{
	sked *h = open_db(tmp_url());
	int64_t id;
	assert_int_equal(sked_enqueue(h, "bad kind", "", 0, NULL, &id, NULL),
	                 SKED_EINVAL);
	assert_non_null(strstr(sked_errmsg(h), "kind"));
	sked_enqueue_opts eo = {.queue = "q;DROP"};
	assert_int_equal(sked_enqueue(h, "k", "", 0, &eo, &id, NULL),
	                 SKED_EINVAL);
	char *big = malloc(SKED_MAX_PAYLOAD + 1);
	memset(big, 'x', SKED_MAX_PAYLOAD + 1);
	assert_int_equal(sked_enqueue(h, "k", big, SKED_MAX_PAYLOAD + 1, NULL,
	                              &id, NULL),
	                 SKED_ETOOBIG);
	free(big);
	/* a zero byte: refused on every product (PostgreSQL's text would cut
	 * the payload there), one at a time and in a batch */
	assert_int_equal(sked_enqueue(h, "k", "ab\0cd", 5, NULL, &id, NULL),
	                 SKED_EINVAL);
	assert_non_null(strstr(sked_errmsg(h), "zero byte at offset 2"));
	const char *pz[2] = {"fine", "ab\0cd"};
	size_t lz[2] = {4, 5};
	int64_t ids[2];
	assert_int_equal(sked_enqueue_many(h, "k", 2, pz, lz, NULL, ids),
	                 SKED_EINVAL);
	assert_int_equal(count(h, "SELECT COUNT(*) FROM {p}task"), 0);
	sked_close(h);
	/* a strategy SQLite cannot run is refused at open */
	sked_options o = {.strategy = "readpast", .migrate = 1};
	sked *x = NULL;
	assert_int_equal(sked_open(tmp_url(), &o, &x), SKED_ESTRATEGY);
	assert_non_null(strstr(sked_errmsg(x), "readpast"));
	sked_close(x);
	/* a file under a regular file cannot be opened */
	assert_int_equal(sked_open("sqlite:/etc/hostname/x.db", NULL, &x),
	                 SKED_EUNAVAILABLE);
	sked_close(x);
}

/* Enqueue two tasks of kind "k" (payloads p, ids into ids) and claim
 * both as node "n"; the claimed rows are returned. */
static sked_claimed *
two_claimed(sked *h, const char *const p[2], int max_attempts, int64_t ids[2])
{
	sked_enqueue_opts eo = {.max_attempts = max_attempts};
	assert_int_equal(sked_enqueue_many(h, "k", 2, p, NULL, &eo, ids),
	                 SKED_OK);
	sked_claim_req req = {.node_id = "n", .limit = 2, .lease_ms = 5000};
	sked_claimed *c = NULL;
	int n = 0;
	assert_int_equal(sked__claim(h, &req, &c, &n), SKED_OK);
	assert_int_equal(n, 2);
	return c;
}

/* Giving back at a shutdown: a started attempt keeps its number (its run
 * row is "released") and gets one more try in its budget; an attempt that
 * never reached a handler goes back with its number and no run row, so a
 * run row's (task, attempt) always names one attempt. */
static void
give_back_started_and_unstarted(void **state)
{
	(void)state;
	sked *h = open_db(tmp_url());
	const char *const p[2] = {"started", "unstarted"};
	int64_t ids[2];
	sked_claimed *c = two_claimed(h, p, 3, ids);
	sked_claim_req req = {.node_id = "n", .limit = 2, .lease_ms = 5000};
	int n = 2;
	sked_outcome o[2];
	memset(o, 0, sizeof o);
	for (int i = 0; i < 2; i++) {
		int k = c[i].id == ids[0] ? 0 : 1;
		o[k].id = c[i].id;
		o[k].attempt = c[i].attempt;
		o[k].max_attempts = c[i].max_attempts;
		o[k].started_ms = c[i].started_ms;
		o[k].exit_code = -1;
	}
	o[0].what = SKED_FIN_RELEASE;
	o[1].what = SKED_FIN_UNSTARTED;
	assert_int_equal(sked__finish(h, "n", o, 2), SKED_OK);
	assert_true(o[0].applied && o[1].applied);
	sked_task *t = NULL;
	assert_int_equal(sked_task_get(h, ids[0], &t), SKED_OK);
	assert_int_equal(t->status, 0);
	assert_int_equal(t->attempts, 1);
	assert_int_equal(t->max_attempts, 4);
	sked_tasks_free(t, 1);
	assert_int_equal(sked_task_get(h, ids[1], &t), SKED_OK);
	assert_int_equal(t->status, 0);
	assert_int_equal(t->attempts, 0);
	assert_int_equal(t->max_attempts, 3);
	sked_tasks_free(t, 1);
	char q[160];
	snprintf(q, sizeof q,
	         "SELECT COUNT(*) FROM {p}run WHERE task_id = %lld AND "
	         "outcome = 'released' AND attempt = 1 AND exit_code IS NULL",
	         (long long)ids[0]);
	assert_int_equal(count(h, q), 1);
	snprintf(q, sizeof q,
	         "SELECT COUNT(*) FROM {p}run WHERE task_id = %lld",
	         (long long)ids[1]);
	assert_int_equal(count(h, q), 0);
	/* the next claim of the released task is its attempt 2 */
	sked__claimed_free(c, n);
	assert_int_equal(sked__claim(h, &req, &c, &n), SKED_OK);
	assert_int_equal(n, 2);
	for (int i = 0; i < n; i++)
		assert_int_equal(c[i].attempt, c[i].id == ids[0] ? 2 : 1);
	sked__claimed_free(c, n);
	sked_close(h);
}

/* Claims and ends `n` tasks of "k" at once, as a worker with a prefetch
 * of hundreds does. */
static void
claim_and_end(sked *h, int n)
{
	sked_claim_req req = {.node_id = "n", .limit = n, .lease_ms = 5000};
	sked_claimed *c = NULL;
	int got = 0;
	assert_int_equal(sked__claim(h, &req, &c, &got), SKED_OK);
	assert_int_equal(got, n);
	sked_outcome *o = calloc((size_t)n, sizeof *o);
	assert_non_null(o);
	for (int i = 0; i < n; i++) {
		o[i].id = c[i].id;
		o[i].attempt = c[i].attempt;
		o[i].max_attempts = c[i].max_attempts;
		o[i].started_ms = c[i].started_ms;
		o[i].what = SKED_FIN_OK;
	}
	assert_int_equal(sked__finish(h, "n", o, n), SKED_OK);
	for (int i = 0; i < n; i++)
		assert_true(o[i].applied);
	free(o);
	sked__claimed_free(c, n);
}

/* A batch's statements stay prepared on SQLite, the largest too (the
 * copy of 124 ended rows, about 150 kB prepared): a second batch of the
 * same size prepares nothing. When the driver kept no program over
 * 128 kB, every batch prepared that copy again, and SQLite's parser
 * spends time quadratic in its markers (docs/performance.md). */
static void
batch_statements_stay_prepared(void **state)
{
	(void)state;
	sked *h = open_db(tmp_url());
	enum { BATCH = 248 };
	const char *p[3 * BATCH];
	for (int i = 0; i < 3 * BATCH; i++)
		p[i] = "{}";
	int64_t ids[3 * BATCH];
	if (sked_enqueue_many(h, "k", 3 * BATCH, p, NULL, NULL, ids) != SKED_OK)
		fail_msg("enqueue: %s", sked_errmsg(h));
	claim_and_end(h, BATCH);
	claim_and_end(h, BATCH);
	long long before = sked__sqlite_text_prepares();
	claim_and_end(h, BATCH);
	assert_int_equal(sked__sqlite_text_prepares() - before, 0);
	assert_int_equal(count(h, "SELECT COUNT(*) FROM {p}task_done"),
	                 3 * BATCH);
	sked_close(h);
}

/* Two attempts of one task in one batch (the first lost its lease and
 * the same node claimed the task again): the later ends the task, the
 * first is recorded as late, and the rest of the batch applies. */
static void
two_attempts_in_one_batch(void **state)
{
	(void)state;
	sked *h = open_db(tmp_url());
	const char *const p[2] = {"a", "b"};
	int64_t ids[2];
	sked__claimed_free(two_claimed(h, p, 2, ids), 2);
	char q[160];
	snprintf(q, sizeof q, "UPDATE {p}task SET attempts = 2 WHERE id = %lld",
	         (long long)ids[0]);
	char *sql = sked__dialect_expand(h->dialect, h->prefix, q);
	assert_int_equal(sked__qdyn(h, sql, NULL, 0, NULL), SKED_OK);
	free(sql);
	sked_outcome o[3];
	memset(o, 0, sizeof o);
	int64_t who[3] = {ids[0], ids[0], ids[1]};
	int att[3] = {2, 1, 1};
	for (int i = 0; i < 3; i++) {
		o[i].id = who[i];
		o[i].attempt = att[i];
		o[i].max_attempts = 2;
		o[i].what = SKED_FIN_OK;
		o[i].started_ms = 1700000000123LL;
	}
	if (sked__finish(h, "n", o, 3) != SKED_OK)
		fail_msg("finish: %s", sked_errmsg(h));
	assert_true(o[0].applied && !o[1].applied && o[2].applied);
	for (int k = 0; k < 2; k++) {
		sked_task *t = NULL;
		assert_int_equal(sked_task_get(h, ids[k], &t), SKED_OK);
		assert_int_equal(t->status, 2);
		assert_int_equal(t->attempts, k == 0 ? 2 : 1);
		sked_tasks_free(t, 1);
	}
	snprintf(q, sizeof q,
	         "SELECT COUNT(*) FROM {p}run WHERE task_id = %lld AND "
	         "attempt = 1 AND outcome = 'late'",
	         (long long)ids[0]);
	assert_int_equal(count(h, q), 1);
	sked_close(h);
}

/* The one claim entry (sked__take, model/take.h): a limited queue gets
 * the limited claim (never more than its concurrency, the outcomes handed
 * with the claim recorded first), another queue the plain or fused one
 * (every outcome recorded, its tasks claimed). */
static void
take_picks_the_claim(void **state)
{
	sked *h = open_db(tmp_url());
	assert_int_equal(sked_queue_set(h, "lim", 1, 0, 0, 0), SKED_OK);
	sked_enqueue_opts lim = {.queue = "lim", .max_attempts = 3};
	sked_enqueue_opts free_q = {.queue = "free", .max_attempts = 3};
	int64_t id;
	for (int i = 0; i < 3; i++)
		assert_int_equal(sked_enqueue(h, "k", NULL, 0, &lim, &id, NULL),
		                 SKED_OK);
	for (int i = 0; i < 2; i++)
		assert_int_equal(
		        sked_enqueue(h, "k", NULL, 0, &free_q, &id, NULL),
		        SKED_OK);
	sked_claim_req rl = {
	        .node_id = "n", .queue = "lim", .limit = 5, .lease_ms = 30000};
	sked_claimed *c = NULL;
	int n = 0;
	assert_int_equal(sked__take(h, "n", NULL, 0, &rl, &c, &n), SKED_OK);
	assert_int_equal(n, 1); /* concurrency 1 */
	/* its outcome rides with the next claim: recorded first, so the
	 * next one fits */
	sked_outcome o[2] = {{.id = c[0].id,
	                      .attempt = c[0].attempt,
	                      .max_attempts = 3,
	                      .started_ms = c[0].started_ms,
	                      .what = SKED_FIN_OK,
	                      .exit_code = 0}};
	sked__claimed_free(c, n);
	assert_int_equal(sked__take(h, "n", o, 1, &rl, &c, &n), SKED_OK);
	assert_int_equal(o[0].applied, 1);
	assert_int_equal(o[0].recorded, 1);
	assert_int_equal(n, 1);
	sked__claimed_free(c, n);
	sked_claim_req rf = {
	        .node_id = "n", .queue = "free", .limit = 5, .lease_ms = 30000};
	assert_int_equal(sked__take(h, "n", NULL, 0, &rf, &c, &n), SKED_OK);
	assert_int_equal(n, 2);
	for (int i = 0; i < 2; i++)
		o[i] = (sked_outcome){.id = c[i].id,
		                      .attempt = c[i].attempt,
		                      .max_attempts = 3,
		                      .started_ms = c[i].started_ms,
		                      .what = SKED_FIN_OK,
		                      .exit_code = -1};
	sked__claimed_free(c, n);
	assert_int_equal(sked__take(h, "n", o, 2, &rf, &c, &n), SKED_OK);
	assert_int_equal(n, 0);
	assert_int_equal(o[0].recorded && o[1].recorded, 1);
	assert_int_equal(o[0].applied && o[1].applied, 1);
	sked__claimed_free(c, n);
	assert_int_equal(
	        count(h, "SELECT COUNT(*) FROM {p}task_done WHERE status = 2"),
	        3);
	assert_int_equal(count(h, "SELECT COUNT(*) FROM {p}task WHERE "
	                          "queue = 'lim' AND status = 1"),
	                 1);
	sked_close(h);
	(void)state;
}

/* A workflow in one call (sked_enqueue_graph): a diamond after an
 * existing task, whose every statement is made to fail in turn through
 * the driver seam; each failure leaves nothing (no task, no edge, the
 * existing parent's count of dependents as it was), and the run without
 * a fault writes the graph parents first with exactly its edges. */
static void
graph_is_all_or_nothing(void **state)
{
	sked *h = open_db(tmp_url());
	int64_t pre = 0, ids[4];
	assert_int_equal(sked_enqueue(h, "setup", NULL, 0, NULL, &pre, NULL),
	                 SKED_OK);
	/* report after left and right, both after fetch, fetch after pre;
	 * listed children first: the call orders them */
	static const size_t lr[2] = {1, 2}, f[1] = {3};
	sked_graph_task t[4] = {
	        {.name = "report",
	         .kind = "report",
	         .after_index = lr,
	         .n_after_index = 2},
	        {.name = "left",
	         .kind = "resize",
	         .after_index = f,
	         .n_after_index = 1,
	         .opts = &(sked_enqueue_opts){.queue = "img", .priority = 5}},
	        {.name = "right",
	         .kind = "thumb",
	         .after_index = f,
	         .n_after_index = 1,
	         .opts = &(sked_enqueue_opts){.max_attempts = 2}},
	        {.name = "fetch",
	         .kind = "fetch",
	         .payload = "u",
	         .payload_len = 1,
	         .opts = &(sked_enqueue_opts){.after = &pre, .n_after = 1}},
	};
	int nth, rc = SKED_EERROR;
	for (nth = 1; nth < 60 && rc != SKED_OK; nth++) {
		sked__db_fault_after(nth, SKED_DBE_OTHER);
		rc = sked_enqueue_graph(h, t, 4, ids);
		sked__db_fault_after(0, SKED_DBE_NONE);
		if (rc == SKED_OK)
			break;
		assert_int_equal(count(h, "SELECT COUNT(*) FROM {p}task"), 1);
		assert_int_equal(count(h, "SELECT COUNT(*) FROM {p}task_dep"),
		                 0);
		assert_int_equal(count(h, "SELECT dependents FROM {p}task"), 0);
	}
	assert_true(nth > 5); /* the fault fired midway, several times */
	if (rc != SKED_OK)    /* the fault came after the last statement */
		assert_int_equal(sked_enqueue_graph(h, t, 4, ids), SKED_OK);
	assert_int_equal(count(h, "SELECT COUNT(*) FROM {p}task"), 5);
	assert_true(ids[3] < ids[1] && ids[1] < ids[2] && ids[2] < ids[0]);
	assert_int_equal(count(h, "SELECT COUNT(*) FROM {p}task_dep"), 5);
	char q[256];
	snprintf(q, sizeof q,
	         "SELECT COUNT(*) FROM {p}task_dep WHERE (parent_id = %lld "
	         "AND child_id = %lld) OR (parent_id = %lld AND child_id IN "
	         "(%lld, %lld)) OR (child_id = %lld AND parent_id IN (%lld, "
	         "%lld))",
	         (long long)pre, (long long)ids[3], (long long)ids[3],
	         (long long)ids[1], (long long)ids[2], (long long)ids[0],
	         (long long)ids[1], (long long)ids[2]);
	assert_int_equal(count(h, q), 5);
	assert_int_equal(count(h, "SELECT COUNT(*) FROM {p}task WHERE "
	                          "status = 6"),
	                 4);
	assert_int_equal(count(h, "SELECT COUNT(*) FROM {p}task WHERE "
	                          "queue = 'img' AND priority = 5"),
	                 1);
	sked_close(h);
	(void)state;
}

/* A task's workflow for the dashboard's picture (sked_task_graph_get):
 * a root, 150 children, a grandchild of two of them. Every node and edge
 * is there with its status; the reads are a few statements per layer,
 * not one per task (counted by failing the nth statement: each earlier
 * failure is an error, never a crash); a bound keeps the oldest tasks
 * and counts the ones it left out; sked_task_states reads a list of
 * tasks' states in one statement. */
static void
task_graph_reads_by_layers(void **state)
{
	sked *h = open_db(tmp_url());
	int64_t root = 0, kids[150], grand = 0;
	sked_task_graph g;
	assert_int_equal(sked_enqueue(h, "root", NULL, 0, NULL, &root, NULL),
	                 SKED_OK);
	for (int i = 0; i < 150; i++)
		assert_int_equal(
		        sked_enqueue(h, "kid", NULL, 0,
		                     &(sked_enqueue_opts){.after = &root,
		                                          .n_after = 1},
		                     &kids[i], NULL),
		        SKED_OK);
	assert_int_equal(
	        sked_enqueue(h, "grand", NULL, 0,
	                     &(sked_enqueue_opts){.after = kids, .n_after = 2},
	                     &grand, NULL),
	        SKED_OK);

	int nth, rc = SKED_EERROR;
	for (nth = 1; nth < 40 && rc != SKED_OK; nth++) {
		sked__db_fault_after(nth, SKED_DBE_OTHER);
		rc = sked_task_graph_get(h, root, 200, &g);
		sked__db_fault_after(0, SKED_DBE_NONE);
		if (rc != SKED_OK)
			assert_null(g.nodes);
	}
	assert_int_equal(rc, SKED_OK);
	/* 3 layers: up and down from the root, down twice more, then the
	 * nodes and the edges; 152 tasks */
	assert_true(nth - 1 >= 4 && nth - 1 <= 2 * 3 + 2);
	assert_int_equal(g.n, 152);
	assert_int_equal(g.nodes[0].id, root);
	assert_int_equal(g.nodes[0].status, SKED_PENDING);
	assert_string_equal(g.nodes[0].kind, "root");
	assert_int_equal(g.more, 0);
	assert_int_equal(g.nedges, 152);
	size_t to_grand = 0, from_root = 0;
	for (size_t i = 0; i < g.nedges; i++) {
		from_root += g.edges[i][0] == root;
		to_grand +=
		        g.edges[i][1] == grand &&
		        (g.edges[i][0] == kids[0] || g.edges[i][0] == kids[1]);
	}
	assert_int_equal(from_root, 150);
	assert_int_equal(to_grand, 2);
	for (size_t i = 1; i < g.n; i++)
		assert_int_equal(g.nodes[i].status, SKED_BLOCKED);
	sked_task_graph_free(&g);

	/* from the grandchild: its 2 parents and their root, not the
	 * other 148 children */
	assert_int_equal(sked_task_graph_get(h, grand, 200, &g), SKED_OK);
	assert_int_equal(g.n, 4);
	assert_int_equal(g.nedges, 4);
	sked_task_graph_free(&g);

	/* bound 100: the root and its 99 oldest children; left out the
	 * other 51 children and the grandchild seen beyond them */
	assert_int_equal(sked_task_graph_get(h, root, 100, &g), SKED_OK);
	assert_int_equal(g.n, 100);
	assert_int_equal(g.more, 52);
	for (size_t i = 1; i < g.n; i++)
		assert_int_equal(g.nodes[i].id, kids[i - 1]);
	sked_task_graph_free(&g);

	/* the states of a list of tasks at once, a missing one as -1 */
	int64_t some[3] = {kids[0], 999999, root};
	sked_graph_node st[3];
	assert_int_equal(sked_task_states(h, some, 3, st), SKED_OK);
	assert_int_equal(st[0].status, SKED_BLOCKED);
	assert_string_equal(st[0].kind, "kid");
	assert_int_equal(st[1].status, -1);
	assert_null(st[1].kind);
	assert_int_equal(st[2].status, SKED_PENDING);
	assert_int_equal(st[2].id, root);
	sked_task_states_clear(st, 3);

	assert_int_equal(sked_task_graph_get(h, root, 0, &g), SKED_EINVAL);
	assert_int_equal(sked_task_graph_get(h, root, SKED_GRAPH_MAX + 1, &g),
	                 SKED_EINVAL);
	sked_close(h);
	(void)state;
}

/* What a graph may not be, refused before any SQL with one line naming
 * the task: a cycle, a parent index out of range or its own, a unique
 * key, too many tasks. */
static void
graph_refuses_bad_shapes(void **state)
{
	sked *h = open_db(tmp_url());
	int64_t ids[3];
	static const size_t p0[1] = {0}, p1[1] = {1}, p2[1] = {2}, p9[1] = {9};
	sked_graph_task t[3] = {
	        {.name = "a",
	         .kind = "k",
	         .after_index = p2,
	         .n_after_index = 1},
	        {.name = "b",
	         .kind = "k",
	         .after_index = p0,
	         .n_after_index = 1},
	        {.name = "c",
	         .kind = "k",
	         .after_index = p1,
	         .n_after_index = 1},
	};
	assert_int_equal(sked_enqueue_graph(h, t, 3, ids), SKED_EINVAL);
	assert_non_null(strstr(sked_errmsg(h), "cycle"));
	t[0].after_index = p9;
	assert_int_equal(sked_enqueue_graph(h, t, 3, ids), SKED_EINVAL);
	assert_non_null(strstr(sked_errmsg(h), "task 'a'"));
	t[0].after_index = p0;
	assert_int_equal(sked_enqueue_graph(h, t, 3, ids), SKED_EINVAL);
	assert_non_null(strstr(sked_errmsg(h), "waits for itself"));
	t[0].n_after_index = 0;
	sked_enqueue_opts uk = {.unique_key = "u"};
	t[2].opts = &uk;
	assert_int_equal(sked_enqueue_graph(h, t, 3, ids), SKED_EINVAL);
	assert_non_null(strstr(sked_errmsg(h), "unique"));
	t[2].opts = NULL;
	assert_int_equal(
	        sked_enqueue_graph(h, t, SKED_MAX_GRAPH_TASKS + 1, ids),
	        SKED_EINVAL);
	assert_int_equal(count(h, "SELECT COUNT(*) FROM {p}task"), 0);
	assert_int_equal(sked_enqueue_graph(h, t, 3, ids), SKED_OK);
	assert_int_equal(sked_enqueue_graph(h, t, 0, NULL), SKED_OK);
	assert_int_equal(count(h, "SELECT COUNT(*) FROM {p}task"), 3);
	sked_close(h);
	(void)state;
}

/* The dialect's clock (NOWMS, from julianday) reads SQLite's time as
 * whole milliseconds exactly: for instants across four centuries, fed in
 * for 'now', and against seconds and '%f' read by strftime from the same
 * 'now' of one statement. A truncating or float-rounded form fails. */
static void
sqlite_clock_is_whole_ms(void **state)
{
	(void)state;
	sked *h = open_db(tmp_url());
	const char *nowms = h->dialect->nowms;
	const char *at = strstr(nowms, "'now'");
	assert_non_null(at);
	char sql[512];
	snprintf(sql, sizeof sql, "SELECT %.*s?1%s", (int)(at - nowms), nowms,
	         at + 5);
	uint64_t x = 88172645463325252ULL; /* xorshift: fixed instants */
	for (int i = 0; i < 20000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* 1900 … 2300, any millisecond */
		int64_t ms =
		        -2208988800000LL + (int64_t)(x % 12623040000000ULL);
		time_t s = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
		struct tm tm;
		gmtime_r(&s, &tm);
		char text[64];
		snprintf(text, sizeof text,
		         "%04d-%02d-%02d %02d:%02d:%02d.%03d",
		         tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
		         tm.tm_hour, tm.tm_min, tm.tm_sec,
		         (int)(ms - (int64_t)s * 1000));
		sked_val p = SKED_TEXTV(text);
		sked_res r = {0};
		assert_int_equal(sked__qdyn(h, sql, &p, 1, &r), SKED_OK);
		if (sked__res_int(&r, 0, 0) != ms)
			fail_msg("%s: %lld, not %lld", text,
			         (long long)sked__res_int(&r, 0, 0),
			         (long long)ms);
		sked__res_clear(&r);
	}
	snprintf(sql, sizeof sql,
	         "SELECT %s = CAST(strftime('%%s', 'now') AS INTEGER) * 1000 + "
	         "CAST(substr(strftime('%%f', 'now'), 4) AS INTEGER)",
	         nowms);
	for (int i = 0; i < 200; i++) {
		sked_res r = {0};
		assert_int_equal(sked__qdyn(h, sql, NULL, 0, &r), SKED_OK);
		assert_int_equal(sked__res_int(&r, 0, 0), 1);
		sked__res_clear(&r);
	}
	sked_close(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(enqueue_many_is_atomic),
	        cmocka_unit_test(claims_never_overlap),
	        cmocka_unit_test(late_finish_is_recorded_not_applied),
	        cmocka_unit_test(failures_retry_then_die),
	        cmocka_unit_test(renew_lists_what_is_held),
	        cmocka_unit_test(give_back_started_and_unstarted),
	        cmocka_unit_test(unique_key_returns_existing),
	        cmocka_unit_test(bad_input_is_refused_before_sql),
	        cmocka_unit_test(take_picks_the_claim),
	        cmocka_unit_test(batch_statements_stay_prepared),
	        cmocka_unit_test(two_attempts_in_one_batch),
	        cmocka_unit_test(graph_is_all_or_nothing),
	        cmocka_unit_test(graph_refuses_bad_shapes),
	        cmocka_unit_test(task_graph_reads_by_layers),
	        cmocka_unit_test(sqlite_clock_is_whole_ms),
	};
	int failed =
	        cmocka_run_group_tests_name("model/sqlite", tests, NULL, NULL);
	strategy = "optimistic";
	failed += cmocka_run_group_tests_name("model/optimistic", tests, NULL,
	                                      NULL);
	return failed ? 1 : 0;
}
