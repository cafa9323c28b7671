/*
 * queue.c — tasks: inspect, cancel, retry, runs, counts.
 *
 * Folder src/model/ (floor 6, docs/design.md): what a task, a lease, a
 * limit, a schedule and a lock are, as statements of the registry:
 * queue.c, enqueue.c, take.c, outcome.c, ending.c, lease.c, limited.c,
 * limits.c, sched.c, lock.c, lock_run.c, gauges.c, bulk.c, nodes.c,
 * retention.c, done.c, deps.c, schema.c. Calls claim/ and below.
 *
 * Layer: the model. Every value is a bound parameter; every name is
 * checked against the strict pattern before it reaches SQL. Making tasks
 * is enqueue.c's; what a worker does with tasks is take.c's (claim),
 * outcome.c's and ending.c's (finish) and lease.c's (renew, take back).
 *
 * Task states and who moves them (one transition per statement, each
 * conditional on the state it leaves, so two movers cannot both win):
 *
 *   pending   (0) --claim (any node)-----------------> running
 *   retry     (4) --claim (any node)-----------------> running
 *   running   (1) --finish ok (owner)----------------> succeeded
 *             (1) --finish failed, attempts left-----> retry
 *                                                      (run_at = now + backoff)
 *             (1) --finish failed, attempts spent----> dead
 *             (1) --release on shutdown (owner)------> pending
 *                                                      (the attempt given back)
 *             (1) --lease expired (any live node)----> retry
 *                                                      (or dead, when spent)
 *   pending, retry, running, blocked --cancel (user)-> cancelled
 *   dead, cancelled, pending, retry --retry (user)---> pending
 *   blocked   (6) --its last open parent ends--------> pending
 *             (6) --a parent ends dead or cancelled--> cancelled
 *                   (policy cancel; docs/workflows.md, model/deps.c)
 *
 * Where they are (schema 4): live tasks (pending, running, retry) in
 * {p}task, ended ones (succeeded, dead, cancelled) in {p}task_done, same
 * columns and id. A task that ends moves in the transaction that ends it
 * (a cancel here, through sked__move_done); a retry of an ended task
 * moves it back; reads of one task, of a unique key and of lists read
 * both tables; an enqueue with a unique key looks in both
 * (enqueue_unique in enqueue.c says why that is race-free).
 */
#include "model/queue.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/done.h"
#include "util/buf.h"

/* ascending ids: parents are locked in one order (docs/workflows.md);
 * queue.c's own, so that it and deps.c do not call each other */
static int
cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int
sked__one_id(sked *h, sked_sql stmt, const sked_val *p, int np, int64_t *id)
{
	sked_res r = {0};
	int rc = sked__q(h, stmt, p, np, &r);
	*id = rc == SKED_OK && r.nrows > 0 ? sked__res_int(&r, 0, 0) : 0;
	sked__res_clear(&r);
	return rc;
}

/* ---- reading tasks ---- */

/* An id that is in neither table: never given, or the task ended and
 * retention removed it (ids are never reused: docs/design.md) */
#define NO_TASK                                                                \
	"no task %lld (none was enqueued with that id, or it ended and was "   \
	"pruned)"

