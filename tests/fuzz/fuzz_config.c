/*
 * fuzz_config.c — a fuzz target for the `sked` program's config file
 * reader (cli/base/config.c over inih): sections, keys, values, durations and
 * numbers in them, over-long lines, handler and schedule sections.
 *
 * The bytes are written to a private file and read with cli_config_load,
 * as `sked --config FILE` would. Oracles, beyond the sanitizers (leaks
 * included): the reader answers 0 or a sysexits code, and a file it
 * refuses is reported in one line that names the file.
 *
 * cli_err, the program's one error printer, is this harness's own so the
 * message can be judged (cli/base/out.c is not linked). Built as a libFuzzer
 * program with -DSKED_LIBFUZZER (`make fuzz`) and as a plain program
 * replaying tests/fuzz/corpus/config.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "base/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char last_err[1024];
static int nerr;

void
cli_err(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_err, sizeof last_err, fmt, ap);
	va_end(ap);
	nerr++;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	if (!path[0]) {
		snprintf(path, sizeof path, "/tmp/sked-fuzz-conf.XXXXXX");
		int fd = mkstemp(path);
		if (fd < 0)
			abort();
		close(fd);
	}
	if (size > 16384)
		return 0;
	FILE *f = fopen(path, "wb");
	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	struct cli_config cfg;
	memset(&cfg, 0, sizeof cfg);
	nerr = 0;
	last_err[0] = '\0';
	int rc = cli_config_load(path, &cfg);
	if (rc != 0 && (rc < EX__BASE || rc > EX__MAX)) {
		fprintf(stderr, "finding: config reader returned %d\n", rc);
		abort();
	}
	if (rc != 0 &&
	    (nerr != 1 || strchr(last_err, '\n') || !strstr(last_err, path))) {
		fprintf(stderr,
		        "finding: a refused config file got %d message(s), "
		        "the last '%s'\n",
		        nerr, last_err);
		abort();
	}
	cli_config_free(&cfg);
	return 0;
}

#include "fuzz_main.h"
