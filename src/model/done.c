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
 * admin.c); retention deletes from {p}task_done only (retention.c).
 */
#include "handle/internal.h"

#include <stdlib.h>

#include "util/buf.h"

/* Copy then drop: both statements select the rows of ids that have ended,
 * so a live id in the list is left where it is. */
static int
move_chunk(sked *h, const int64_t *ids, int n)
{
	sked_val *p = calloc((size_t)n, sizeof *p);
	sked_buf copy = {0}, drop = {0};
	int rc = SKED_OK;
	if (!p)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	for (int i = 0; i < n; i++)
		p[i] = SKED_INTV(ids[i]);
	sked__sql_fill(&copy, h->sql[SKED_SQL_DONE_COPY], 1, n);
	sked__sql_fill(&drop, h->sql[SKED_SQL_DONE_DROP], 1, n);
	if (copy.oom || drop.oom)
		rc = sked__fail(h, SKED_ENOMEM, "out of memory");
	if (rc == SKED_OK)
		rc = sked__qdyn(h, copy.p, p, n, NULL);
	/* their dependents learn it before the rows leave (deps.c) */
	if (rc == SKED_OK)
		rc = sked__deps_ended(h, ids, n);
	if (rc == SKED_OK)
		rc = sked__qdyn(h, drop.p, p, n, NULL);
	free(copy.p);
	free(drop.p);
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
