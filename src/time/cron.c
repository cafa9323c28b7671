/*
 * cron.c — the cron engine: parse an expression into bit sets, then find
 * the next fire instant by jumping field by field (month, day, hour,
 * minute, second), never by stepping through time.
 *
 * Layer: pure time maths. No clock, no I/O: `after` and the zone are
 * arguments. The zone's offsets come from tz.c; this file owns the
 * daylight-saving policy (docs/cron.md):
 *  - normal: a local time that occurs once fires once;
 *  - gap (spring forward): a local time that does not exist fires at the
 *    first instant after the gap when the hour field is restricted, and
 *    not at all when it is `*` (every real hour fires anyway);
 *  - overlap (fall back): a repeated local time fires at its first
 *    occurrence only when the hour field is restricted, at both when it
 *    is `*`.
 * The search walks the zone's offset segments (between transitions the
 * wall clock runs at the speed of UTC), finds the first matching wall
 * time inside each, and applies the policy at the segment borders.
 * Also defines the public sked_cron_check and sked_cron_next.
 */
#include "time/cron.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sked.h"
#include "util/timefmt.h"

#define MAX_EXPR 1024
#define WS       " \t\r\n\v\f"
/* The search horizon in seconds (a Gregorian year is 365.2425 days), and
 * the largest |after| we accept (about 317,000 years). */
#define HORIZON_S ((int64_t)SKED_CRON_HORIZON_YEARS * 31556952)
#define MAX_ABS_S INT64_C(10000000000000)

struct sked_cron {
	uint64_t sec;       /* bits 0..59 */
	uint64_t min;       /* bits 0..59 */
	uint32_t hour;      /* bits 0..23 */
	uint32_t dom;       /* bits 1..31: plain days of month */
	uint32_t dom_last;  /* bit n: "L-n" (bit 0: "L") */
	uint32_t dom_near;  /* bit n: "nW", the weekday nearest the nth */
	int dom_lw;         /* "LW": the last weekday of the month */
	uint16_t mon;       /* bits 1..12 */
	uint8_t dow;        /* bits 0..6, Sunday = 0 */
	uint8_t dow_last;   /* bit d: "dL", the last weekday d of the month */
	uint8_t dow_nth[6]; /* [k] bit d: "d#k", the kth weekday d */
	int dom_star, dow_star, hour_star; /* the field was "*" or "?" */
	int has_seconds;
};

enum { F_SEC, F_MIN, F_HOUR, F_DOM, F_MON, F_DOW };

static const struct field {
	const char *name;
	int lo, hi;  /* accepted values */
	int star_hi; /* the top of "*" and of "a/n" */
} fields[] = {
        [F_SEC] = {"second", 0, 59, 59},
        [F_MIN] = {"minute", 0, 59, 59},
        [F_HOUR] = {"hour", 0, 23, 23},
        [F_DOM] = {"day of month", 1, 31, 31},
        [F_MON] = {"month", 1, 12, 12},
        [F_DOW] = {"day of week", 0, 7, 6}, /* 7 is Sunday again */
};

static const char *const month_names[] = {"JAN", "FEB", "MAR", "APR",
                                          "MAY", "JUN", "JUL", "AUG",
                                          "SEP", "OCT", "NOV", "DEC"};
static const char *const month_long[] = {
        "January", "February", "March",     "April",   "May",      "June",
        "July",    "August",   "September", "October", "November", "December"};
static const char *const day_names[] = {"SUN", "MON", "TUE", "WED",
                                        "THU", "FRI", "SAT"};

static const struct alias {
	const char *name, *expr;
} aliases[] = {
        {"@yearly", "0 0 1 1 *"},  {"@annually", "0 0 1 1 *"},
        {"@monthly", "0 0 1 * *"}, {"@weekly", "0 0 * * 0"},
        {"@daily", "0 0 * * *"},   {"@midnight", "0 0 * * *"},
        {"@hourly", "0 * * * *"},
};

/* ---- parsing ------------------------------------------------------- */

struct parser {
	char *err;
	size_t errlen;
	const struct field *f;
	const char *item; /* the list item being parsed, for messages */
};

static int __attribute__((format(printf, 2, 3)))
fail(struct parser *ps, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (!ps->err || ps->errlen == 0)
		return SKED_ECRON;
	n = 0;
	if (ps->f)
		n = (size_t)snprintf(ps->err, ps->errlen, "%s: ", ps->f->name);
	if (n < ps->errlen) {
		va_start(ap, fmt);
		vsnprintf(ps->err + n, ps->errlen - n, fmt, ap);
		va_end(ap);
	}
	return SKED_ECRON;
}

