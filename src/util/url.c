/*
 * url.c — database URL parsing and password redaction.
 *
 * Layer: util (pure). Knows the shape of each scheme, not what a driver
 * does with the pieces. The one rule that binds every function here: a
 * password never reaches an error message, and redaction errs on the side
 * of masking too much. Both the parser and the redactor find the end of
 * the user info the same way (userinfo_end), so that a password with an
 * unencoded '/', '?' or '@' is never mistaken for a host or a port.
 */
#include "util/url.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sked.h"
#include "sked_cli.h"

#define EXPECTED "(expected sqlite:, postgres://, mysql://, mariadb://, odbc:)"

static void seterr(char *err, size_t errlen, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static void
seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* The length of a valid scheme at the start of s (letter, then letters,
 * digits, '+', '-', '.') followed by ':', or 0. */
static size_t
scheme_len(const char *s)
{
	size_t n = 0;

	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return 0;
	while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
	       (s[n] >= '0' && s[n] <= '9') || s[n] == '+' || s[n] == '-' ||
	       s[n] == '.')
		n++;
	return s[n] == ':' ? n : 0;
}

/* In rest (the text after "://"), the position of the '@' that ends the
 * user info, or NULL. The last '@' before the query wins, so a password
 * holding an unencoded '@' or '/' stays in the user info. Failing that,
 * the last '@' anywhere, unless a '=' before it says it sits in a query
 * value: a password with an unencoded '?' must not escape either. */
static const char *
userinfo_end(const char *rest)
{
	size_t q = strcspn(rest, "?#");
	const char *at = NULL;

	for (size_t i = 0; i < q; i++)
		if (rest[i] == '@')
			at = rest + i;
	if (at != NULL)
		return at;
	at = strrchr(rest, '@');
	if (at != NULL && memchr(rest, '=', (size_t)(at - rest)) != NULL)
		return NULL;
	return at;
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decode n bytes of s into a new string. *bad is set (and NULL
 * returned) on a malformed escape; NULL with *bad clear means no memory. */
static char *
decode(const char *s, size_t n, int *bad)
{
	char *out = malloc(n + 1), *o = out;

	*bad = 0;
	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '%') {
			*o++ = s[i];
			continue;
		}
		/* two hex digits must follow, and must not spell a NUL */
		if (i + 2 >= n || hexval(s[i + 1]) < 0 ||
		    hexval(s[i + 2]) < 0 ||
		    hexval(s[i + 1]) * 16 + hexval(s[i + 2]) == 0) {
			free(out);
			*bad = 1;
			return NULL;
		}
		*o++ = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
		i += 2;
	}
	*o = '\0';
	return out;
}

void
sked__url_free(sked_url *u)
{
	if (u == NULL)
		return;
	free(u->path);
	free(u->conninfo);
	free(u->host);
	free(u->user);
	free(u->password);
	free(u->dbname);
	free(u->socket);
	for (int i = 0; i < u->nparams; i++) {
		free(u->keys[i]);
		free(u->values[i]);
	}
	free(u->keys);
	free(u->values);
	memset(u, 0, sizeof(*u));
}

/* Decode n bytes of s into *dst; what names the part in an error. */
static int
decode_into(char **dst, const char *s, size_t n, const char *what, char *err,
            size_t errlen)
{
	int bad;

	*dst = decode(s, n, &bad);
	if (*dst != NULL)
		return SKED_OK;
	if (!bad)
		return SKED_ENOMEM;
	seterr(err, errlen, "mysql URL: bad %%-escape in the %s", what);
	return SKED_EURL;
}

