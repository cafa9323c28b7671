/*
 * claim/threestep.c — the skip-locked claim where the dialect cannot
 * claim in one statement (MySQL and MariaDB: no UPDATE … RETURNING over
 * a locking subquery): lock the candidates with FOR UPDATE SKIP LOCKED,
 * claim the locked ids, read the rows back, all in one READ COMMITTED
 * transaction (docs/mysql.md).
 *
 * Layer: claim strategies (see claim.h); onestep.c's skip-locked
 * strategy calls it when the dialect has no claim_one_statement.
 *
 * Row locks: the candidates' rows, locked in claim order by the first
 * step and held until the commit; rows another claimer holds are
 * skipped, not waited for.
 */
#include "claim/claim.h"

#include <stdlib.h>

#include "handle/internal.h"

/* Where the dialect cannot claim in one statement: lock the candidates
 * with FOR UPDATE SKIP LOCKED, claim the locked ids, read the rows back,
 * all in one transaction (MySQL and MariaDB): five round trips for a
 * batch, whatever its size. */
int
sked__claim_three_steps(sked *h, const sked_claim_req *req, sked_claimed **out,
                        int *n)
{
	sked_val p[5] = {SKED_TEXTV(req->node_id), SKED_INTV(req->lease_ms),
	                 SKED_INTV(req->limit), SKED_TEXTV(req->queue),
	                 SKED_TEXTV(req->kinds)};
	sked_res ids = {0};
	int rc = sked__begin(h, 1);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot begin a claim");
	rc = sked__q(h,
	             req->queue          ? SKED_SQL_LOCK_Q
	             : req->skip_limited ? SKED_SQL_LOCK_XQ
	                                 : SKED_SQL_LOCK_ANY,
	             p, 5, &ids);
	int64_t *idv = NULL;
	if (rc == SKED_OK && ids.nrows > 0 &&
	    !(idv = malloc(sizeof *idv * (size_t)ids.nrows)))
		rc = SKED_ENOMEM;
	for (int i = 0; rc == SKED_OK && i < ids.nrows; i++)
		idv[i] = sked__res_int(&ids, i, 0);
	static const sked_claim_ids how = {.claim = SKED_SQL_IDS_CLAIM,
	                                   .get = SKED_SQL_IDS_GET,
	                                   .spare = 2};
	if (rc == SKED_OK)
		rc = sked__claim_ids(h, req, &how, idv, ids.nrows, out, n);
	free(idv);
	sked__res_clear(&ids);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "claim failed");
	rc = sked__commit(h);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot commit a claim");
	return SKED_OK;
}