/* A number, or a month or weekday name in the fields that have them.
 * Range checks are the caller's. */
static int
parse_value(struct parser *ps, const char **pp, int which, int *out)
{
	const char *p = *pp;

	if (isdigit((unsigned char)*p)) {
		long v = 0;
		int digits = 0;
		while (isdigit((unsigned char)*p)) {
			if (++digits > 6)
				return fail(ps, "number too long in \"%s\"",
				            ps->item);
			v = v * 10 + (*p++ - '0');
		}
		*out = (int)v;
		*pp = p;
		return SKED_OK;
	}
	if (isalpha((unsigned char)*p) && (which == F_MON || which == F_DOW)) {
		const char *const *names =
		        which == F_MON ? month_names : day_names;
		int count = which == F_MON ? 12 : 7, i;
		size_t len = 0;
		while (isalpha((unsigned char)p[len]))
			len++;
		/* "FRIL": a weekday name followed by the L of "last". */
		if (which == F_DOW && len == 4 &&
		    toupper((unsigned char)p[3]) == 'L')
			len = 3;
		for (i = 0; len == 3 && i < count; i++) {
			if (toupper((unsigned char)p[0]) == names[i][0] &&
			    toupper((unsigned char)p[1]) == names[i][1] &&
			    toupper((unsigned char)p[2]) == names[i][2]) {
				*out = which == F_MON ? i + 1 : i;
				*pp = p + 3;
				return SKED_OK;
			}
		}
		return fail(ps, "unknown name \"%.*s\"", (int)len, p);
	}
	if (*p == '\0')
		return fail(ps, "missing value in \"%s\"", ps->item);
	return fail(ps, "expected a number in \"%s\"", ps->item);
}

static int
check_range(struct parser *ps, int v, int lo, int hi)
{
	if (v < lo || v > hi)
		return fail(ps, "%d is out of range %d-%d", v, lo, hi);
	return SKED_OK;
}

static int
junk(struct parser *ps, const char *p)
{
	if (*p == '\0')
		return SKED_OK;
	return fail(ps, "unexpected \"%s\" in \"%s\"", p, ps->item);
}

/* "L", "LW", "L-n" in day of month. Returns 1 when handled. */
static int
parse_dom_last(struct parser *ps, sked_cron *c, const char *p, int *rc)
{
	int n;

	if (toupper((unsigned char)p[0]) != 'L')
		return 0;
	*rc = SKED_OK;
	if (p[1] == '\0') {
		c->dom_last |= 1u;
	} else if (toupper((unsigned char)p[1]) == 'W' && p[2] == '\0') {
		c->dom_lw = 1;
	} else if (p[1] == '-') {
		p += 2;
		if (!isdigit((unsigned char)*p)) {
			*rc = fail(ps,
			           "expected a number after \"L-\" in "
			           "\"%s\"",
			           ps->item);
			return 1;
		}
		*rc = parse_value(ps, &p, F_DOM, &n);
		if (*rc == SKED_OK && (n < 0 || n > 30))
			*rc = fail(ps, "%d in \"%s\" is out of range 0-30", n,
			           ps->item);
		if (*rc == SKED_OK && (*rc = junk(ps, p)) == SKED_OK)
			c->dom_last |= 1u << n;
	} else {
		*rc = fail(ps, "unexpected \"%s\" in \"%s\"", p + 1, ps->item);
	}
	return 1;
}

