/*
 * claim/ids.c — claiming a list of ids already chosen: in chunks under
 * the dialect's parameter limit, claim them, then read them back. The
 * three-step claim (threestep.c) and the limited claim (model/limited.c)
 * both end here.
 *
 * Layer: claim strategies (see claim.h); inside the caller's
 * transaction.
 */
#include "claim/claim.h"

#include <stdlib.h>

#include "handle/internal.h"
#include "util/buf.h"

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
