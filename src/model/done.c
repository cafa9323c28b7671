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
#include <string.h>

#include "model/wake.h"
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

int
sked__cascade_add(sked *h, const int64_t *ids, int n)
{
	if (!h->cascade.on || n <= 0)
		return SKED_OK;
	if (h->cascade.n + (size_t)n > h->cascade.cap) {
		size_t nc = h->cascade.cap ? h->cascade.cap : 64;
		while (nc < h->cascade.n + (size_t)n)
			nc *= 2;
		int64_t *g = realloc(h->cascade.ids, sizeof *g * nc);
		if (!g)
			return sked__fail(h, SKED_ENOMEM, "out of memory");
		h->cascade.ids = g;
		h->cascade.cap = nc;
	}
	memcpy(h->cascade.ids + h->cascade.n, ids, sizeof *ids * (size_t)n);
	h->cascade.n += (size_t)n;
	return SKED_OK;
}

/* Parent id ended with status st: its children learn it (released: its
 * release ran already, release_by_ids). *woke grows by the children
 * that changed (some may be pending now). */
static int
parent_ended(sked *h, int64_t id, int st, int released, int *woke)
{
	sked_val p[2] = {SKED_INTV(id), SKED_NULLV};
	int rc = released ? SKED_OK
	                  : sked__q(h,
	                            st == SKED_SUCCEEDED
	                                    ? SKED_SQL_DEP_RELEASE
	                                    : SKED_SQL_DEP_RELEASE_IGN,
	                            p, 1, NULL);
	if (!released && rc == SKED_OK && sked__affected(h) > 0)
		*woke += (int)sked__affected(h);
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
	rc = n > 0 ? sked__cascade_add(h, kids, n) : SKED_OK;
	if (rc == SKED_OK && n > 0)
		rc = sked__move_done(h, kids, n);
	free(kids);
	return rc;
}

/* an ended parent and its status */
typedef struct ended {
	int64_t id;
	int st;
} ended;

static int
cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static int
cmp_ended(const void *a, const void *b)
{
	return cmp_id(&((const ended *)a)->id, &((const ended *)b)->id);
}

/* The blocked children of the ended parents e[k] (sorted by id), as
 * (parent, child) pairs by parent then child into *pairs (2 values a
 * pair, *np pairs), locked in ascending child id order before any of
 * them is updated: every ending transaction takes its children's row
 * locks in that one order, so two transactions whose parents share
 * children queue on each other, never wait on each other in a cycle (a
 * deadlock costs the server's detection, 1 s on PostgreSQL, and a
 * retry). A single child needs no order; SQLite has one writer. */
static int
lock_children(sked *h, const ended *e, int k, int64_t **pairs, size_t *np)
{
	enum { PER = 400 };
	*pairs = NULL;
	*np = 0;
	if (h->dialect == &sked__dialect_sqlite)
		return SKED_OK;
	int64_t *ids = malloc(sizeof *ids * (size_t)(k < PER ? k : PER));
	int64_t *pr = NULL, *kids = NULL;
	size_t n = 0, cap = 0;
	int rc = ids ? SKED_OK : sked__fail(h, SKED_ENOMEM, "out of memory");
	for (int at = 0; at < k && rc == SKED_OK; at += PER) {
		int m = k - at < PER ? k - at : PER;
		sked_res r = {0};
		for (int i = 0; i < m; i++)
			ids[i] = e[at + i].id;
		rc = ids_q(h, SKED_SQL_DEP_KIDS, ids, m, &r);
		if (rc == SKED_OK && n + (size_t)r.nrows > cap) {
			size_t nc = n + (size_t)r.nrows + 16;
			int64_t *g = realloc(pr, sizeof *g * 2 * nc);
			if (!g)
				rc = sked__fail(h, SKED_ENOMEM,
				                "out of memory");
			else {
				pr = g;
				cap = nc;
			}
		}
		for (int i = 0; rc == SKED_OK && i < r.nrows; i++, n++) {
			pr[2 * n] = sked__res_int(&r, i, 0);
			pr[2 * n + 1] = sked__res_int(&r, i, 1);
		}
		sked__res_clear(&r);
	}
	free(ids);
	if (rc == SKED_OK && n > 1 && !(kids = malloc(sizeof *kids * n)))
		rc = sked__fail(h, SKED_ENOMEM, "out of memory");
	if (rc == SKED_OK && n > 1) {
		for (size_t i = 0; i < n; i++)
			kids[i] = pr[2 * i + 1];
		qsort(kids, n, sizeof *kids, cmp_id);
		size_t u = 0;
		for (size_t i = 0; i < n; i++)
			if (u == 0 || kids[u - 1] != kids[i])
				kids[u++] = kids[i];
		/* ascending chunks, each locked in ascending order */
		for (size_t at = 0; u > 1 && at < u && rc == SKED_OK;
		     at += PER) {
			int m = u - at < PER ? (int)(u - at) : PER;
			rc = ids_q(h, SKED_SQL_DEP_LOCK, kids + at, m, NULL);
		}
	}
	free(kids);
	if (rc != SKED_OK) {
		free(pr);
		return rc;
	}
	*pairs = pr;
	*np = n;
	return SKED_OK;
}

/* MySQL: parent id's release over its children read in pairs (its
 * UPDATE with a subquery would scan the task table, locking rows that
 * are other transactions' children, out of order). */