static int
parse_item(struct parser *ps, sked_cron *c, int which, uint64_t *mask,
           const char *item)
{
	const struct field *f = &fields[which];
	const char *p = item;
	int lo, hi, step = 1, a, b, rc, v;

	ps->item = item;
	if (*p == '\0')
		return fail(ps, "empty list item");
	if (which == F_DOM && parse_dom_last(ps, c, p, &rc))
		return rc;
	if (which == F_DOW && toupper((unsigned char)p[0]) == 'L' &&
	    p[1] == '\0') {
		*mask |= 1u << 6; /* Quartz: "L" alone is the last day, SAT */
		return SKED_OK;
	}
	if (*p == '*' || *p == '?') {
		if (*p == '?' && which != F_DOM && which != F_DOW)
			return fail(ps, "\"?\" is only allowed in day of month "
			                "and day of week");
		if (*p == '?' && p[1] != '\0')
			return junk(ps, p + 1);
		p++;
		lo = f->lo;
		hi = f->star_hi;
	} else {
		if ((rc = parse_value(ps, &p, which, &a)) != SKED_OK ||
		    (rc = check_range(ps, a, f->lo, f->hi)) != SKED_OK)
			return rc;
		if (which == F_DOM && toupper((unsigned char)*p) == 'W') {
			if ((rc = junk(ps, p + 1)) != SKED_OK)
				return rc;
			c->dom_near |= 1u << a;
			return SKED_OK;
		}
		if (which == F_DOW && toupper((unsigned char)*p) == 'L') {
			if ((rc = junk(ps, p + 1)) != SKED_OK)
				return rc;
			c->dow_last |= (uint8_t)(1u << (a % 7));
			return SKED_OK;
		}
		if (which == F_DOW && *p == '#') {
			p++;
			if (!isdigit((unsigned char)*p))
				return fail(ps,
				            "expected a number after \"#\" "
				            "in \"%s\"",
				            item);
			if ((rc = parse_value(ps, &p, F_MIN, &v)) != SKED_OK)
				return rc;
			if (v < 1 || v > 5)
				return fail(ps,
				            "%d in \"%s\" is out of range 1-5",
				            v, item);
			if ((rc = junk(ps, p)) != SKED_OK)
				return rc;
			c->dow_nth[v] |= (uint8_t)(1u << (a % 7));
			return SKED_OK;
		}
		lo = hi = a;
		if (*p == '-') {
			p++;
			if ((rc = parse_value(ps, &p, which, &b)) != SKED_OK)
				return rc;
			/* As the end of a weekday range, SUN means 7. */
			if (which == F_DOW && b == 0 &&
			    isalpha((unsigned char)p[-1]))
				b = 7;
			if ((rc = check_range(ps, b, f->lo, f->hi)) != SKED_OK)
				return rc;
			if (b < a)
				return fail(ps, "range \"%s\" is reversed",
				            item);
			hi = b;
		} else if (*p == '/') {
			hi = a > f->star_hi ? a
			                    : f->star_hi; /* "a/n": a-max/n */
		}
	}
	if (*p == '/') {
		const char *s = ++p;
		if (!isdigit((unsigned char)*s))
			return fail(ps, "expected a step after \"/\" in \"%s\"",
			            item);
		if ((rc = parse_value(ps, &p, F_MIN, &step)) != SKED_OK)
			return rc;
		if (step == 0)
			return fail(ps, "step 0 in \"%s\"", item);
		if (step > f->star_hi - f->lo + 1)
			return fail(ps,
			            "step %d in \"%s\" is out of range 1-%d",
			            step, item, f->star_hi - f->lo + 1);
	}
	if ((rc = junk(ps, p)) != SKED_OK)
		return rc;
	for (v = lo; v <= hi; v += step)
		*mask |= UINT64_C(1) << (which == F_DOW ? v % 7 : v);
	return SKED_OK;
}

static int
parse_field(struct parser *ps, sked_cron *c, int which, char *text)
{
	uint64_t mask = 0;
	char *item = text, *comma;
	int rc, star = strcmp(text, "*") == 0 || strcmp(text, "?") == 0;

	ps->f = &fields[which];
	for (;;) {
		comma = strchr(item, ',');
		if (comma)
			*comma = '\0';
		if ((rc = parse_item(ps, c, which, &mask, item)) != SKED_OK)
			return rc;
		if (!comma)
			break;
		item = comma + 1;
	}
	switch (which) {
	case F_SEC:
		c->sec = mask;
		break;
	case F_MIN:
		c->min = mask;
		break;
	case F_HOUR:
		c->hour = (uint32_t)mask;
		c->hour_star = star;
		break;
	case F_DOM:
		c->dom = (uint32_t)mask;
		c->dom_star = star;
		break;
	case F_MON:
		c->mon = (uint16_t)mask;
		break;
	default:
		c->dow = (uint8_t)mask;
		c->dow_star = star;
		break;
	}
	ps->f = NULL;
	return SKED_OK;
}

/* When only day of month restricts the day, some month in the month field
 * must be long enough for it; else the schedule could never fire. */
