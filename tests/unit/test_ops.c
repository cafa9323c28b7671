/*
 * test_ops.c — what operators read and steer (src/model/gauges.c, bulk.c,
 * nodes.c), on real SQLite files: the cluster gauges against known rows,
 * the oldest due age, bulk retry and cancel by ids (skipping what the
 * state does not allow) and by filter (status, kind, queue, creation
 * window), counts of what a filter matches, refusals of statuses a bulk
 * change cannot apply to, node pruning that keeps live nodes and nodes
 * holding tasks, throughput per minute, the lock list, the histogram
 * bounds, and a C handler's progress reports (refused values, a burst
 * stored by the renewal, read back with sked_task_live_get).
 *
 * Layer: tests. The HTTP side (/metrics through promtool, the dashboard
 * in a browser) is tests/integration/t_metrics.sh and t_dashboard.sh.
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

#include "sqlite_fixture.h"

static sked *
fresh(void)
{
	char url[512];
	fixture_url("ops", url, sizeof url);
	return fixture_open(url, NULL);
}

static int64_t
enq(sked *h, const char *kind, const char *queue, int64_t delay_ms,
    int max_attempts)
{
	sked_enqueue_opts o = {.queue = queue,
	                       .delay_ms = delay_ms,
	                       .max_attempts = max_attempts};
	int64_t id = 0;
	assert_int_equal(sked_enqueue(h, kind, "", 0, &o, &id, NULL), SKED_OK);
	return id;
}

static const sked_queue_gauge *
gauge(const sked_cluster_gauges *g, const char *q)
{
	for (size_t i = 0; i < g->nqueues; i++)
		if (strcmp(g->queues[i].queue, q) == 0)
			return &g->queues[i];
	return NULL;
}

static void
gauges_count_unfinished_tasks(void **state)
{
	(void)state;
	sked *h = fresh();
	sked_cluster_gauges g;

	assert_int_equal(sked_cluster_gauges_get(h, &g), SKED_OK);
	assert_int_equal(g.nqueues, 0);
	assert_int_equal(g.nodes, 0);
	assert_true(g.now_ms > 0);
	sked_cluster_gauges_free(&g);

	enq(h, "a", "q1", 0, 0);
	enq(h, "a", "q1", 0, 0);
	enq(h, "a", "q1", 3600 * 1000, 0); /* pending, not due */
	int64_t done = enq(h, "a", "q2", 0, 0);
	assert_int_equal(sked_cancel(h, done),
	                 SKED_OK); /* ended: not counted */
	usleep(50 * 1000);
	int64_t t1;
	assert_int_equal(sked_lock_acquire(h, "L", "me", 60000, NULL, &t1),
	                 SKED_OK);
	sked_schedule_opts so = {0};
	assert_int_equal(sked_schedule_put(h, "s1", "@daily", "a", &so, NULL),
	                 SKED_OK);
	assert_int_equal(sked_schedule_put(h, "s2", "@daily", "a", &so, NULL),
	                 SKED_OK);
	assert_int_equal(sked_schedule_pause(h, "s2"), SKED_OK);

	assert_int_equal(sked_cluster_gauges_get(h, &g), SKED_OK);
	assert_int_equal(g.nqueues, 1);
	const sked_queue_gauge *q1 = gauge(&g, "q1");
	assert_non_null(q1);
	assert_int_equal(q1->pending, 3);
	assert_int_equal(q1->due, 2);
	assert_int_equal(q1->running, 0);
	assert_int_equal(q1->retrying, 0);
	assert_true(q1->oldest_due_age_ms >= 50);
	assert_true(q1->oldest_due_age_ms < 60000);
	assert_null(gauge(&g, "q2"));
	assert_int_equal(g.locks, 1);
	assert_int_equal(g.locks_held, 1);
	assert_int_equal(g.schedules, 2);
	assert_int_equal(g.schedules_paused, 1);
	sked_cluster_gauges_free(&g);
	sked_cluster_gauges_free(NULL);
	sked_close(h);
}

