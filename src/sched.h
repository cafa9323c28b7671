/*
 * sched.h — recurring schedules: storing them and firing them exactly once
 * across the cluster.
 *
 * Layer: the model (beside queue.c and lease.c). The public half is in
 * sked.h (sked_schedule_*); this header is what the worker loop needs.
 * The time maths (which instants an expression names in a zone) is
 * cron.c's and tz.c's; when to call the tick is the worker's.
 */
#ifndef SKED_SCHED_H
#define SKED_SCHED_H

#include <stdint.h>

#include "cron.h"
#include "internal.h"
#include "tz.h"

/* A fire found later than this (database clock) is a misfire and handled
 * by the schedule's misfire policy; one found earlier is on time. Ticks
 * run at least every second, so an on-time fire is never this late unless
 * no worker ran. */
#define SKED__SCHED_TOLERANCE_MS 2000

/* Ticks come at most every SKED__SCHED_MIN_MS and at least every
 * SKED__SCHED_MAX_MS, and at the earliest next fire in between. */
#define SKED__SCHED_MIN_MS 250
#define SKED__SCHED_MAX_MS 1000

/* The worker loop's schedule clock (monotonic). Zero it before use. */
typedef struct sked_sched_clock {
	int64_t next_mono_ms; /* when the next tick is wanted */
	int failing;          /* the last tick failed (logged once) */
} sked_sched_clock;

/* Tick if one is wanted at mono_ms (a monotonic clock in ms): fire what
 * is due on h, the loop's connection, outside any transaction. Failures
 * are logged, not returned: the next tick tries again. Returns how many
 * ms until the next tick is wanted. */
int64_t sked__sched_poll(sked *h, sked_sched_clock *c, int64_t mono_ms);

/* The fire instants of a schedule that lie in [first, now]: the latest
 * max of them, ascending, into out (room for max); *n gets how many.
 * *total gets how many there were in all, or -1 when there were more than
 * max and the exact count was not worth computing. Pure; exposed for
 * tests. */
int sked__sched_recent(const sked_cron *c, const sked_tz *tz, int64_t first,
                       int64_t now, int max, int64_t *out, int *n,
                       int64_t *total) __attribute__((warn_unused_result));

#endif /* SKED_SCHED_H */
