/*
 * deps.c — tasks that wait for other tasks (docs/workflows.md).
 *
 * Layer: the model. A task enqueued with parents (sked_enqueue_opts's
 * after) is blocked (status 6, read by no claim) with open_parents set
 * to the parents that had not ended; each edge is a {p}task_dep row and
 * each parent's dependents counts its edges. This file is the enqueue
 * and reading side; the ending side is done.c's sked__deps_ended: a task
 * ends through sked__move_done or outcome.c's move, both of which call it
 * for the ids they move, in the ending transaction, before the rows
 * leave {p}task. For each ended task that has dependents, one UPDATE per
 * parent decrements its blocked children's open_parents (a row update:
 * the row lock orders concurrent parents, so the one transaction that
 * takes a child from 1 to 0 makes it pending, exactly once); a dead or
 * cancelled parent first cancels its children that asked for it, which
 * are moved in turn (so the cancel reaches the whole sub-graph). A task
 * without dependents costs one primary-key read of its row here.
 */
#include "model/deps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/done.h"
#include "util/buf.h"

int
sked__cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

int
sked__deps_check(sked *h, const sked_enqueue_opts *o)
{
	if (!o || o->n_after == 0)
		return SKED_OK;
	if (!o->after)
		return sked__fail(h, SKED_EINVAL, "after: no parent ids given");
	if (o->on_parent_failure != SKED_PARENT_CANCEL &&
	    o->on_parent_failure != SKED_PARENT_IGNORE)
		return sked__fail(h, SKED_EINVAL,
		                  "on-parent-failure: give cancel or ignore");
	if (o->unique_key)
		return sked__fail(
		        h, SKED_EINVAL,
		        "a task with parents cannot have a unique key");
	for (size_t i = 0; i < o->n_after; i++)
		if (o->after[i] <= 0)
			return sked__fail(h, SKED_EINVAL,
			                  "after: %lld is not a task id",
			                  (long long)o->after[i]);
	return SKED_OK;
}

int
sked__deps_count(sked *h, int64_t id, size_t nchild, int *st)
{
	sked_val p[2] = {SKED_INTV(id), SKED_INTV((int64_t)nchild)};
	*st = -1;
	int rc = sked__q(h, SKED_SQL_DEP_LIVE, p, 2, NULL);
	if (rc != SKED_OK || sked__affected(h) == 1)
		return rc;
	rc = sked__q(h, SKED_SQL_DEP_DONE, p, 2, NULL);
	if (rc != SKED_OK)
		return rc;
	if (sked__affected(h) != 1)
		return sked__fail(h, SKED_EINVAL,
		                  "after: no task %lld (never enqueued here, "
		                  "or ended and pruned)",
		                  (long long)id);
	sked_res r = {0};
	rc = sked__q(h, SKED_SQL_DEP_DONE_STATUS, p, 1, &r);
	*st = rc == SKED_OK && r.nrows == 1 ? (int)sked__res_int(&r, 0, 0)
	                                    : SKED_SUCCEEDED;
	sked__res_clear(&r);
	return rc;
}

/* Inside the enqueue's transaction, before the children are inserted:
 * count nchild more dependents on each parent (locking a live parent's
 * row, so that a parent ending at the same moment either ended before,
 * and is read here as ended, or ends after this commit and finds the
 * edges), and say how many are still open and which one, if any, ended
 * dead or cancelled (*bad, its status *bad_st). Parents are locked in
 * id order. */
int
sked__deps_parents(sked *h, const sked_enqueue_opts *o, size_t nchild,
                   int64_t **uniq, int *nuniq, int *open, int64_t *bad,
                   int *bad_st)
{
	size_t n = o->n_after;
	int64_t *u = malloc(sizeof *u * n);
	if (!u)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	memcpy(u, o->after, sizeof *u * n);
	qsort(u, n, sizeof *u, sked__cmp_i64);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (m == 0 || u[m - 1] != u[i])
			u[m++] = u[i];
	*open = 0;
	*bad = 0;
	*bad_st = 0;
	int rc = SKED_OK;
	for (size_t i = 0; i < m && rc == SKED_OK; i++) {
		int st;
		rc = sked__deps_count(h, u[i], nchild, &st);
		if (rc != SKED_OK)
			break;
		if (st < 0) {
			(*open)++;
			continue;
		}
		if (st != SKED_SUCCEEDED && !*bad &&
		    o->on_parent_failure == SKED_PARENT_CANCEL) {
			*bad = u[i];
			*bad_st = st;
		}
	}
	if (rc != SKED_OK) {
		free(u);
		return rc;
	}
	*uniq = u;
	*nuniq = (int)m;
	return SKED_OK;
}

/* The child id, just inserted (pending): its edges, then blocked while
 * open parents remain, or cancelled at once when a parent it waits for
 * ended dead or cancelled under "cancel". *pending: it may run now. */
int
sked__deps_link(sked *h, int64_t child, const int64_t *parents, int n, int open,
                int policy, int64_t bad, int bad_st, int *pending)
{
	int rc = SKED_OK;
	for (int i = 0; i < n && rc == SKED_OK; i++) {
		sked_val p[2] = {SKED_INTV(parents[i]), SKED_INTV(child)};
		rc = sked__q(h, SKED_SQL_DEP_EDGE, p, 2, NULL);
	}
	if (rc != SKED_OK)
		return rc;
	*pending = 0;
	if (bad) {
		char err[128];
		snprintf(err, sizeof err, "parent %lld %s", (long long)bad,
		         bad_st == SKED_DEAD ? "ended dead" : "was cancelled");
		sked_val p[2] = {SKED_INTV(child), SKED_TEXTV(err)};
		rc = sked__q(h, SKED_SQL_DEP_PRECANCEL, p, 2, NULL);
		return rc != SKED_OK ? rc : sked__move_done(h, &child, 1);
	}
	*pending = open == 0;
	sked_val p[4] = {SKED_INTV(child),
	                 SKED_INTV(open > 0 ? SKED_BLOCKED : SKED_PENDING),
	                 SKED_INTV(open), SKED_INTV(policy)};
	return sked__q(h, SKED_SQL_DEP_BLOCK, p, 4, NULL);
}

static int
id_list(sked *h, sked_sql stmt, int64_t id, int64_t **out, size_t *n)
{
	sked_val p = SKED_INTV(id);
	sked_res r = {0};
	*out = NULL;
	*n = 0;
	int rc = sked__q(h, stmt, &p, 1, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc,
		                     "cannot read a task's dependencies");
	if (r.nrows > 0 && !(*out = malloc(sizeof **out * (size_t)r.nrows)))
		rc = sked__fail(h, SKED_ENOMEM, "out of memory");
	for (int i = 0; i < r.nrows && *out; i++)
		(*out)[(*n)++] = sked__res_int(&r, i, 0);
	sked__res_clear(&r);
	return rc;
}

SKED_API int
sked_task_deps(sked *h, int64_t id, int64_t **parents, size_t *nparents,
               int64_t **children, size_t *nchildren)
{
	if (!h || !h->db || !parents || !nparents || !children || !nchildren)
		return SKED_EINVAL;
	*children = NULL;
	*nchildren = 0;
	int rc = id_list(h, SKED_SQL_DEP_PARENTS, id, parents, nparents);
	if (rc == SKED_OK)
		rc = id_list(h, SKED_SQL_DEP_CHILDREN, id, children, nchildren);
	if (rc != SKED_OK) {
		free(*parents);
		*parents = NULL;
		*nparents = 0;
	}
	return rc;
}
