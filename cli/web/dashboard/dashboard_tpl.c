/*
 * dashboard_tpl.c — the dashboard's template renderer: finds a fragment
 * of an embedded template (templates/NAME.html) and fills in its
 * placeholders, escaped unless marked (dashboard_tpl.h says the syntax).
 *
 * Layer: the command-line program, the bottom of the dashboard's files:
 * calls http.c's buffer and nothing of the dashboard above it.
 *
 * Hand-written, not a library: Debian has no maintained C library for
 * HTML templates (ctemplate and kainjow-mustache are C++, mustach is not
 * packaged), and the pages need only substitution; the loops and choices
 * stay in C. Errors are never a blank: a fragment renders whole or not
 * at all.
 */
#include "web/dashboard/dashboard_tpl.h"
#include "web/dashboard/dashboard.h"

#include <pthread.h>
#include <sked.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define ARGS_MAX 64

static __thread char tpl_err[256];

const char *
cli_tpl_error(void)
{
	return tpl_err[0] ? tpl_err : NULL;
}

void
cli_tpl_clear(void)
{
	tpl_err[0] = '\0';
}

char *
cli_tpl_int(char *buf, long long v)
{
	snprintf(buf, 24, "%lld", v);
	return buf;
}

static int fail(char *err, size_t len, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static int
fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static const char *
find(const char *p, const char *end, const char *s)
{
	size_t n = strlen(s);

	for (; p && (size_t)(end - p) >= n; p++)
		if (memcmp(p, s, n) == 0)
			return p;
	return NULL;
}

static int
line_of(const char *t, const char *p)
{
	int line = 1;

	for (; t < p; t++)
		line += *t == '\n';
	return line;
}

/* how much of the text at p an error message quotes: 20 bytes at
 * most, never past end (a template need not end in a NUL) */
static int
shown(const char *p, const char *end)
{
	return end - p < 20 ? (int)(end - p) : 20;
}

static int
name_ok(const char *s, size_t n)
{
	if (n == 0 || n > 64)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

/* One tag of a fragment's body at p ("{{"): a comment (*nlen 0) or a
 * placeholder, its name and filter ("" html, "raw", "url"). The end of
 * the tag, or NULL when it is none of these. */
static const char *
tag(const char *p, const char *end, const char **name, size_t *nlen,
    const char **filter)
{
	const char *c = find(p + 2, end, "}}"), *bar;

	*nlen = 0;
	*filter = "";
	if (!c)
		return NULL;
	if (p[2] == '!')
		return c + 2;
	*name = p + 2;
	bar = memchr(p + 2, '|', (size_t)(c - p - 2));
	*nlen = (size_t)((bar ? bar : c) - *name);
	if (!name_ok(*name, *nlen))
		return NULL;
	if (bar) {
		size_t fl = (size_t)(c - bar - 1);
		if (fl == 3 && memcmp(bar + 1, "raw", 3) == 0)
			*filter = "raw";
		else if (fl == 3 && memcmp(bar + 1, "url", 3) == 0)
			*filter = "url";
		else
			return NULL;
	}
	return c + 2;
}

/* A body's tags all parse: 0, or -1 with the place of the first that
 * does not (as a line of the file t). */
static int
check_body(const char *t, const char *body, const char *end, char *err,
           size_t len)
{
	for (const char *p = body; (p = find(p, end, "{{"));) {
		const char *name, *filter, *next;
		size_t nlen;
		if (!(next = tag(p, end, &name, &nlen, &filter)))
			return fail(err, len,
			            "line %d: '%.*s' is not {{name}}, "
			            "{{name|raw}}, {{name|url}} nor {{! a "
			            "comment }}",
			            line_of(t, p), shown(p, end), p);
		p = next;
	}
	return 0;
}

int
cli_tpl_walk(const char *t, size_t len,
             int (*fn)(void *ud, const char *name, size_t nlen,
                       const char *body, size_t blen),
             void *ud, char *err, size_t errlen)
{
	const char *p = t, *end = t + len;

	while (p < end) {
		const char *c, *body, *e;
		if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
			p++;
			continue;
		}
		if (end - p >= 3 && memcmp(p, "{{!", 3) == 0) {
			if (!(c = find(p + 3, end, "}}")))
				return fail(err, errlen,
				            "line %d: a comment without its }}",
				            line_of(t, p));
			p = c + 2;
			continue;
		}
		if (end - p < 9 || memcmp(p, "{{define ", 9) != 0)
			return fail(err, errlen,
			            "line %d: text outside {{define NAME}} … "
			            "{{end}}",
			            line_of(t, p));
		c = find(p + 9, end, "}}");
		if (!c || !name_ok(p + 9, (size_t)(c - p - 9)))
			return fail(err, errlen,
			            "line %d: a fragment's name is a-z, 0-9 "
			            "and _: {{define NAME}}",
			            line_of(t, p));
		body = c + 2;
		if (!(e = find(body, end, "{{end}}")))
			return fail(err, errlen,
			            "line %d: {{define %.*s}} has no {{end}}",
			            line_of(t, p), (int)(c - p - 9), p + 9);
		if (check_body(t, body, e, err, errlen))
			return -1;
		if (fn && fn(ud, p + 9, (size_t)(c - p - 9), body,
		             (size_t)(e - body)))
			return 0;
		p = e + 7;
	}
	return 0;
}

struct seen {
	const char *names[256];
	size_t lens[256], n;
	int dup;
};

static int
note_frag(void *ud, const char *name, size_t nlen, const char *body,
          size_t blen)
{
	struct seen *s = ud;

	(void)body;
	(void)blen;
	for (size_t i = 0; i < s->n; i++)
		if (s->lens[i] == nlen &&
		    memcmp(s->names[i], name, nlen) == 0) {
			s->names[0] = name;
			s->lens[0] = nlen;
			s->dup = 1;
			return 1;
		}
	if (s->n < 256) {
		s->names[s->n] = name;
		s->lens[s->n++] = nlen;
	}
	return 0;
}

int
cli_tpl_check(const char *t, size_t len, char *err, size_t errlen)
{
	struct seen s;

	s.n = 0;
	s.dup = 0;
	if (cli_tpl_walk(t, len, note_frag, &s, err, errlen))
		return -1;
	if (s.dup)
		return fail(err, errlen, "two fragments are called %.*s",
		            (int)s.lens[0], s.names[0]);
	return 0;
}

struct want {
	const char *name;
	const char *body;
	size_t blen;
	int found;
};

static int
match_frag(void *ud, const char *name, size_t nlen, const char *body,
           size_t blen)
{
	struct want *w = ud;

	if (strlen(w->name) != nlen || memcmp(w->name, name, nlen) != 0)
		return 0;
	w->body = body;
	w->blen = blen;
	w->found = 1;
	return 1;
}

int
cli_tpl_frag(const char *t, size_t len, const char *frag, const char **body,
             size_t *blen)
{
	struct want w = {frag, NULL, 0, 0};

	if (cli_tpl_walk(t, len, match_frag, &w, NULL, 0) || !w.found)
		return -1;
	*body = w.body;
	*blen = w.blen;
	return 0;
}

int
cli_tpl_names(const char *body, size_t blen,
              void (*fn)(void *ud, const char *name, size_t nlen,
                         const char *filter),
              void *ud)
{
	const char *end = body + blen;

	for (const char *p = body; (p = find(p, end, "{{"));) {
		const char *name, *filter, *next;
		size_t nlen;
		if (!(next = tag(p, end, &name, &nlen, &filter)))
			return -1;
		if (nlen)
			fn(ud, name, nlen, filter);
		p = next;
	}
	return 0;
}

int
cli_tpl_expand(struct cli_sbuf *b, const char *body, size_t blen,
               const struct cli_tpl_arg *args, size_t n, char *err,
               size_t errlen)
{
	const char *p = body, *end = body + blen;
	size_t start = b->len, i;
	unsigned char used[ARGS_MAX] = {0};

	if (n > ARGS_MAX)
		return fail(err, errlen, "more than %d values", ARGS_MAX);
	while (p < end) {
		const char *name, *filter, *next, *run;
		size_t nlen;
		if (*p == '\n' || *p == '\r') {
			/* a line break and the next line's indentation */
			while (p < end && (*p == '\n' || *p == '\r' ||
			                   *p == ' ' || *p == '\t'))
				p++;
			continue;
		}
		if (end - p >= 2 && p[0] == '{' && p[1] == '{') {
			if (!(next = tag(p, end, &name, &nlen, &filter))) {
				fail(err, errlen, "'%.*s' is not a placeholder",
				     shown(p, end), p);
				goto bad;
			}
			p = next;
			if (nlen == 0)
				continue; /* a comment */
			for (i = 0; i < n; i++)
				if (args[i].name &&
				    strlen(args[i].name) == nlen &&
				    memcmp(args[i].name, name, nlen) == 0)
					break;
			if (i == n || !args[i].value) {
				fail(err, errlen, "{{%.*s}} has no value",
				     (int)nlen, name);
				goto bad;
			}
			used[i] = 1;
			if (strcmp(filter, "raw") == 0)
				cli_sbuf_puts(b, args[i].value);
			else if (strcmp(filter, "url") == 0)
				cli_sbuf_url(b, args[i].value);
			else
				cli_sbuf_html(b, args[i].value);
			continue;
		}
		run = p;
		while (p < end && *p != '\n' && *p != '\r' &&
		       !(p[0] == '{' && p + 1 < end && p[1] == '{'))
			p++;
		cli_sbuf_put(b, run, (size_t)(p - run));
	}
	for (i = 0; i < n; i++)
		if (!used[i]) {
			fail(err, errlen,
			     "a value for {{%s}}, which it has not",
			     args[i].name ? args[i].name : "(null)");
			goto bad;
		}
	return 0;
bad:
	if (!b->oom && b->p) {
		b->len = start;
		b->p[start] = '\0';
	}
	return -1;
}

/* Every fragment of the embedded templates, found once: "file.name",
 * its body. A page renders a fragment per row; scanning its file each
 * time cost a fifth of a list's page. */
#define FRAGS_MAX 512
static struct {
	char name[80];
	const char *body;
	size_t blen;
} frags[FRAGS_MAX];
static size_t nfrags;
static pthread_once_t frags_once = PTHREAD_ONCE_INIT;

static int
index_frag(void *ud, const char *name, size_t nlen, const char *body,
           size_t blen)
{
	const char *path = ud;
	size_t stem = strlen(path) - strlen(".html");

	if (nfrags < FRAGS_MAX && stem + 1 + nlen < sizeof frags[0].name) {
		snprintf(frags[nfrags].name, sizeof frags[0].name, "%.*s.%.*s",
		         (int)stem, path, (int)nlen, name);
		frags[nfrags].body = body;
		frags[nfrags++].blen = blen;
	}
	return 0;
}

static void
index_frags(void)
{
	for (const struct cli_asset *a = cli_templates; a->path; a++)
		cli_tpl_walk(a->data, a->len, index_frag, (void *)a->path, NULL,
		             0);
}

int
cli_tpl(struct cli_sbuf *b, const char *name, const struct cli_tpl_arg *args,
        size_t n)
{
	char err[200];
	size_t i;

	pthread_once(&frags_once, index_frags);
	for (i = 0; i < nfrags && strcmp(frags[i].name, name) != 0; i++)
		;
	if (i == nfrags)
		snprintf(err, sizeof err, "no such fragment");
	else if (cli_tpl_expand(b, frags[i].body, frags[i].blen, args, n, err,
	                        sizeof err) == 0)
		return 0;
	if (!tpl_err[0])
		snprintf(tpl_err, sizeof tpl_err, "template %s: %s", name, err);
	sked_log(SKED_LOG_ERROR, "dashboard: template %s: %s", name, err);
	return -1;
}

int
cli_tpl_check_all(char *err, size_t len)
{
	char e[200];

	for (const struct cli_asset *a = cli_templates; a->path; a++)
		if (cli_tpl_check(a->data, a->len, e, sizeof e))
			return fail(err, len,
			            "cli/web/dashboard/templates/%s: %s",
			            a->path, e);
	return 0;
}
