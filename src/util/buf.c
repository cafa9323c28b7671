/*
 * util/buf.c — a growable byte string (see buf.h).
 */
#include "util/buf.h"

#include <stdlib.h>
#include <string.h>

void
sked__buf_put(sked_buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + n + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

size_t
sked__i64_digits(char *out, int64_t v)
{
	char tmp[SKED_I64_DIGITS];
	size_t n = 0, k = 0;
	/* the magnitude as unsigned, so that INT64_MIN has one */
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		out[k++] = '-';
	while (n)
		out[k++] = tmp[--n];
	return k;
}

void
sked__buf_i64(sked_buf *b, int64_t v)
{
	char num[SKED_I64_DIGITS];
	sked__buf_put(b, num, sked__i64_digits(num, v));
}

void
sked__buf_puts(sked_buf *b, const char *s)
{
	sked__buf_put(b, s, strlen(s));
}

void
sked__buf_free(sked_buf *b)
{
	if (!b)
		return;
	free(b->p);
	b->p = NULL;
	b->n = b->cap = 0;
	b->oom = 0;
}
