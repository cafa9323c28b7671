/*
 * config_sync.c — what the config file asks of the database and of a
 * worker: its [schedule.NAME] and [queue.NAME] sections put in place
 * (a worker does it at start and on SIGHUP) and the [retention] ages
 * in force (the worker's pruner and `sked prune`).
 *
 * Layer: cli/view/, shared by the commands and the daemons; a client of
 * <sked.h> only.
 */
#include "view/view.h"

#include <string.h>

int
cli_sync_schedules(struct cli *c)
{
	size_t i;
	int rc, created;

	for (i = 0; i < c->cfg.nschedules; i++) {
		const struct cli_schedule *cs = &c->cfg.schedules[i];
		sked_schedule_opts so;

		memset(&so, 0, sizeof so);
		so.tz = cs->tz;
		so.payload = cs->payload && cs->payload[0] ? cs->payload : NULL;
		so.queue = cs->queue;
		so.priority = cs->priority;
		so.max_attempts = cs->max_attempts;
		so.misfire = cs->misfire ? sked_misfire_parse(cs->misfire) : 0;
		so.overlap = cs->overlap ? sked_overlap_parse(cs->overlap) : 0;
		/* unique, unique_scope, unique_for, unique_replace: as `cron
		 * add --unique …` takes them */
		/* (their conflicts were refused when the file was read) */
		sked_enqueue_opts uo = {0};
		uo.unique_key = cs->unique_key;
		uo.unique_scope = cs->unique_scope >= 0 ? cs->unique_scope : 0;
		uo.unique_for_ms = cs->unique_for_ms;
		uo.unique_replace = cs->unique_replace;
		/* a replace without a scope: pending, as `cron add` */
		if (uo.unique_key && uo.unique_replace &&
		    cs->unique_scope < 0 && !uo.unique_for_ms)
			uo.unique_scope = SKED_UNIQUE_PENDING;
		rc = sked_schedule_put_unique(c->h, cs->name, cs->cron,
		                              cs->kind, &so, &uo, &created);
		if (rc != SKED_OK)
			return cli_fail(c->h, rc, "%s:%d: [schedule.%s]",
			                c->cfg.path, cs->line, cs->name);
	}
	return 0;
}

int
cli_sync_queues(struct cli *c)
{
	for (size_t i = 0; i < c->cfg.nqueues_limits; i++) {
		const struct cli_queue *cq = &c->cfg.queues_limits[i];
		int rc = cq->fair >= 0
		                 ? sked_queue_set_fair(c->h, cq->name, cq->fair)
		                 : SKED_OK;
		if (rc == SKED_OK && (cq->concurrency != SKED_LIMIT_KEEP ||
		                      cq->per_key != SKED_LIMIT_KEEP ||
		                      cq->rate_n != SKED_LIMIT_KEEP))
			rc = sked_queue_set(c->h, cq->name, cq->concurrency,
			                    cq->per_key, cq->rate_n,
			                    cq->rate_ms);
		if (rc != SKED_OK)
			return cli_fail(c->h, rc, "%s:%d: [queue.%s]",
			                c->cfg.path, cq->line, cq->name);
	}
	return 0;
}

void
cli_retention(const struct cli_config *cfg, int64_t keep_ms[3])
{
	static const int64_t dflt[3] = {SKED_KEEP_SUCCEEDED_MS,
	                                SKED_KEEP_DEAD_MS,
	                                SKED_KEEP_CANCELLED_MS};
	for (int i = 0; i < 3; i++)
		keep_ms[i] = cfg->keep_set[i] ? cfg->keep_ms[i] : dflt[i];
}
