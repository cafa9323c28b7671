/*
 * done.c — ended tasks leave the hot table.
 *
 * Layer: the model. Since schema version 4 a task that ends (succeeded,
 * dead, cancelled) moves from {p}task to {p}task_done, same columns and
 * id, in the transaction that ended it: {p}task holds only live work, so
 * claims, renewals and their indexes cost the same however many tasks
 * have ended. Every path that ends a task through the generic statements
 * (a finish, a lease taken back from a task whose attempts are spent, a
 * cancel) calls sked__move_done inside its transaction after the update;
 * PostgreSQL's array finish moves in its own statement (dialect/
 * postgresql.c). Reads that show ended tasks read both tables (queue.c,
 * bulk.c); retention deletes from {p}task_done only (retention.c).
 * Before the rows leave {p}task, sked__deps_ended tells the children of
 * those that are parents (docs/workflows.md; the enqueue side is
 * deps.c).
 */
#include "model/done.h"

#include <stdio.h>
#include <stdlib.h>

#include "util/buf.h"

/* one statement over ids (?1…) */
static int
ids_q(sked *h, sked_sql stmt, const int64_t *ids, int n, sked_res *r)
{
	sked_val *p = calloc((size_t)n, sizeof *p);
	sked_buf sql = {0};
	int rc = SKED_OK;
	if (!p)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	for (int i = 0; i < n; i++)
		p[i] = SKED_INTV(ids[i]);
	sked__sql_fill(&sql, h->sql[stmt], 1, n);
	if (sql.oom)
		rc = sked__fail(h, SKED_ENOMEM, "out of memory");
	else
		rc = sked__qdyn(h, sql.p, p, n, r);
	free(sql.p);
	free(p);
	return rc;
}

/* Parent id ended with status st: its children learn it. */
static int
parent_ended(sked *h, int64_t id, int st)
{
	sked_val p[2] = {SKED_INTV(id), SKED_NULLV};
	int rc = sked__q(h,
	                 st == SKED_SUCCEEDED ? SKED_SQL_DEP_RELEASE
	                                      : SKED_SQL_DEP_RELEASE_IGN,
	                 p, 1, NULL);
	/* children changed (some may be pending now): wake the workers
	 * where the product can (PostgreSQL: delivered at commit) */
	if (rc == SKED_OK && sked__affected(h) > 0 && h->notify_sql)
		rc = sked__qdyn(h, h->notify_sql, NULL, 0, NULL);
	if (rc != SKED_OK || st == SKED_SUCCEEDED)
		return rc;
	char err[128];
	snprintf(err, sizeof err, "parent %lld %s", (long long)id,
	         st == SKED_DEAD ? "ended dead" : "was cancelled");
	p[1] = SKED_TEXTV(err);
	rc = sked__q(h, SKED_SQL_DEP_CANCEL, p, 2, NULL);
	if (rc != SKED_OK || sked__affected(h) == 0)
		return rc;
	sked_res r = {0};
	rc = sked__q(h, SKED_SQL_DEP_CANCELLED, p, 1, &r);
	if (rc != SKED_OK)
		return rc;
	int64_t *kids = calloc((size_t)r.nrows + 1, sizeof *kids);
	if (!kids) {
		sked__res_clear(&r);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	int n = r.nrows;
	for (int i = 0; i < n; i++)
		kids[i] = sked__res_int(&r, i, 0);
	sked__res_clear(&r);
	/* the cancelled children end here too: moved, and their own
	 * children told, in this transaction */
	rc = n > 0 ? sked__move_done(h, kids, n) : SKED_OK;
	free(kids);
	return rc;
}

int
sked__deps_ended(sked *h, const int64_t *ids, int n)
{
	if (n <= 0)
		return SKED_OK;
	sked_res r = {0};
	int rc = ids_q(h, SKED_SQL_DEP_ENDED, ids, n, &r);
	if (rc != SKED_OK || r.nrows == 0) {
		sked__res_clear(&r);
		return rc;
	}
	int k = r.nrows;
	int64_t *pid = malloc(sizeof *pid * (size_t)k);
	int *pst = malloc(sizeof *pst * (size_t)k);
	if (!pid || !pst) {
		rc = sked__fail(h, SKED_ENOMEM, "out of memory");
		k = 0;
	}
	for (int i = 0; i < k; i++) {
		pid[i] = sked__res_int(&r, i, 0);
		pst[i] = (int)sked__res_int(&r, i, 1);
	}
	sked__res_clear(&r);
	for (int i = 0; i < k && rc == SKED_OK; i++)
		rc = parent_ended(h, pid[i], pst[i]);
	free(pid);
	free(pst);
	return rc;
}

/* Drop the ended rows among ids (p: their values, n) from {p}task, their
 * dependents told first (or, where the delete answers its rows, from
 * what it answers: no read of its own for a batch without parents). */
int
sked__drop_ended(sked *h, const int64_t *ids, const sked_val *p, int n)
{
	int ret = (h->dialect->caps & SKED_CAP_RETURNING) != 0;
	sked_buf drop = {0};
	sked_res r = {0};
	int rc = ret ? SKED_OK : sked__deps_ended(h, ids, n);
	if (rc != SKED_OK)
		return rc;
	sked__sql_fill(
	        &drop,
	        h->sql[ret ? SKED_SQL_DONE_DROP_RET : SKED_SQL_DONE_DROP], 1,
	        n);
	if (drop.oom)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	rc = sked__qdyn(h, drop.p, p, n, ret ? &r : NULL);
	free(drop.p);
	for (int i = 0; rc == SKED_OK && i < r.nrows; i++)
		if (sked__res_int(&r, i, 2) != 0)
			rc = parent_ended(h, sked__res_int(&r, i, 0),
			                  (int)sked__res_int(&r, i, 1));
	sked__res_clear(&r);
	return rc;
}

/* Copy then drop: both statements select the rows of ids that have ended,
 * so a live id in the list is left where it is. */
static int
move_chunk(sked *h, const int64_t *ids, int n)
{
	sked_val *p = calloc((size_t)n, sizeof *p);
	sked_buf copy = {0};
	int rc = SKED_OK;
	if (!p)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	for (int i = 0; i < n; i++)
		p[i] = SKED_INTV(ids[i]);
	sked__sql_fill(&copy, h->sql[SKED_SQL_DONE_COPY], 1, n);
	if (copy.oom)
		rc = sked__fail(h, SKED_ENOMEM, "out of memory");
	if (rc == SKED_OK)
		rc = sked__qdyn(h, copy.p, p, n, NULL);
	/* the rows leave, their dependents told */
	if (rc == SKED_OK)
		rc = sked__drop_ended(h, ids, p, n);
	free(copy.p);
	free(p);
	return rc;
}

int
sked__move_done(sked *h, const int64_t *ids, int n)
{
	int per = h->dialect->max_params - 1;
	if (per > 500)
		per = 500;
	for (int at = 0; at < n; at += per) {
		int k = n - at < per ? n - at : per;
		int rc = move_chunk(h, ids + at, k);
		if (rc != SKED_OK)
			return rc;
	}
	return SKED_OK;
}
