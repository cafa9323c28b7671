/*
 * ident.c — validation of names and of the table prefix.
 *
 * Layer: util (pure). Written with explicit ASCII ranges rather than
 * <ctype.h> so that the locale cannot widen what is accepted. Also
 * defines the public sked_name_valid, and the default owner name (which
 * alone reads the host name, the pid and the clock).
 */
#include "util/ident.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sked.h"
#include "util/clock.h"

static int
alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

int
sked__name_valid(const char *s)
{
	size_t n;

	if (s == NULL || !alnum(s[0]))
		return 0;
	for (n = 1; s[n] != '\0'; n++) {
		char c = s[n];
		if (n >= SKED_MAX_NAME)
			return 0;
		if (!alnum(c) && c != '_' && c != '.' && c != ':' && c != '-')
			return 0;
	}
	return 1;
}

int
sked__prefix_valid(const char *s)
{
	size_t n;

	if (s == NULL || !((s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return 0;
	for (n = 1; s[n] != '\0'; n++) {
		char c = s[n];
		if (n >= 31)
			return 0;
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return 0;
	}
	return 1;
}

SKED_API int
sked_name_valid(const char *s)
{
	return sked__name_valid(s);
}

void
sked__default_id(char *buf, size_t len)
{
	char host[64] = "host";
	unsigned r;

	if (gethostname(host, sizeof host - 1) != 0)
		snprintf(host, sizeof host, "host");
	host[sizeof host - 1] = '\0';
	for (char *c = host; *c; c++) /* keep it a valid name */
		if (!alnum(*c) && *c != '_' && *c != '.' && *c != '-')
			*c = '-';
	r = (unsigned)getpid() ^ (unsigned)sked__mono_ms();
	snprintf(buf, len, "%s%s-%d-%04x", alnum(host[0]) ? "" : "h", host,
	         (int)getpid(), r & 0xffff);
}

/* n lowercase hex digits at s; *zero is set when they are all '0' */
static int
lower_hex(const char *s, int n, int *zero)
{
	*zero = 1;
	for (int i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return 0;
		if (c != '0')
			*zero = 0;
	}
	return 1;
}

int
sked__traceparent_valid(const char *s)
{
	int zero;
	if (!s || strlen(s) != SKED_TRACEPARENT_LEN || s[2] != '-' ||
	    s[35] != '-' || s[52] != '-')
		return 0;
	if (!lower_hex(s, 2, &zero) || strncmp(s, "ff", 2) == 0)
		return 0;
	if (!lower_hex(s + 3, 32, &zero) || zero)
		return 0;
	if (!lower_hex(s + 36, 16, &zero) || zero)
		return 0;
	return lower_hex(s + 53, 2, &zero);
}