static void
bulk_by_ids_skips_what_state_forbids(void **state)
{
	(void)state;
	sked *h = fresh();
	int64_t a = enq(h, "k", NULL, 0, 0), b = enq(h, "k", NULL, 0, 0);
	int64_t c = enq(h, "k", NULL, 0, 0);
	int64_t ids[] = {a, b, c, 999999}, done = -1;
	sked_task *t;

	/* cancel two: both change; cancelling again changes nothing */
	assert_int_equal(sked_cancel_ids(h, ids, 2, &done), SKED_OK);
	assert_int_equal(done, 2);
	assert_int_equal(sked_cancel_ids(h, ids, 2, &done), SKED_OK);
	assert_int_equal(done, 0);
	/* retry all four: the two cancelled and the pending one change (a
	 * pending task is "run now"), the missing id is skipped */
	assert_int_equal(sked_retry_ids(h, ids, 4, &done), SKED_OK);
	assert_int_equal(done, 3);
	assert_int_equal(sked_task_get(h, a, &t), SKED_OK);
	assert_int_equal(t->status, SKED_PENDING);
	sked_tasks_free(t, 1);
	assert_int_equal(sked_retry_ids(h, NULL, 0, &done), SKED_OK);
	assert_int_equal(done, 0);
	sked_close(h);
}

static void
bulk_by_filter(void **state)
{
	(void)state;
	sked *h = fresh();
	int64_t m1 = enq(h, "mail", "q", 0, 0), m2 = enq(h, "mail", "q", 0, 0);
	int64_t r1 = enq(h, "report", "q", 0, 0);
	int64_t other = enq(h, "mail", "elsewhere", 0, 0);
	int64_t ids[] = {m1, m2, r1, other}, done = 0, now = 0;
	sked_task *t;

	assert_int_equal(sked_cancel_ids(h, ids, 4, &done), SKED_OK);
	assert_int_equal(done, 4);
	/* retry every cancelled mail task of queue q */
	sked_list_filter f = {
	        .status = SKED_CANCELLED, .kind = "mail", .queue = "q"};
	assert_int_equal(sked_retry_where(h, &f, &done), SKED_OK);
	assert_int_equal(done, 2);
	assert_int_equal(sked_task_get(h, r1, &t), SKED_OK);
	assert_int_equal(t->status, SKED_CANCELLED);
	sked_tasks_free(t, 1);
	assert_int_equal(sked_task_get(h, other, &t), SKED_OK);
	assert_int_equal(t->status, SKED_CANCELLED);
	sked_tasks_free(t, 1);
	/* a creation window that ended before the tasks were made: none */
	assert_int_equal(sked_now(h, &now), SKED_OK);
	f = (sked_list_filter){.status = SKED_CANCELLED,
	                       .created_before_ms = now - 3600 * 1000};
	assert_int_equal(sked_retry_where(h, &f, &done), SKED_OK);
	assert_int_equal(done, 0);
	f.created_before_ms = 0;
	f.created_after_ms = now - 3600 * 1000;
	assert_int_equal(sked_retry_where(h, &f, &done), SKED_OK);
	assert_int_equal(done, 2);
	/* cancel every pending task by filter */
	f = (sked_list_filter){.status = SKED_PENDING, .kind = "mail"};
	assert_int_equal(sked_cancel_where(h, &f, &done), SKED_OK);
	assert_int_equal(done, 3);
	/* statuses a bulk change cannot apply to, and bad names */
	f = (sked_list_filter){.status = SKED_SUCCEEDED};
	assert_int_equal(sked_retry_where(h, &f, &done), SKED_EINVAL);
	f.status = SKED_DEAD;
	assert_int_equal(sked_cancel_where(h, &f, &done), SKED_EINVAL);
	f = (sked_list_filter){.status = SKED_DEAD, .kind = "bad kind'"};
	assert_int_equal(sked_retry_where(h, &f, &done), SKED_EINVAL);
	sked_close(h);
}

/* sked_task_count counts what a bulk change would look at: per status,
 * across both tables, with the same filters; a bad status or name is
 * refused. */