static int
task_from_row(const sked_res *r, int i, sked_task *t)
{
	int oom = 0;
	memset(t, 0, sizeof *t);
	t->id = sked__res_int(r, i, 0);
	t->queue = sked__res_dup(r, i, 1, &oom);
	t->kind = sked__res_dup(r, i, 2, &oom);
	t->payload = sked__res_dup(r, i, 3, &oom);
	t->payload_len = t->payload ? sked__res_len(r, i, 3) : 0;
	t->status = (int)sked__res_int(r, i, 4);
	t->priority = (int)sked__res_int(r, i, 5);
	t->run_at_ms = sked__res_int(r, i, 6);
	t->attempts = (int)sked__res_int(r, i, 7);
	t->max_attempts = (int)sked__res_int(r, i, 8);
	t->node_id = sked__res_dup(r, i, 9, &oom);
	t->lease_until_ms = sked__res_int(r, i, 10);
	t->unique_key = sked__res_dup(r, i, 11, &oom);
	t->schedule_name = sked__res_dup(r, i, 12, &oom);
	t->fire_time_ms = sked__res_int(r, i, 13);
	t->last_error = sked__res_dup(r, i, 14, &oom);
	t->created_ms = sked__res_int(r, i, 15);
	t->updated_ms = sked__res_int(r, i, 16);
	t->finished_ms = sked__res_int(r, i, 17);
	t->traceparent = sked__res_dup(r, i, 18, &oom);
	if (r->ncols > 19) /* SKED_SQL_TASK_GET's */
		t->result = sked__res_dup(r, i, 19, &oom);
	return oom ? SKED_ENOMEM : SKED_OK;
}

static int
tasks_from_rows(sked *h, const sked_res *r, sked_task **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (r->nrows == 0)
		return SKED_OK;
	sked_task *t = calloc((size_t)r->nrows, sizeof *t);
	if (!t)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	for (int i = 0; i < r->nrows; i++) {
		if (task_from_row(r, i, &t[i]) != SKED_OK) {
			sked_tasks_free(t, (size_t)i + 1);
			return sked__fail(h, SKED_ENOMEM, "out of memory");
		}
	}
	*out = t;
	*n = (size_t)r->nrows;
	return SKED_OK;
}