static int
check_possible(struct parser *ps, const sked_cron *c, const char *expr,
               const char *dom_text, const char *mon_text)
{
	static const int longest[13] = {0,  31, 29, 31, 30, 31, 30,
	                                31, 31, 30, 31, 30, 31};
	int m;

	if (c->dom_star || !c->dow_star || c->dom_lw)
		return SKED_OK;
	for (m = 1; m <= 12; m++) {
		uint64_t days = (UINT64_C(1) << (longest[m] + 1)) - 2;
		if (!(c->mon & (1u << m)))
			continue;
		if ((c->dom & days) || (c->dom_near & days) ||
		    (c->dom_last & ((UINT64_C(1) << longest[m]) - 1)))
			return SKED_OK;
	}
	if (strcmp(mon_text, "*") != 0) {
		char months[128] = "";
		size_t used = 0;
		for (m = 1; m <= 12 && used < sizeof(months); m++) {
			if (c->mon & (1u << m))
				used += (size_t)snprintf(
				        months + used, sizeof(months) - used,
				        "%s%s", used ? "/" : "",
				        month_long[m - 1]);
		}
		return fail(ps, "%s: this date never occurs (%s %s)", expr,
		            dom_text, months);
	}
	return fail(ps, "%s: this date never occurs", expr);
}

int
sked__cron_parse(const char *expr, sked_cron **out, char *err, size_t errlen)
{
	struct parser ps = {err, errlen, NULL, NULL};
	char buf[MAX_EXPR + 1], trimmed[MAX_EXPR + 1];
	char *tok[7], *p, *save = NULL;
	size_t len, i;
	int n = 0, rc, first;
	sked_cron *c;

	*out = NULL;
	if (!expr)
		return fail(&ps, "empty cron expression");
	while (isspace((unsigned char)*expr))
		expr++;
	len = strlen(expr);
	while (len > 0 && isspace((unsigned char)expr[len - 1]))
		len--;
	if (len == 0)
		return fail(&ps, "empty cron expression");
	if (len > MAX_EXPR)
		return fail(&ps, "cron expression longer than %d bytes",
		            MAX_EXPR);
	memcpy(trimmed, expr, len);
	trimmed[len] = '\0';
	for (i = 0; i < len; i++) {
		if (!isprint((unsigned char)trimmed[i]) &&
		    !isspace((unsigned char)trimmed[i]))
			return fail(&ps,
			            "unexpected byte 0x%02x in cron "
			            "expression",
			            (unsigned char)trimmed[i]);
	}

	if (trimmed[0] == '@') {
		const char *name = trimmed;
		size_t nlen = strcspn(trimmed, WS);
		for (i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
			if (strlen(aliases[i].name) == nlen &&
			    strncasecmp(aliases[i].name, name, nlen) == 0)
				break;
		}
		if (i == sizeof(aliases) / sizeof(aliases[0]))
			return fail(&ps, "unknown alias \"%.*s\"", (int)nlen,
			            name);
		if (nlen != len)
			return fail(&ps, "unexpected \"%s\" after \"%.*s\"",
			            trimmed + nlen + strspn(trimmed + nlen, WS),
			            (int)nlen, name);
		strcpy(buf, aliases[i].expr);
	} else {
		memcpy(buf, trimmed, len + 1);
	}

	for (p = strtok_r(buf, WS, &save); p; p = strtok_r(NULL, WS, &save)) {
		if (n < 7)
			tok[n] = p;
		n++;
	}
	if (n != 5 && n != 6)
		return fail(&ps, "expected 5 or 6 fields, got %d", n);

	c = calloc(1, sizeof(*c));
	if (!c)
		return SKED_ENOMEM;
	c->has_seconds = n == 6;
	first = n == 6 ? F_SEC : F_MIN;
	if (n == 5)
		c->sec = 1; /* second 0 */
	{
		char dom_text[MAX_EXPR + 1], mon_text[MAX_EXPR + 1];
		strcpy(dom_text, tok[n - 3]);
		strcpy(mon_text, tok[n - 2]);
		for (i = 0; i < (size_t)n; i++) {
			rc = parse_field(&ps, c, first + (int)i, tok[i]);
			if (rc != SKED_OK) {
				free(c);
				return rc;
			}
		}
		rc = check_possible(&ps, c, trimmed, dom_text, mon_text);
		if (rc != SKED_OK) {
			free(c);
			return rc;
		}
	}
	*out = c;
	return SKED_OK;
}

void
sked__cron_free(sked_cron *c)
{
	free(c);
}

int
sked__cron_has_seconds(const sked_cron *c)
{
	return c->has_seconds;
}

/* ---- searching ----------------------------------------------------- */

/* The lowest set bit of mask at or above from, or -1. */
static int
next_bit(uint64_t mask, int from)
{
	if (from >= 64)
		return -1;
	mask &= ~UINT64_C(0) << from;
	return mask ? __builtin_ctzll(mask) : -1;
}

