/*
 * fire.c — which fires of a schedule to enqueue now: pure arithmetic on
 * the database's now, beside cron.c (see fire.h).
 *
 * Layer: the time core, with cron.c and tz.c. It takes now and the
 * schedule's state as arguments and touches no clock, no database and no
 * log; sched.c reads the schedule, calls sked__fire_due, says what
 * happened and stores the result.
 */
#include "time/fire.h"

#include <stdlib.h>
#include <string.h>

int
sked__fire_load(const char *expr, const char *tz, sked_fire_plan *p, char *err,
                size_t len)
{
	p->cron = NULL;
	p->tz = NULL;
	int rc = sked__cron_parse(expr, &p->cron, err, len);
	if (rc == SKED_OK)
		rc = sked__tz_load(tz && *tz ? tz : "UTC", &p->tz, err, len);
	if (rc != SKED_OK) {
		sked__cron_free(p->cron);
		p->cron = NULL;
	}
	return rc;
}

void
sked__fire_free(sked_fire_plan *p)
{
	sked__cron_free(p->cron);
	sked__tz_free(p->tz);
}

int
sked__fire_next(const sked_fire_plan *p, int64_t t, int64_t *out)
{
	int rc = sked__cron_next(p->cron, p->tz, t, out);
	if (rc == SKED_ENOTFOUND) {
		*out = 0;
		return SKED_OK;
	}
	return rc;
}

/* Guards the search below against expressions that fire every second for
 * a long burst: past this many steps the count stops being exact. */
#define RECENT_MAX_STEPS 2000000

int
sked__fire_recent(const sked_cron *c, const sked_tz *tz, int64_t first,
                  int64_t now, int max, int64_t *out, int *n, int64_t *total)
{
	*n = 0;
	*total = 0;
	if (max <= 0 || first > now)
		return SKED_OK;
	/* Search back from now in growing windows until one holds max fires
	 * or reaches back to first: the cron engine only looks forward, and
	 * walking from first could take millions of steps after a long
	 * outage of a per-second schedule. */
	const int64_t lo = first - 1; /* fires strictly after lo */
	int64_t w = 1000;
	for (;;) {
		int64_t after = now - w;
		int whole = 0;
		if (after <= lo) {
			after = lo;
			whole = 1;
		}
		int64_t count = 0, t = after, f;
		long steps = 0;
		for (;;) {
			int rc = sked__cron_next(c, tz, t, &f);
			if (rc == SKED_ENOTFOUND)
				break;
			if (rc != SKED_OK)
				return rc;
			if (f > now || ++steps > RECENT_MAX_STEPS)
				break;
			out[count % max] = f;
			count++;
			t = f;
		}
		if (count >= max || whole) {
			/* unroll the ring, oldest first */
			int k = count < max ? (int)count : max;
			int64_t tmp[SKED_MAX_CATCHUP];
			int64_t *buf = max <= SKED_MAX_CATCHUP ? tmp : NULL;
			if (!buf)
				buf = malloc(sizeof *buf * (size_t)max);
			if (!buf)
				return SKED_ENOMEM;
			for (int i = 0; i < k; i++)
				buf[i] = out[(count - k + i) % max];
			memcpy(out, buf, sizeof *out * (size_t)k);
			if (buf != tmp)
				free(buf);
			*n = k;
			*total =
			        whole && steps <= RECENT_MAX_STEPS ? count : -1;
			if (!whole) {
				/* were there fires before the window? */
				int64_t before;
				int rc = sked__cron_next(c, tz, lo, &before);
				if (rc == SKED_OK && before > after)
					*total = count; /* no: exact */
			}
			return SKED_OK;
		}
		w *= 4;
	}
}

int
sked__fire_due(const sked_fire_plan *p, int64_t next_fire, int misfire,
               int64_t now, sked_fire_result *r)
{
	memset(r, 0, sizeof *r);
	if (next_fire > now) {
		/* clock went back: the database's now is before a fire it
		 * already passed (or the row moved on meanwhile). Nothing is
		 * due; next_fire stays. A clock that went back past fires
		 * already enqueued is caught by sched.c's unique
		 * (schedule_name, fire_time) index. */
		r->clock_case = SKED_FIRE_CLOCK_BACK;
		r->next = next_fire;
		return SKED_OK;
	}
	if (next_fire >= now - SKED__SCHED_TOLERANCE_MS) {
		/* on time (normal): every fire due now, from next_fire on;
		 * they all lie within the tolerance, so they are few */
		r->clock_case = SKED_FIRE_ON_TIME;
		int64_t f = next_fire;
		while (f != 0 && f <= now && r->n < SKED_MAX_CATCHUP) {
			r->fires[r->n++] = f;
			int rc = sked__fire_next(p, f, &f);
			if (rc != SKED_OK)
				return rc;
		}
		r->next = f;
		return SKED_OK;
	}
	/* a misfire: no worker ticked for a while (all down, or stalled) */
	int rc = SKED_OK;
	switch (misfire) {
	case SKED_MISFIRE_FIRE_ALL: /* the latest SKED_MAX_CATCHUP of them */
		r->clock_case = SKED_FIRE_MISFIRE_ALL;
		rc = sked__fire_recent(p->cron, p->tz, next_fire, now,
		                       SKED_MAX_CATCHUP, r->fires, &r->n,
		                       &r->missed);
		break;
	case SKED_MISFIRE_SKIP: /* none: go on from now */
		r->clock_case = SKED_FIRE_MISFIRE_SKIP;
		break;
	default: /* fire-once: the latest missed fire only */
		r->clock_case = SKED_FIRE_MISFIRE_ONCE;
		rc = sked__fire_recent(p->cron, p->tz, next_fire, now, 1,
		                       r->fires, &r->n, &r->missed);
		break;
	}
	if (rc != SKED_OK)
		return rc;
	return sked__fire_next(p, now, &r->next);
}
