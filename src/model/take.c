/*
 * take.c — the one door a worker claims through (see take.h): it picks
 * the limited, fused or plain claim.
 *
 * Layer: the model. It decides nothing of its own beyond the pick: the
 * limited claim is limited.c's, the fused one outcome.c's, the plain one
 * the strategy's (claim/).
 */
#include "model/take.h"

#include "model/limits.h"

int
sked__take_way(sked *h, const sked_claim_req *req)
{
	if (!sked__limits_plain(h, req))
		return SKED_TAKE_LIMITED;
	return sked__finish_fuses(h) ? SKED_TAKE_FUSED : SKED_TAKE_PLAIN;
}

int
sked__take(sked *h, const char *node_id, sked_outcome *o, int n,
           const sked_claim_req *req, sked_claimed **out, int *nout)
{
	*out = NULL;
	*nout = 0;
	int rc = SKED_OK, way = sked__take_way(h, req);
	if (way == SKED_TAKE_LIMITED) {
		if (n > 0)
			rc = sked__finish(h, node_id, o, n);
		return rc != SKED_OK ? rc
		                     : sked__limits_claim(h, req, out, nout);
	}
	if (n > 0 && way == SKED_TAKE_FUSED)
		return sked__finish_claim(h, node_id, o, n, req, out, nout);
	if (n > 0)
		rc = sked__finish(h, node_id, o, n);
	return rc != SKED_OK ? rc : sked__claim(h, req, out, nout);
}
