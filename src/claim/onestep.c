/*
 * claim/onestep.c — strategies whose claim is one statement.
 *
 * Layer: claim strategies (see claim.h). Three strategies share this
 * shape; they differ in the SQL the dialect gives for SKED_SQL_CLAIM_*
 * and in the transaction around it:
 *
 *   sqlite       BEGIN IMMEDIATE; UPDATE … WHERE id IN (SELECT … LIMIT n)
 *                RETURNING …; COMMIT. The IMMEDIATE transaction takes
 *                SQLite's single write lock first, so no other claimer
 *                can run between the subquery and the update.
 *   skip-locked  (dialects with claim_one_statement) one autocommit
 *                statement: a materialized CTE selects and locks the batch
 *                with FOR UPDATE SKIP LOCKED and feeds UPDATE … RETURNING.
 *                Rows another claimer holds are skipped, not waited for.
 *   readpast     one autocommit statement with TOP (n) … WITH (UPDLOCK,
 *                READPAST, ROWLOCK) and OUTPUT inserted.* (SQL Server).
 *
 * Row locks: each claim locks only the task rows it returns, in claim
 * order, and holds them until its statement (or IMMEDIATE transaction)
 * commits.
 */
#include "claim/claim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handle/internal.h"
#include "util/buf.h"

static int
one_statement(sked *h, const sked_claim_req *req, sked_claimed **out, int *n)
{
	sked_val p[5] = {SKED_TEXTV(req->node_id), SKED_INTV(req->lease_ms),
	                 SKED_INTV(req->limit), SKED_TEXTV(req->queue),
	                 SKED_TEXTV(req->kinds)};
	sked_res r = {0};
	int rc = sked__q(h,
	                 req->queue          ? SKED_SQL_CLAIM_Q
	                 : req->skip_limited ? SKED_SQL_CLAIM_XQ
	                                     : SKED_SQL_CLAIM_ANY,
	                 p, 5, &r);
	if (rc == SKED_OK)
		rc = sked__claimed_from_rows(&r, out, n);
	sked__res_clear(&r);
	return rc;
}

static int
claim_sqlite(sked *h, const sked_claim_req *req, sked_claimed **out, int *n)
{
	int rc = sked__begin(h, 1);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot begin a claim");
	rc = one_statement(h, req, out, n);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "claim failed");
	rc = sked__commit(h);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot commit a claim");
	return SKED_OK;
}

static int
claim_autocommit(sked *h, const sked_claim_req *req, sked_claimed **out, int *n)
{
	int rc = one_statement(h, req, out, n);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "claim failed");
	return SKED_OK;
}

/* One claim-by-ids for every caller (claim.h): in chunks under the
 * dialect's parameter limit, claim, then read back. */
int
sked__claim_ids(sked *h, const sked_claim_req *req, const sked_claim_ids *how,
                const int64_t *ids, int n, sked_claimed **out, int *got)
{
	/* the claim binds node ?1, lease ?2 (and start ?3), then the ids */
	int lead = how->with_start ? 3 : 2;
	int max = h->dialect->max_params;
	int chunk = max > how->spare ? max - how->spare : n;
	int rc = SKED_OK;
	for (int off = 0; rc == SKED_OK && off < n; off += chunk) {
		int k = n - off < chunk ? n - off : chunk;
		sked_val *p = malloc(sizeof *p * (size_t)(k + lead));
		sked_buf upd = {0}, get = {0};
		/* {ids} becomes the markers from ?lead+1 (claim) and ?3 (read
		 * back): the ids themselves are bound */
		sked__sql_fill(&upd, h->sql[how->claim], lead + 1, k);
		sked__sql_fill(&get, h->sql[how->get], 3, k);
		rc = SKED_ENOMEM;
		if (p && !upd.oom && !get.oom) {
			p[0] = SKED_TEXTV(req->node_id);
			p[1] = SKED_INTV(req->lease_ms);
			if (how->with_start)
				p[2] = SKED_INTV(how->start_ms);
			for (int i = 0; i < k; i++)
				p[lead + i] = SKED_INTV(ids[off + i]);
			sked_res r = {0};
			rc = sked__qdyn(h, upd.p, p, k + lead, NULL);
			/* the read-back: node ?1, ?2 unused, the ids from ?3 */
			sked_val *g = p + lead - 2;
			g[0] = p[0];
			if (rc == SKED_OK)
				rc = sked__qdyn(h, get.p, g, k + 2, &r);
			if (rc == SKED_OK)
				rc = sked__claimed_from_rows(&r, out, got);
			sked__res_clear(&r);
		}
		free(p);
		sked__buf_free(&upd);
		sked__buf_free(&get);
	}
	return rc;
}

/* Where the dialect cannot claim in one statement: lock the candidates
 * with FOR UPDATE SKIP LOCKED, claim the locked ids, read the rows back,
 * all in one transaction (MySQL and MariaDB): five round trips for a
 * batch, whatever its size. */
static int
claim_three_steps(sked *h, const sked_claim_req *req, sked_claimed **out,
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

static int
claim_skip_locked(sked *h, const sked_claim_req *req, sked_claimed **out,
                  int *n)
{
	if (h->dialect->claim_one_statement)
		return claim_autocommit(h, req, out, n);
	return claim_three_steps(h, req, out, n);
}

const sked_claim_strategy sked__claim_sqlite = {
        .id = SKED_STRAT_SQLITE,
        .name = "sqlite",
        .claim = claim_sqlite,
};

const sked_claim_strategy sked__claim_skip_locked = {
        .id = SKED_STRAT_SKIP_LOCKED,
        .name = "skip-locked",
        .claim = claim_skip_locked,
};

const sked_claim_strategy sked__claim_readpast = {
        .id = SKED_STRAT_READPAST,
        .name = "readpast",
        .claim = claim_autocommit,
};

/* The claim statement alone, inside the caller's write transaction (the
 * sqlite strategy's, begun IMMEDIATE: sked__finish_claim records a batch's
 * outcomes and claims the next in one transaction). */
int
sked__claim_in_tx(sked *h, const sked_claim_req *req, sked_claimed **out,
                  int *n)
{
	return one_statement(h, req, out, n);
}
