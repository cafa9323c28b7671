/*
 * gauges.c — what operators read: the cluster-wide gauges behind
 * /metrics (counts per queue and status, due, the oldest due task), the
 * histogram bounds, recent throughput, and the process-wide counters.
 *
 * Layer: the model, beside queue.c and lock.c. It serves the worker's
 * --http endpoint and `sked dashboard` (both in cli/), through sked.h.
 * Every statement is in the dialect registry (SKED_SQL_GAUGES and the
 * others, dialect.c). What each one costs is in docs/operations.md: the
 * scrape reads only unfinished tasks ({p}task holds no other since schema
 * 4), through the partial indexes where the product has them, and
 * throughput reads a bounded number of the newest runs by primary key.
 * Steering many tasks at once is bulk.c's, pruning nodes nodes.c's, the
 * lock list lock.c's.
 */
#include "handle/internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/counters.h"
#include "util/buf.h"
#include "util/ident.h"

/* sked_throughput reads this many runs per statement, and takes a finish
 * to be recorded at most this long after its transaction began */
#define RUNS_CHUNK   20000
#define RUNS_SKEW_MS (5 * 60 * 1000)

SKED_API double
sked_hist_bound(int i)
{
	static const double b[SKED_HIST_BUCKETS] = {
	        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
	        0.25,  0.5,    1,     2.5,  10,    60,   300};
	return i >= 0 && i < SKED_HIST_BUCKETS ? b[i] : 1e300;
}

/* Rows: (queue, status, count, due, oldest run_at ms, now ms); see
 * SKED_SQL_GAUGES in dialect.c for the status of each branch (1 running,
 * -1 nodes, -2 locks, -3 schedules). */

static sked_queue_gauge *
gauge_for(sked_cluster_gauges *g, const char *q)
{
	for (size_t i = 0; i < g->nqueues; i++)
		if (strcmp(g->queues[i].queue, q) == 0)
			return &g->queues[i];
	return NULL;
}

static int
gauge_cmp(const void *a, const void *b)
{
	return strcmp(((const sked_queue_gauge *)a)->queue,
	              ((const sked_queue_gauge *)b)->queue);
}

