/*
 * sched.h — recurring schedules: storing them and firing them exactly once
 * across the cluster.
 *
 * Layer: the model (beside queue.c and lease.c). The public half is in
 * sked.h (sked_schedule_*); this header is what the worker loop needs.
 * The time maths (which instants an expression names in a zone, and
 * which of them to fire now) is cron.c's, tz.c's and fire.c's, pure;
 * when to call the tick is the worker's.
 */
#ifndef SKED_SCHED_H
#define SKED_SCHED_H

#include <stdint.h>

#include "time/fire.h"
#include "handle/internal.h"

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

#endif /* SKED_SCHED_H */
