/*
 * tz.c — our own reader for the IANA tz database (TZif v1, v2, v3 as
 * described by RFC 8536) and for the POSIX TZ rule in its footer.
 *
 * Layer: pure time maths. The only I/O is reading one file in
 * sked__tz_load; nothing here reads the clock, the TZ variable or calls
 * localtime (sked is multi-threaded). A zone is: a sorted table of
 * transitions (instant, offset after it), the offset before the first
 * one, and optionally the footer rule that governs every instant after the
 * last one (slim TZif files stop their table early and rely on it; fat
 * ones stop in 2037). What a cron schedule does in a gap or an overlap is
 * decided in cron.c; this file only answers questions about offsets.
 *
 * Zones whose files carry leap-second records (the "right/" tree) are
 * refused: their instants do not count POSIX seconds.
 */
#include "time/tz.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sked.h"
#include "util/timefmt.h"

#define DEFAULT_TZDIR   "/usr/share/zoneinfo"
#define MAX_TZIF_BYTES  (1 << 20)
#define MAX_TRANSITIONS 100000
#define MAX_NAME        255

/* parse_tzif outcomes besides SKED_OK and SKED_ENOMEM. */
#define BAD_FILE     1
#define LEAP_SECONDS 2

/* One transition rule of a POSIX TZ string: "Jn", "n" or "Mm.w.d", and
 * the local time of day (seconds, may be negative or beyond 24 h in v3)
 * at which it takes effect. */
struct prule {
	char kind;   /* 'J', 'N' or 'M' */
	int n;       /* J: 1..365 (29 Feb never counted); N: 0..365 */
	int m, w, d; /* M: month 1..12, week 1..5 (5 = last), weekday 0..6 */
	int32_t time_s;
};

struct sked_tz {
	char *name;
	size_t n;     /* transitions */
	int64_t *at;  /* n instants, strictly increasing */
	int32_t *off; /* off[i]: offset from at[i] on */
	int32_t off0; /* offset before at[0] (or always, if n == 0) */
	int has_rule; /* the footer governs instants >= at[n-1] */
	int has_dst;  /* the footer has a daylight-saving part */
	int32_t std_off, dst_off; /* east positive, like off[] */
	struct prule start, end;  /* when DST starts and ends */
};

static void
seterr(char *err, size_t errlen, const char *what, const char *name,
       const char *tail)
{
	char clean[72];
	size_t i;

	if (!err || errlen == 0)
		return;
	/* Echo the name, but never a control byte or an endless string. */
	for (i = 0; name && name[i] && i < sizeof(clean) - 4; i++)
		clean[i] = isprint((unsigned char)name[i]) ? name[i] : '?';
	clean[i] = '\0';
	if (name && name[i])
		strcpy(clean + i, "...");
	snprintf(err, errlen, "%s '%s'%s", what, clean, tail);
}

int
sked__tz_name_valid(const char *name)
{
	size_t i, len;

	if (!name)
		return 0;
	len = strlen(name);
	if (len == 0 || len > MAX_NAME || name[0] == '/')
		return 0;
	if (strstr(name, ".."))
		return 0;
	for (i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)name[i];
		if (!(isalnum(ch) && ch < 128) && ch != '_' && ch != '+' &&
		    ch != '-' && ch != '/')
			return 0;
	}
	return 1;
}

/* ---- the POSIX TZ footer ------------------------------------------ */

/* [+-]hh[:mm[:ss]] with hh <= maxh; seconds into *out. */
static const char *
parse_hms(const char *p, int maxh, int32_t *out)
{
	int sign = 1, part[3] = {0, 0, 0}, k;

	if (*p == '+' || *p == '-')
		sign = (*p++ == '-') ? -1 : 1;
	for (k = 0; k < 3; k++) {
		int digits = 0, v = 0;
		if (k > 0) {
			if (*p != ':')
				break;
			p++;
		}
		while (isdigit((unsigned char)*p) && digits < 3) {
			v = v * 10 + (*p++ - '0');
			digits++;
		}
		if (digits == 0 || (k > 0 && v > 59) || (k == 0 && v > maxh))
			return NULL;
		part[k] = v;
	}
	*out = sign * (part[0] * 3600 + part[1] * 60 + part[2]);
	return p;
}

/* A zone abbreviation: three or more letters, or <...> of [A-Za-z0-9+-]. */
static const char *
parse_abbr(const char *p)
{
	const char *s = p;

	if (*p == '<') {
		for (p++; isalnum((unsigned char)*p) || *p == '+' || *p == '-';)
			p++;
		if (*p != '>' || p - s < 4)
			return NULL;
		return p + 1;
	}
	while (isalpha((unsigned char)*p))
		p++;
	return p - s >= 3 ? p : NULL;
}