static int
weekday(int64_t days)
{
	return (int)(((days % 7) + 11) % 7); /* 1970-01-01 was a Thursday */
}

/* The days (bits 1..31) of month m of year y that the day fields allow. */
static uint32_t
day_mask(const sked_cron *c, int y, unsigned m)
{
	int md = (int)sked__days_in_month(y, m);
	int wd1 = weekday(sked__days_from_civil(y, m, 1));
	uint32_t all = (uint32_t)((UINT64_C(1) << (md + 1)) - 2);
	uint32_t dom = 0, dow = 0;
	int n, d;

	if (c->dom_star && c->dow_star)
		return all;
	if (!c->dom_star) {
		dom = c->dom & all;
		for (n = 0; n < 31; n++) {
			if ((c->dom_last >> n & 1) && md - n >= 1)
				dom |= 1u << (md - n);
		}
		for (n = 1; n <= md; n++) {
			int wd = (wd1 + n - 1) % 7;
			if (!(c->dom_near >> n & 1))
				continue;
			/* The nearest weekday, never leaving the month. */
			if (wd == 6)
				d = n == 1 ? 3 : n - 1;
			else if (wd == 0)
				d = n == md ? n - 2 : n + 1;
			else
				d = n;
			dom |= 1u << d;
		}
		if (c->dom_lw) {
			int wd = (wd1 + md - 1) % 7;
			d = wd == 6 ? md - 1 : wd == 0 ? md - 2 : md;
			dom |= 1u << d;
		}
	}
	if (!c->dow_star) {
		for (d = 1; d <= md; d++) {
			int wd = (wd1 + d - 1) % 7;
			if ((c->dow >> wd & 1) ||
			    ((c->dow_last >> wd & 1) && d + 7 > md) ||
			    (c->dow_nth[(d - 1) / 7 + 1] >> wd & 1))
				dow |= 1u << d;
		}
	}
	if (c->dom_star)
		return dow;
	if (c->dow_star)
		return dom;
	return dom | dow; /* both restricted: either may match */
}

/* The first wall-clock time L (local seconds, as if UTC) with
 * from <= L < limit that the expression matches. 1 and *out, or 0. */
static int
find_local(const sked_cron *c, int64_t from, int64_t limit, int64_t *out)
{
	int64_t days, sod;
	int y, h, mi, s, d, cached_y = 0;
	unsigned m, um, ud, cached_m = 0;
	uint32_t dmask = 0;

	if (from >= limit)
		return 0;
	days = sked__floordiv(from, 86400);
	sod = from - days * 86400;
	sked__civil_from_days(days, &y, &um, &ud);
	m = um;
	d = (int)ud;
	h = (int)(sod / 3600);
	mi = (int)(sod / 60 % 60);
	s = (int)(sod % 60);
	for (;;) {
		int nm, nd, nh, nmi, ns;

		/* month */
		nm = next_bit(c->mon, (int)m);
		if (nm < 0) {
			y++;
			m = 1;
			d = 1;
			h = mi = s = 0;
			continue;
		}
		if ((unsigned)nm != m) {
			m = (unsigned)nm;
			d = 1;
			h = mi = s = 0;
		}
		if (sked__days_from_civil(y, m, 1) * 86400 >= limit)
			return 0;
		/* day */
		if (y != cached_y || m != cached_m) {
			dmask = day_mask(c, y, m);
			cached_y = y;
			cached_m = m;
		}
		nd = next_bit(dmask, d);
		if (nd < 0) {
			if (++m > 12) {
				m = 1;
				y++;
			}
			d = 1;
			h = mi = s = 0;
			continue;
		}
		if (nd != d) {
			d = nd;
			h = mi = s = 0;
		}
		/* hour */
		nh = next_bit(c->hour, h);
		if (nh < 0) {
			d++;
			h = mi = s = 0;
			continue;
		}
		if (nh != h) {
			h = nh;
			mi = s = 0;
		}
		/* minute */
		nmi = next_bit(c->min, mi);
		if (nmi < 0) {
			h++;
			mi = s = 0;
			continue;
		}
		if (nmi != mi) {
			mi = nmi;
			s = 0;
		}
		/* second */
		ns = next_bit(c->sec, s);
		if (ns < 0) {
			mi++;
			s = 0;
			continue;
		}
		s = ns;
		*out = sked__days_from_civil(y, m, (unsigned)d) * 86400 +
		       h * 3600 + mi * 60 + s;
		return *out < limit;
	}
}

