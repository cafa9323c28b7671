/*
 * db/driver/markers.c — numbered markers to positional ones (see
 * markers.h): what libodbc.c prepares.
 *
 * Layer: the drivers' floor (src/db/driver/); pure text, no library, so
 * it is built whatever drivers are, and unit-tested alone
 * (tests/unit/test_odbc.c).
 */
#include "db/driver/markers.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "sked.h"

int
sked__odbc_rewrite(const char *sql, char **out, int **map, int *nmarks)
{
	size_t n = strlen(sql);
	char *o = malloc(n + 1);
	int cap = 8, k = 0, top = 0;
	int *m = malloc((size_t)cap * sizeof *m);
	*out = NULL;
	*map = NULL;
	*nmarks = 0;
	if (!o || !m) {
		free(o);
		free(m);
		return SKED_ENOMEM;
	}
	size_t j = 0;
	const char *s = sql;
	while (*s) {
		char c = *s;
		if (c == '\'' || c == '"') {
			/* a quoted literal or identifier; a doubled quote
			 * stays inside */
			o[j++] = *s++;
			while (*s) {
				if (*s == c && s[1] == c) {
					o[j++] = *s++;
					o[j++] = *s++;
					continue;
				}
				if (*s == c) {
					o[j++] = *s++;
					break;
				}
				o[j++] = *s++;
			}
			continue;
		}
		if (c == '-' && s[1] == '-') {
			while (*s && *s != '\n')
				o[j++] = *s++;
			continue;
		}
		if (c == '/' && s[1] == '*') {
			o[j++] = *s++;
			o[j++] = *s++;
			while (*s && !(s[0] == '*' && s[1] == '/'))
				o[j++] = *s++;
			if (*s) {
				o[j++] = *s++;
				o[j++] = *s++;
			}
			continue;
		}
		if (c != '?') {
			o[j++] = *s++;
			continue;
		}
		s++;
		int num = 0;
		if (isdigit((unsigned char)*s)) {
			while (isdigit((unsigned char)*s) && num < 100000)
				num = num * 10 + (*s++ - '0');
		} else {
			num = top + 1;
		}
		if (num > top)
			top = num;
		if (k == cap) {
			cap *= 2;
			int *g = realloc(m, (size_t)cap * sizeof *m);
			if (!g) {
				free(o);
				free(m);
				return SKED_ENOMEM;
			}
			m = g;
		}
		m[k++] = num - 1;
		o[j++] = '?';
	}
	o[j] = '\0';
	*out = o;
	*map = m;
	*nmarks = k;
	return SKED_OK;
}