static void
count_matches_the_filter(void **state)
{
	(void)state;
	sked *h = fresh();
	int64_t a = enq(h, "mail", "q", 3600 * 1000, 0);
	enq(h, "mail", "q", 3600 * 1000, 0);
	int64_t report = enq(h, "report", "q", 3600 * 1000, 0);
	enq(h, "mail", "other", 3600 * 1000, 0);
	int64_t n = -1, done = 0, now = 0;

	sked_list_filter f = {.status = -1};
	assert_int_equal(sked_task_count(h, &f, &n), SKED_OK);
	assert_int_equal(n, 4);
	f = (sked_list_filter){.status = SKED_PENDING, .kind = "mail"};
	assert_int_equal(sked_task_count(h, &f, &n), SKED_OK);
	assert_int_equal(n, 3);
	f.queue = "q";
	assert_int_equal(sked_task_count(h, &f, &n), SKED_OK);
	assert_int_equal(n, 2);
	assert_int_equal(sked_cancel_where(h, &f, &done), SKED_OK);
	assert_int_equal(done, n);
	/* now in the ended table: counted there, and by "any status" */
	assert_int_equal(sked_task_count(h, &f, &n), SKED_OK);
	assert_int_equal(n, 0);
	f.status = SKED_CANCELLED;
	assert_int_equal(sked_task_count(h, &f, &n), SKED_OK);
	assert_int_equal(n, 2);
	f.status = -1;
	assert_int_equal(sked_task_count(h, &f, &n), SKED_OK);
	assert_int_equal(n, 2);
	/* a creation bound that ended before the tasks were made */
	assert_int_equal(sked_now(h, &now), SKED_OK);
	f = (sked_list_filter){.status = -1,
	                       .created_before_ms = now - 3600 * 1000};
	assert_int_equal(sked_task_count(h, &f, &n), SKED_OK);
	assert_int_equal(n, 0);
	/* blocked tasks are live tasks too: counted by their status and by
	 * "any" (status 6 was refused as unknown, and "any" left them out) */
	int64_t child = 0;
	sked_enqueue_opts after = {
	        .queue = "q", .after = &report, .n_after = 1};
	assert_int_equal(sked_enqueue(h, "mail", "", 0, &after, &child, NULL),
	                 SKED_OK);
	f = (sked_list_filter){.status = SKED_BLOCKED, .queue = "q"};
	assert_int_equal(sked_task_count(h, &f, &n), SKED_OK);
	assert_int_equal(n, 1);
	f.status = -1;
	assert_int_equal(sked_task_count(h, &f, &n), SKED_OK);
	assert_int_equal(n, 4); /* two cancelled, report, the child */
	/* refusals leave n alone */
	n = 77;
	f = (sked_list_filter){.status = SKED_BLOCKED + 1};
	assert_int_equal(sked_task_count(h, &f, &n), SKED_EINVAL);
	f = (sked_list_filter){.status = -1, .kind = "bad kind"};
	assert_int_equal(sked_task_count(h, &f, &n), SKED_EINVAL);
	assert_int_equal(sked_task_count(h, NULL, &n), SKED_EINVAL);
	assert_int_equal(n, 77);
	(void)a;
	sked_close(h);
}

static int64_t
ended_count(sked *h, int status)
{
	sked_queue_stats *qs = NULL;
	size_t n = 0;
	int64_t c = 0;
	assert_int_equal(sked_stats(h, &qs, &n), SKED_OK);
	for (size_t i = 0; i < n; i++)
		c += qs[i].count[status];
	free(qs);
	return c;
}

/* Bulk changes go in batches of 500 ids, paging by id: more than two
 * batches, cancelled (moved to task_done) and retried (moved back), each
 * task once; then a list of both tables pages by id across them. */
