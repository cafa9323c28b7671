/*
 * retention.c — retention: removing ended tasks and their runs once they are
 * older than an age.
 *
 * Layer: the model, beside queue.c (see sked.h, sked_prune). Ended tasks
 * (succeeded, dead, cancelled) whose finished_at is older than the age go
 * in batches of PRUNE_BATCH. Ended tasks live in {p}task_done (schema 4),
 * so retention never touches the hot table: their ids are read through
 * {p}task_done's (status, finished_at) index, then the tasks and their
 * runs are deleted in one short transaction per batch, so a prune never
 * holds many row locks or a long transaction, and claims never wait for
 * it. A task retried meanwhile has left {p}task_done: it is not deleted,
 * and neither are its runs (the run delete keeps those of any task still
 * in either table).
 *
 * What a unique key and a (schedule, fire_time) pair guarantee afterwards
 * is written in docs/design.md ("Ended tasks"): a pruned task's unique key
 * is free again; a schedule never fires an old fire time again, because
 * its own row remembers the last fire.
 */
#include "handle/internal.h"

#include <stdlib.h>

#include "util/buf.h"

#define PRUNE_BATCH 500

static int
prune_batch(sked *h, int status, int64_t older_than_ms, int *n)
{
	*n = 0;
	sked_val p[3] = {SKED_INTV(status), SKED_INTV(-older_than_ms),
	                 SKED_INTV(PRUNE_BATCH)};
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_PRUNE_PICK, p, 3, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot find ended tasks to prune");
	if (r.nrows == 0) {
		sked__res_clear(&r);
		return SKED_OK;
	}
	int k = r.nrows;
	sked_val *ids = calloc((size_t)k, sizeof *ids);
	sked_buf runs = {0}, tasks = {0}, depc = {0}, depp = {0};
	if (!ids) {
		sked__res_clear(&r);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	for (int i = 0; i < k; i++)
		ids[i] = SKED_INTV(sked__res_int(&r, i, 0));
	sked__res_clear(&r);
	sked__sql_fill(&runs, h->sql[SKED_SQL_PRUNE_RUNS], 1, k);
	sked__sql_fill(&tasks, h->sql[SKED_SQL_PRUNE_TASKS], 1, k);
	sked__sql_fill(&depc, h->sql[SKED_SQL_PRUNE_DEPS_C], 1, k);
	sked__sql_fill(&depp, h->sql[SKED_SQL_PRUNE_DEPS_P], 1, k);
	if (runs.oom || tasks.oom || depc.oom || depp.oom) {
		rc = sked__fail(h, SKED_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = sked__begin(h, 0)) != SKED_OK) {
		sked__fail_db(h, rc, "cannot begin pruning");
		goto out;
	}
	/* the tasks first: their runs go only once the task has (a task
	 * retried meanwhile is back in {p}task, with its runs) */
	rc = sked__qdyn(h, tasks.p, ids, k, NULL);
	if (rc == SKED_OK)
		*n = (int)sked__affected(h);
	if (rc == SKED_OK)
		rc = sked__qdyn(h, runs.p, ids, k, NULL);
	/* the edges of removed tasks (a parent goes only once its children
	 * have ended: KEEP_PARENTS in both statements above) */
	if (rc == SKED_OK)
		rc = sked__qdyn(h, depc.p, ids, k, NULL);
	if (rc == SKED_OK)
		rc = sked__qdyn(h, depp.p, ids, k, NULL);
	if (rc == SKED_OK)
		rc = sked__commit(h);
	else
		sked__rollback(h);
	if (rc != SKED_OK) {
		*n = 0;
		sked__fail_db(h, rc, "cannot prune ended tasks");
	}
out:
	free(runs.p);
	free(tasks.p);
	free(depc.p);
	free(depp.p);
	free(ids);
	return rc;
}

SKED_API int
sked_prune(sked *h, int status, int64_t older_than_ms, int64_t max_tasks,
           int64_t *removed)
{
	if (removed)
		*removed = 0;
	if (!h || !h->db || older_than_ms < 0 ||
	    (status != -1 && status != SKED_SUCCEEDED && status != SKED_DEAD &&
	     status != SKED_CANCELLED))
		return h ? sked__fail(h, SKED_EINVAL,
		                      "prune: give an ended status (succeeded, "
		                      "dead, cancelled) and an age >= 0")
		         : SKED_EINVAL;
	static const int ended[] = {SKED_SUCCEEDED, SKED_DEAD, SKED_CANCELLED};
	int64_t total = 0;
	for (size_t s = 0; s < sizeof ended / sizeof ended[0]; s++) {
		if (status != -1 && status != ended[s])
			continue;
		for (;;) {
			if (max_tasks > 0 && total >= max_tasks)
				break;
			int n = 0;
			int rc = prune_batch(h, ended[s], older_than_ms, &n);
			if (rc != SKED_OK) {
				if (removed)
					*removed = total;
				return rc;
			}
			total += n;
			if (n == 0)
				break;
		}
	}
	if (removed)
		*removed = total;
	/* the rows of period keys whose period is over (docs/unique.md):
	 * one statement, best effort (a later prune removes what is left,
	 * and a row past its period holds nothing) */
	sked__ignore(sked__q(h, SKED_SQL_UNIQUE_FOR_PRUNE, NULL, 0, NULL));
	return SKED_OK;
}