SKED_API int
sked_cluster_gauges_get(sked *h, sked_cluster_gauges *out)
{
	if (!h || !h->db || !out)
		return SKED_EINVAL;
	memset(out, 0, sizeof *out);
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_GAUGES, NULL, 0, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot read the queue gauges");
	/* at most one entry per row */
	out->queues =
	        r.nrows ? calloc((size_t)r.nrows, sizeof *out->queues) : NULL;
	if (r.nrows && !out->queues) {
		sked__res_clear(&r);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	for (int i = 0; i < r.nrows; i++) {
		int st = (int)sked__res_int(&r, i, 1);
		int64_t cnt = sked__res_int(&r, i, 2);
		int64_t now = sked__res_int(&r, i, 5);
		out->now_ms = now;
		if (st == -1) {
			out->nodes = cnt;
			out->nodes_alive = sked__res_int(&r, i, 3);
			continue;
		}
		if (st == -2) {
			out->locks = cnt;
			out->locks_held = sked__res_int(&r, i, 3);
			continue;
		}
		if (st == -3) {
			out->schedules = cnt;
			out->schedules_paused = sked__res_int(&r, i, 3);
			continue;
		}
		const char *q = sked__res_text(&r, i, 0);
		if (!q)
			q = "";
		sked_queue_gauge *qg = gauge_for(out, q);
		if (!qg) {
			qg = &out->queues[out->nqueues++];
			snprintf(qg->queue, sizeof qg->queue, "%s", q);
		}
		if (st == SKED_RUNNING) {
			qg->running += cnt;
			continue;
		}
		if (st == SKED_BLOCKED) {
			qg->blocked += cnt;
			continue;
		}
		if (st == SKED_PENDING)
			qg->pending += cnt;
		else
			qg->retrying += cnt;
		qg->due += sked__res_int(&r, i, 3);
		/* the oldest claimable task is due when its run_at has come */
		if (!sked__res_null(&r, i, 4)) {
			int64_t age = now - sked__res_int(&r, i, 4);
			if (age > qg->oldest_due_age_ms)
				qg->oldest_due_age_ms = age;
		}
	}
	sked__res_clear(&r);
	if (out->nqueues > 1)
		qsort(out->queues, out->nqueues, sizeof *out->queues,
		      gauge_cmp);
	return SKED_OK;
}

SKED_API void
sked_cluster_gauges_free(sked_cluster_gauges *g)
{
	if (!g)
		return;
	free(g->queues);
	memset(g, 0, sizeof *g);
}

/* (minute, outcome, count) rows, the minute as epoch ms / 60000, into
 * buckets aligned to the clock: cur is the current minute, the last */
static void
count_minutes(const sked_res *r, int64_t cur, int minutes, int64_t *ok,
              int64_t *failed)
{
	int64_t first = cur - minutes + 1;
	for (int i = 0; i < r->nrows; i++) {
		if (sked__res_null(r, i, 0))
			continue;
		int64_t m = sked__res_int(r, i, 0), n = sked__res_int(r, i, 2);
		if (m < first)
			continue;
		/* a clock that stepped back: the current minute */
		int k = m > cur ? minutes - 1 : (int)(m - first);
		const char *o = sked__res_text(r, i, 1);
		if (o && strcmp(o, SKED_OUTCOME_SUCCEEDED) == 0)
			ok[k] += n;
		else if (!o || strcmp(o, SKED_OUTCOME_RELEASED) != 0)
			failed[k] += n;
	}
}

SKED_API int
sked_throughput(sked *h, int minutes, int64_t *ok, int64_t *failed)
{
	if (!h || !h->db || minutes < 1 || minutes > 120 || !ok || !failed)
		return SKED_EINVAL;
	memset(ok, 0, (size_t)minutes * sizeof *ok);
	memset(failed, 0, (size_t)minutes * sizeof *failed);
	int64_t now;
	int rc = sked_now(h, &now);
	if (rc != SKED_OK)
		return rc;
	/* minute buckets aligned to the clock, the current one last */
	int64_t cur = now / 60000, first = cur - minutes + 1;
	/* the attempts that ended tasks, recorded on their ended rows
	 * (schema 5): a range of task_done's index, counted there */
	sked_val since = SKED_INTV(first * 60000);
	sked_res d = {0};
	rc = sked__q(h, SKED_SQL_DONE_WINDOW, &since, 1, &d);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot read recent attempts");
	count_minutes(&d, cur, minutes, ok, failed);
	sked__res_clear(&d);
	/* the run rows: newest first by primary key, a chunk at a time,
	 * each counted per minute and outcome by the database. A run's id
	 * is drawn when it is inserted and its finished_at is the clock of
	 * that insert's transaction, so once a whole chunk finished more
	 * than RUNS_SKEW_MS before the window, no older id is in it. */
	int64_t below = INT64_MAX;
	for (;;) {
		sked_val p[2] = {SKED_INTV(below), SKED_INTV(RUNS_CHUNK)};
		sked_res r = {0};
		rc = sked__q(h, SKED_SQL_RUNS_WINDOW, p, 2, &r);
		if (rc != SKED_OK)
			return sked__fail_db(h, rc, "cannot read recent runs");
		int64_t rows = 0, newest = INT64_MIN, least = below;
		for (int i = 0; i < r.nrows; i++) {
			rows += sked__res_int(&r, i, 2);
			if (sked__res_int(&r, i, 3) < least)
				least = sked__res_int(&r, i, 3);
			if (!sked__res_null(&r, i, 4) &&
			    sked__res_int(&r, i, 4) > newest)
				newest = sked__res_int(&r, i, 4);
		}
		count_minutes(&r, cur, minutes, ok, failed);
		sked__res_clear(&r);
		if (rows < RUNS_CHUNK || least >= below ||
		    newest < first * 60000 - RUNS_SKEW_MS)
			break;
		below = least;
	}
	return SKED_OK;
}

/* ---- process-wide counters ---- */

static atomic_llong counter[SKED__COUNT_N];

void
sked__count(int which, int64_t n)
{
	if (which >= 0 && which < SKED__COUNT_N)
		atomic_fetch_add(&counter[which], n);
}

SKED_API void
sked_process_counters_get(sked_process_counters *out)
{
	if (!out)
		return;
	out->schedule_fires = atomic_load(&counter[SKED__COUNT_FIRES]);
	out->lock_acquisitions = atomic_load(&counter[SKED__COUNT_LOCKS]);
	out->lock_busy = atomic_load(&counter[SKED__COUNT_LOCK_BUSY]);
	out->schedule_skips = atomic_load(&counter[SKED__COUNT_SKIPS]);
	out->schedule_misfires = atomic_load(&counter[SKED__COUNT_MISFIRES]);
}