static int
release_by_ids(sked *h, int64_t id, int st, const int64_t *pairs, size_t np,
               int *woke)
{
	enum { PER = 400 };
	int64_t kids[PER];
	int m = 0, rc = SKED_OK;
	sked_sql q = st == SKED_SUCCEEDED ? SKED_SQL_DEP_RELEASE_IDS
	                                  : SKED_SQL_DEP_RELEASE_IDS_IGN;
	for (size_t i = 0; i <= np && rc == SKED_OK; i++) {
		if (i < np && pairs[2 * i] == id)
			kids[m++] = pairs[2 * i + 1];
		if (m > 0 && (m == PER || i == np || pairs[2 * i] != id)) {
			rc = ids_q(h, q, kids, m, NULL);
			if (rc == SKED_OK && sked__affected(h) > 0)
				*woke += (int)sked__affected(h);
			m = 0;
		}
	}
	return rc;
}

/* The ended parents e[k] (each with dependents) tell their children, in
 * parent id order, after their children are locked in child id order;
 * one wake-up for the workers where the product can (PostgreSQL:
 * delivered at commit). */
static int
parents_ended(sked *h, ended *e, int k)
{
	if (k > 1)
		qsort(e, (size_t)k, sizeof *e, cmp_ended);
	int woke = 0;
	int64_t *pairs = NULL;
	size_t np = 0;
	int by_ids = strcmp(h->dialect->name, "mysql") == 0;
	int rc = lock_children(h, e, k, &pairs, &np);
	for (int i = 0; i < k && rc == SKED_OK; i++) {
		if (by_ids)
			rc = release_by_ids(h, e[i].id, e[i].st, pairs, np,
			                    &woke);
		if (rc == SKED_OK)
			rc = parent_ended(h, e[i].id, e[i].st, by_ids, &woke);
	}
	free(pairs);
	if (rc == SKED_OK && woke > 0)
		rc = sked__wake(h, sked__wake_r(), woke, NULL, NULL);
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
	ended *e = malloc(sizeof *e * (size_t)k);
	if (!e) {
		sked__res_clear(&r);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	for (int i = 0; i < k; i++) {
		e[i].id = sked__res_int(&r, i, 0);
		e[i].st = (int)sked__res_int(&r, i, 1);
	}
	sked__res_clear(&r);
	rc = parents_ended(h, e, k);
	free(e);
	return rc;
}

/* Drop the ended rows among ids (p: their values, n) from {p}task, their
 * dependents told first (or, where the delete answers its rows, from
 * what it answers: no read of its own for a batch without parents). */
/* The parents among rows r of (id, status, dependents) that ended
 * tell their children. */
static int
parents_of_rows(sked *h, int rc, const sked_res *r)
{
	int k = 0;
	ended *e = rc == SKED_OK && r->nrows > 0
	                   ? malloc(sizeof *e * (size_t)r->nrows)
	                   : NULL;
	if (rc == SKED_OK && r->nrows > 0 && !e)
		rc = sked__fail(h, SKED_ENOMEM, "out of memory");
	for (int i = 0; rc == SKED_OK && i < r->nrows; i++)
		if (sked__res_int(r, i, 2) != 0) {
			e[k].id = sked__res_int(r, i, 0);
			e[k++].st = (int)sked__res_int(r, i, 1);
		}
	if (rc == SKED_OK && k > 0)
		rc = parents_ended(h, e, k);
	free(e);
	return rc;
}

/* The DELETE of the ended rows among ids: answering their (id, status,
 * dependents) into r where r is set (SKED_SQL_DONE_DROP_RET). */
static int
drop_rows(sked *h, const sked_val *p, int n, sked_res *r)
{
	sked_buf drop = {0};
	sked__sql_fill(&drop,
	               h->sql[r ? SKED_SQL_DONE_DROP_RET : SKED_SQL_DONE_DROP],
	               1, n);
	if (drop.oom)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	int rc = sked__qdyn(h, drop.p, p, n, r);
	free(drop.p);
	return rc;
}

int
sked__drop_ended(sked *h, const int64_t *ids, const sked_val *p, int n)
{
	int ret = (h->dialect->caps & SKED_CAP_RETURNING) != 0;
	sked_res r = {0};
	int rc = ret ? SKED_OK : sked__deps_ended(h, ids, n);
	if (rc == SKED_OK)
		rc = drop_rows(h, p, n, ret ? &r : NULL);
	rc = parents_of_rows(h, rc, &r);
	sked__res_clear(&r);
	return rc;
}

int
sked__drop_copied(sked *h, const int64_t *ids, const sked_val *p, int n,
                  const sked_res *copied)
{
	(void)ids;
	int rc = drop_rows(h, p, n, NULL);
	return parents_of_rows(h, rc, copied);
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
	/* where the copy answers its rows, they say which are parents */
	int ret = (h->dialect->caps & SKED_CAP_INSERT_RETURNING) != 0;
	sked_res r = {0};
	sked__sql_fill(
	        &copy,
	        h->sql[ret ? SKED_SQL_DONE_COPY_RET : SKED_SQL_DONE_COPY], 1,
	        n);
	if (copy.oom)
		rc = sked__fail(h, SKED_ENOMEM, "out of memory");
	if (rc == SKED_OK)
		rc = sked__qdyn(h, copy.p, p, n, ret ? &r : NULL);
	/* the rows leave, their dependents told */
	if (rc == SKED_OK)
		rc = ret ? sked__drop_copied(h, ids, p, n, &r)
		         : sked__drop_ended(h, ids, p, n);
	sked__res_clear(&r);
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
