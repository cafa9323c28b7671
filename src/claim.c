/*
 * claim.c — the claim-strategy seam (see claim.h).
 *
 * Layer: between the model and the strategies in src/claim/. The model
 * calls sked__claim only; this file checks the request, hands it to the
 * handle's strategy, and retries a claim the database rolled back as a
 * deadlock, lock wait timeout or busy database (bounded, counted). Row
 * parsing shared by the strategies lives here.
 */
#include "claim.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "util/log.h"

const sked_claim_strategy *
sked__claim_for(sked_strategy s)
{
	switch (s) {
	case SKED_STRAT_SQLITE:
		return &sked__claim_sqlite;
	case SKED_STRAT_SKIP_LOCKED:
		return &sked__claim_skip_locked;
	case SKED_STRAT_READPAST:
		return &sked__claim_readpast;
	case SKED_STRAT_OPTIMISTIC:
		return &sked__claim_optimistic;
	default:
		return NULL;
	}
}

/* A claim that lost a deadlock, a lock wait or a busy SQLite database is
 * rolled back whole and tried again (sked__retry_pause). */
#define CLAIM_TRIES 3

int
sked__claim(sked *h, const sked_claim_req *req, sked_claimed **out, int *n)
{
	assert(h && req && out && n);
	assert(req->node_id && req->limit >= 1 && req->lease_ms > 0);
	for (int attempt = 1;; attempt++) {
		*out = NULL;
		*n = 0;
		int rc = h->strategy->claim(h, req, out, n);
		if (rc == SKED_OK)
			return rc;
		sked__rollback(h);
		sked__claimed_free(*out, *n);
		*out = NULL;
		*n = 0;
		if (!sked__retry_pause(h, rc, attempt, CLAIM_TRIES, "claim"))
			return rc;
	}
}

void
sked__claimed_free(sked_claimed *c, int n)
{
	if (!c)
		return;
	for (int i = 0; i < n; i++) {
		free(c[i].queue);
		free(c[i].kind);
		free(c[i].payload);
	}
	free(c);
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
		sked_claimed *t = &c[*n];
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
		(*n)++;
		if (oom)
			return SKED_ENOMEM;
	}
	return SKED_OK;
}
