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
