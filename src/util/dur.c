/*
 * dur.c — reading and writing durations ("500ms", "1h30m").
 *
 * Layer: util (pure). Also defines the public sked_parse_duration and
 * sked_format_duration. Range checks belong to the callers: a lease of
 * "0s" is a valid duration here even if the worker refuses it.
 */
#include "util/dur.h"

#include <stdio.h>
#include <string.h>

#include "sked.h"
#include "sked_cli.h"

struct unit {
	const char *name;
	int64_t ms;
};

/* Longest name first so that "ms" is not read as "m" followed by "s". */
static const struct unit units[] = {
        {"ms", 1},
        {"s", 1000},
        {"m", 60 * 1000},
        {"h", 60 * 60 * 1000},
        {"d", 24 * 60 * 60 * 1000},
};

int
sked__dur_parse(const char *s, int64_t *ms)
{
	int64_t total = 0;
	const char *p = s;

	if (s == NULL || ms == NULL || *s == '\0')
		return SKED_EINVAL;
	while (*p != '\0') {
		int64_t n = 0;
		const struct unit *u = NULL;

		if (*p < '0' || *p > '9')
			return SKED_EINVAL;
		while (*p >= '0' && *p <= '9') {
			int digit = *p - '0';
			if (n > (INT64_MAX - digit) / 10)
				return SKED_EINVAL;
			n = n * 10 + digit;
			p++;
		}
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			size_t l = strlen(units[i].name);
			if (strncmp(p, units[i].name, l) == 0 &&
			    !(p[l] >= 'a' && p[l] <= 'z')) {
				u = &units[i];
				p += l;
				break;
			}
		}
		if (u == NULL) /* a bare number, or a unit we do not know */
			return SKED_EINVAL;
		if (n > INT64_MAX / u->ms || total > INT64_MAX - n * u->ms)
			return SKED_EINVAL;
		total += n * u->ms;
	}
	*ms = total;
	return SKED_OK;
}

void
sked__dur_format(int64_t ms, char *buf, size_t len)
{
	char tmp[40];
	size_t off = 0;
	uint64_t v;

	if (buf == NULL || len == 0)
		return;
	if (ms < 0) {
		tmp[off++] = '-';
		v = (uint64_t)(-(ms + 1)) + 1; /* INT64_MIN has no positive */
	} else {
		v = (uint64_t)ms;
	}
	if (v == 0) {
		tmp[off++] = '0';
		tmp[off++] = 's';
	}
	for (int i = (int)(sizeof(units) / sizeof(units[0])) - 1; i >= 0; i--) {
		uint64_t q = v / (uint64_t)units[i].ms;
		if (q == 0)
			continue;
		v -= q * (uint64_t)units[i].ms;
		off += (size_t)snprintf(tmp + off, sizeof(tmp) - off, "%llu%s",
		                        (unsigned long long)q, units[i].name);
	}
	tmp[off] = '\0';
	snprintf(buf, len, "%s", tmp);
}

SKED_API int
sked_parse_duration(const char *s, int64_t *ms)
{
	return sked__dur_parse(s, ms);
}

SKED_API char *
sked_format_duration(int64_t ms, char *buf, size_t len)
{
	sked__dur_format(ms, buf, len);
	return buf;
}
