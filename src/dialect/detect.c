/*
 * detect.c — the strategy decision table (DESIGN.md, "Claim strategies").
 *
 * Layer: pure decision, beside the claim seam. Reads product and version
 * strings exactly as drivers report them, including the quirks:
 *   - libpq: "15.4", "9.4.26", "16beta1", "17.2 (Debian 17.2-1)";
 *   - Connector/C: "5.7.44-log", "10.11.6-MariaDB-0+deb12u1", and
 *     "5.5.5-10.5.23-MariaDB" (the prefix MariaDB sends to old clients;
 *     the real version follows it);
 *   - ODBC SQL_DBMS_VER: zero-padded "16.00.1000", "09.05.0000", and
 *     Oracle's banner "Oracle Database 19c … Release 19.0.0.0.0".
 * The table:
 *   PostgreSQL >= 9.5, MySQL >= 8.0.1, MariaDB >= 10.6, Oracle >= 12c
 *                                                   skip-locked
 *   SQL Server 2005 (9.x) or later                  readpast
 *   SQLite                                          sqlite
 *   older versions of the above                     optimistic
 *   anything unknown                                optimistic, warn
 * Leaves running a strategy to claim.c and overrides to the opener.
 */
#include "dialect/detect.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

struct version {
	int major, minor, patch;
	int ok;        /* a number was found */
	char text[48]; /* the version as seen, e.g. "10.5.23" */
};

static int
isdigit_(char c)
{
	return c >= '0' && c <= '9';
}

/* ASCII case-insensitive strstr (strcasestr is a GNU extension). */
static const char *
find_ci(const char *s, const char *needle)
{
	size_t n = strlen(needle);

	for (; *s != '\0'; s++)
		if (strncasecmp(s, needle, n) == 0)
			return s;
	return NULL;
}

static int
number(const char **p)
{
	long v = 0;

	while (isdigit_(**p)) {
		if (v < 100000000)
			v = v * 10 + (**p - '0');
		(*p)++;
	}
	return (int)v;
}

/* Find and read the version number in s. */
static void
read_version(const char *s, struct version *v)
{
	const char *p, *start;
	size_t n;

	memset(v, 0, sizeof(*v));
	if (s == NULL)
		return;
	p = find_ci(s, "release "); /* Oracle's banner */
	p = p != NULL ? p + 8 : s;
	while (*p != '\0' && !isdigit_(*p))
		p++;
	/* MariaDB's "5.5.5-" disguise for old clients */
	if (strncmp(p, "5.5.5-", 6) == 0 && isdigit_(p[6]))
		p += 6;
	if (!isdigit_(*p))
		return;
	start = p;
	v->ok = 1;
	v->major = number(&p);
	if (*p == '.' && isdigit_(p[1])) {
		p++;
		v->minor = number(&p);
		if (*p == '.' && isdigit_(p[1])) {
			p++;
			v->patch = number(&p);
		}
	}
	n = strspn(start, "0123456789.");
	while (n > 0 && start[n - 1] == '.')
		n--;
	if (n >= sizeof(v->text))
		n = sizeof(v->text) - 1;
	memcpy(v->text, start, n);
	v->text[n] = '\0';
}

static int
has(const char *s, const char *needle)
{
	return s != NULL && find_ci(s, needle) != NULL;
}

sked_product
sked__product_of(const char *product, const char *version)
{
	int blank = product == NULL || product[0] == '\0';

	if (has(product, "mariadb") ||
	    ((blank || has(product, "mysql")) && has(version, "mariadb")))
		return SKED_PROD_MARIADB;
	if (has(product, "postgres"))
		return SKED_PROD_POSTGRESQL;
	if (has(product, "mysql"))
		return SKED_PROD_MYSQL;
	if (has(product, "sql server") || has(product, "sqlserver") ||
	    has(product, "microsoft"))
		return SKED_PROD_SQLSERVER;
	if (has(product, "oracle"))
		return SKED_PROD_ORACLE;
	if (has(product, "sqlite"))
		return SKED_PROD_SQLITE;
	return SKED_PROD_UNKNOWN;
}

