/*
 * fuzz_wake.c — a fuzz target for the wake-up payload (util/wake.h), which
 * a worker reads from every notification on its channel: anyone who may
 * NOTIFY on the database may send it anything. Oracles, beyond the
 * sanitizers: a payload read is one sked would write (written again, it
 * reads back the same), its window never places a worker outside
 * 0..width-1 of a group, and passing it on never goes past
 * SKED_WAKE_HOPS. Input: the payload (bytes as they come; a NUL ends
 * it). Built as a libFuzzer program with -DSKED_LIBFUZZER (`make fuzz`)
 * and as a plain program replaying tests/fuzz/corpus/wake.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/wake.h"

static void
finding(const char *what, const char *text)
{
	fprintf(stderr, "wake: %s in '%s'\n", what, text);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	sked_wake w, back, next;
	if (sked__wake_parse(text, &w)) {
		char buf[SKED_WAKE_MAX + 1];
		if (sked__wake_format(buf, sizeof buf, &w) < 0)
			finding("a payload read that cannot be written", text);
		if (!sked__wake_parse(buf, &back) || back.r != w.r ||
		    back.n != w.n || back.hop != w.hop ||
		    strcmp(back.queue, w.queue) != 0 ||
		    strcmp(back.kind, w.kind) != 0)
			finding("a payload that does not read back", text);
		for (int m = 0; m < 40; m++) {
			int width = sked__wake_width(w.n, m), in = 0;
			for (int k = 0; k < m; k++) {
				int p = sked__wake_place(&w, k, m);
				if (p >= width || p < -1)
					finding("a place outside the window", text);
				in += p >= 0;
			}
			if (in != width)
				finding("a window of the wrong width", text);
			if (sked__wake_next(&w, m, &next) &&
			    next.hop > SKED_WAKE_HOPS)
				finding("passed on too far", text);
		}
	}
	free(text);
	return 0;
}

#include "fuzz_main.h"
