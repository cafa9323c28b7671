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
 *                A dialect without it (MySQL, MariaDB) claims in three
 *                steps in one transaction instead (threestep.c).
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

static int
claim_skip_locked(sked *h, const sked_claim_req *req, sked_claimed **out,
                  int *n)
{
	if (h->dialect->claim_one_statement)
		return claim_autocommit(h, req, out, n);
	return sked__claim_three_steps(h, req, out, n);
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