static int
at_least(int major, int minor, int patch, int a, int b, int c)
{
	if (major != a)
		return major > a;
	if (minor != b)
		return minor > b;
	return patch >= c;
}

/* Where SKIP LOCKED exists; *need gets the threshold for messages. */
static int
skip_locked_ok(sked_product p, int major, int minor, int patch,
               const char **need)
{
	switch (p) {
	case SKED_PROD_POSTGRESQL:
		*need = "9.5";
		return at_least(major, minor, patch, 9, 5, 0);
	case SKED_PROD_MYSQL:
		*need = "8.0.1";
		return at_least(major, minor, patch, 8, 0, 1);
	case SKED_PROD_MARIADB:
		*need = "10.6";
		return at_least(major, minor, patch, 10, 6, 0);
	case SKED_PROD_ORACLE:
		*need = "12c";
		return major >= 12;
	default:
		*need = NULL;
		return 0;
	}
}

void
sked__decide(const char *product, const char *version, sked_decision *out)
{
	struct version v;
	const char *name, *need = NULL;

	memset(out, 0, sizeof(*out));
	read_version(version, &v);
	out->product = sked__product_of(product, version);
	out->major = v.major;
	out->minor = v.minor;
	out->patch = v.patch;
	name = sked__product_name(out->product);

	switch (out->product) {
	case SKED_PROD_UNKNOWN:
		out->strategy = SKED_STRAT_OPTIMISTIC;
		out->warn = 1;
		snprintf(out->reason, sizeof(out->reason),
		         "unknown product '%.64s'%s%.48s: optimistic claims "
		         "work everywhere",
		         product != NULL ? product : "", v.ok ? " " : "",
		         v.text);
		return;
	case SKED_PROD_SQLITE:
		out->strategy = SKED_STRAT_SQLITE;
		if (v.ok && !at_least(v.major, v.minor, v.patch, 3, 35, 0)) {
			/* UPDATE … RETURNING arrived in 3.35.0; without it the
			 * claim that needs no RETURNING is the optimistic one
			 */
			out->strategy = SKED_STRAT_OPTIMISTIC;
			out->warn = 1;
			snprintf(out->reason, sizeof(out->reason),
			         "SQLite %s < 3.35: no UPDATE ... RETURNING, "
			         "optimistic version-column claims",
			         v.text);
		} else {
			snprintf(out->reason, sizeof(out->reason),
			         "SQLite %s: one writer at a time, an "
			         "IMMEDIATE transaction with UPDATE ... "
			         "RETURNING claims atomically",
			         v.ok ? v.text : "(version unknown)");
		}
		return;
	default:
		break;
	}
	if (!v.ok) {
		out->strategy = SKED_STRAT_OPTIMISTIC;
		out->warn = 1;
		snprintf(out->reason, sizeof(out->reason),
		         "%s version '%.48s' not understood: optimistic claims "
		         "work everywhere",
		         name, version != NULL ? version : "");
		return;
	}
	if (out->product == SKED_PROD_SQLSERVER) {
		if (v.major >= 9) {
			out->strategy = SKED_STRAT_READPAST;
			snprintf(out->reason, sizeof(out->reason),
			         "SQL Server %s (2005 or later): UPDLOCK, "
			         "READPAST hints with TOP and OUTPUT",
			         v.text);
		} else {
			out->strategy = SKED_STRAT_OPTIMISTIC;
			snprintf(out->reason, sizeof(out->reason),
			         "SQL Server %s is older than 2005 (no OUTPUT "
			         "clause): optimistic version-column claims",
			         v.text);
		}
		return;
	}
	if (skip_locked_ok(out->product, v.major, v.minor, v.patch, &need)) {
		out->strategy = SKED_STRAT_SKIP_LOCKED;
		snprintf(out->reason, sizeof(out->reason),
		         "%s %s >= %s: FOR UPDATE SKIP LOCKED%s", name, v.text,
		         need,
		         out->product == SKED_PROD_POSTGRESQL
		                 ? " in one round trip"
		                 : "");
	} else {
		out->strategy = SKED_STRAT_OPTIMISTIC;
		snprintf(out->reason, sizeof(out->reason),
		         "%s %s < %s: no SKIP LOCKED, optimistic "
		         "version-column claims",
		         name, v.text, need);
	}
}