SKED_API int
sked_task_get(sked *h, int64_t id, sked_task **out)
{
	if (!h || !h->db || !out)
		return SKED_EINVAL;
	*out = NULL;
	sked_val p = SKED_INTV(id);
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_TASK_GET, &p, 1, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot read the task");
	/* live or ended: one row (the first, should a reader that is not
	 * given one snapshot see both sides of a move) */
	if (r.nrows == 0) {
		sked__res_clear(&r);
		return sked__fail(h, SKED_ENOTFOUND, NO_TASK, (long long)id);
	}
	sked_task *t = calloc(1, sizeof *t);
	rc = t ? task_from_row(&r, 0, t) : SKED_ENOMEM;
	sked__res_clear(&r);
	if (rc != SKED_OK) {
		sked_tasks_free(t, t ? 1 : 0);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	*out = t;
	return SKED_OK;
}

/* Append the filters a list and a bulk change share (queue, kind, node,
 * creation window) to sql, their values bound after p[*np]: registry
 * fragments only, every value a parameter. p needs room for five more. */
void
sked__filter_fill(sked *h, const sked_list_filter *f, sked_buf *sqlp,
                  sked_val *p, int *npp)
{
	sked_buf sql = *sqlp;
	int np = *npp;
	if (f->queue) {
		p[np++] = SKED_TEXTV(f->queue);
		sked__sql_fill(&sql, h->sql[SKED_SQL_AND_QUEUE], np, 1);
	}
	if (f->kind) {
		p[np++] = SKED_TEXTV(f->kind);
		sked__sql_fill(&sql, h->sql[SKED_SQL_AND_KIND], np, 1);
	}
	if (f->node_id) {
		p[np++] = SKED_TEXTV(f->node_id);
		sked__sql_fill(&sql, h->sql[SKED_SQL_AND_NODE], np, 1);
	}
	if (f->created_after_ms > 0) {
		p[np++] = SKED_INTV(f->created_after_ms);
		sked__sql_fill(&sql, h->sql[SKED_SQL_AND_CREATED_FROM], np, 1);
	}
	if (f->created_before_ms > 0) {
		p[np++] = SKED_INTV(f->created_before_ms);
		sked__sql_fill(&sql, h->sql[SKED_SQL_AND_CREATED_BEFORE], np,
		               1);
	}
	*sqlp = sql;
	*npp = np;
}

SKED_API int
sked_task_list(sked *h, const sked_list_filter *f, sked_task **out, size_t *n)
{
	if (!h || !h->db || !out || !n)
		return SKED_EINVAL;
	*out = NULL;
	*n = 0;
	static const sked_list_filter all = {.status = -1};
	if (!f)
		f = &all;
	if (f->queue && sked__check_name(h, "queue", f->queue) != SKED_OK)
		return SKED_EINVAL;
	if (f->kind && sked__check_name(h, "kind", f->kind) != SKED_OK)
		return SKED_EINVAL;
	/* The statement is assembled from registry fragments only; every
	 * value is bound. */
	/* Live tasks are in {p}task, ended ones in {p}task_done: a status
	 * names one table; without one, each table's newest rows are merged
	 * (the filters bound once, their markers used in both halves). */
	sked_val p[9];
	int np = 0;
	sked_buf sql = {0};
	int ended = f->status == SKED_SUCCEEDED || f->status == SKED_DEAD ||
	            f->status == SKED_CANCELLED;
	int both = f->status < 0;
	sked__sql_fill(&sql,
	               h->sql[both    ? SKED_SQL_LIST_BOTH_HEAD
	                      : ended ? SKED_SQL_LIST_DONE_HEAD
	                              : SKED_SQL_LIST_HEAD],
	               0, 0);
	if (f->status >= 0) {
		p[np++] = SKED_INTV(f->status);
		sked__sql_fill(&sql, h->sql[SKED_SQL_AND_STATUS], np, 1);
	}
	if (f->before_id > 0) {
		p[np++] = SKED_INTV(f->before_id);
		sked__sql_fill(&sql, h->sql[SKED_SQL_AND_BEFORE_ID], np, 1);
	}
	int nfilter = np;
	sked__filter_fill(h, f, &sql, p, &np);
	p[np++] = SKED_INTV(f->limit > 0 ? f->limit : 100);
	if (both) {
		/* the same fragments again, on the same markers */
		int again = 0;
		sked_val scratch[9];
		sked__sql_fill(&sql, h->sql[SKED_SQL_LIST_BOTH_MID], np, 1);
		if (f->before_id > 0)
			sked__sql_fill(&sql, h->sql[SKED_SQL_AND_BEFORE_ID],
			               ++again, 1);
		again = nfilter;
		sked__filter_fill(h, f, &sql, scratch, &again);
		sked__sql_fill(&sql, h->sql[SKED_SQL_LIST_BOTH_TAIL], np, 1);
	} else
		sked__sql_fill(&sql, h->sql[SKED_SQL_LIST_TAIL], np, 1);
	if (sql.oom) {
		sked__buf_free(&sql);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	sked_res r = {0};
	int rc = sked__qdyn(h, sql.p, p, np, &r);
	sked__buf_free(&sql);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot list tasks");
	rc = tasks_from_rows(h, &r, out, n);
	sked__res_clear(&r);
	return rc;
}

SKED_API void
sked_tasks_free(sked_task *tasks, size_t n)
{
	if (!tasks)
		return;
	for (size_t i = 0; i < n; i++) {
		sked_task *t = &tasks[i];
		free(t->queue);
		free(t->kind);
		free(t->payload);
		free(t->node_id);
		free(t->unique_key);
		free(t->schedule_name);
		free(t->last_error);
		free(t->result);
		free(t->traceparent);
	}
	free(tasks);
}

/* ---- steering ---- */

static int
task_status(sked *h, int64_t id, int *status)
{
	sked_val p = SKED_INTV(id);
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_TASK_STATUS, &p, 1, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot read the task");
	if (r.nrows == 0)
		rc = sked__fail(h, SKED_ENOTFOUND, NO_TASK, (long long)id);
	else
		*status = (int)sked__res_int(&r, 0, 0);
	sked__res_clear(&r);
	return rc;
}

/* Run a {ids} statement over n ids, their markers from ?first: p holds
 * the first - 1 parameters before them, and room for the ids after. */
static int
run_ids(sked *h, sked_sql stmt, sked_val *p, int first, const int64_t *ids,
        int n, int64_t *affected)
{
	sked_buf sql = {0};
	sked__sql_fill(&sql, h->sql[stmt], first, n);
	if (sql.oom) {
		sked__buf_free(&sql);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	for (int i = 0; i < n; i++)
		p[first - 1 + i] = SKED_INTV(ids[i]);
	int rc = sked__qdyn(h, sql.p, p, first - 1 + n, NULL);
	sked__buf_free(&sql);
	if (affected)
		*affected = rc == SKED_OK && sked__affected(h) > 0
		                    ? sked__affected(h)
		                    : 0;
	return rc;
}

/* Cancel one live task inside the caller's transaction, moving it to
 * {p}task_done; *changed 1 when it was live. */
int
sked__cancel_in_tx(sked *h, int64_t id, int64_t *changed)
{
	sked_val p = SKED_INTV(id);
	*changed = 0;
	int rc = sked__q(h, SKED_SQL_CANCEL, &p, 1, NULL);
	if (rc != SKED_OK || sked__affected(h) != 1)
		return rc;
	*changed = 1;
	return sked__move_done(h, &id, 1);
}

SKED_API int
sked_cancel(sked *h, int64_t id)
{
	if (!h || !h->db)
		return SKED_EINVAL;
	int64_t changed = 0;
	int rc = sked__begin(h, 0);
	if (rc == SKED_OK)
		rc = sked__cancel_in_tx(h, id, &changed);
	if (rc == SKED_OK && changed)
		rc = sked__commit(h);
	else
		sked__rollback(h);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot cancel the task");
	if (changed)
		return SKED_OK;
	int st;
	if ((rc = task_status(h, id, &st)) != SKED_OK)
		return rc;
	return sked__fail(h, SKED_ESTATE, "task %lld has already %s",
	                  (long long)id,
	                  st == SKED_SUCCEEDED   ? "succeeded"
	                  : st == SKED_DEAD      ? "died"
	                  : st == SKED_CANCELLED ? "been cancelled"
	                                         : "changed");
}

/* Statements over {ids} go in chunks of this many (under every
 * product's parameter limit) */
#define RETRY_CHUNK 400

/* Lock the live parents of the ended tasks ids (about to come back), one
 * by one in id order: a parent ending at the same moment either ended
 * before (and is read as ended by the count below) or waits for this
 * commit and then finds its retried children blocked. */
static int
lock_live_parents(sked *h, const int64_t *ids, int n)
{
	sked_val *p =
	        calloc((size_t)(n < RETRY_CHUNK ? n : RETRY_CHUNK), sizeof *p);
	int64_t *par = NULL;
	size_t np = 0, cap = 0;
	int rc = p ? SKED_OK : sked__fail(h, SKED_ENOMEM, "out of memory");
	for (int at = 0; at < n && rc == SKED_OK; at += RETRY_CHUNK) {
		int k = n - at < RETRY_CHUNK ? n - at : RETRY_CHUNK;
		sked_buf sql = {0};
		sked_res r = {0};
		sked__sql_fill(&sql, h->sql[SKED_SQL_RETRY_PARENTS], 1, k);
		for (int i = 0; i < k; i++)
			p[i] = SKED_INTV(ids[at + i]);
		rc = sql.oom ? sked__fail(h, SKED_ENOMEM, "out of memory")
		             : sked__qdyn(h, sql.p, p, k, &r);
		sked__buf_free(&sql);
		for (int i = 0; rc == SKED_OK && i < r.nrows; i++) {
			if (np == cap) {
				size_t nc = cap ? 2 * cap : 64;
				int64_t *g = realloc(par, sizeof *g * nc);
				if (!g) {
					rc = sked__fail(h, SKED_ENOMEM,
					                "out of memory");
					break;
				}
				par = g;
				cap = nc;
			}
			par[np++] = sked__res_int(&r, i, 0);
		}
		sked__res_clear(&r);
	}
	free(p);
	if (rc == SKED_OK && np > 1) {
		qsort(par, np, sizeof *par, cmp_id);
		size_t m = 0;
		for (size_t i = 0; i < np; i++)
			if (m == 0 || par[m - 1] != par[i])
				par[m++] = par[i];
		np = m;
	}
	for (size_t i = 0; i < np && rc == SKED_OK; i++) {
		sked_val v[2] = {SKED_INTV(par[i]), SKED_INTV(0)};
		rc = sked__q(h, SKED_SQL_DEP_LIVE, v, 2, NULL);
	}
	free(par);
	return rc;
}

/* The retried tasks ids, back in {p}task as pending, that still wait for
 * a parent (a live one; under "cancel" also one that ended dead or
 * cancelled, which must run again and succeed first) become blocked with
 * that many open parents: a retry never runs a child before its parents
 * (docs/workflows.md). Runs after every chunk is back, so a parent
 * retried in the same call counts as live. */
static int
block_waiting(sked *h, const int64_t *ids, int n)
{
	sked_val *p =
	        calloc((size_t)(n < RETRY_CHUNK ? n : RETRY_CHUNK), sizeof *p);
	int rc = p ? SKED_OK : sked__fail(h, SKED_ENOMEM, "out of memory");
	for (int at = 0; at < n && rc == SKED_OK; at += RETRY_CHUNK) {
		int k = n - at < RETRY_CHUNK ? n - at : RETRY_CHUNK;
		sked_buf sql = {0};
		sked_res r = {0};
		sked__sql_fill(&sql, h->sql[SKED_SQL_RETRY_OPEN], 1, k);
		for (int i = 0; i < k; i++)
			p[i] = SKED_INTV(ids[at + i]);
		rc = sql.oom ? sked__fail(h, SKED_ENOMEM, "out of memory")
		             : sked__qdyn(h, sql.p, p, k, &r);
		sked__buf_free(&sql);
		for (int i = 0; rc == SKED_OK && i < r.nrows; i++) {
			sked_val v[2] = {SKED_INTV(sked__res_int(&r, i, 0)),
			                 SKED_INTV(sked__res_int(&r, i, 1))};
			rc = sked__q(h, SKED_SQL_RETRY_BLOCK, v, 2, NULL);
		}
		sked__res_clear(&r);
	}
	free(p);
	return rc;
}

SKED_API int
sked_cancel_graph(sked *h, int64_t id, int64_t **with, size_t *n)
{
	if (!h || !h->db || !with || !n)
		return SKED_EINVAL;
	*with = NULL;
	*n = 0;
	h->cascade.on = 1;
	h->cascade.n = 0;
	int rc = sked_cancel(h, id);
	h->cascade.on = 0;
	if (rc == SKED_OK) {
		*with = h->cascade.ids;
		*n = h->cascade.n;
	} else {
		free(h->cascade.ids);
	}
	h->cascade.ids = NULL;
	h->cascade.n = h->cascade.cap = 0;
	return rc;
}

/* Retry the ended tasks ids (dead or cancelled, in {p}task_done) inside
 * the caller's transaction: their rows there are locked first (so two
 * retries of one task take turns, and the second finds it gone), the live
 * parents of any of them locked in id order, the rows copied back into
 * {p}task as pending with the same ids and dropped; those whose parents
 * have not all ended well are then blocked again (block_waiting).
 * *changed: how many went back. A unique key or schedule fire that a live
 * task has taken meanwhile makes the copy fail (SKED_DBE_UNIQUE); the
 * caller rolls back and says so (retry_refused). */
int
sked__retry_back(sked *h, const int64_t *ids, int n, int64_t *changed)
{
	*changed = 0;
	int k0 = n < RETRY_CHUNK ? n : RETRY_CHUNK;
	sked_val *p = calloc((size_t)(k0 > 0 ? k0 : 1), sizeof *p);
	if (!p)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	int64_t total = 0;
	int rc = SKED_OK;
	for (int at = 0; at < n && rc == SKED_OK; at += RETRY_CHUNK) {
		int k = n - at < RETRY_CHUNK ? n - at : RETRY_CHUNK;
		int64_t locked = 0;
		rc = run_ids(h, SKED_SQL_RETRY_LOCK, p, 1, ids + at, k,
		             &locked);
		total += locked;
	}
	if (rc != SKED_OK || total == 0) {
		free(p);
		return rc;
	}
	rc = lock_live_parents(h, ids, n);
	total = 0;
	for (int at = 0; at < n && rc == SKED_OK; at += RETRY_CHUNK) {
		int k = n - at < RETRY_CHUNK ? n - at : RETRY_CHUNK;
		int64_t dropped = 0;
		rc = run_ids(h, SKED_SQL_RETRY_RUNS, p, 1, ids + at, k, NULL);
		if (rc == SKED_OK)
			rc = run_ids(h, SKED_SQL_RETRY_BACK, p, 1, ids + at, k,
			             NULL);
		if (rc == SKED_OK)
			rc = run_ids(h, SKED_SQL_RETRY_DROP, p, 1, ids + at, k,
			             &dropped);
		total += dropped;
	}
	free(p);
	if (rc == SKED_OK && total > 0)
		rc = block_waiting(h, ids, n);
	if (rc == SKED_OK)
		*changed = total;
	return rc;
}

/* After a retry of ended task id was refused by a unique index: one line
 * that says which live task holds what it needs. */
int
sked__retry_refused(sked *h, int64_t id)
{
	sked_task *t = NULL;
	if (sked_task_get(h, id, &t) != SKED_OK)
		return sked__fail(h, SKED_ESTATE,
		                  "cannot retry task %lld: a live task holds "
		                  "its unique key or schedule fire",
		                  (long long)id);
	int64_t holder = 0;
	if (t->unique_key) {
		sked_val k = SKED_TEXTV(t->unique_key);
		sked__ignore(
		        sked__one_id(h, SKED_SQL_LIVE_UNIQUE, &k, 1, &holder));
	}
	int rc;
	if (t->unique_key && holder)
		rc = sked__fail(h, SKED_ESTATE,
		                "cannot retry task %lld: its unique key '%s' "
		                "is now held by task %lld",
		                (long long)id, t->unique_key,
		                (long long)holder);
	else if (t->unique_key)
		rc = sked__fail(h, SKED_ESTATE,
		                "cannot retry task %lld: a live task holds its "
		                "unique key '%s'",
		                (long long)id, t->unique_key);
	else
		rc = sked__fail(h, SKED_ESTATE,
		                "cannot retry task %lld: a live task holds its "
		                "schedule fire (%s)",
		                (long long)id,
		                t->schedule_name ? t->schedule_name : "?");
	sked_tasks_free(t, 1);
	return rc;
}

/* Retry one task inside the caller's transaction: a live one waiting
 * (or pending) in place, an ended one back from {p}task_done. */
int
sked__retry_in_tx(sked *h, int64_t id, int64_t *changed)
{
	sked_val p = SKED_INTV(id);
	*changed = 0;
	int rc = sked__q(h, SKED_SQL_RETRY, &p, 1, NULL);
	if (rc != SKED_OK)
		return rc;
	if (sked__affected(h) == 1) {
		*changed = 1;
		return SKED_OK;
	}
	return sked__retry_back(h, &id, 1, changed);
}

SKED_API int
sked_retry(sked *h, int64_t id)
{
	if (!h || !h->db)
		return SKED_EINVAL;
	int64_t changed = 0;
	int rc = sked__begin(h, 0);
	if (rc == SKED_OK)
		rc = sked__retry_in_tx(h, id, &changed);
	if (rc == SKED_OK && changed)
		rc = sked__commit(h);
	else if (rc == SKED_OK)
		sked__rollback(h);
	if (rc != SKED_OK) {
		int unique = sked__err_kind(h) == SKED_DBE_UNIQUE;
		int frc = sked__fail_db(h, rc, "cannot retry the task");
		sked__rollback(h);
		return unique ? sked__retry_refused(h, id) : frc;
	}
	if (changed)
		return SKED_OK;
	int st;
	if ((rc = task_status(h, id, &st)) != SKED_OK)
		return rc;
	return sked__fail(h, SKED_ESTATE,
	                  "task %lld is %s; only dead, "
	                  "cancelled or waiting tasks can be retried",
	                  (long long)id, sked_status_name(st));
}

/* The sub-graph the end of ended task id cancelled: its cancelled
 * children whose error names it ("parent N ended dead", "parent N was
 * cancelled"), theirs, …; appended to *all (id itself first). */
static int
cascade_of(sked *h, int64_t **all, size_t *n, size_t *cap)
{
	for (size_t at = 0; at < *n; at++) {
		char dead[64], cancelled[64];
		snprintf(dead, sizeof dead, "parent %lld ended dead",
		         (long long)(*all)[at]);
		snprintf(cancelled, sizeof cancelled,
		         "parent %lld was cancelled", (long long)(*all)[at]);
		sked_val p[3] = {SKED_INTV((*all)[at]), SKED_TEXTV(dead),
		                 SKED_TEXTV(cancelled)};
		sked_res r = {0};
		int rc = sked__q(h, SKED_SQL_RETRY_CASCADE, p, 3, &r);
		if (rc != SKED_OK)
			return rc;
		for (int i = 0; i < r.nrows; i++) {
			int64_t c = sked__res_int(&r, i, 0);
			int seen = 0; /* a child of two parents of the graph */
			for (size_t j = 0; j < *n && !seen; j++)
				seen = (*all)[j] == c;
			if (seen)
				continue;
			if (*n == *cap) {
				size_t nc = *cap * 2;
				int64_t *g = realloc(*all, sizeof *g * nc);
				if (!g) {
					sked__res_clear(&r);
					return sked__fail(h, SKED_ENOMEM,
					                  "out of memory");
				}
				*all = g;
				*cap = nc;
			}
			(*all)[(*n)++] = c;
		}
		sked__res_clear(&r);
	}
	return SKED_OK;
}

SKED_API int
sked_retry_graph(sked *h, int64_t id, int64_t **ids, size_t *n)
{
	if (!h || !h->db || !ids || !n)
		return SKED_EINVAL;
	*ids = NULL;
	*n = 0;
	size_t cap = 64, k = 1;
	int64_t *all = malloc(sizeof *all * cap), changed = 0;
	if (!all)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	all[0] = id;
	int rc = sked__begin(h, 0);
	if (rc == SKED_OK)
		rc = cascade_of(h, &all, &k, &cap);
	if (rc == SKED_OK && k > (size_t)INT32_MAX)
		rc = sked__fail(h, SKED_EINVAL, "too many tasks");
	if (rc == SKED_OK)
		rc = sked__retry_back(h, all, (int)k, &changed);
	if (rc == SKED_OK && changed)
		rc = sked__commit(h);
	else if (rc == SKED_OK)
		sked__rollback(h);
	if (rc != SKED_OK) {
		int unique = sked__err_kind(h) == SKED_DBE_UNIQUE;
		int frc = sked__fail_db(h, rc, "cannot retry the tasks");
		sked__rollback(h);
		free(all);
		return unique ? sked__retry_refused(h, id) : frc;
	}
	if (changed) {
		*ids = all;
		*n = (size_t)changed < k ? (size_t)changed : k;
		return SKED_OK;
	}
	free(all);
	int st;
	if ((rc = task_status(h, id, &st)) != SKED_OK)
		return rc;
	return sked__fail(h, SKED_ESTATE,
	                  "task %lld is %s; only a dead or cancelled task "
	                  "can be retried with its dependents",
	                  (long long)id, sked_status_name(st));
}

/* ---- runs and counts ---- */

SKED_API int
sked_runs_get(sked *h, int64_t task_id, sked_run **out, size_t *n)
{
	if (!h || !h->db || !out || !n)
		return SKED_EINVAL;
	*out = NULL;
	*n = 0;
	sked_val p = SKED_INTV(task_id);
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_RUNS_GET, &p, 1, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot read the runs");
	if (r.nrows == 0) {
		sked__res_clear(&r);
		return SKED_OK;
	}
	sked_run *runs = calloc((size_t)r.nrows, sizeof *runs);
	if (!runs) {
		sked__res_clear(&r);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	int oom = 0;
	for (int i = 0; i < r.nrows; i++) {
		sked_run *x = &runs[i];
		x->id = sked__res_int(&r, i, 0);
		x->task_id = sked__res_int(&r, i, 1);
		x->attempt = (int)sked__res_int(&r, i, 2);
		x->node_id = sked__res_dup(&r, i, 3, &oom);
		x->started_ms = sked__res_int(&r, i, 4);
		x->finished_ms = sked__res_int(&r, i, 5);
		x->outcome = sked__res_dup(&r, i, 6, &oom);
		x->exit_code = sked__res_null(&r, i, 7)
		                       ? -1
		                       : (int)sked__res_int(&r, i, 7);
		x->error = sked__res_dup(&r, i, 8, &oom);
		x->output = sked__res_dup(&r, i, 9, &oom);
	}
	/* the attempt an ended row records (run id 0) ended the task: it
	 * comes after every run row */
	if (r.nrows > 1 && runs[0].id == 0) {
		sked_run last = runs[0];
		memmove(runs, runs + 1, sizeof *runs * (size_t)(r.nrows - 1));
		runs[r.nrows - 1] = last;
	}
	*n = (size_t)r.nrows;
	sked__res_clear(&r);
	*out = runs;
	if (oom) {
		sked_runs_free(runs, *n);
		*out = NULL;
		*n = 0;
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	return SKED_OK;
}

SKED_API void
sked_runs_free(sked_run *runs, size_t n)
{
	if (!runs)
		return;
	for (size_t i = 0; i < n; i++) {
		free(runs[i].node_id);
		free(runs[i].outcome);
		free(runs[i].error);
		free(runs[i].output);
	}
	free(runs);
}

SKED_API int
sked_stats(sked *h, sked_queue_stats **out, size_t *n)
{
	if (!h || !h->db || !out || !n)
		return SKED_EINVAL;
	*out = NULL;
	*n = 0;
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_STATS, NULL, 0, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot count tasks");
	/* one entry per queue, live and ended tasks alike; a queue's rows
	 * from both tables come one after another (ORDER BY 1) */
	sked_queue_stats *s = calloc((size_t)r.nrows + 1, sizeof *s);
	if (!s) {
		sked__res_clear(&r);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	size_t k = 0;
	for (int i = 0; i < r.nrows; i++) {
		int st = (int)sked__res_int(&r, i, 1);
		int64_t cnt = sked__res_int(&r, i, 2);
		if (st < 0 || st > SKED_BLOCKED)
			continue;
		const char *q = sked__res_text(&r, i, 0);
		if (k == 0 || strcmp(s[k - 1].queue, q) != 0)
			snprintf(s[k++].queue, sizeof s->queue, "%s", q);
		s[k - 1].count[st] += cnt;
		s[k - 1].due += sked__res_int(&r, i, 3);
	}
	sked__res_clear(&r);
	if (k == 0) {
		free(s);
		s = NULL;
	}
	*out = s;
	*n = k;
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
