/*
 * fuzz_tzif.c — a fuzz target for the TZif reader (tz.c: header, data
 * blocks of version 1 and 2+, the POSIX-TZ footer) and the queries over
 * what it accepts.
 *
 * The bytes are written as a zone file into a private TZDIR and loaded
 * by name (sked__tz_load is the one entry point that reads zone files).
 * Oracles, beyond the sanitizers: no offset is -2^31 (RFC 8536's one
 * MUST; its range -25..+26 hours is a SHOULD, which tz.c does not check),
 * the next transition after t is after t and the last one at or before t
 * is not after it, local-to-UTC answers 0, 1 or 2 instants in increasing
 * order, each showing the wall clock asked about, and a zone sked
 * accepts serves cron fire-time searches (strictly later each time).
 *
 * Built as a libFuzzer program with -DSKED_LIBFUZZER (`make fuzz`) and as
 * a plain program replaying tests/fuzz/corpus/tzif.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "time/cron.h"
#include "sked.h"
#include "time/tz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
bad(const char *what, int64_t a, int64_t b)
{
	fprintf(stderr, "finding: tzif: %s (%lld, %lld)\n", what, (long long)a,
	        (long long)b);
	abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[64], path[96];
	static sked_cron *hourly;
	if (!dir[0]) {
		snprintf(dir, sizeof dir, "/tmp/sked-fuzz-tz.XXXXXX");
		if (!mkdtemp(dir))
			abort();
		snprintf(path, sizeof path, "%s/Fuzz", dir);
		setenv("TZDIR", dir, 1);
		char e[64];
		if (sked__cron_parse("30 2 * * *", &hourly, e, sizeof e) !=
		    SKED_OK)
			abort();
	}
	FILE *f = fopen(path, "wb");
	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	sked_tz *tz = NULL;
	char err[256];
	int rc = sked__tz_load("Fuzz", &tz, err, sizeof err);
	if (rc != SKED_OK) {
		if (tz)
			bad("an error left a zone behind", rc, 0);
		return 0;
	}
	static const int64_t at[] = {-2208988800, -1,         0,
	                             1,           1711846800, 1774745999,
	                             2147483647,  4102444800, 253402300799};
	for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
		int off = sked__tz_offset_at(tz, at[i]);
		if (off == INT32_MIN)
			bad("offset -2^31, which RFC 8536 forbids", at[i], off);
		int64_t t;
		if (sked__tz_next_transition(tz, at[i], &t) && t <= at[i])
			bad("next transition not after", at[i], t);
		if (sked__tz_prev_transition(tz, at[i], &t) && t > at[i])
			bad("previous transition after", at[i], t);
		int64_t out[2];
		int n = sked__tz_local_to_utc(tz, at[i] + off, out);
		if (n < 0 || n > 2 || (n == 2 && out[0] >= out[1]))
			bad("local to UTC", at[i], n);
		for (int k = 0; k < n; k++)
			if (out[k] + sked__tz_offset_at(tz, out[k]) !=
			    at[i] + off)
				bad("local to UTC gives an instant showing "
				    "another wall clock",
				    at[i], out[k]);
		int64_t next;
		int r = sked__cron_next(hourly, tz, at[i] * 1000, &next);
		if (r == SKED_OK && next <= at[i] * 1000)
			bad("cron next not after", at[i], next);
	}
	sked__tz_free(tz);
	return 0;
}

#include "fuzz_main.h"