static void
describe(const sked_decision *d, char *buf, size_t len)
{
	if (d->major == 0 && d->minor == 0 && d->patch == 0)
		snprintf(buf, len, "%s", sked__product_name(d->product));
	else
		snprintf(buf, len, "%s %d.%d.%d",
		         sked__product_name(d->product), d->major, d->minor,
		         d->patch);
}

int
sked__strategy_allowed(const sked_decision *d, sked_strategy s, char *why,
                       size_t len)
{
	char what[64];
	const char *need;
	int ok;

	if (why != NULL && len > 0)
		why[0] = '\0';
	if (d == NULL)
		return 0;
	describe(d, what, sizeof(what));
	switch (s) {
	case SKED_STRAT_OPTIMISTIC:
		return 1;
	case SKED_STRAT_SQLITE:
		ok = d->product == SKED_PROD_SQLITE &&
		     (d->major == 0 ||
		      at_least(d->major, d->minor, d->patch, 3, 35, 0));
		if (!ok && why != NULL)
			snprintf(why, len,
			         "strategy 'sqlite' needs SQLite >= 3.35 "
			         "(UPDATE "
			         "... RETURNING); this is %s",
			         what);
		return ok;
	case SKED_STRAT_SKIP_LOCKED:
		ok = skip_locked_ok(d->product, d->major, d->minor, d->patch,
		                    &need);
		if (!ok && why != NULL)
			snprintf(why, len,
			         "strategy 'skip-locked' needs PostgreSQL >= "
			         "9.5, MySQL >= 8.0.1, MariaDB >= 10.6 or "
			         "Oracle >= 12c; this is %s",
			         what);
		return ok;
	case SKED_STRAT_READPAST:
		/* an unreadable version gets the benefit of the doubt: the
		 * user asked for it by name */
		ok = d->product == SKED_PROD_SQLSERVER &&
		     (d->major >= 9 || d->major == 0);
		if (!ok && why != NULL)
			snprintf(why, len,
			         "strategy 'readpast' needs SQL Server 2005 or "
			         "later; this is %s",
			         what);
		return ok;
	default:
		if (why != NULL)
			snprintf(why, len, "no such strategy");
		return 0;
	}
}

static const char *const strategy_names[] = {"sqlite", "skip-locked",
                                             "readpast", "optimistic"};

const char *
sked__strategy_name(sked_strategy s)
{
	if (s < SKED_STRAT_SQLITE || s > SKED_STRAT_OPTIMISTIC)
		return "none";
	return strategy_names[s];
}

sked_strategy
sked__strategy_parse(const char *s)
{
	if (s == NULL)
		return SKED_STRAT_NONE;
	for (int i = SKED_STRAT_SQLITE; i <= SKED_STRAT_OPTIMISTIC; i++) {
		const char *n = strategy_names[i];
		size_t k = 0;
		for (; n[k] != '\0' && s[k] != '\0'; k++) {
			char c = s[k];
			if (c >= 'A' && c <= 'Z')
				c = (char)(c - 'A' + 'a');
			if (c == '_')
				c = '-';
			if (c != n[k])
				break;
		}
		if (n[k] == '\0' && s[k] == '\0')
			return (sked_strategy)i;
	}
	return SKED_STRAT_NONE;
}

const char *
sked__product_name(sked_product p)
{
	switch (p) {
	case SKED_PROD_SQLITE:
		return "SQLite";
	case SKED_PROD_POSTGRESQL:
		return "PostgreSQL";
	case SKED_PROD_MYSQL:
		return "MySQL";
	case SKED_PROD_MARIADB:
		return "MariaDB";
	case SKED_PROD_SQLSERVER:
		return "SQL Server";
	case SKED_PROD_ORACLE:
		return "Oracle";
	default:
		return "unknown";
	}
}
