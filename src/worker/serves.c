/*
 * serves.c — the worker tells the database what it serves: the kinds it
 * has handlers for and the queues it claims from, once, right after it
 * registers its node (docs/operations.md, "Why work waits").
 *
 * Layer: the worker, on the model's sked__node_serves (unserved.c).
 * Nothing here runs on the claim or finish path; a failure is logged and
 * the worker goes on (the node then counts as serving nothing known).
 */
#include "worker/worker.h"

#include <stdlib.h>
#include <string.h>

#include "model/lease.h"
#include "util/buf.h"
#include "util/log.h"

void
sked__wk_serves(sked_worker *w)
{
	sked_buf q = {0};
	for (int i = 0; i < w->nqueues; i++) {
		sked__buf_puts(&q, ",");
		sked__buf_puts(&q, w->queues[i].name);
	}
	if (w->nqueues > 0)
		sked__buf_puts(&q, ",");
	if (q.oom) {
		free(q.p);
		return;
	}
	/* w->kinds: ",a,b,", NULL with a catch-all (it runs every kind) */
	if (sked__node_serves(w->h, w->node_id, w->kinds,
	                      w->nqueues > 0 ? q.p : NULL) != SKED_OK)
		sked__log(SKED_LOG_WARN, "%s", sked_errmsg(w->h));
	free(q.p);
}