static const char *
parse_int(const char *p, int lo, int hi, int *out)
{
	int v = 0, digits = 0;

	while (isdigit((unsigned char)*p) && digits < 4) {
		v = v * 10 + (*p++ - '0');
		digits++;
	}
	if (digits == 0 || v < lo || v > hi)
		return NULL;
	*out = v;
	return p;
}

static const char *
parse_prule(const char *p, struct prule *r)
{
	if (*p == 'J') {
		r->kind = 'J';
		p = parse_int(p + 1, 1, 365, &r->n);
	} else if (*p == 'M') {
		r->kind = 'M';
		p = parse_int(p + 1, 1, 12, &r->m);
		if (p && *p == '.')
			p = parse_int(p + 1, 1, 5, &r->w);
		else
			p = NULL;
		if (p && *p == '.')
			p = parse_int(p + 1, 0, 6, &r->d);
		else
			p = NULL;
	} else {
		r->kind = 'N';
		p = parse_int(p, 0, 365, &r->n);
	}
	if (!p)
		return NULL;
	r->time_s = 7200; /* the POSIX default, 02:00 */
	if (*p == '/')
		p = parse_hms(p + 1, 167, &r->time_s);
	return p;
}

/* "CET-1CEST,M3.5.0,M10.5.0/3" into tz. 0 on success. */
static int
parse_footer(sked_tz *tz, const char *s)
{
	const char *p = parse_abbr(s);
	int32_t v;

	if (!p || !(p = parse_hms(p, 24, &v)))
		return -1;
	tz->std_off = -v; /* POSIX counts west positive */
	tz->has_rule = 1;
	if (*p == '\0')
		return 0;
	if (!(p = parse_abbr(p)))
		return -1;
	tz->has_dst = 1;
	tz->dst_off = tz->std_off + 3600;
	if (*p != ',' && *p != '\0') {
		if (!(p = parse_hms(p, 24, &v)))
			return -1;
		tz->dst_off = -v;
	}
	if (*p == '\0') {
		/* No rule given: POSIX leaves it to the implementation; use
		 * the US rule as the reference implementation does. */
		p = "M3.2.0,M11.1.0";
	} else if (*p++ != ',') {
		return -1;
	}
	if (!(p = parse_prule(p, &tz->start)) || *p++ != ',')
		return -1;
	if (!(p = parse_prule(p, &tz->end)) || *p != '\0')
		return -1;
	return 0;
}

/* Local seconds (as if UTC) at which rule r takes effect in year y. */
static int64_t
prule_local(const struct prule *r, int y)
{
	int64_t day = sked__days_from_civil(y, 1, 1);

	if (r->kind == 'J') {
		day += r->n - 1 + (sked__is_leap(y) && r->n >= 60);
	} else if (r->kind == 'N') {
		day += r->n;
	} else {
		int64_t first = sked__days_from_civil(y, (unsigned)r->m, 1);
		int wd1 = (int)(((first % 7) + 11) % 7); /* 1970-01-01: Thu */
		int md = (int)sked__days_in_month(y, (unsigned)r->m);
		int d = (r->d - wd1 + 7) % 7 + 1 + (r->w - 1) * 7;
		while (d > md)
			d -= 7;
		day = first + d - 1;
	}
	return day * 86400 + r->time_s;
}

/* The UTC instants DST starts and ends in the year y of the rule. The
 * start is given in standard local time, the end in daylight time. */
static void
rule_year(const sked_tz *tz, int y, int64_t *start, int64_t *end)
{
	*start = prule_local(&tz->start, y) - tz->std_off;
	*end = prule_local(&tz->end, y) - tz->dst_off;
}

static int
year_of(int64_t local_s)
{
	int y;
	unsigned m, d;

	sked__civil_from_days(sked__floordiv(local_s, 86400), &y, &m, &d);
	return y;
}

static int32_t
rule_offset(const sked_tz *tz, int64_t t)
{
	int64_t s, e;
	int dst;

	if (!tz->has_dst)
		return tz->std_off;
	rule_year(tz, year_of(t + tz->std_off), &s, &e);
	if (s < e)
		dst = s <= t && t < e; /* northern: DST inside the year */
	else
		dst = !(e <= t && t < s); /* southern: DST spans new year */
	return dst ? tz->dst_off : tz->std_off;
}

/* ---- TZif ----------------------------------------------------------- */

