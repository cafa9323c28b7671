/*
 * live.c — what a running task is doing now: its node, its attempt's
 * start and elapsed time, and the latest progress its handler reported
 * (sked_task_live_get; docs/handlers.md, "Progress").
 *
 * Layer: the model, beside queue.c's reads of a task. The worker stores a
 * report with its lease renewal (worker/progress.c, SKED_SQL_PROGRESS_PUT,
 * schema 12); nothing clears it when an attempt ends, so a report counts
 * for the running attempt only when it was stored at or after that
 * attempt's start.
 */
#include "model/queue.h"

#include <stdlib.h>
#include <string.h>

SKED_API void
sked_task_live_clear(sked_task_live *l)
{
	if (!l)
		return;
	free(l->node_id);
	free(l->progress);
	memset(l, 0, sizeof *l);
}

SKED_API int
sked_task_live_get(sked *h, int64_t id, sked_task_live *out)
{
	if (!h || !h->db || !out)
		return SKED_EINVAL;
	memset(out, 0, sizeof *out);
	sked_val p = SKED_INTV(id);
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_TASK_LIVE, &p, 1, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot read the running task");
	if (r.nrows == 0) {
		sked__res_clear(&r);
		return sked__fail(h, SKED_ENOTFOUND, "task %lld is not running",
		                  (long long)id);
	}
	int oom = 0;
	out->node_id = sked__res_dup(&r, 0, 0, &oom);
	out->started_ms = sked__res_int(&r, 0, 1);
	int64_t at = sked__res_int(&r, 0, 3);
	/* a report of an earlier attempt is not this one's */
	if (at > 0 && at >= out->started_ms) {
		out->progress = sked__res_dup(&r, 0, 2, &oom);
		out->progress_ms = out->progress ? at : 0;
	}
	int64_t now = sked__res_int(&r, 0, 4);
	out->elapsed_ms = out->started_ms > 0 && now > out->started_ms
	                          ? now - out->started_ms
	                          : 0;
	sked__res_clear(&r);
	if (oom) {
		sked_task_live_clear(out);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	return SKED_OK;
}