static void
bulk_in_batches_across_the_move(void **state)
{
	(void)state;
	sked *h = fresh();
	enum { N = 1203 };
	static const char *payloads[N];
	static int64_t ids[N];
	for (int i = 0; i < N; i++)
		payloads[i] = "";
	sked_enqueue_opts o = {.queue = "big"};
	assert_int_equal(sked_enqueue_many(h, "k", N, payloads, NULL, &o, ids),
	                 SKED_OK);
	int64_t other = enq(h, "k", "small", 0, 0), done = 0;
	sked_list_filter f = {.status = SKED_PENDING, .queue = "big"};
	assert_int_equal(sked_cancel_where(h, &f, &done), SKED_OK);
	assert_int_equal(done, N);
	assert_int_equal(ended_count(h, SKED_CANCELLED), N);
	assert_int_equal(ended_count(h, SKED_PENDING), 1);
	f = (sked_list_filter){.status = SKED_CANCELLED, .queue = "big"};
	assert_int_equal(sked_retry_where(h, &f, &done), SKED_OK);
	assert_int_equal(done, N);
	assert_int_equal(ended_count(h, SKED_CANCELLED), 0);
	assert_int_equal(ended_count(h, SKED_PENDING), N + 1);
	/* every other one ended again, then a list of both tables, newest
	 * first, five at a time from below an id */
	int64_t odd[N / 2 + 1];
	size_t nodd = 0;
	for (int i = 1; i < N; i += 2)
		odd[nodd++] = ids[i];
	assert_int_equal(sked_cancel_ids(h, odd, nodd, &done), SKED_OK);
	assert_int_equal(done, (int64_t)nodd);
	sked_task *t = NULL;
	size_t n = 0;
	f = (sked_list_filter){.status = -1, .before_id = ids[100], .limit = 5};
	assert_int_equal(sked_task_list(h, &f, &t, &n), SKED_OK);
	assert_int_equal(n, 5);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(t[i].id, ids[99 - i]);
		assert_int_equal(t[i].status,
		                 (99 - i) % 2 ? SKED_CANCELLED : SKED_PENDING);
	}
	sked_tasks_free(t, n);
	f = (sked_list_filter){.status = -1, .limit = 2};
	assert_int_equal(sked_task_list(h, &f, &t, &n), SKED_OK);
	assert_int_equal(n, 2);
	assert_int_equal(t[0].id, other);
	assert_int_equal(t[1].id, ids[N - 1]);
	sked_tasks_free(t, n);
	sked_close(h);
}

static void
list_filters_by_node_and_time(void **state)
{
	(void)state;
	sked *h = fresh();
	int64_t now = 0;
	sked_task *t = NULL;
	size_t n = 0;

	enq(h, "k", NULL, 0, 0);
	enq(h, "k", NULL, 0, 0);
	assert_int_equal(sked_now(h, &now), SKED_OK);
	sked_list_filter f = {.status = -1, .created_after_ms = now - 60000};
	assert_int_equal(sked_task_list(h, &f, &t, &n), SKED_OK);
	assert_int_equal(n, 2);
	sked_tasks_free(t, n);
	f.created_after_ms = now + 60000;
	assert_int_equal(sked_task_list(h, &f, &t, &n), SKED_OK);
	assert_int_equal(n, 0);
	f = (sked_list_filter){.status = -1, .node_id = "nobody"};
	assert_int_equal(sked_task_list(h, &f, &t, &n), SKED_OK);
	assert_int_equal(n, 0);
	sked_close(h);
}

static void
unique_key_lookup(void **state)
{
	(void)state;
	sked *h = fresh();
	sked_enqueue_opts o = {.unique_key = "order-42"};
	int64_t id = 0, found = 0;

	assert_int_equal(sked_enqueue(h, "k", "", 0, &o, &id, NULL), SKED_OK);
	assert_int_equal(sked_task_find_unique(h, "order-42", &found), SKED_OK);
	assert_int_equal(found, id);
	assert_int_equal(sked_task_find_unique(h, "order-43", &found),
	                 SKED_ENOTFOUND);
	sked_close(h);
}