static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static int64_t
be64(const unsigned char *p)
{
	return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

struct tzif_counts {
	uint32_t isut, isstd, leap, time, type, chr;
};

static int
read_header(const unsigned char *p, size_t len, struct tzif_counts *c,
            int *version)
{
	if (len < 44 || memcmp(p, "TZif", 4) != 0)
		return -1;
	*version = p[4] == 0 ? 1 : p[4] - '0';
	c->isut = be32(p + 20);
	c->isstd = be32(p + 24);
	c->leap = be32(p + 28);
	c->time = be32(p + 32);
	c->type = be32(p + 36);
	c->chr = be32(p + 40);
	if (c->type == 0 || c->type > 256 || c->time > MAX_TRANSITIONS ||
	    c->leap > 10000 || c->chr > 65536 ||
	    (c->isut != 0 && c->isut != c->type) ||
	    (c->isstd != 0 && c->isstd != c->type))
		return -1;
	return 0;
}

static size_t
block_size(const struct tzif_counts *c, size_t tsize)
{
	return (size_t)c->time * (tsize + 1) + (size_t)c->type * 6 + c->chr +
	       (size_t)c->leap * (tsize + 4) + c->isstd + c->isut;
}

/* Fill tz from a whole TZif file: SKED_OK, BAD_FILE, LEAP_SECONDS or
 * SKED_ENOMEM. */
static int
parse_tzif(sked_tz *tz, const unsigned char *buf, size_t len)
{
	struct tzif_counts c;
	const unsigned char *p, *idx, *types;
	size_t tsize = 4, off, i;
	int version;

	if (read_header(buf, len, &c, &version) != 0)
		return BAD_FILE;
	off = 44;
	if (version >= 2) {
		/* Skip the 32-bit block; use the 64-bit one that follows. */
		off += block_size(&c, 4);
		if (off > len ||
		    read_header(buf + off, len - off, &c, &version) != 0)
			return BAD_FILE;
		off += 44;
		tsize = 8;
	}
	if (block_size(&c, tsize) > len - off)
		return BAD_FILE;
	if (c.leap > 0)
		return LEAP_SECONDS;
	p = buf + off;
	idx = p + (size_t)c.time * tsize;
	types = idx + c.time;
	/* RFC 8536 3.2: utoff MUST NOT be -2^31 and SHOULD lie in -89999 to
	 * 93599 (-25 h to +26 h); nothing real lies outside (found by
	 * tests/fuzz/fuzz_tzif.c: -2^31 was accepted, and negates to UB) */
	for (i = 0; i < c.type; i++) {
		int32_t u = (int32_t)be32(types + i * 6);
		if (u < -89999 || u > 93599)
			return BAD_FILE;
	}

	if (c.time > 0) {
		tz->at = malloc(c.time * sizeof(*tz->at));
		tz->off = malloc(c.time * sizeof(*tz->off));
		if (!tz->at || !tz->off)
			return SKED_ENOMEM;
	}
	for (i = 0; i < c.time; i++) {
		int64_t t = tsize == 8 ? be64(p + i * 8)
		                       : (int64_t)(int32_t)be32(p + i * 4);
		if (idx[i] >= c.type || (i > 0 && t <= tz->at[i - 1]))
			return BAD_FILE;
		tz->at[i] = t;
		tz->off[i] = (int32_t)be32(types + (size_t)idx[i] * 6);
	}
	tz->n = c.time;
	/* RFC 8536: before the first transition, time type 0 applies. */
	tz->off0 = (int32_t)be32(types);

	if (version >= 2) {
		const unsigned char *f = p + block_size(&c, tsize), *nl;
		char footer[128];
		size_t flen;

		if (f >= buf + len || *f != '\n')
			return BAD_FILE;
		f++;
		nl = memchr(f, '\n', (size_t)(buf + len - f));
		if (!nl)
			return BAD_FILE;
		flen = (size_t)(nl - f);
		if (flen >= sizeof(footer))
			return BAD_FILE;
		memcpy(footer, f, flen);
		footer[flen] = '\0';
		if (flen > 0 && parse_footer(tz, footer) != 0)
			return BAD_FILE;
	}
	return 0;
}

static int
read_file(const char *path, unsigned char **out, size_t *len)
{
	struct stat st;
	unsigned char *buf;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return BAD_FILE;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > MAX_TZIF_BYTES) {
		close(fd);
		return BAD_FILE;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return SKED_ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	*out = buf;
	*len = got;
	return 0;
}

int
sked__tz_load(const char *name, sked_tz **out, char *err, size_t errlen)
{
	char path[4096];
	const char *dir;
	unsigned char *buf = NULL;
	size_t len = 0;
	sked_tz *tz;
	int rc;

	*out = NULL;
	if (!sked__tz_name_valid(name)) {
		seterr(err, errlen, "invalid time zone name", name, "");
		return SKED_ETZ;
	}
	tz = calloc(1, sizeof(*tz));
	if (!tz || !(tz->name = strdup(name))) {
		free(tz);
		return SKED_ENOMEM;
	}
	if (strcmp(name, "UTC") == 0 || strcmp(name, "Etc/UTC") == 0) {
		*out = tz; /* built in: offset 0, no transitions */
		return SKED_OK;
	}
	dir = getenv("TZDIR");
	if (!dir || !*dir)
		dir = DEFAULT_TZDIR;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path)) {
		sked__tz_free(tz);
		seterr(err, errlen, "unknown time zone", name, "");
		return SKED_ETZ;
	}
	rc = read_file(path, &buf, &len);
	if (rc == 0)
		rc = parse_tzif(tz, buf, len);
	free(buf);
	if (rc != 0) {
		sked__tz_free(tz);
		if (rc == SKED_ENOMEM)
			return rc;
		if (rc == LEAP_SECONDS)
			seterr(err, errlen, "time zone", name,
			       " counts leap seconds; use the zone without "
			       "the \"right/\" prefix");
		else
			seterr(err, errlen, "unknown time zone", name, "");
		return SKED_ETZ;
	}
	*out = tz;
	return SKED_OK;
}