static int
add_param(sked_url *u, const char *s, size_t n, char *err, size_t errlen)
{
	const char *eq = memchr(s, '=', n);
	size_t kn = eq != NULL ? (size_t)(eq - s) : n;
	char **k, **v;
	int rc;

	if (kn == 0) {
		seterr(err, errlen,
		       "mysql URL: query parameter without a name");
		return SKED_EURL;
	}
	k = realloc(u->keys, sizeof(*k) * (size_t)(u->nparams + 1));
	if (k == NULL)
		return SKED_ENOMEM;
	u->keys = k;
	v = realloc(u->values, sizeof(*v) * (size_t)(u->nparams + 1));
	if (v == NULL)
		return SKED_ENOMEM;
	u->values = v;
	rc = decode_into(&k[u->nparams], s, kn, "query parameters", err,
	                 errlen);
	if (rc != SKED_OK)
		return rc;
	rc = decode_into(&v[u->nparams], eq != NULL ? eq + 1 : s + n,
	                 eq != NULL ? n - kn - 1 : 0, "query parameters", err,
	                 errlen);
	if (rc != SKED_OK) {
		free(k[u->nparams]);
		return rc;
	}
	u->nparams++;
	if (strcmp(k[u->nparams - 1], "socket") == 0) {
		free(u->socket);
		u->socket = strdup(v[u->nparams - 1]);
		if (u->socket == NULL)
			return SKED_ENOMEM;
	}
	return SKED_OK;
}

static int
parse_port(const char *s, size_t n, int *port, char *err, size_t errlen)
{
	long v = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || v > 65535) {
			v = -1;
			break;
		}
		v = v * 10 + (s[i] - '0');
	}
	if (n == 0 || v < 1 || v > 65535) {
		seterr(err, errlen, "mysql URL: bad port '%.*s'",
		       (int)(n > 32 ? 32 : n), s);
		return SKED_EURL;
	}
	*port = (int)v;
	return SKED_OK;
}

/* mysql://[user[:password]@][host[:port]][/dbname][?key=value&…] */
static int
parse_mysql(const char *rest, sked_url *u, char *err, size_t errlen)
{
	const char *at = userinfo_end(rest), *h, *hend, *p;
	int rc;

	if (at != NULL) {
		const char *colon = memchr(rest, ':', (size_t)(at - rest));
		size_t un = colon != NULL ? (size_t)(colon - rest)
		                          : (size_t)(at - rest);
		rc = decode_into(&u->user, rest, un, "user name", err, errlen);
		if (rc != SKED_OK)
			return rc;
		if (colon != NULL) {
			rc = decode_into(&u->password, colon + 1,
			                 (size_t)(at - colon - 1), "password",
			                 err, errlen);
			if (rc != SKED_OK)
				return rc;
		}
		h = at + 1;
	} else {
		h = rest;
	}
	hend = h + strcspn(h, "/?#");
	p = hend;
	if (h < hend) {
		const char *hostend, *colon;
		if (*h == '[') { /* [IPv6]:port */
			hostend = memchr(h, ']', (size_t)(hend - h));
			if (hostend == NULL) {
				seterr(err, errlen, "mysql URL: unclosed '['");
				return SKED_EURL;
			}
			rc = decode_into(&u->host, h + 1,
			                 (size_t)(hostend - h - 1), "host", err,
			                 errlen);
			hostend++;
			if (rc == SKED_OK && hostend < hend &&
			    *hostend != ':') {
				seterr(err, errlen,
				       "mysql URL: junk after ']' in the host");
				rc = SKED_EURL;
			}
		} else {
			hostend = memchr(h, ':', (size_t)(hend - h));
			if (hostend == NULL)
				hostend = hend;
			rc = decode_into(&u->host, h, (size_t)(hostend - h),
			                 "host", err, errlen);
		}
		if (rc != SKED_OK)
			return rc;
		colon = hostend < hend && *hostend == ':' ? hostend : NULL;
		if (colon != NULL) {
			rc = parse_port(colon + 1, (size_t)(hend - colon - 1),
			                &u->port, err, errlen);
			if (rc != SKED_OK)
				return rc;
		}
		if (u->host[0] == '\0') {
			free(u->host);
			u->host = NULL;
		} else if (u->host[0] == '/') { /* an encoded socket path */
			u->socket = u->host;
			u->host = strdup("localhost");
			if (u->host == NULL)
				return SKED_ENOMEM;
		}
	}
	if (*p == '/') {
		size_t n = strcspn(p + 1, "?#");
		if (n > 0) {
			rc = decode_into(&u->dbname, p + 1, n, "database name",
			                 err, errlen);
			if (rc != SKED_OK)
				return rc;
		}
		p += 1 + n;
	}
	if (*p == '?') {
		p++;
		while (*p != '\0' && *p != '#') {
			size_t n = strcspn(p, "&#");
			if (n > 0) {
				rc = add_param(u, p, n, err, errlen);
				if (rc != SKED_OK)
					return rc;
			}
			p += n;
			if (*p == '&')
				p++;
		}
	}
	return SKED_OK;
}

