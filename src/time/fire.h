/*
 * fire.h — a schedule's fire arithmetic: which fire times to enqueue at
 * the database's now, and the next fire after them.
 *
 * Layer: the time core, beside cron.c and tz.c, and as pure as they are:
 * every function takes now as an argument and touches no clock, database
 * or log. sched.c (the model) stores schedules and calls this; the tests
 * call it with any now they like.
 *
 * The clock cases, each with its policy:
 *
 *   on time      next_fire lies within SKED__SCHED_TOLERANCE_MS before
 *                now: every fire from next_fire up to now (a few).
 *   misfire      next_fire is older than that (no worker ticked for a
 *                while): the schedule's misfire policy decides —
 *                fire-once enqueues the latest missed fire, fire-all the
 *                latest SKED_MAX_CATCHUP, skip none; the next fire is the
 *                first after now.
 *   clock back   next_fire is after now (the database clock went back
 *                since the fire was found due): nothing, next_fire stays.
 *                A clock that went back past fires already enqueued is
 *                caught in storage: sched.c's unique (schedule_name,
 *                fire_time) index refuses the second task.
 */
#ifndef SKED_FIRE_H
#define SKED_FIRE_H

#include <stddef.h>
#include <stdint.h>

#include "time/cron.h"
#include "sked.h"
#include "time/tz.h"

/* A fire found later than this (database clock) is a misfire and handled
 * by the schedule's misfire policy; one found earlier is on time. Ticks
 * run at least every second, so an on-time fire is never this late unless
 * no worker ran. */
#define SKED__SCHED_TOLERANCE_MS 2000

/* A parsed expression and its loaded zone. */
typedef struct sked_fire_plan {
	sked_cron *cron;
	sked_tz *tz;
} sked_fire_plan;

/* Parse expr and load tz (NULL or "": UTC) into p; on failure err says
 * why (SKED_ECRON, SKED_ETZ, SKED_ENOMEM) and p holds nothing. */
int sked__fire_load(const char *expr, const char *tz, sked_fire_plan *p,
                    char *err, size_t len) __attribute__((warn_unused_result));
void sked__fire_free(sked_fire_plan *p);

/* The first fire after t into *out, or 0 when there is none within the
 * horizon. */
int sked__fire_next(const sked_fire_plan *p, int64_t t, int64_t *out)
        __attribute__((warn_unused_result));

typedef enum sked_fire_case {
	SKED_FIRE_ON_TIME,
	SKED_FIRE_MISFIRE_ONCE, /* misfire, policy fire-once */
	SKED_FIRE_MISFIRE_ALL,  /* misfire, policy fire-all */
	SKED_FIRE_MISFIRE_SKIP, /* misfire, policy skip */
	SKED_FIRE_CLOCK_BACK,
} sked_fire_case;

typedef struct sked_fire_result {
	sked_fire_case clock_case;
	int64_t fires[SKED_MAX_CATCHUP]; /* to enqueue, ascending */
	int n;
	int64_t next; /* the next fire after them (0: none) */
	/* a fire-all misfire: how many fires were missed in all (-1: more
	 * than were worth counting); n < missed means some were dropped */
	int64_t missed;
} sked_fire_result;

/* The fires of a schedule whose next fire is next_fire, at now, under
 * misfire policy misfire (SKED_MISFIRE_*). */
int sked__fire_due(const sked_fire_plan *p, int64_t next_fire, int misfire,
                   int64_t now, sked_fire_result *r)
        __attribute__((warn_unused_result));

/* The fire instants of a schedule that lie in [first, now]: the latest
 * max of them, ascending, into out (room for max); *n gets how many.
 * *total gets how many there were in all, or -1 when there were more than
 * max and the exact count was not worth computing. */
int sked__fire_recent(const sked_cron *c, const sked_tz *tz, int64_t first,
                      int64_t now, int max, int64_t *out, int *n,
                      int64_t *total) __attribute__((warn_unused_result));

#endif /* SKED_FIRE_H */