static void
throughput_counts_recent_runs(void **state)
{
	(void)state;
	sked *h = fresh();
	int64_t ok[5], bad[5];

	assert_int_equal(sked_throughput(h, 5, ok, bad), SKED_OK);
	for (int i = 0; i < 5; i++)
		assert_true(ok[i] == 0 && bad[i] == 0);
	assert_int_equal(sked_throughput(h, 0, ok, bad), SKED_EINVAL);
	assert_int_equal(sked_throughput(h, 121, ok, bad), SKED_EINVAL);
	sked_close(h);
}

static int noop(sked_job *job, void *ud);
static int
fail_job(sked_job *job, void *ud)
{
	(void)job;
	(void)ud;
	return 1;
}

/* The attempts recorded on ended rows (schema 5: a success, a last
 * failure) count like run rows (a failure that retries). */
static void
throughput_counts_ended_rows(void **state)
{
	(void)state;
	sked *h = fresh();
	int64_t ok[5], bad[5], id;
	sked_enqueue_opts eo = {.max_attempts = 2};
	assert_int_equal(sked_enqueue(h, "good", "", 0, &eo, &id, NULL),
	                 SKED_OK);
	assert_int_equal(sked_enqueue(h, "bad", "", 0, &eo, &id, NULL),
	                 SKED_OK);
	sked_worker_options wo = {.node_id = "tp",
	                          .until_empty = 1,
	                          .retry_base_ms = 10,
	                          .retry_max_ms = 10};
	sked_worker *w = NULL;
	assert_int_equal(sked_worker_new(h, &wo, &w), SKED_OK);
	assert_int_equal(sked_worker_handle(w, "good", noop, NULL), SKED_OK);
	assert_int_equal(sked_worker_handle(w, "bad", fail_job, NULL), SKED_OK);
	assert_int_equal(sked_worker_run(w), SKED_OK);
	sked_worker_free(w);
	assert_int_equal(sked_throughput(h, 5, ok, bad), SKED_OK);
	int64_t nok = 0, nbad = 0;
	for (int i = 0; i < 5; i++) {
		nok += ok[i];
		nbad += bad[i];
	}
	assert_int_equal(nok, 1);
	assert_int_equal(nbad, 2);
	sked_close(h);
}

static int
noop(sked_job *job, void *ud)
{
	(void)job;
	(void)ud;
	return 0;
}

/* C handlers: a result set on the job is kept on the ended task; a
 * child reads its parents' ids, kinds and results; one over 64 KiB
 * fails the attempt. */
static int
leave_result(sked_job *job, void *ud)
{
	(void)ud;
	char buf[64];
	int n = snprintf(buf, sizeof buf, "r%lld", (long long)sked_job_id(job));
	return sked_job_set_result(job, buf, (size_t)n) == SKED_OK ? 0 : 1;
}

static int
read_parents(sked_job *job, void *ud)
{
	(void)ud;
	char buf[256] = "";
	size_t len = 0;
	for (size_t i = 0; i < sked_job_parent_count(job); i++) {
		int64_t id;
		const char *kind, *res;
		if (sked_job_parent(job, i, &id, &kind, &res) != SKED_OK)
			return 1;
		len += (size_t)snprintf(buf + len, sizeof buf - len,
		                        "%lld:%s:%s;", (long long)id, kind,
		                        res ? res : "-");
	}
	if (sked_job_parent(job, 99, NULL, NULL, NULL) != SKED_EINVAL)
		return 1;
	len += (size_t)snprintf(buf + len, sizeof buf - len, "%s",
	                        sked_job_parents_json(job));
	return sked_job_set_result(job, buf, len) == SKED_OK ? 0 : 1;
}

static int
too_big(sked_job *job, void *ud)
{
	(void)ud;
	static char big[SKED_RESULT_MAX + 1];
	memset(big, 'b', sizeof big);
	return sked_job_set_result(job, big, sizeof big) == SKED_OK ? 0 : 1;
}

static int
give_up(sked_job *j, void *ud)
{
	(void)ud;
	sked_job_set_error_msg(j, "unknown account");
	sked_job_give_up(j);
	return 1;
}