int
sked__url_parse(const char *url, sked_url *out, char *err, size_t errlen)
{
	size_t sl;
	const char *rest;
	int rc = SKED_OK;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (out == NULL)
		return SKED_EINVAL;
	memset(out, 0, sizeof(*out));
	if (url == NULL) {
		seterr(err, errlen, "no database URL");
		return SKED_EINVAL;
	}
	sl = scheme_len(url);
	if (sl == 0) {
		seterr(err, errlen, "database URL has no scheme " EXPECTED);
		return SKED_EURL;
	}
	rest = url + sl + 1;
	if (sl == 6 && strncasecmp(url, "sqlite", sl) == 0) {
		out->kind = SKED_URL_SQLITE;
		if (strncmp(rest, "//", 2) == 0) /* sqlite:///abs → /abs */
			rest += 2;
		if (*rest == '\0') {
			seterr(err, errlen, "sqlite: URL has no path");
			return SKED_EURL;
		}
		out->path = strdup(rest);
		return out->path != NULL ? SKED_OK : SKED_ENOMEM;
	}
	if (sl == 4 && strncasecmp(url, "odbc", sl) == 0) {
		out->kind = SKED_URL_ODBC;
		if (strncmp(rest, "//", 2) == 0)
			rest += 2;
		if (*rest == '\0') {
			seterr(err, errlen,
			       "odbc: URL has no connection string or DSN");
			return SKED_EURL;
		}
		out->path = strdup(rest);
		return out->path != NULL ? SKED_OK : SKED_ENOMEM;
	}
	if ((sl == 8 && strncasecmp(url, "postgres", sl) == 0) ||
	    (sl == 10 && strncasecmp(url, "postgresql", sl) == 0)) {
		out->kind = SKED_URL_POSTGRES;
		if (strncmp(rest, "//", 2) != 0) {
			seterr(err, errlen,
			       "postgres URL must start with postgres:// or "
			       "postgresql://");
			return SKED_EURL;
		}
		out->conninfo = strdup(url);
		return out->conninfo != NULL ? SKED_OK : SKED_ENOMEM;
	}
	if ((sl == 5 && strncasecmp(url, "mysql", sl) == 0) ||
	    (sl == 7 && strncasecmp(url, "mariadb", sl) == 0)) {
		out->kind = SKED_URL_MYSQL;
		if (strncmp(rest, "//", 2) != 0) {
			seterr(err, errlen, "%.*s URL must start with %.*s://",
			       (int)sl, url, (int)sl, url);
			return SKED_EURL;
		}
		rc = parse_mysql(rest + 2, out, err, errlen);
		if (rc == SKED_ENOMEM)
			seterr(err, errlen, "out of memory");
		return rc;
	}
	seterr(err, errlen, "unknown URL scheme '%.*s' " EXPECTED,
	       (int)(sl > 32 ? 32 : sl), url);
	return SKED_EURL;
}

/* ---- redaction ---------------------------------------------------- */

/* The three syntaxes a password can hide in, by how a value ends. */
enum form { FORM_URL, FORM_ODBC, FORM_KEYWORD };

static const char *const secret_keys[] = {"password", "pwd", "passwd",
                                          "sslpassword"};

/* If a secret key starts at s (followed by optional blanks and '='),
 * return the position just after the '=', else NULL. */
