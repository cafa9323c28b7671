/*
 * clock.h — the monotonic clock, for intervals and deadlines inside one
 * host.
 *
 * Layer: util (pure but for reading the clock). CLOCK_MONOTONIC never
 * jumps and every process on a host shares it, so a deadline written by
 * one process (the worker) can be checked by another (the lease guard).
 * Times stored in the database come from the database's clock instead,
 * never from this one.
 */
#ifndef SKED_UTIL_CLOCK_H
#define SKED_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Milliseconds on CLOCK_MONOTONIC. Thread and async-signal safe. */
static inline int64_t
sked__mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif /* SKED_UTIL_CLOCK_H */
