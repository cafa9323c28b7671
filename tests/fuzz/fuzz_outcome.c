/*
 * fuzz_outcome.c — a fuzz target for the values a worker records from a
 * handler: its error message and its output tail (sked__text_clean,
 * util/text.h), and its result (sked__result_clean), which must reach
 * every engine as text it accepts.
 *
 * Oracles, beyond the sanitizers: what comes out is strict UTF-8 as a
 * decoder written here independently of text.c judges it (code points
 * computed and checked for their shortest form, surrogates and range),
 * no NUL byte, at most max bytes; cleaning it again changes nothing; an
 * input that was already valid and short enough is kept as it is (NULL);
 * a valid input that was too long comes out as its own head or tail.
 * The same input as a result: strict UTF-8 too, never cut (each byte
 * kept or replaced by three), kept as it is when it was valid.
 *
 * Input: the first byte picks the cut (bit 0: head or tail) and the bound
 * (bits 1-7: 3 to 257 bytes); the rest is the value, NUL bytes and all.
 * Built as a libFuzzer program with -DSKED_LIBFUZZER (`make fuzz`) and as
 * a plain program replaying tests/fuzz/corpus/outcome.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
finding(const char *what)
{
	fprintf(stderr, "finding: %s\n", what);
	abort();
}

/* 1 when s[0..n) is UTF-8 by the code points it spells. */
static int
decodes(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned c = s[i];
		size_t len = c < 0x80         ? 1
		             : (c >> 5) == 6  ? 2
		             : (c >> 4) == 14 ? 3
		             : (c >> 3) == 30 ? 4
		                              : 0;
		if (!len || i + len > n || c == 0)
			return 0;
		uint32_t cp = len == 1 ? c : c & (0x7f >> len);
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
		if (cp < least[len] || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += len;
	}
	return 1;
}

/* The value as a task's result: cleaned, never cut. */
static void
result(const char *in, size_t n, int valid)
{
	int oom = 0;
	char *out = sked__result_clean(in, n, &oom);
	if (!out) {
		if (!oom && !valid)
			finding("an invalid result was kept as it is");
		return;
	}
	size_t m = strlen(out);
	if (valid)
		finding("a valid result was changed");
	if (m < n || m > 3 * n)
		finding("a result was cut, or grew past three bytes a byte");
	if (!decodes((const unsigned char *)out, m))
		finding("the cleaned result is not UTF-8");
	char *again = sked__result_clean(out, m, &oom);
	if (again) {
		free(again);
		finding("cleaning a cleaned result changed it");
	}
	free(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 4096)
		return 0;
	enum sked_text_cut cut = data[0] & 1 ? SKED_TEXT_TAIL : SKED_TEXT_HEAD;
	size_t max = 3 + (data[0] >> 1) * 2;
	const char *in = (const char *)data + 1;
	size_t n = size - 1;
	int oom = 0;
	char *out = sked__text_clean(in, n, max, cut, &oom);
	int valid = decodes(data + 1, n);
	if (valid != sked__utf8_valid(in, n))
		finding("sked__utf8_valid disagrees with the decoder");
	result(in, n, valid);
	if (!out) {
		if (oom)
			return 0;
		if (!valid || n > max)
			finding("an invalid or long value was kept as it is");
		return 0;
	}
	size_t m = strlen(out);
	if (m > max)
		finding("the cleaned value is longer than its bound");
	if (!decodes((const unsigned char *)out, m))
		finding("the cleaned value is not UTF-8");
	char *again = sked__text_clean(out, m, max, cut, &oom);
	if (again) {
		free(again);
		finding("cleaning a cleaned value changed it");
	}
	if (valid) {
		if (cut == SKED_TEXT_HEAD ? memcmp(out, in, m) != 0
		                          : memcmp(out, in + n - m, m) != 0)
			finding("a valid value was not cut to its head or "
			        "tail");
		if (m + 4 <= max)
			finding("a valid value lost more than one character");
	}
	free(out);
	return 0;
}

#include "fuzz_main.h"
