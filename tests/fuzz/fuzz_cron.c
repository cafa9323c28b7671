/*
 * fuzz_cron.c — a fuzz target for the cron parser (sked__cron_parse) and
 * the fire-time search over what it accepts (sked__cron_next).
 *
 * Oracles, beyond the sanitizers: an error comes with a one-line message;
 * an accepted expression's fire times, from a few starting instants in
 * UTC and in a zone with daylight saving time (Europe/Berlin), are whole
 * seconds and strictly after the instant asked about, and the next one
 * after a fire time is later still.
 *
 * Input: the expression text (the first line; bytes are taken as they
 * come, NULs end it). Built as a libFuzzer program with -DSKED_LIBFUZZER
 * (`make fuzz`) and as a plain program replaying tests/fuzz/corpus/cron.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "time/cron.h"
#include "sked.h"
#include "time/tz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
bad(const char *expr, const char *what, int64_t a, int64_t b)
{
	fprintf(stderr, "finding: cron '%s': %s (%lld, %lld)\n", expr, what,
	        (long long)a, (long long)b);
	abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static sked_tz *berlin;
	static int loaded;
	if (!loaded) {
		char e[128];
		loaded = 1;
		if (sked__tz_load("Europe/Berlin", &berlin, e, sizeof e) !=
		    SKED_OK)
			berlin = NULL;
	}
	if (size > 256)
		return 0;
	char expr[257];
	memcpy(expr, data, size);
	expr[size] = '\0';
	expr[strcspn(expr, "\n")] = '\0';
	sked_cron *c = NULL;
	char err[256];
	err[0] = '\0';
	int rc = sked__cron_parse(expr, &c, err, sizeof err);
	if (rc != SKED_OK) {
		if (c)
			bad(expr, "an error left a schedule behind", rc, 0);
		if (rc == SKED_ECRON && (!err[0] || strchr(err, '\n')))
			bad(expr, "an error without a one-line message", rc, 0);
		return 0;
	}
	/* 2026-03-29 00:59:59 UTC: Berlin springs forward an hour later */
	static const int64_t from[] = {1774745999000, 0, -1, 4102444800123};
	for (int z = 0; z < 2; z++) {
		const sked_tz *tz = z ? berlin : NULL;
		if (z && !tz)
			continue;
		for (size_t i = 0; i < sizeof from / sizeof from[0]; i++) {
			int64_t at = from[i], next;
			for (int k = 0; k < 3; k++) {
				int r = sked__cron_next(c, tz, at, &next);
				if (r == SKED_ENOTFOUND)
					break;
				if (r != SKED_OK)
					bad(expr, "next failed", r, at);
				if (next <= at)
					bad(expr, "next not after", at, next);
				if (next % 1000 != 0)
					bad(expr, "next not a whole second",
					    next, 0);
				at = next;
			}
		}
	}
	sked__cron_free(c);
	return 0;
}

#include "fuzz_main.h"