void
sked__tz_free(sked_tz *tz)
{
	if (!tz)
		return;
	free(tz->name);
	free(tz->at);
	free(tz->off);
	free(tz);
}

const char *
sked__tz_name(const sked_tz *tz)
{
	return tz->name;
}

/* Index of the last transition at or before t, or -1. */
static ptrdiff_t
last_at_or_before(const sked_tz *tz, int64_t t)
{
	size_t lo = 0, hi = tz->n; /* answer in [lo, hi) shifted by one */

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (tz->at[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ptrdiff_t)lo - 1;
}

int
sked__tz_offset_at(const sked_tz *tz, int64_t utc_s)
{
	ptrdiff_t i;

	if (tz->has_rule && (tz->n == 0 || utc_s >= tz->at[tz->n - 1]))
		return rule_offset(tz, utc_s);
	i = last_at_or_before(tz, utc_s);
	return i < 0 ? tz->off0 : tz->off[i];
}

/* The footer's transitions near t: the first after t (dir > 0) or the
 * last at or before t (dir < 0). */
static int
rule_transition(const sked_tz *tz, int64_t t, int dir, int64_t *at)
{
	int y, k, found = 0;
	int64_t best = 0, cand[2];

	if (!tz->has_dst)
		return 0;
	y = year_of(t + tz->std_off);
	for (k = -1; k <= 1; k++) {
		int j;
		rule_year(tz, y + k, &cand[0], &cand[1]);
		for (j = 0; j < 2; j++) {
			int64_t c = cand[j];
			if (dir > 0 ? c <= t : c > t)
				continue;
			if (!found || (dir > 0 ? c < best : c > best))
				best = c;
			found = 1;
		}
	}
	*at = best;
	return found;
}

int
sked__tz_next_transition(const sked_tz *tz, int64_t utc_s, int64_t *at)
{
	ptrdiff_t i;

	if (tz->n > 0 && utc_s < tz->at[tz->n - 1]) {
		i = last_at_or_before(tz, utc_s);
		*at = tz->at[i + 1];
		return 1;
	}
	return tz->has_rule ? rule_transition(tz, utc_s, 1, at) : 0;
}

int
sked__tz_prev_transition(const sked_tz *tz, int64_t utc_s, int64_t *at)
{
	ptrdiff_t i;

	if (tz->has_rule && (tz->n == 0 || utc_s >= tz->at[tz->n - 1])) {
		if (rule_transition(tz, utc_s, -1, at) &&
		    (tz->n == 0 || *at > tz->at[tz->n - 1]))
			return 1;
	}
	i = last_at_or_before(tz, utc_s);
	if (i < 0)
		return 0;
	*at = tz->at[i];
	return 1;
}

int
sked__tz_local_to_utc(const sked_tz *tz, int64_t local_s, int64_t out[2])
{
	/* Any instant showing local_s lies within 26 h of it (no zone is
	 * further from UTC). Collect every offset in force in that window,
	 * then keep each candidate instant that really shows local_s. */
	int32_t offs[8];
	int noffs = 0, i, j, n = 0;
	int64_t t = local_s - 26 * 3600, at;

	offs[noffs++] = sked__tz_offset_at(tz, t);
	while (noffs < 8 && sked__tz_next_transition(tz, t, &at) &&
	       at <= local_s + 26 * 3600) {
		offs[noffs++] = sked__tz_offset_at(tz, at);
		t = at;
	}
	for (i = 0; i < noffs; i++) {
		int64_t cand = local_s - offs[i];
		int dup = 0;
		if (sked__tz_offset_at(tz, cand) != offs[i])
			continue;
		for (j = 0; j < n; j++)
			dup |= out[j] == cand;
		if (dup)
			continue;
		if (n < 2) {
			out[n++] = cand;
		} else if (cand < out[0]) {
			out[0] = cand;
		} else if (cand > out[1]) {
			out[1] = cand;
		}
		if (n == 2 && out[0] > out[1]) {
			int64_t tmp = out[0];
			out[0] = out[1];
			out[1] = tmp;
		}
	}
	return n;
}
