/*
 * timefmt.c — ISO-8601 parsing and formatting over our own civil-date
 * arithmetic.
 *
 * Layer: util (pure). We do not use timegm/gmtime: they are not in C11,
 * gmtime is not thread safe, and time_t conversions lose range. The date
 * arithmetic works on 400-year eras of 146097 days, in which the calendar
 * repeats exactly; years are counted from March so that the leap day is
 * the last day of the year. Also defines sked_parse_time and
 * sked_format_time.
 */
#include "util/timefmt.h"

#include <stdio.h>
#include <string.h>

#include "sked.h"
#include "sked_cli.h"

#define MS_PER_DAY INT64_C(86400000)

int64_t
sked__days_from_civil(int y, unsigned m, unsigned d)
{
	int64_t yy = (int64_t)y - (m <= 2); /* the year starts in March */
	int64_t era = sked__floordiv(yy, 400);
	int64_t yoe = yy - era * 400;                        /* 0..399 */
	int64_t mp = (m + 9) % 12;                           /* March = 0 */
	int64_t doy = (153 * mp + 2) / 5 + (int64_t)d - 1;   /* 0..365 */
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; /* 0..146096 */

	return era * 146097 + doe - 719468; /* 719468: 0000-03-01 to 1970 */
}

void
sked__civil_from_days(int64_t z, int *y, unsigned *m, unsigned *d)
{
	int64_t zz = z + 719468;
	int64_t era = sked__floordiv(zz, 146097);
	int64_t doe = zz - era * 146097; /* 0..146096 */
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100); /* 0..365 */
	int64_t mp = (5 * doy + 2) / 153;                      /* 0..11 */
	unsigned dd = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
	unsigned mm = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
	int64_t yy = yoe + era * 400 + (mm <= 2);

	*y = (int)yy;
	*m = mm;
	*d = dd;
}

int
sked__is_leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

unsigned
sked__days_in_month(int y, unsigned m)
{
	static const unsigned char mdays[12] = {31, 28, 31, 30, 31, 30,
	                                        31, 31, 30, 31, 30, 31};
	if (m < 1 || m > 12)
		return 0;
	return mdays[m - 1] + (m == 2 && sked__is_leap(y));
}

/* Read exactly n digits at *p into *out and advance. */
static int
digits(const char **p, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		char c = (*p)[i];
		if (c < '0' || c > '9')
			return 0;
		v = v * 10 + (c - '0');
	}
	*p += n;
	*out = v;
	return 1;
}

int
sked__time_parse(const char *s, int64_t *ms)
{
	const char *p = s;
	int y, mo, d, h = 0, mi = 0, sec = 0, frac = 0, off_min = 0;

	if (s == NULL || ms == NULL)
		return SKED_EINVAL;
	if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) ||
	    *p++ != '-' || !digits(&p, 2, &d))
		return SKED_EINVAL;
	if (mo < 1 || mo > 12 || d < 1 ||
	    (unsigned)d > sked__days_in_month(y, (unsigned)mo))
		return SKED_EINVAL;
	if (*p == '\0')
		goto done;
	if (*p != 'T' && *p != 't' && *p != ' ')
		return SKED_EINVAL;
	p++;
	if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi))
		return SKED_EINVAL;
	if (*p == ':') {
		p++;
		if (!digits(&p, 2, &sec))
			return SKED_EINVAL;
		if (*p == '.' || *p == ',') {
			int n = 0;
			p++;
			for (; *p >= '0' && *p <= '9'; p++, n++) {
				if (n < 3)
					frac = frac * 10 + (*p - '0');
			}
			if (n == 0)
				return SKED_EINVAL;
			for (; n < 3; n++)
				frac *= 10;
		}
	}
	if (h > 23 || mi > 59 || sec > 59)
		return SKED_EINVAL;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p++ == '-' ? -1 : 1, oh, om = 0;
		if (!digits(&p, 2, &oh))
			return SKED_EINVAL;
		if (*p == ':') {
			p++;
			if (!digits(&p, 2, &om))
				return SKED_EINVAL;
		} else if (*p != '\0' && !digits(&p, 2, &om)) {
			return SKED_EINVAL;
		}
		if (oh > 23 || om > 59)
			return SKED_EINVAL;
		off_min = sign * (oh * 60 + om);
	}
	if (*p != '\0')
		return SKED_EINVAL;
done:
	*ms = sked__days_from_civil(y, (unsigned)mo, (unsigned)d) * MS_PER_DAY +
	      ((int64_t)h * 3600 + mi * 60 + sec) * 1000 + frac -
	      (int64_t)off_min * 60000;
	return SKED_OK;
}

void
sked__time_format(int64_t ms, char *buf, size_t len)
{
	/* floor division by hand: ms - day * MS_PER_DAY overflows near
	 * INT64_MIN */
	int64_t day = ms / MS_PER_DAY, rem = ms % MS_PER_DAY;
	int y, hh, mi, ss, frac;
	unsigned m, d;
	char ybuf[16];

	if (buf == NULL || len == 0)
		return;
	if (rem < 0) {
		rem += MS_PER_DAY;
		day--;
	}
	hh = (int)(rem / 3600000);
	mi = (int)(rem / 60000 % 60);
	ss = (int)(rem / 1000 % 60);
	frac = (int)(rem % 1000);
	sked__civil_from_days(day, &y, &m, &d);
	if (y >= 0 && y <= 9999)
		snprintf(ybuf, sizeof(ybuf), "%04d", y);
	else
		snprintf(ybuf, sizeof(ybuf), "%+05d", y);
	/* always the milliseconds, even .000: one shape for every value, so
	 * a reader's format string never meets a time it cannot parse */
	snprintf(buf, len, "%s-%02u-%02uT%02d:%02d:%02d.%03dZ", ybuf, m, d, hh,
	         mi, ss, frac);
}

void
sked__time_format_sec(int64_t ms, char *buf, size_t len)
{
	char full[64]; /* the widest year sked__time_format may print */
	size_t n;

	sked__time_format(ms, full, sizeof full);
	/* drop ".mmm" before the final Z: the instant truncated to its
	 * second (times before 1970 round down, as the date does) */
	n = strlen(full);
	if (n >= 5 && full[n - 5] == '.') {
		full[n - 5] = 'Z';
		full[n - 4] = '\0';
	}
	snprintf(buf, len, "%s", full);
}

SKED_API int
sked_parse_time(const char *s, int64_t *ms)
{
	return sked__time_parse(s, ms);
}

SKED_API char *
sked_format_time(int64_t ms, char *buf, size_t len)
{
	sked__time_format(ms, buf, len);
	return buf;
}
