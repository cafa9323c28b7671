/*
 * util/buf.h — a growable byte string, for text assembled piece by piece
 * (rendered SQL templates, array literals).
 *
 * Folder src/util/ (floor 0, docs/design.md): small parts every floor
 * uses: buffers, logging, durations, time text, names, URLs, the clock.
 * They call nothing of sked's.
 *
 * Layer: utilities, used by the dialects. The text stays NUL-terminated
 * after every append. An allocation failure sets oom and makes later
 * appends no-ops, so callers check once at the end.
 */
#ifndef SKED_UTIL_BUF_H
#define SKED_UTIL_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct sked_buf {
	char *p;    /* NUL-terminated text, or NULL before the first append */
	size_t n;   /* bytes, without the NUL */
	size_t cap; /* bytes allocated */
	int oom;    /* an append failed: p is incomplete */
} sked_buf;

/* Append n bytes of s. */
void sked__buf_put(sked_buf *b, const char *s, size_t n);
/* Append a NUL-terminated string. */
void sked__buf_puts(sked_buf *b, const char *s);
/* The decimal digits of v (a '-' first when negative) into out, which
 * has room for SKED_I64_DIGITS bytes; returns their count, with no NUL.
 * printf's "%lld" without its format parsing: the worker prints every
 * id, attempt and time of a batch this way (about 40 instructions a
 * number against 700 for snprintf, counted with callgrind). */
#define SKED_I64_DIGITS 20
size_t sked__i64_digits(char *out, int64_t v);
/* Append the decimal digits of v. */
void sked__buf_i64(sked_buf *b, int64_t v);
/* Release the text and reset b. Takes NULL. */
void sked__buf_free(sked_buf *b);

#endif /* SKED_UTIL_BUF_H */
