/*
 * result.c — a materialized result: what a driver fills and the model
 * reads.
 *
 * Layer: below the drivers and db.c (result.h declares it). Drivers append
 * cells row by row; the model reads them as integers, text or copies. No
 * SQL, no connection: both sides call down into this file, never the other
 * way.
 */
#include "db/driver/result.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int
sked__res_begin(sked_res *r, int ncols)
{
	sked__res_clear(r);
	r->ncols = ncols;
	return SKED_OK;
}

int
sked__res_add(sked_res *r, const char *s, size_t len)
{
	assert(r->ncols > 0);
	if (r->ncells == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : (size_t)r->ncols * 8;
		size_t *off = realloc(r->off, cap * sizeof *off);
		if (!off)
			return SKED_ENOMEM;
		r->off = off;
		size_t *lens = realloc(r->len, cap * sizeof *lens);
		if (!lens)
			return SKED_ENOMEM;
		r->len = lens;
		r->cap = cap;
	}
	size_t at = SIZE_MAX;
	if (s) {
		if (len >= SIZE_MAX / 4 - r->nbytes)
			return SKED_ENOMEM;
		if (r->nbytes + len + 1 > r->bcap) {
			size_t cap = r->bcap ? r->bcap : 256;
			while (cap < r->nbytes + len + 1)
				cap *= 2;
			char *b = realloc(r->bytes, cap);
			if (!b)
				return SKED_ENOMEM;
			r->bytes = b;
			r->bcap = cap;
		}
		at = r->nbytes;
		if (len)
			memcpy(r->bytes + at, s, len);
		r->bytes[at + len] = '\0';
		r->nbytes += len + 1;
	}
	r->off[r->ncells] = at;
	r->len[r->ncells] = len;
	r->ncells++;
	r->nrows = (int)(r->ncells / (size_t)r->ncols);
	return SKED_OK;
}

void
sked__res_clear(sked_res *r)
{
	if (!r)
		return;
	free(r->off);
	free(r->len);
	free(r->bytes);
	memset(r, 0, sizeof *r);
}

static const char *
cell(const sked_res *r, int row, int col)
{
	assert(row >= 0 && row < r->nrows && col >= 0 && col < r->ncols);
	size_t at = r->off[(size_t)row * (size_t)r->ncols + (size_t)col];
	return at == SIZE_MAX ? NULL : r->bytes + at;
}

int
sked__res_null(const sked_res *r, int row, int col)
{
	return cell(r, row, col) == NULL;
}

int64_t
sked__res_int(const sked_res *r, int row, int col)
{
	const char *s = cell(r, row, col);
	if (!s)
		return 0;
	/* some servers hand back numeric text such as "12.0" for integer
	 * expressions; strtoll stops at the dot, which is what we want.
	 * The common case (digits, a '-' at most, fewer than 19 of them)
	 * is read here without strtoll's locale and base handling: every
	 * claimed row has a dozen integer cells. */
	const char *p = s + (*s == '-');
	int64_t v = 0;
	int k = 0;
	while (k < 18 && p[k] >= '0' && p[k] <= '9')
		v = v * 10 + (p[k++] - '0');
	if (k > 0 && k < 18 && !(p[k] >= '0' && p[k] <= '9'))
		return *s == '-' ? -v : v;
	return strtoll(s, NULL, 10);
}

const char *
sked__res_text(const sked_res *r, int row, int col)
{
	return cell(r, row, col);
}

size_t
sked__res_len(const sked_res *r, int row, int col)
{
	assert(row >= 0 && row < r->nrows && col >= 0 && col < r->ncols);
	return r->len[(size_t)row * (size_t)r->ncols + (size_t)col];
}

char *
sked__res_dup(const sked_res *r, int row, int col, int *nomem)
{
	const char *s = cell(r, row, col);
	if (!s)
		return NULL;
	size_t n = sked__res_len(r, row, col);
	char *d = malloc(n + 1);
	if (!d) {
		*nomem = 1;
		return NULL;
	}
	memcpy(d, s, n + 1);
	return d;
}
