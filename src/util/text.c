/*
 * util/text.c — strict UTF-8 checks and the cleaner (see text.h).
 */
#include "util/text.h"

#include <stdlib.h>
#include <string.h>

size_t
sked__utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	if (c >= 0x01 && c <= 0x7f)
		return 1;
	size_t len;
	unsigned lo = 0x80, hi = 0xbf; /* the second byte's range */
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0; /* no overlong forms */
		else if (c == 0xed)
			hi = 0x9f; /* no surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90; /* no overlong forms */
		else if (c == 0xf4)
			hi = 0x8f; /* nothing past U+10FFFF */
	} else {
		return 0; /* NUL, a continuation byte, 0xc0, 0xc1, 0xf5-0xff */
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

int
sked__utf8_valid(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		size_t k = sked__utf8_seq(u + i, n - i);
		if (!k)
			return 0;
		i += k;
	}
	return 1;
}

static const char REPL[] = "\xef\xbf\xbd"; /* U+FFFD */

char *
sked__text_clean(const char *s, size_t n, size_t max, enum sked_text_cut cut,
                 int *oom)
{
	*oom = 0;
	if (max < 3)
		max = 3;
	if (n <= max && sked__utf8_valid(s, n))
		return NULL;
	const unsigned char *u = (const unsigned char *)s;
	/* the first pass measures each character's cleaned size, so that a
	 * tail can be kept whole; a cleaned value is at most 3 bytes a byte */
	size_t *at = NULL; /* TAIL: where each cleaned character starts */
	size_t nchars = 0;
	if (cut == SKED_TEXT_TAIL && !(at = malloc(sizeof *at * (n + 1)))) {
		*oom = 1;
		return NULL;
	}
	size_t cap = (cut == SKED_TEXT_TAIL ? n * 3 : max) + 1;
	char *out = malloc(cap);
	if (!out) {
		free(at);
		*oom = 1;
		return NULL;
	}
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		size_t k = sked__utf8_seq(u + i, n - i);
		const char *src = k ? s + i : REPL;
		size_t len = k ? k : 3;
		if (cut == SKED_TEXT_HEAD && o + len > max)
			break; /* the head is full: cut before this character */
		if (at)
			at[nchars++] = o;
		memcpy(out + o, src, len);
		o += len;
		i += k ? k : 1;
	}
	if (cut == SKED_TEXT_TAIL && o > max) {
		/* the first character boundary that leaves at most max bytes */
		size_t from = o;
		for (size_t c = 0; c < nchars; c++)
			if (o - at[c] <= max) {
				from = at[c];
				break;
			}
		memmove(out, out + from, o - from);
		o -= from;
	}
	out[o] = '\0';
	free(at);
	return out;
}

char *
sked__result_clean(const char *s, size_t n, int *oom)
{
	/* each byte is kept or becomes three: 3 n bytes never cut */
	return sked__text_clean(s, n, 3 * n + 3, SKED_TEXT_HEAD, oom);
}