/* A C handler's progress: refused values leave the previous report; a
 * thousand reports cost nothing until the renewal stores the last; the
 * handler sees it stored (on a handle of its own) before it returns. */
struct progress_probe {
	sked *h;
	int refused, seen;
};

static int
report_progress(sked_job *j, void *ud)
{
	struct progress_probe *p = ud;
	static char big[SKED_PROGRESS_MAX + 2];
	memset(big, 'p', sizeof big - 1);
	p->refused = sked_job_set_progress(j, NULL) == SKED_EINVAL &&
	             sked_job_set_progress(j, "") == SKED_EINVAL &&
	             sked_job_set_progress(j, big) == SKED_EINVAL &&
	             sked_job_set_progress(j, "bad \377") == SKED_EINVAL &&
	             sked_job_set_progress(NULL, "x") == SKED_EINVAL;
	char buf[32];
	for (int i = 1; i <= 1000; i++) {
		snprintf(buf, sizeof buf, "{\"step\": %d}", i);
		if (sked_job_set_progress(j, buf) != SKED_OK)
			return 1;
	}
	/* the heartbeat renews every lease/3 (400 ms here) */
	for (int i = 0; i < 100 && !p->seen; i++) {
		sked_task_live l = {0};
		if (sked_task_live_get(p->h, sked_job_id(j), &l) == SKED_OK)
			p->seen = l.progress &&
			          strcmp(l.progress, "{\"step\": 1000}") == 0 &&
			          l.node_id && strcmp(l.node_id, "pr") == 0 &&
			          l.started_ms > 0 && l.elapsed_ms >= 0 &&
			          l.progress_ms >= l.started_ms;
		sked_task_live_clear(&l);
		usleep(50 * 1000);
	}
	return 0;
}

static void
progress_of_c_handlers(void **state)
{
	(void)state;
	char url[512];
	fixture_url("ops", url, sizeof url);
	sked *h = fixture_open(url, NULL);
	struct progress_probe p = {.h = fixture_open(url, NULL)};
	int64_t id;
	assert_int_equal(sked_enqueue(h, "slow", "", 0, NULL, &id, NULL),
	                 SKED_OK);
	sked_task_live l = {0};
	assert_int_equal(sked_task_live_get(h, id, &l), SKED_ENOTFOUND);
	sked_worker_options wo = {.node_id = "pr",
	                          .until_empty = 1,
	                          .concurrency = 1,
	                          .lease_ms = 1200};
	sked_worker *w = NULL;
	assert_int_equal(sked_worker_new(h, &wo, &w), SKED_OK);
	assert_int_equal(sked_worker_handle(w, "slow", report_progress, &p),
	                 SKED_OK);
	assert_int_equal(sked_worker_run(w), SKED_OK);
	sked_worker_free(w);
	assert_true(p.refused);
	assert_true(p.seen);
	/* ended: nothing runs */
	assert_int_equal(sked_task_live_get(h, id, &l), SKED_ENOTFOUND);
	assert_null(l.progress);
	sked_close(p.h);
	sked_close(h);
}

/* the last task: asks for an hour's delay, then stops the worker (a
 * task waiting to retry would keep --until-empty waiting) */
static int
retry_later(sked_job *j, void *ud)
{
	sked_job_set_retry_in(j, 3600 * 1000);
	sked_worker_stop(ud, 0);
	return 1;
}

/* A C handler says "no retry" (the task is dead after its first of five
 * attempts, its error saying why) or sets its own retry delay. */
