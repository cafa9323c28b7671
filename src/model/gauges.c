/*
 * admin.c — what operators read and steer: cluster gauges for /metrics,
 * recent throughput, bulk retry and cancel, node pruning, the lock list.
 *
 * Layer: the model, beside queue.c and lock.c. It serves the worker's
 * --http endpoint and `sked dashboard` (both in cli/), through sked.h.
 * Every statement is in the dialect registry (SKED_SQL_GAUGES and the
 * others, dialect.c), or, where a filter is optional, assembled from its
 * fragments with every value bound (as sked_task_list does). What each one
 * costs is in docs/operations.md: the scrape reads only unfinished tasks
 * ({p}task holds no other since schema 4), through the partial indexes
 * where the product has them, and throughput reads a bounded number of the
 * newest runs by primary key. Bulk retry and cancel by filter go in
 * batches of ids, one short transaction each, moving tasks between
 * {p}task and {p}task_done with queue.c's steps.
 */
#include "handle/internal.h"
#include "model/done.h"
#include "model/queue.h"

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

SKED_API int
sked_task_find_unique(sked *h, const char *key, int64_t *id)
{
	if (!h || !h->db || !key || !id)
		return SKED_EINVAL;
	sked_val p = SKED_TEXTV(key);
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_UNIQUE_GET, &p, 1, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot look up the unique key");
	if (r.nrows == 0) {
		sked__res_clear(&r);
		return sked__fail(h, SKED_ENOTFOUND,
		                  "no task has that unique key");
	}
	*id = sked__res_int(&r, 0, 0);
	sked__res_clear(&r);
	return SKED_OK;
}

/* Retry or cancel each id, in one transaction (queue.c's steps: a
 * cancelled task moves to {p}task_done, a retried ended one back). */
static int
each_id(sked *h, int retry, const int64_t *ids, size_t n, int64_t *done,
        const char *what)
{
	if (!h || !h->db || (n && !ids))
		return SKED_EINVAL;
	int64_t changed = 0;
	int rc = sked__begin(h, 0);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, what);
	size_t i = 0;
	for (; i < n && rc == SKED_OK; i++) {
		int64_t c = 0;
		rc = retry ? sked__retry_in_tx(h, ids[i], &c)
		           : sked__cancel_in_tx(h, ids[i], &c);
		changed += c;
	}
	if (rc == SKED_OK)
		rc = sked__commit(h);
	if (rc != SKED_OK) {
		int unique = sked__err_kind(h) == SKED_DBE_UNIQUE;
		int frc = sked__fail_db(h, rc, what);
		sked__rollback(h);
		return retry && unique && i > 0
		               ? sked__retry_refused(h, ids[i - 1])
		               : frc;
	}
	if (done)
		*done = changed;
	return SKED_OK;
}

SKED_API int
sked_retry_ids(sked *h, const int64_t *ids, size_t n, int64_t *done)
{
	return each_id(h, 1, ids, n, done, "cannot retry tasks");
}

SKED_API int
sked_cancel_ids(sked *h, const int64_t *ids, size_t n, int64_t *done)
{
	return each_id(h, 0, ids, n, done, "cannot cancel tasks");
}

/* Bulk changes go in batches of this many tasks, one short transaction
 * each (as retention does), so they hold few row locks at a time. */
#define STEER_BATCH 500

/* The next batch of ids of status f->status matching f in {p}task or
 * {p}task_done (pick), newest first, below *before (0: from the top). */