static const char *
secret_key_at(const char *s)
{
	for (size_t i = 0; i < sizeof(secret_keys) / sizeof(secret_keys[0]);
	     i++) {
		size_t n = strlen(secret_keys[i]);
		const char *p = s + n;
		if (strncasecmp(s, secret_keys[i], n) != 0)
			continue;
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '=')
			return p + 1;
	}
	return NULL;
}

/* The end of the value starting at v, in the given form. Masks too much
 * rather than too little: a braced or quoted value runs on to the next
 * separator even after its closing brace or quote. */
static const char *
value_end(const char *v, enum form f)
{
	if (f == FORM_URL)
		return v + strcspn(v, "&#");
	if (f == FORM_ODBC) {
		while (*v == ' ')
			v++;
		if (*v == '{') {
			for (v++; *v != '\0'; v++) {
				if (v[0] == '}' && v[1] == '}')
					v++; /* "}}" is a literal '}' */
				else if (*v == '}')
					break;
			}
		}
		return v + strcspn(v, ";");
	}
	/* libpq: blanks are any isspace() byte, before and after '=' */
	while (isspace((unsigned char)*v))
		v++;
	if (*v == '\'') {
		for (v++; *v != '\0' && *v != '\''; v++)
			if (*v == '\\' && v[1] != '\0')
				v++;
	}
	while (*v != '\0' && !isspace((unsigned char)*v))
		v++;
	return v;
}

static int
boundary(const char *start, const char *p)
{
	if (p == start)
		return 1;
	return strchr("?&;{:/", p[-1]) != NULL || isspace((unsigned char)p[-1]);
}

/* The spans of url that hold a secret, as each reader of that form would
 * find them. Masking is the union of every reading: a password is hidden
 * whether libpq, sked's own MySQL parser or an ODBC driver is the one
 * that reads the string. */
enum { MAX_SPANS = 64 };

struct spans {
	const char *b[MAX_SPANS], *e[MAX_SPANS];
	int n;
	const char *all_from; /* too many: mask everything from here */
};

static void
span_add(struct spans *sp, const char *b, const char *e)
{
	if (sp->n == MAX_SPANS) {
		if (!sp->all_from || b < sp->all_from)
			sp->all_from = b;
		return;
	}
	sp->b[sp->n] = b;
	sp->e[sp->n] = e;
	sp->n++;
}

/* The password of the user info that ends at at (the first ':' before
 * it starts it). */
static void
userinfo_span(struct spans *sp, const char *rest, const char *at)
{
	const char *colon = memchr(rest, ':', (size_t)(at - rest));
	if (colon != NULL)
		span_add(sp, colon + 1, at);
}

static void
find_spans(const char *url, struct spans *sp)
{
	size_t sl = scheme_len(url);
	enum form f;
	int guess = 0;
	memset(sp, 0, sizeof *sp);
	if (sl == 4 && strncasecmp(url, "odbc", 4) == 0) {
		/* odbc: and odbc:// alike: the rest is a connection string */
		f = FORM_ODBC;
	} else if (sl > 0 && strncmp(url + sl, "://", 3) == 0) {
		const char *rest = url + sl + 3, *at;
		f = FORM_URL;
		/* sked's MySQL parser (and a password with an unencoded '/',
		 * '?' or '@' as its writer meant it) */
		if ((at = userinfo_end(rest)) != NULL)
			userinfo_span(sp, rest, at);
		/* libpq: the user info is what comes before the first '@' that
		 * no '/' precedes; '?', '#' and '=' mean nothing there */
		at = rest + strcspn(rest, "@/");
		if (*at == '@')
			userinfo_span(sp, rest, at);
	} else {
		/* no scheme: libpq keywords, or ODBC attributes when a ';'
		 * says they may be */
		f = FORM_KEYWORD;
		guess = strchr(url, ';') != NULL;
	}
	for (const char *p = url; *p != '\0'; p++) {
		const char *v;
		if (!boundary(url, p) || (v = secret_key_at(p)) == NULL)
			continue;
		/* in a URL query a value ends at '&' for libpq; sked's own
		 * parser also stops at '#': mask up to the later one */
		const char *e =
		        f == FORM_URL ? v + strcspn(v, "&") : value_end(v, f);
		if (guess) {
			/* no scheme: libpq's keywords or ODBC's attributes,
			 * whichever runs longer */
			const char *k = value_end(v, FORM_KEYWORD);
			const char *o = value_end(v, FORM_ODBC);
			e = k > o ? k : o;
		}
		span_add(sp, v, e);
	}
}