static void
no_retry_from_c(void **state)
{
	(void)state;
	sked *h = fresh();
	int64_t a, b, now;
	sked_enqueue_opts eo = {.max_attempts = 5, .priority = 1};
	assert_int_equal(sked_enqueue(h, "final", "", 0, &eo, &a, NULL),
	                 SKED_OK);
	eo.priority = 0;
	assert_int_equal(sked_enqueue(h, "later", "", 0, &eo, &b, NULL),
	                 SKED_OK);
	sked_worker_options wo = {
	        .node_id = "nr", .until_empty = 1, .concurrency = 1};
	sked_worker *w = NULL;
	assert_int_equal(sked_worker_new(h, &wo, &w), SKED_OK);
	assert_int_equal(sked_worker_handle(w, "final", give_up, NULL),
	                 SKED_OK);
	assert_int_equal(sked_worker_handle(w, "later", retry_later, w),
	                 SKED_OK);
	assert_int_equal(sked_worker_run(w), SKED_OK);
	sked_worker_free(w);
	sked_task *t = NULL;
	assert_int_equal(sked_task_get(h, a, &t), SKED_OK);
	assert_int_equal(t->status, SKED_DEAD);
	assert_int_equal(t->attempts, 1);
	assert_string_equal(t->last_error,
	                    "no retry (the handler said so): unknown account");
	sked_tasks_free(t, 1);
	assert_int_equal(sked_task_get(h, b, &t), SKED_OK);
	assert_int_equal(t->status, SKED_RETRY);
	assert_int_equal(sked_now(h, &now), SKED_OK);
	/* an hour, not the backoff's second */
	assert_true(t->run_at_ms - now > 3500 * 1000);
	assert_true(t->run_at_ms - now <= 3600 * 1000);
	sked_tasks_free(t, 1);
	sked_close(h);
}

static void
results_of_c_handlers(void **state)
{
	(void)state;
	sked *h = fresh();
	int64_t a, b, c, big;
	sked_enqueue_opts eo = {.max_attempts = 1};
	assert_int_equal(sked_enqueue(h, "leave", "", 0, &eo, &a, NULL),
	                 SKED_OK);
	assert_int_equal(sked_enqueue(h, "plain", "", 0, &eo, &b, NULL),
	                 SKED_OK);
	int64_t after[2] = {a, b};
	sked_enqueue_opts ec = {
	        .max_attempts = 1, .after = after, .n_after = 2};
	assert_int_equal(sked_enqueue(h, "child", "", 0, &ec, &c, NULL),
	                 SKED_OK);
	assert_int_equal(sked_enqueue(h, "big", "", 0, &eo, &big, NULL),
	                 SKED_OK);
	sked_worker_options wo = {.node_id = "res", .until_empty = 1};
	sked_worker *w = NULL;
	assert_int_equal(sked_worker_new(h, &wo, &w), SKED_OK);
	assert_int_equal(sked_worker_handle(w, "leave", leave_result, NULL),
	                 SKED_OK);
	assert_int_equal(sked_worker_handle(w, "plain", noop, NULL), SKED_OK);
	assert_int_equal(sked_worker_handle(w, "child", read_parents, NULL),
	                 SKED_OK);
	assert_int_equal(sked_worker_handle(w, "big", too_big, NULL), SKED_OK);
	assert_int_equal(sked_worker_run(w), SKED_OK);
	sked_worker_free(w);
	sked_task *t = NULL;
	char want[256];
	snprintf(want, sizeof want, "r%lld", (long long)a);
	assert_int_equal(sked_task_get(h, a, &t), SKED_OK);
	assert_string_equal(t->result, want);
	sked_tasks_free(t, 1);
	assert_int_equal(sked_task_get(h, b, &t), SKED_OK);
	assert_null(t->result);
	sked_tasks_free(t, 1);
	snprintf(want, sizeof want,
	         "%lld:leave:r%lld;%lld:plain:-;[{\"id\":%lld,\"kind\":"
	         "\"leave\",\"result\":\"r%lld\"},{\"id\":%lld,\"kind\":"
	         "\"plain\",\"result\":null}]",
	         (long long)a, (long long)a, (long long)b, (long long)a,
	         (long long)a, (long long)b);
	assert_int_equal(sked_task_get(h, c, &t), SKED_OK);
	assert_int_equal(t->status, SKED_SUCCEEDED);
	assert_string_equal(t->result, want);
	sked_tasks_free(t, 1);
	assert_int_equal(sked_task_get(h, big, &t), SKED_OK);
	assert_int_equal(t->status, SKED_DEAD);
	assert_null(t->result);
	assert_non_null(strstr(t->last_error, "result of 65537 bytes"));
	sked_tasks_free(t, 1);
	/* lists leave the result out */
	sked_list_filter f = {.status = -1};
	size_t n = 0;
	assert_int_equal(sked_task_list(h, &f, &t, &n), SKED_OK);
	for (size_t i = 0; i < n; i++)
		assert_null(t[i].result);
	sked_tasks_free(t, n);
	sked_close(h);
}

