/*
 * claim.c — the claim-strategy seam (see claim.h).
 *
 * Layer: between the model and the strategies in src/claim/. The model
 * calls sked__claim only; this file checks the request, hands it to the
 * handle's strategy, and retries a claim the database rolled back as a
 * deadlock, lock wait timeout or busy database (bounded, counted). Row
 * parsing shared by the strategies lives here.
 */
#include "claim/claim.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "handle/internal.h"
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