static int
pick_ids(sked *h, const sked_list_filter *f, sked_sql pick, int64_t before,
         int64_t *ids, int *k)
{
	sked_val p[8];
	int np = 0;
	sked_buf sql = {0};
	*k = 0;
	p[np++] = SKED_INTV(f->status);
	sked__sql_fill(&sql, h->sql[pick], 0, 0);
	if (before > 0) {
		p[np++] = SKED_INTV(before);
		sked__sql_fill(&sql, h->sql[SKED_SQL_AND_BEFORE_ID], np, 1);
	}
	sked__filter_fill(h, f, &sql, p, &np);
	p[np++] = SKED_INTV(STEER_BATCH);
	sked__sql_fill(&sql, h->sql[SKED_SQL_LIST_TAIL], np, 1);
	if (sql.oom) {
		sked__buf_free(&sql);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	sked_res r = {0};
	int rc = sked__qdyn(h, sql.p, p, np, &r);
	sked__buf_free(&sql);
	if (rc != SKED_OK)
		return rc;
	for (int i = 0; i < r.nrows && i < STEER_BATCH; i++)
		ids[(*k)++] = sked__res_int(&r, i, 0);
	sked__res_clear(&r);
	return SKED_OK;
}

/* Cancel one batch: the ids still of status ?1 become cancelled and move
 * to {p}task_done, in one transaction. */
static int
cancel_batch(sked *h, int status, const int64_t *ids, int k, int64_t *changed)
{
	sked_val *p = calloc((size_t)k + 1, sizeof *p);
	sked_buf sql = {0};
	*changed = 0;
	if (!p)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	p[0] = SKED_INTV(status);
	for (int i = 0; i < k; i++)
		p[i + 1] = SKED_INTV(ids[i]);
	sked__sql_fill(&sql, h->sql[SKED_SQL_CANCEL_IDS], 2, k);
	int rc = sql.oom ? SKED_ENOMEM : sked__begin(h, 0);
	if (rc == SKED_OK) {
		rc = sked__qdyn(h, sql.p, p, k + 1, NULL);
		if (rc == SKED_OK && sked__affected(h) > 0) {
			*changed = sked__affected(h);
			rc = sked__move_done(h, ids, k);
		}
		if (rc == SKED_OK)
			rc = sked__commit(h);
		else
			sked__rollback(h);
	}
	sked__buf_free(&sql);
	free(p);
	if (rc != SKED_OK)
		*changed = 0;
	return rc;
}

/* Retry one batch of ended tasks in one transaction. A live task holding
 * the unique key or schedule fire of one of them refuses the whole batch:
 * then each goes on its own, and the refused ones stay ended (counted in
 * *refused, the first named by *refused_id). */
static int
retry_batch(sked *h, const int64_t *ids, int k, int64_t *changed,
            int64_t *refused, int64_t *refused_id)
{
	*changed = 0;
	int rc = sked__begin(h, 0);
	if (rc == SKED_OK)
		rc = sked__retry_back(h, ids, k, changed);
	if (rc == SKED_OK)
		rc = sked__commit(h);
	if (rc == SKED_OK)
		return SKED_OK;
	int unique = sked__err_kind(h) == SKED_DBE_UNIQUE;
	sked__rollback(h);
	*changed = 0;
	if (!unique)
		return rc;
	for (int i = 0; i < k; i++) {
		int64_t c = 0;
		rc = sked__begin(h, 0);
		if (rc == SKED_OK)
			rc = sked__retry_back(h, &ids[i], 1, &c);
		if (rc == SKED_OK)
			rc = sked__commit(h);
		if (rc == SKED_OK) {
			*changed += c;
			continue;
		}
		unique = sked__err_kind(h) == SKED_DBE_UNIQUE;
		sked__rollback(h);
		if (!unique)
			return rc;
		if ((*refused)++ == 0)
			*refused_id = ids[i];
	}
	return SKED_OK;
}

/* Retry or cancel, in batches, the tasks matching f: cancels take live
 * tasks of f->status out of {p}task; retries of dead or cancelled tasks
 * bring them back from {p}task_done; a retry of waiting tasks is one
 * UPDATE in place (SKED_SQL_RETRY_WHERE). Paging by id, newest first,
 * so each task is looked at once. */
static int
steer_where(sked *h, const sked_list_filter *f, int retry, int64_t *done,
            const char *what)
{
	if (f->queue && sked__check_name(h, "queue", f->queue) != SKED_OK)
		return SKED_EINVAL;
	if (f->kind && sked__check_name(h, "kind", f->kind) != SKED_OK)
		return SKED_EINVAL;
	if (done)
		*done = 0;
	int rc;
	if (retry && f->status == SKED_RETRY) {
		sked_val p[6];
		int np = 0;
		sked_buf sql = {0};
		p[np++] = SKED_INTV(f->status);
		sked__sql_fill(&sql, h->sql[SKED_SQL_RETRY_WHERE], 0, 0);
		sked__filter_fill(h, f, &sql, p, &np);
		if (sql.oom) {
			sked__buf_free(&sql);
			return sked__fail(h, SKED_ENOMEM, "out of memory");
		}
		rc = sked__qdyn(h, sql.p, p, np, NULL);
		sked__buf_free(&sql);
		if (rc != SKED_OK)
			return sked__fail_db(h, rc, what);
		if (done)
			*done = sked__affected(h) > 0 ? sked__affected(h) : 0;
		return SKED_OK;
	}
	int64_t *ids = malloc(STEER_BATCH * sizeof *ids);
	if (!ids)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	int64_t total = 0, before = 0, refused = 0, refused_id = 0;
	for (;;) {
		int k = 0;
		int64_t c = 0;
		rc = pick_ids(h, f,
		              retry ? SKED_SQL_PICK_DONE : SKED_SQL_PICK_LIVE,
		              before, ids, &k);
		if (rc != SKED_OK || k == 0)
			break;
		rc = retry ? retry_batch(h, ids, k, &c, &refused, &refused_id)
		           : cancel_batch(h, f->status, ids, k, &c);
		if (rc != SKED_OK)
			break;
		total += c;
		before = ids[k - 1];
		if (k < STEER_BATCH)
			break;
	}
	free(ids);
	if (done)
		*done = total;
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, what);
	if (refused) {
		/* the first refusal's own line, with the count in front */
		sked__retry_refused(h, refused_id);
		char why[200];
		snprintf(why, sizeof why, "%s", sked_errmsg(h));
		return sked__fail(h, SKED_ESTATE,
		                  "%lld task(s) retried, %lld left ended (%s)",
		                  (long long)total, (long long)refused, why);
	}
	return SKED_OK;
}

