/*
 * claim/rows.c — claimed tasks: reading them from a claim's rows, and
 * freeing them.
 *
 * Layer: below the strategies in src/claim/ and the seam in claim.c, which
 * all call down into it (see claim.h).
 */
#include "claim/claim.h"

#include <stdlib.h>
#include <string.h>

#include "handle/internal.h"

void
sked__claimed_free(sked_claimed *c, int n)
{
	if (!c)
		return;
	for (int i = 0; i < n; i++)
		sked__claimed_clear(&c[i]);
	free(c);
}

void
sked__claimed_clear(sked_claimed *t)
{
	free(t->queue);
	free(t->kind);
	free(t->payload);
	free(t->traceparent);
}

int
sked__claimed_from_row(const sked_res *r, int i, int tp_col, sked_claimed *t)
{
	int oom = 0;
	memset(t, 0, sizeof *t);
	t->id = sked__res_int(r, i, 0);
	t->queue = sked__res_dup(r, i, 1, &oom);
	t->kind = sked__res_dup(r, i, 2, &oom);
	t->payload = sked__res_dup(r, i, 3, &oom);
	t->payload_len = t->payload ? sked__res_len(r, i, 3) : 0;
	t->attempt = (int)sked__res_int(r, i, 4);
	t->max_attempts = (int)sked__res_int(r, i, 5);
	t->started_ms = sked__res_int(r, i, 6);
	/* open_parents: below 0 for a task that had parents; then the
	 * trace context (the fused claim's rows have three more before
	 * them) */
	int pc = tp_col - 1;
	t->has_parents = sked__res_int(r, i, pc) < 0;
	t->traceparent = sked__res_null(r, i, tp_col)
	                         ? NULL
	                         : sked__res_dup(r, i, tp_col, &oom);
	/* the task's own timeout (schema 10; NULL: none), after it, where
	 * the dialect's claim answers it (Oracle's does not yet) */
	t->timeout_ms =
	        tp_col + 1 >= r->ncols || sked__res_null(r, i, tp_col + 1)
	                ? 0
	                : sked__res_int(r, i, tp_col + 1);
	return oom ? SKED_ENOMEM : SKED_OK;
}

int
sked__claimed_from_rows(const sked_res *r, sked_claimed **out, int *n)
{
	if (r->nrows == 0)
		return SKED_OK;
	sked_claimed *c = realloc(*out, sizeof *c * (size_t)(*n + r->nrows));
	if (!c)
		return SKED_ENOMEM;
	*out = c;
	for (int i = 0; i < r->nrows; i++) {
		int rc = sked__claimed_from_row(r, i, 8, &c[*n]);
		(*n)++;
		if (rc != SKED_OK)
			return rc;
	}
	return SKED_OK;
}
