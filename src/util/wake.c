/*
 * wake.c — the wake-up payload and its window (wake.h).
 *
 * Layer: util (pure, no I/O).
 */
#include "util/wake.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/ident.h"

static const char *
name_or_dash(const char *s)
{
	return s && *s && sked__name_valid(s) ? s : "-";
}

int
sked__wake_format(char *buf, size_t len, const sked_wake *w)
{
	int64_t n = w->n < 1 ? 1 : w->n;
	int hop = w->hop < 0 ? 0 : w->hop;
	int k = snprintf(buf, len, "w1 %" PRIu32 " %" PRId64 " %d %s %s", w->r,
	                 n, hop, name_or_dash(w->queue), name_or_dash(w->kind));
	return k < 0 || (size_t)k >= len ? -1 : k;
}

/* An unsigned decimal of at most max digits at *s; moves *s past it. */
static int
number(const char **s, int max, uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0;
	int d = 0;
	while (*p >= '0' && *p <= '9') {
		if (++d > max)
			return 0;
		v = v * 10 + (uint64_t)(*p++ - '0');
	}
	if (!d)
		return 0;
	*s = p;
	*out = v;
	return 1;
}

/* A name or "-" up to the next space or the end, into out ("" for "-"). */
static int
word(const char **s, char out[SKED_MAX_NAME + 1])
{
	const char *p = *s;
	size_t l = strcspn(p, " ");
	if (l == 0 || l > SKED_MAX_NAME)
		return 0;
	memcpy(out, p, l);
	out[l] = '\0';
	*s = p + l;
	if (strcmp(out, "-") == 0) {
		out[0] = '\0';
		return 1;
	}
	return sked__name_valid(out);
}

int
sked__wake_parse(const char *s, sked_wake *w)
{
	uint64_t r, n, hop;
	if (!s || strncmp(s, "w1 ", 3) != 0)
		return 0;
	s += 3;
	if (!number(&s, 10, &r) || r > UINT32_MAX || *s++ != ' ' ||
	    !number(&s, 19, &n) || n < 1 || n > INT64_MAX || *s++ != ' ' ||
	    !number(&s, 3, &hop) || hop > SKED_WAKE_HOPS || *s++ != ' ' ||
	    !word(&s, w->queue) || *s++ != ' ' || !word(&s, w->kind) || *s)
		return 0;
	w->r = (uint32_t)r;
	w->n = (int64_t)n;
	w->hop = (int)hop;
	return 1;
}

int
sked__wake_width(int64_t n, int m)
{
	if (m <= 0)
		return 0;
	/* n may be INT64_MAX (a payload's word): n + 1 would overflow */
	return n >= (int64_t)m - 1 ? m : (int)(n + 1);
}

int
sked__wake_place(const sked_wake *w, int k, int m)
{
	if (m <= 0 || k < 0 || k >= m)
		return 0;
	int first = (int)(w->r % (uint32_t)m);
	int d = (k - first + m) % m;
	return d < sked__wake_width(w->n, m) ? d : -1;
}

int
sked__wake_next(const sked_wake *w, int m, sked_wake *next)
{
	int a = sked__wake_width(w->n, m);
	/* a window as wide as the group has nobody left to ask; going round
	 * again would ask the same workers */
	if (a <= 0 || a >= m || w->hop >= SKED_WAKE_HOPS ||
	    (int64_t)(w->hop + 2) * a > m)
		return 0;
	*next = *w;
	next->r = w->r + (uint32_t)a;
	next->hop = w->hop + 1;
	return 1;
}