/* How many tasks of one status match f, in the table that status lives
 * in. */
static int
count_status(sked *h, const sked_list_filter *f, int status, int64_t *n)
{
	int ended = status == SKED_SUCCEEDED || status == SKED_DEAD ||
	            status == SKED_CANCELLED;
	sked_val p[8];
	int np = 0;
	sked_buf sql = {0};
	p[np++] = SKED_INTV(status);
	sked__sql_fill(
	        &sql, h->sql[ended ? SKED_SQL_COUNT_DONE : SKED_SQL_COUNT_LIVE],
	        0, 0);
	sked__filter_fill(h, f, &sql, p, &np);
	if (sql.oom) {
		sked__buf_free(&sql);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	sked_res r = {0};
	int rc = sked__qdyn(h, sql.p, p, np, &r);
	sked__buf_free(&sql);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot count tasks");
	*n += r.nrows > 0 ? sked__res_int(&r, 0, 0) : 0;
	sked__res_clear(&r);
	return SKED_OK;
}

SKED_API int
sked_task_count(sked *h, const sked_list_filter *f, int64_t *n)
{
	if (!h || !h->db || !f || !n)
		return SKED_EINVAL;
	if (f->status < -1 || f->status > SKED_CANCELLED)
		return sked__fail(h, SKED_EINVAL, "unknown task status %d",
		                  f->status);
	if (f->queue && sked__check_name(h, "queue", f->queue) != SKED_OK)
		return SKED_EINVAL;
	if (f->kind && sked__check_name(h, "kind", f->kind) != SKED_OK)
		return SKED_EINVAL;
	int64_t total = 0;
	for (int s = 0; s <= SKED_CANCELLED; s++) {
		if (f->status >= 0 && s != f->status)
			continue;
		int rc = count_status(h, f, s, &total);
		if (rc != SKED_OK)
			return rc;
	}
	*n = total;
	return SKED_OK;
}

SKED_API int
sked_retry_where(sked *h, const sked_list_filter *f, int64_t *done)
{
	if (!h || !h->db || !f)
		return SKED_EINVAL;
	if (f->status != SKED_DEAD && f->status != SKED_RETRY &&
	    f->status != SKED_CANCELLED)
		return sked__fail(h, SKED_EINVAL,
		                  "only dead, retry or cancelled tasks can be "
		                  "retried");
	return steer_where(h, f, 1, done, "cannot retry tasks");
}

SKED_API int
sked_cancel_where(sked *h, const sked_list_filter *f, int64_t *done)
{
	if (!h || !h->db || !f)
		return SKED_EINVAL;
	if (f->status != SKED_PENDING && f->status != SKED_RUNNING &&
	    f->status != SKED_RETRY)
		return sked__fail(h, SKED_EINVAL,
		                  "only pending, running or retry tasks can be "
		                  "cancelled");
	return steer_where(h, f, 0, done, "cannot cancel tasks");
}

SKED_API int
sked_nodes_prune(sked *h, int64_t older_than_ms, int64_t *removed)
{
	if (!h || !h->db || older_than_ms < 0)
		return SKED_EINVAL;
	sked_val p = SKED_INTV(-older_than_ms);
	int rc = sked__q(h, SKED_SQL_NODES_PRUNE, &p, 1, NULL);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot prune nodes");
	if (removed)
		*removed = sked__affected(h) > 0 ? sked__affected(h) : 0;
	return SKED_OK;
}

SKED_API int
sked_lock_list(sked *h, sked_lock_row **out, size_t *n)
{
	if (!h || !h->db || !out || !n)
		return SKED_EINVAL;
	*out = NULL;
	*n = 0;
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_LOCK_LIST, NULL, 0, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot list locks");
	if (r.nrows == 0) {
		sked__res_clear(&r);
		return SKED_OK;
	}
	sked_lock_row *l = calloc((size_t)r.nrows, sizeof *l);
	int oom = !l;
	for (int i = 0; l && i < r.nrows; i++) {
		l[i].name = sked__res_dup(&r, i, 0, &oom);
		l[i].owner = sked__res_dup(&r, i, 1, &oom);
		l[i].locked_at_ms = sked__res_int(&r, i, 2);
		l[i].locked_until_ms = sked__res_int(&r, i, 3);
		l[i].token = sked__res_int(&r, i, 4);
		l[i].held = l[i].owner && l[i].owner[0] &&
		            l[i].locked_until_ms > sked__res_int(&r, i, 5);
	}
	size_t cnt = (size_t)r.nrows;
	sked__res_clear(&r);
	if (oom) {
		sked_lock_rows_free(l, l ? cnt : 0);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	*out = l;
	*n = cnt;
	return SKED_OK;
}

SKED_API void
sked_lock_rows_free(sked_lock_row *l, size_t n)
{
	if (!l)
		return;
	for (size_t i = 0; i < n; i++) {
		free(l[i].name);
		free(l[i].owner);
	}
	free(l);
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
