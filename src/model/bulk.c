/*
 * bulk.c — retry and cancel many tasks at once: by ids (one
 * transaction) or by filter (in batches of ids, one short transaction
 * each), and counting what a filter matches.
 *
 * Layer: the model, beside queue.c, whose steps (sked__cancel_in_tx,
 * sked__retry_in_tx, sked__retry_back) move tasks between {p}task and
 * {p}task_done. Where a filter is optional the statement is assembled
 * from its fragments with every value bound (sked__filter_fill, as
 * sked_task_list does). The dashboard, the JSON API and `sked cancel`/
 * `sked retry` call it through sked.h.
 */
#include "model/queue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/done.h"
#include "util/buf.h"

/* Bulk changes go in batches of this many tasks, one short transaction
 * each (as retention does), so they hold few row locks at a time. */
#define STEER_BATCH 500

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
	if (f->status < -1 || f->status > SKED_BLOCKED)
		return sked__fail(h, SKED_EINVAL, "unknown task status %d",
		                  f->status);
	if (f->queue && sked__check_name(h, "queue", f->queue) != SKED_OK)
		return SKED_EINVAL;
	if (f->kind && sked__check_name(h, "kind", f->kind) != SKED_OK)
		return SKED_EINVAL;
	int64_t total = 0;
	for (int s = 0; s <= SKED_BLOCKED; s++) {
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
