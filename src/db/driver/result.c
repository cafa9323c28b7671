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
		char **cell = realloc(r->cell, cap * sizeof *cell);
		if (!cell)
			return SKED_ENOMEM;
		r->cell = cell;
		size_t *lens = realloc(r->len, cap * sizeof *lens);
		if (!lens)
			return SKED_ENOMEM;
		r->len = lens;
		r->cap = cap;
	}
	char *copy = NULL;
	if (s) {
		copy = malloc(len + 1);
		if (!copy)
			return SKED_ENOMEM;
		memcpy(copy, s, len);
		copy[len] = '\0';
	}
	r->cell[r->ncells] = copy;
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
	for (size_t i = 0; i < r->ncells; i++)
		free(r->cell[i]);
	free(r->cell);
	free(r->len);
	memset(r, 0, sizeof *r);
}

static const char *
cell(const sked_res *r, int row, int col)
{
	assert(row >= 0 && row < r->nrows && col >= 0 && col < r->ncols);
	return r->cell[(size_t)row * (size_t)r->ncols + (size_t)col];
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
	 * expressions; strtoll stops at the dot, which is what we want */
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
