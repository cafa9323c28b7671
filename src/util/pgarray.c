/*
 * util/pgarray.c — PostgreSQL array literals (see util/pgarray.h).
 *
 * Layer: util. Moved here from the PostgreSQL dialect, which is data
 * only; outcome.c and enqueue.c build the arrays of their batch statements.
 */
#include "util/pgarray.h"

static void
sep(sked_buf *b, size_t i)
{
	sked__buf_put(b, i ? "," : "{", 1);
}

void
sked__pgarray_int(sked_buf *b, size_t i, int64_t v, int null)
{
	sep(b, i);
	if (null)
		sked__buf_put(b, "NULL", 4);
	else
		sked__buf_i64(b, v);
}

void
sked__pgarray_text(sked_buf *b, size_t i, const char *s, size_t len)
{
	sep(b, i);
	if (!s) {
		sked__buf_put(b, "NULL", 4);
		return;
	}
	sked__buf_put(b, "\"", 1);
	size_t run = 0;
	for (size_t k = 0; k < len; k++) {
		if (s[k] == '"' || s[k] == '\\') {
			sked__buf_put(b, s + run, k - run);
			sked__buf_put(b, "\\", 1);
			run = k;
		}
	}
	sked__buf_put(b, s + run, len - run);
	sked__buf_put(b, "\"", 1);
}

void
sked__pgarray_end(sked_buf *b, size_t n)
{
	sked__buf_put(b, n ? "}" : "{}", n ? 1 : 2);
}
