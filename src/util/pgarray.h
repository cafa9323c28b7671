/*
 * util/pgarray.h — PostgreSQL array literals ('{1,2,NULL}', '{"a","b"}'),
 * built element by element into a growable string.
 *
 * Layer: util, below the model. The model binds such a literal as one
 * text parameter of a statement that casts and unnests it (the dialects
 * with SKED_CAP_ARRAYS; see dialect.h). Pure string building: no I/O.
 */
#ifndef SKED_UTIL_PGARRAY_H
#define SKED_UTIL_PGARRAY_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* Append element i (0-based: element 0 opens the literal) of an int
 * array: v, or NULL when null is set. */
void sked__pgarray_int(sked_buf *b, size_t i, int64_t v, int null);

/* Append element i of a text array: NULL when s is NULL, else len bytes
 * of s double-quoted, with '"' and '\' escaped. */
void sked__pgarray_text(sked_buf *b, size_t i, const char *s, size_t len);

/* Close a literal of n elements ("{}" when n is 0). */
void sked__pgarray_end(sked_buf *b, size_t n);

#endif /* SKED_UTIL_PGARRAY_H */
