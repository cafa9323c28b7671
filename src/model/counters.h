/*
 * counters.h — process-wide counts of events that happen below the
 * worker (schedule fires, lock acquisitions), kept in gauges.c and read with
 * sked_process_counters_get.
 *
 * Layer: the model. A counter is an atomic add: cheap, thread safe, never
 * a lock or SQL.
 */
#ifndef SKED_COUNTERS_H
#define SKED_COUNTERS_H

#include <stdint.h>

enum {
	SKED__COUNT_FIRES,     /* tasks made by schedules */
	SKED__COUNT_LOCKS,     /* lock acquisitions that succeeded */
	SKED__COUNT_LOCK_BUSY, /* acquisitions that found the lock held */
	SKED__COUNT_SKIPS,     /* fires skipped: the previous task ran on */
	SKED__COUNT_MISFIRES,  /* schedules found past a fire time they missed
	                          (downtime): handled by their misfire policy */
	SKED__COUNT_N
};

void sked__count(int which, int64_t n);

#endif /* SKED_COUNTERS_H */
