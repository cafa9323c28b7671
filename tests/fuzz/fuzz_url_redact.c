/*
 * fuzz_url_redact.c — a fuzz target for sked__url_redact with a leak
 * oracle: whatever a driver would read as a password from the input must
 * not show in the redacted text.
 *
 * Readers used as oracles, each independent of the redactor's code:
 *   libpq        PQconninfoParse (password, sslpassword), when built;
 *   MySQL        sked__url_parse, the parser that hands mysql:// and
 *                mariadb:// passwords to the driver;
 *   ODBC         read_odbc below, the connection-string grammar of the
 *                ODBC specification (key=value;…, braced values with "}}").
 *
 * The oracle counts occurrences: redaction copies the input except for
 * masked spans, so a secret written literally in the input must occur
 * fewer times in the output than in the input, and a secret that only
 * appears encoded must not occur at all. Secrets shorter than 3 bytes or
 * holding '*' (which the mask itself writes) are not judged.
 *
 * Built two ways: with -DSKED_LIBFUZZER and clang's -fsanitize=fuzzer
 * (`make fuzz`, see docs/testing.md), and as a plain program that runs
 * every file named on its command line (the seed corpus in
 * tests/fuzz/corpus/url, a CTest test in every build).
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sked.h"
#include "util/url.h"

#ifdef SKED_HAVE_PG
#include <libpq-fe.h>
#endif

static size_t
count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

/* encoded: the reader may have decoded the secret (percent escapes,
 * backslashes in quotes, doubled braces), so its literal text may also
 * occur elsewhere in the input: then only "no more than before" can be
 * asked. */
static void
judge(const char *in, const char *out, const char *secret, const char *who,
      int encoded)
{
	if (!secret || strlen(secret) < 3 || strchr(secret, '*'))
		return;
	size_t cin = count(in, secret), cout = count(out, secret);
	int leak = cin == 0 ? cout > 0 : encoded ? cout > cin : cout >= cin;
	if (leak) {
		fprintf(stderr,
		        "leak: %s reads password '%s' from\n  %s\nredacted as\n"
		        "  %s\n",
		        who, secret, in, out);
		abort();
	}
}

/* ODBC: attributes key=value separated by ';'; a value in braces runs to
 * the '}' that is not doubled. */
static void
read_odbc(const char *in, const char *s, const char *out)
{
	while (*s) {
		while (*s == ';' || *s == ' ')
			s++;
		const char *eq = strchr(s, '=');
		if (!eq)
			return;
		const char *kb = s, *ke = eq;
		while (kb < ke && kb[0] == ' ')
			kb++;
		while (ke > kb && ke[-1] == ' ')
			ke--;
		const char *v = eq + 1;
		while (*v == ' ')
			v++;
		char val[4096];
		size_t n = 0;
		if (*v == '{') {
			for (v++; *v; v++) {
				if (v[0] == '}' && v[1] == '}') {
					v++;
				} else if (*v == '}') {
					v++;
					break;
				}
				if (n + 1 < sizeof val)
					val[n++] = *v;
			}
			v += strcspn(v, ";");
		} else {
			size_t l = strcspn(v, ";");
			for (size_t i = 0; i < l && n + 1 < sizeof val; i++)
				val[n++] = v[i];
			v += l;
		}
		val[n] = '\0';
		size_t kl = (size_t)(ke - kb);
		if ((kl == 3 && strncasecmp(kb, "pwd", 3) == 0) ||
		    (kl == 8 && strncasecmp(kb, "password", 8) == 0))
			judge(in, out, val, "an ODBC connection-string reader",
			      strstr(in, "}}") != NULL);
		s = v;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 2048)
		return 0;
	char in[2049];
	memcpy(in, data, size);
	in[size] = '\0';
	if (strlen(in) != size)
		return 0; /* a C string ends at its NUL: nothing reads past */
	char out[8192];
	sked__url_redact(in, out, sizeof out);

#ifdef SKED_HAVE_PG
	if (strncmp(in, "postgres://", 11) == 0 ||
	    strncmp(in, "postgresql://", 13) == 0 || strchr(in, '=')) {
		char *err = NULL;
		PQconninfoOption *o = PQconninfoParse(in, &err);
		for (PQconninfoOption *k = o; k && k->keyword; k++)
			if (k->val && (strcmp(k->keyword, "password") == 0 ||
			               strcmp(k->keyword, "sslpassword") == 0))
				judge(in, out, k->val, "libpq",
				      strpbrk(in, "%\\") != NULL);
		PQconninfoFree(o);
		PQfreemem(err);
	}
#endif
	if (strncasecmp(in, "mysql://", 8) == 0 ||
	    strncasecmp(in, "mariadb://", 10) == 0) {
		sked_url u;
		char err[256];
		if (sked__url_parse(in, &u, err, sizeof err) == SKED_OK)
			judge(in, out, u.password, "sked's MySQL URL parser",
			      strchr(in, '%') != NULL);
		sked__url_free(&u);
	}
	if (strncasecmp(in, "odbc:", 5) == 0)
		read_odbc(in, in + 5 + (strncmp(in + 5, "//", 2) == 0 ? 2 : 0),
		          out);
	return 0;
}

#include "fuzz_main.h"
