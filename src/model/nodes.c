/*
 * nodes.c — the nodes table as operators steer it: removing the rows of
 * nodes silent for too long (`sked nodes --prune`, the dashboard's
 * button). A node registers and beats in lease.c.
 *
 * Layer: the model; the statement is the dialect registry's
 * (SKED_SQL_NODES_PRUNE), which keeps a node that still holds a running
 * task.
 */
#include "handle/internal.h"

SKED_API int
sked_nodes_prune(sked *h, int64_t older_than_ms, int64_t *removed)
{
	if (!h || !h->db || older_than_ms < 0)
		return SKED_EINVAL;
	sked_val p = SKED_INTV(-older_than_ms);
	int rc = sked__q(h, SKED_SQL_NODES_PRUNE, &p, 1, NULL);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot prune nodes");
	if (removed)
		*removed = sked__affected(h) > 0 ? sked__affected(h) : 0;
	return SKED_OK;
}