static void
nodes_prune_keeps_the_live(void **state)
{
	(void)state;
	sked *h = fresh();
	sked_worker_options wo = {.node_id = "n1", .until_empty = 1};
	sked_worker *w = NULL;
	int64_t removed = -1;

	/* a worker that ran and stopped leaves no row; prune finds none */
	assert_int_equal(sked_worker_new(h, &wo, &w), SKED_OK);
	assert_int_equal(sked_worker_handle(w, "k", noop, NULL), SKED_OK);
	assert_int_equal(sked_worker_run(w), SKED_OK);
	sked_worker_free(w);
	assert_int_equal(sked_nodes_prune(h, 0, &removed), SKED_OK);
	assert_int_equal(removed, 0);
	assert_int_equal(sked_nodes_prune(h, -1, &removed), SKED_EINVAL);
	sked_close(h);
}

static void
locks_listed(void **state)
{
	(void)state;
	sked *h = fresh();
	sked_lock_row *l = NULL;
	size_t n = 9;
	int64_t t1, t2;

	assert_int_equal(sked_lock_list(h, &l, &n), SKED_OK);
	assert_int_equal(n, 0);
	assert_null(l);
	assert_int_equal(sked_lock_acquire(h, "b-lock", "me", 60000, NULL, &t1),
	                 SKED_OK);
	assert_int_equal(sked_lock_acquire(h, "a-lock", "me", 60000, NULL, &t2),
	                 SKED_OK);
	assert_int_equal(sked_lock_release(h, "a-lock", "me", t2, NULL),
	                 SKED_OK);
	assert_int_equal(sked_lock_list(h, &l, &n), SKED_OK);
	assert_int_equal(n, 2);
	assert_string_equal(l[0].name, "a-lock");
	assert_false(l[0].held);
	assert_string_equal(l[1].name, "b-lock");
	assert_true(l[1].held);
	assert_string_equal(l[1].owner, "me");
	assert_int_equal(l[1].token, t1);
	sked_lock_rows_free(l, n);
	sked_process_counters pc;
	sked_process_counters_get(&pc);
	assert_true(pc.lock_acquisitions >= 2);
	sked_close(h);
}

static void
histogram_bounds_grow(void **state)
{
	(void)state;
	for (int i = 1; i < SKED_HIST_BUCKETS; i++)
		assert_true(sked_hist_bound(i) > sked_hist_bound(i - 1));
	assert_true(sked_hist_bound(0) > 0);
	assert_true(sked_hist_bound(SKED_HIST_BUCKETS) > 1e100);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(gauges_count_unfinished_tasks),
	        cmocka_unit_test(bulk_by_ids_skips_what_state_forbids),
	        cmocka_unit_test(bulk_by_filter),
	        cmocka_unit_test(count_matches_the_filter),
	        cmocka_unit_test(bulk_in_batches_across_the_move),
	        cmocka_unit_test(list_filters_by_node_and_time),
	        cmocka_unit_test(unique_key_lookup),
	        cmocka_unit_test(throughput_counts_recent_runs),
	        cmocka_unit_test(throughput_counts_ended_rows),
	        cmocka_unit_test(nodes_prune_keeps_the_live),
	        cmocka_unit_test(results_of_c_handlers),
	        cmocka_unit_test(no_retry_from_c),
	        cmocka_unit_test(progress_of_c_handlers),
	        cmocka_unit_test(locks_listed),
	        cmocka_unit_test(histogram_bounds_grow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
