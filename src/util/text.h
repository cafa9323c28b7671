/*
 * text.h — text that every database accepts: strict UTF-8, bounded.
 *
 * Layer: util (pure, no I/O). What a handler says (its error, its output
 * tail, an HTTP body) is bytes, not text: a program may print \xff, a tail
 * cut at a byte count may start or end inside a character. PostgreSQL
 * refuses such a value outright ("invalid byte sequence for encoding
 * UTF8"), MySQL and MariaDB refuse or mangle it in strict mode, and one
 * refused value used to fail a whole batch of outcomes. Every value the
 * worker records passes through sked__text_clean first.
 */
#ifndef SKED_UTIL_TEXT_H
#define SKED_UTIL_TEXT_H

#include <stddef.h>

/* How sked__text_clean bounds a value longer than its limit. */
enum sked_text_cut {
	SKED_TEXT_HEAD, /* keep the first bytes (an error message) */
	SKED_TEXT_TAIL  /* keep the last bytes (an output tail) */
};

/* The length of the valid UTF-8 sequence (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF) that starts at s[0], given n > 0
 * bytes; 0 when s[0] starts no valid sequence within n bytes. */
size_t sked__utf8_seq(const unsigned char *s, size_t n);

/* 1 when s[0..n) is strict UTF-8 with no NUL byte, else 0. */
int sked__utf8_valid(const char *s, size_t n);

/* s (n bytes, NUL bytes allowed) as strict UTF-8 of at most max bytes
 * (max >= 3): each byte that starts no valid sequence (a NUL byte too)
 * becomes U+FFFD, and a value over max bytes is cut on a character
 * boundary at its head or its tail as cut says. Returns NULL when s
 * already is such a value (the caller keeps it), else a malloc'd,
 * NUL-terminated copy (the caller frees it); *oom is set when that copy
 * could not be made. */
char *sked__text_clean(const char *s, size_t n, size_t max,
                       enum sked_text_cut cut, int *oom)
        __attribute__((warn_unused_result));

/* A task's result (at most 64 KiB came in): sked__text_clean's
 * replacement without its cut, so that every byte of it is kept or
 * replaced and none dropped (a replaced byte takes three). NULL when s
 * already is strict UTF-8 without NUL. */
char *sked__result_clean(const char *s, size_t n, int *oom)
        __attribute__((warn_unused_result));

#endif /* SKED_UTIL_TEXT_H */