/* Whether position p of the string lies in a span; *end gets the end of
 * the longest span that starts at or covers p. */
static int
in_span(const struct spans *sp, const char *p, const char **end)
{
	int hit = 0;
	*end = p;
	if (sp->all_from && p >= sp->all_from) {
		*end = p + strlen(p);
		return 1;
	}
	for (int i = 0; i < sp->n; i++) {
		if (p >= sp->b[i] && (p < sp->e[i] || p == sp->b[i])) {
			hit = 1;
			if (sp->e[i] > *end)
				*end = sp->e[i];
		}
	}
	return hit;
}

void
sked__url_redact(const char *url, char *out, size_t len)
{
	size_t o = 0;
	struct spans sp;

	if (out == NULL || len == 0)
		return;
	if (url == NULL) {
		out[0] = '\0';
		return;
	}
	find_spans(url, &sp);
#define PUT(c)                                                                 \
	do {                                                                   \
		if (o + 1 < len)                                               \
			out[o++] = (c);                                        \
	} while (0)
	for (const char *p = url; *p != '\0';) {
		const char *end;
		if (in_span(&sp, p, &end)) {
			for (const char *m = "***"; *m; m++)
				PUT(*m);
			/* overlapping spans: mask on to the end of the last */
			const char *more;
			while (*end != '\0' && in_span(&sp, end, &more) &&
			       more > end)
				end = more;
			p = end;
			if (*p == '\0')
				break;
			PUT(*p); /* the character after a span is not secret */
			p++;
			continue;
		}
		PUT(*p);
		p++; /* not inside PUT: it skips its argument when full */
	}
#undef PUT
	out[o] = '\0';
}

/* Replace every occurrence of the n bytes at s in msg (a buffer of cap
 * bytes) with "***"; what no longer fits is cut off. */
static void
scrub_one(char *msg, size_t cap, const char *s, size_t n)
{
	if (n == 0)
		return;
	for (char *p = msg;;) {
		char *hit = NULL;
		for (char *q = p; *q != '\0'; q++)
			if (strncmp(q, s, n) == 0) {
				hit = q;
				break;
			}
		if (!hit)
			return;
		size_t at = (size_t)(hit - msg), tail = strlen(hit + n);
		if (at + 4 > cap) {
			*hit = '\0';
			return;
		}
		if (at + 3 + tail + 1 > cap)
			tail = cap - at - 4;
		memmove(hit + 3, hit + n, tail);
		hit[3 + tail] = '\0';
		memcpy(hit, "***", 3);
		p = hit + 3;
	}
}

void
sked__url_scrub(const char *url, char *msg, size_t cap)
{
	struct spans sp;
	if (url == NULL || msg == NULL || cap == 0)
		return;
	find_spans(url, &sp);
	if (sp.all_from)
		span_add(&sp, sp.all_from, sp.all_from + strlen(sp.all_from));
	for (int i = 0; i < sp.n; i++) {
		size_t n = (size_t)(sp.e[i] - sp.b[i]);
		scrub_one(msg, cap, sp.b[i], n);
		/* and as a driver decodes it */
		int bad = 0;
		char *d = decode(sp.b[i], n, &bad);
		if (d) {
			scrub_one(msg, cap, d, strlen(d));
			free(d);
		}
		/* a prefix up to a bad escape is what a parser may echo */
		const char *pct = memchr(sp.b[i], '%', n);
		if (bad && pct)
			scrub_one(msg, cap, pct, (size_t)(sp.e[i] - pct));
	}
}

SKED_API char *
sked_redact_url(const char *url, char *buf, size_t len)
{
	sked__url_redact(url, buf, len);
	return buf;
}