/* The first fire instant t with t0 <= t < end. See the policy above. */
static int
search(const sked_cron *c, const sked_tz *tz, int64_t t0, int64_t end,
       int64_t *out)
{
	int fixed_hour = !c->hour_star;
	int64_t t = t0, at, local, from;
	int32_t off = sked__tz_offset_at(tz, t0), off_new;

	from = t0 + off;
	if (fixed_hour && sked__tz_prev_transition(tz, t0, &at)) {
		int32_t before = sked__tz_offset_at(tz, at - 1);
		/* Case gap, entered exactly at its end: fire now. */
		if (at == t0 && off > before &&
		    find_local(c, at + before, at + off, &local)) {
			*out = at;
			return 1;
		}
		/* Case overlap, second pass: its times already fired. */
		if (off < before && from < at + before)
			from = at + before;
	}
	for (;;) {
		int more = sked__tz_next_transition(tz, t, &at);
		int64_t seg_end = more && at < end ? at : end;

		/* Case normal: inside a segment the offset is constant. */
		if (find_local(c, from, seg_end + off, &local)) {
			*out = local - off;
			return 1;
		}
		if (!more || at >= end)
			return 0;
		off_new = sked__tz_offset_at(tz, at);
		/* Case gap: a fixed time that does not exist fires once,
		 * at the first instant after the gap. */
		if (fixed_hour && off_new > off &&
		    find_local(c, at + off, at + off_new, &local)) {
			*out = at;
			return 1;
		}
		/* Case overlap: a fixed time fires at its first pass only. */
		from = at + (fixed_hour && off_new < off ? off : off_new);
		off = off_new;
		t = at;
	}
}

int
sked__cron_next(const sked_cron *c, const sked_tz *tz, int64_t after_ms,
                int64_t *next_ms)
{
	int64_t t0, fire;

	if (after_ms > MAX_ABS_S * 1000 || after_ms < -MAX_ABS_S * 1000)
		return SKED_EINVAL;
	t0 = sked__floordiv(after_ms, 1000) + 1; /* fires are whole seconds */
	if (!tz) {
		/* UTC: one segment, the whole horizon. */
		if (!find_local(c, t0, t0 + HORIZON_S, &fire))
			return SKED_ENOTFOUND;
	} else if (!search(c, tz, t0, t0 + HORIZON_S, &fire)) {
		return SKED_ENOTFOUND;
	}
	*next_ms = fire * 1000;
	return SKED_OK;
}

/* ---- the public API ------------------------------------------------ */

static int
load_zone(const char *tzname, sked_tz **tz, char *err, size_t errlen)
{
	return sked__tz_load(tzname ? tzname : "UTC", tz, err, errlen);
}

SKED_API int
sked_cron_check(const char *expr, const char *tz, char *err, size_t errlen)
{
	sked_cron *c;
	sked_tz *zone;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if ((rc = sked__cron_parse(expr, &c, err, errlen)) != SKED_OK)
		return rc;
	sked__cron_free(c);
	if ((rc = load_zone(tz, &zone, err, errlen)) != SKED_OK)
		return rc;
	sked__tz_free(zone);
	return SKED_OK;
}

SKED_API int
sked_cron_next(const char *expr, const char *tz, int64_t after_ms, size_t count,
               int64_t *out_ms, char *err, size_t errlen)
{
	sked_cron *c;
	sked_tz *zone;
	int64_t t = after_ms;
	size_t i;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (count > 0 && !out_ms) {
		if (err && errlen)
			snprintf(err, errlen, "no room for the fire times");
		return SKED_EINVAL;
	}
	if ((rc = sked__cron_parse(expr, &c, err, errlen)) != SKED_OK)
		return rc;
	if ((rc = load_zone(tz, &zone, err, errlen)) != SKED_OK) {
		sked__cron_free(c);
		return rc;
	}
	for (i = 0; i < count; i++) {
		rc = sked__cron_next(c, zone, t, &out_ms[i]);
		if (rc != SKED_OK) {
			if (err && errlen && rc == SKED_ENOTFOUND)
				snprintf(err, errlen,
				         "no fire time within %d years",
				         SKED_CRON_HORIZON_YEARS);
			else if (err && errlen)
				snprintf(err, errlen, "time out of range");
			break;
		}
		t = out_ms[i];
	}
	sked__tz_free(zone);
	sked__cron_free(c);
	return rc;
}
