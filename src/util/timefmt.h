/*
 * timefmt.h — ISO-8601 instants in and out, and the civil-date arithmetic
 * under them.
 *
 * Layer: util (pure: no clock, no locale, no time zone database). Times are
 * int64 milliseconds since the Unix epoch, UTC. Zone rules (what 02:30 on
 * a DST day means in Europe/Paris) are cron/tz's business, not this file's.
 */
#ifndef SKED_UTIL_TIMEFMT_H
#define SKED_UTIL_TIMEFMT_H

#include <stddef.h>
#include <stdint.h>

/* a / b rounded towards minus infinity (C rounds towards zero), for
 * times before the epoch: floordiv(-1, 1000) is -1, not 0. b != 0. */
static inline int64_t
sked__floordiv(int64_t a, int64_t b)
{
	int64_t q = a / b;
	if (a % b != 0 && ((a < 0) != (b < 0)))
		q--;
	return q;
}

/* Days since 1970-01-01 of the proleptic Gregorian date y-m-d
 * (m 1..12, d 1..31; not range checked). */
int64_t sked__days_from_civil(int y, unsigned m, unsigned d);

/* The inverse: the date of day z (days since 1970-01-01). */
void sked__civil_from_days(int64_t z, int *y, unsigned *m, unsigned *d);

/* 1 when y is a leap year, and the number of days in month m of year y. */
int sked__is_leap(int y);
unsigned sked__days_in_month(int y, unsigned m);

/* Parse an ISO-8601 instant into *ms:
 *   YYYY-MM-DD
 *   YYYY-MM-DD(T|t| )HH:MM[:SS[(.|,)FRACTION]][Z|z|(+|-)HH[[:]MM]]
 * No zone means UTC. Fractions beyond milliseconds are truncated.
 * Out-of-range fields (month 13, February 30, hour 24) and trailing
 * text are SKED_EINVAL, and *ms is left alone. */
int sked__time_parse(const char *s, int64_t *ms)
        __attribute__((warn_unused_result));

/* "2026-03-08T07:30:00.123Z": always with milliseconds, ".000" for a
 * whole second, so every time has one shape. Years outside 0000..9999
 * carry a sign (ISO-8601 extended years). 32 bytes always suffice. */
void sked__time_format(int64_t ms, char *buf, size_t len);

/* The same truncated to whole seconds: "2026-03-08T07:30:00Z" (the shape
 * of cron fire instants, which fall on whole seconds). */
void sked__time_format_sec(int64_t ms, char *buf, size_t len);

#endif /* SKED_UTIL_TIMEFMT_H */
