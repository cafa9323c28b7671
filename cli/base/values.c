/*
 * values.c — setting values that a flag and the config file both take,
 * checked in one place.
 *
 * Layer: the bottom of the command-line program: pure parsing, no output,
 * so that out.c (the flags) and config.c (the file) both call down into
 * it and never into each other.
 */
#include "base/cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* [worker] prefetch and --prefetch (cli.h) */
int
cli_prefetch_value(const char *s, int *out)
{
	char *end;
	long v;
	if (strcmp(s, "auto") == 0) {
		*out = 0; /* sked_worker_options: 0 is adaptive */
		return 0;
	}
	if (strcmp(s, "off") == 0) {
		*out = SKED_PREFETCH_OFF;
		return 0;
	}
	errno = 0;
	v = strtol(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 || v > 10000)
		return -1;
	*out = v == 0 ? SKED_PREFETCH_OFF : (int)v; /* 0: none ahead */
	return 0;
}

const char *
cli_secret_weak(const char *s, size_t min_len, int min_distinct)
{
	int seen[256] = {0}, distinct = 0;
	size_t n = strlen(s);

	if (n < min_len)
		return "too short";
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch <= 0x20 || ch == 0x7f)
			return "holding a blank or a control character";
		distinct += !seen[ch]++;
	}
	return distinct < min_distinct ? "made of too few different characters"
	                               : NULL;
}

int
cli_parent_failure_value(const char *s, int *out)
{
	if (strcmp(s, "cancel") == 0)
		*out = SKED_PARENT_CANCEL;
	else if (strcmp(s, "ignore") == 0)
		*out = SKED_PARENT_IGNORE;
	else
		return -1;
	return 0;
}

int
cli_zoned_time_value(const char *s, int64_t *ms)
{
	const char *t = strpbrk(s, "Tt ");
	if (sked_parse_time(s, ms) != SKED_OK || !t || !strpbrk(t, "Zz+-"))
		return -1;
	return 0;
}
