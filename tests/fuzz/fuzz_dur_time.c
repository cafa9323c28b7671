/*
 * fuzz_dur_time.c — a fuzz target for the two value parsers of the
 * command line and config file: durations (sked__dur_parse: "1h30m") and
 * ISO-8601 instants (sked__time_parse).
 *
 * Oracles, beyond the sanitizers: a rejected input leaves the output
 * alone; an accepted duration is not negative and reads back the same
 * after sked__dur_format; an accepted instant, written by
 * sked__time_format, reads back as the same millisecond (years 0000 to
 * 9999, which the reader accepts), and in whole seconds never later.
 *
 * Input: the text, the first byte choosing the parser (even: duration,
 * odd: time). Built as a libFuzzer program with -DSKED_LIBFUZZER
 * (`make fuzz`) and as a plain program replaying
 * tests/fuzz/corpus/dur_time.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sked.h"
#include "sked_cli.h"
#include "util/dur.h"
#include "util/timefmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
bad(const char *in, const char *what, int64_t a, int64_t b)
{
	fprintf(stderr, "finding: '%s': %s (%lld, %lld)\n", in, what,
	        (long long)a, (long long)b);
	abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 128)
		return 0;
	int which = data[0] & 1;
	char in[129];
	memcpy(in, data + 1, size - 1);
	in[size - 1] = '\0';
	const int64_t untouched = 0x5eed5eed;
	int64_t ms = untouched, again = untouched;
	char out[64];
	if (which == 0) {
		int rc = sked__dur_parse(in, &ms);
		if (rc != SKED_OK) {
			if (ms != untouched)
				bad(in, "a rejected duration changed *ms", ms,
				    rc);
			return 0;
		}
		if (ms < 0)
			bad(in, "negative duration", ms, 0);
		sked__dur_format(ms, out, sizeof out);
		if (sked__dur_parse(out, &again) != SKED_OK || again != ms)
			bad(out, "duration does not read back", ms, again);
		int64_t pub = untouched;
		if (sked_parse_duration(in, &pub) != SKED_OK || pub != ms)
			bad(in, "public and internal parsers disagree", ms,
			    pub);
	} else {
		int rc = sked__time_parse(in, &ms);
		if (rc != SKED_OK) {
			if (ms != untouched)
				bad(in, "a rejected time changed *ms", ms, rc);
			return 0;
		}
		sked__time_format(ms, out, sizeof out);
		if (out[0] == '-' || out[0] == '+')
			return 0; /* an offset carried it past year 0..9999 */
		if (sked__time_parse(out, &again) != SKED_OK || again != ms)
			bad(out, "time does not read back", ms, again);
		sked__time_format_sec(ms, out, sizeof out);
		if (sked__time_parse(out, &again) != SKED_OK || again > ms ||
		    ms - again >= 1000)
			bad(out, "whole-second time does not read back", ms,
			    again);
	}
	return 0;
}

#include "fuzz_main.h"
