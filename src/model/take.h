/*
 * take.h — the one door a worker claims through: the next tasks, and the
 * outcomes that may ride with the claim.
 *
 * Layer: the model, above outcome.c (finishing), limited.c (the limited
 * claim) and the claim seam (claim.h, the strategies' plain claim). It
 * picks one of three claims:
 *
 *   limited  a queue req names is limited or paused, as far as h knows
 *            (limited.c, refreshed every SKED_LIMITS_REFRESH_MS): the
 *            outcomes are recorded first, apart, then the limited claim
 *            (sked__limits_claim), which is never fused;
 *   fused    outcomes to record on a handle that fuses
 *            (sked__finish_fuses: PostgreSQL's skip-locked claim, SQLite):
 *            outcomes and claim in one statement or one transaction
 *            (sked__finish_claim);
 *   plain    otherwise: the outcomes apart (sked__finish, when there are
 *            any), then the strategy's claim (sked__claim).
 */
#ifndef SKED_TAKE_H
#define SKED_TAKE_H

#include "model/outcome.h"

/* The claim sked__take would make for req now, the one place it is
 * chosen: SKED_TAKE_LIMITED, SKED_TAKE_FUSED (outcomes may ride with
 * it) or SKED_TAKE_PLAIN. The worker asks it to know whether to bring
 * its outcomes along, and never decides it again itself. */
enum { SKED_TAKE_LIMITED, SKED_TAKE_FUSED, SKED_TAKE_PLAIN };
int sked__take_way(sked *h, const sked_claim_req *req);

/* Record o[0..n) (n may be 0) and claim up to req->limit tasks, by the
 * claim above. On failure the outcomes not marked recorded are to be
 * tried again and, as after any failed claim, tasks may be held with no
 * job (the statement may have committed); *out holds what was claimed if
 * anything was read back (free with sked__claimed_free). */
int sked__take(sked *h, const char *node_id, sked_outcome *o, int n,
               const sked_claim_req *req, sked_claimed **out, int *nout)
        __attribute__((warn_unused_result));

#endif /* SKED_TAKE_H */
