/*
 * claim/optimistic.c — the strategy that works on anything.
 *
 * Layer: a claim strategy (see claim.h). Read due candidates with their
 * version and no locks; then, in one write transaction, try
 * UPDATE … WHERE id = ? AND version = ? AND status IN (0, 4) for each:
 * exactly one row changed means this node won the task; zero means
 * another node changed it first. Stops at the limit. The read fetches a
 * few more candidates than wanted so that losing some races still fills
 * the batch.
 *
 * Row locks: each conditional update locks its one row until commit; a
 * competing claimer waits for that commit and then finds the version moved
 * on, so it changes nothing. On SQLite the write transaction is IMMEDIATE
 * (one writer), on the others a plain one.
 */
#include "claim/claim.h"

#include <stdlib.h>

#include "handle/internal.h"

static int
claim_optimistic(sked *h, const sked_claim_req *req, sked_claimed **out, int *n)
{
	int want = req->limit;
	int cand = want * 3 < want + 16 ? want + 16 : want * 3;
	if (cand > 1000)
		cand = 1000;
	sked_val p[5] = {SKED_TEXTV(req->node_id), SKED_INTV(req->lease_ms),
	                 SKED_INTV(cand), SKED_TEXTV(req->queue),
	                 SKED_TEXTV(req->kinds)};
	sked_res c = {0}, r = {0};
	int rc = sked__q(h,
	                 req->queue          ? SKED_SQL_CAND_Q
	                 : req->skip_limited ? SKED_SQL_CAND_XQ
	                                     : SKED_SQL_CAND_ANY,
	                 p, 5, &c);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot read claim candidates");
	if (c.nrows == 0) {
		sked__res_clear(&c);
		return SKED_OK;
	}
	int64_t *won = malloc(sizeof *won * (size_t)c.nrows);
	int nwon = 0;
	if (!won) {
		sked__res_clear(&c);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	rc = sked__begin(h, 1);
	for (int i = 0; rc == SKED_OK && i < c.nrows && nwon < want; i++) {
		int64_t id = sked__res_int(&c, i, 0);
		sked_val u[4] = {p[0], p[1], SKED_INTV(id),
		                 SKED_INTV(sked__res_int(&c, i, 1))};
		rc = sked__q(h, SKED_SQL_OPT_CLAIM, u, 4, NULL);
		if (rc == SKED_OK && sked__affected(h) == 1)
			won[nwon++] = id;
	}
	for (int i = 0; rc == SKED_OK && i < nwon; i++) {
		sked_val g[2] = {SKED_INTV(won[i]), p[0]};
		rc = sked__q(h, SKED_SQL_CLAIMED_GET, g, 2, &r);
		if (rc == SKED_OK)
			rc = sked__claimed_from_rows(&r, out, n);
	}
	free(won);
	sked__res_clear(&c);
	sked__res_clear(&r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "optimistic claim failed");
	rc = sked__commit(h);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot commit a claim");
	return SKED_OK;
}

const sked_claim_strategy sked__claim_optimistic = {
        .id = SKED_STRAT_OPTIMISTIC,
        .name = "optimistic",
        .claim = claim_optimistic,
};
