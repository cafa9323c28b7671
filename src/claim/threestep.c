/*
 * claim/threestep.c — the skip-locked claim where the dialect cannot
 * claim in one statement (MySQL and MariaDB: no UPDATE … RETURNING over
 * a locking subquery): lock the candidates with FOR UPDATE SKIP LOCKED,
 * claim the locked ids, read the rows back, all in one READ COMMITTED
 * transaction (docs/mysql.md).
 *
 * Layer: claim strategies (see claim.h); onestep.c's skip-locked
 * strategy calls it when the dialect has no claim_one_statement. Where
 * the lock reads the claimed columns (SKED_CAP_LOCK_READS) the third
 * step is left out.
 *
 * Row locks: the candidates' rows, locked in claim order by the first
 * step and held until the commit; rows another claimer holds are
 * skipped, not waited for.
 */
#include "claim/claim.h"

#include <stdlib.h>

#include "handle/internal.h"
#include "util/buf.h"

/* SKED_CAP_LOCK_READS: the lock's rows (as the claim leaves them) are
 * the claimed tasks; claim their ids, started at the lock's clock, in
 * chunks under the parameter limit. Every locked row must be claimed: a
 * count that differs fails the claim (rolled back), never hands over a
 * task this node does not hold. */
static int
claim_locked(sked *h, const sked_claim_req *req, const sked_res *rows,
             sked_claimed **out, int *n)
{
	int rc = sked__claimed_from_rows(rows, out, n);
	if (rc != SKED_OK)
		return sked__fail(h, rc, "out of memory");
	int max = h->dialect->max_params - 3;
	sked_val *p = malloc(sizeof *p * (size_t)(3 + (*n < max ? *n : max)));
	sked_buf sql = {0};
	if (!p)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	for (int off = 0; rc == SKED_OK && off < *n; off += max) {
		int k = *n - off < max ? *n - off : max;
		p[0] = SKED_TEXTV(req->node_id);
		p[1] = SKED_INTV(req->lease_ms);
		p[2] = SKED_INTV((*out)[off].started_ms);
		for (int i = 0; i < k; i++)
			p[3 + i] = SKED_INTV((*out)[off + i].id);
		sql.n = 0;
		sked__sql_fill(&sql, h->sql[SKED_SQL_IDS_CLAIM], 4, k);
		if (sql.oom) {
			rc = sked__fail(h, SKED_ENOMEM, "out of memory");
			break;
		}
		rc = sked__qdyn(h, sql.p, p, 3 + k, NULL);
		if (rc != SKED_OK)
			rc = sked__fail_db(h, rc, "claim failed");
		else if (sked__affected(h) != k)
			rc = sked__fail(
			        h, SKED_EDB,
			        "claim failed: %lld of %d locked task(s) "
			        "claimed",
			        (long long)sked__affected(h), k);
	}
	sked__buf_free(&sql);
	free(p);
	return rc;
}

/* Where the dialect cannot claim in one statement: lock the candidates
 * with FOR UPDATE SKIP LOCKED, claim the locked ids, read the rows back,
 * all in one transaction: five round trips for a batch, whatever its
 * size; four where the lock reads the rows (SKED_CAP_LOCK_READS: MySQL,
 * MariaDB). */
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
	if (rc == SKED_OK && (h->dialect->caps & SKED_CAP_LOCK_READS)) {
		rc = ids.nrows > 0 ? claim_locked(h, req, &ids, out, n)
		                   : SKED_OK;
		sked__res_clear(&ids);
		if (rc != SKED_OK)
			return rc;
		rc = sked__commit(h);
		if (rc != SKED_OK)
			return sked__fail_db(h, rc, "cannot commit a claim");
		return SKED_OK;
	}
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
