/*
 * fuzz_tpl.c — a fuzz target for the dashboard's template renderer
 * (cli/web/dashboard/dashboard_tpl.c): the parser of a template file and the
 * substitution of a fragment's placeholders.
 *
 * Oracles, beyond the sanitizers: every template embedded in sked (the
 * files of cli/web/dashboard/templates/) parses; a file that parses
 * gives each of its fragments, and a fragment rendered with a value for
 * each of its placeholders succeeds; rendered once with empty values and once with
 * the value <>"'& everywhere, the second is longer by exactly what the
 * escaping of each placeholder adds (&lt;&gt;&quot;&#39;&amp; for
 * {{x}}, %3C%3E%22%27%26 for {{x|url}}, the five bytes for {{x|raw}}),
 * so no value's character reaches the page unescaped unless marked raw;
 * a placeholder without a value, a value with no placeholder and a NULL
 * value each fail the render and leave the buffer as it was.
 *
 * Input: a template file. Built as a libFuzzer program with
 * -DSKED_LIBFUZZER (`make fuzz`) and as a plain program replaying
 * tests/fuzz/corpus/tpl and cli/web/dashboard/templates.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web/dashboard/dashboard_tpl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NAMES 64
#define EVIL  "<>\"'&"

static void
finding(const char *what, const char *detail)
{
	fprintf(stderr, "finding: %s%s%s\n", what, detail ? ": " : "",
	        detail ? detail : "");
	abort();
}

struct names {
	char name[NAMES][65];
	size_t n, html, url, raw; /* placeholders of each kind */
};

static void
note(void *ud, const char *name, size_t nlen, const char *filter)
{
	struct names *s = ud;
	size_t i;

	if (strcmp(filter, "url") == 0)
		s->url++;
	else if (strcmp(filter, "raw") == 0)
		s->raw++;
	else
		s->html++;
	for (i = 0; i < s->n; i++)
		if (strlen(s->name[i]) == nlen &&
		    memcmp(s->name[i], name, nlen) == 0)
			return;
	if (s->n < NAMES && nlen < sizeof s->name[0]) {
		memcpy(s->name[s->n], name, nlen);
		s->name[s->n++][nlen] = '\0';
	}
}

static int
render(const char *body, size_t blen, const struct names *s, const char *value,
       size_t skip, const char *extra, struct cli_sbuf *b)
{
	struct cli_tpl_arg args[NAMES + 1];
	char err[200];
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++)
		if (i != skip)
			args[n++] = (struct cli_tpl_arg){s->name[i], value};
	if (extra)
		args[n++] = (struct cli_tpl_arg){extra, value};
	return cli_tpl_expand(b, body, blen, args, n, err, sizeof err);
}

static int
check_frag(void *ud, const char *name, size_t nlen, const char *body,
           size_t blen)
{
	struct names s;
	struct cli_sbuf plain = {0}, evil = {0}, b = {0};
	size_t grow;

	(void)ud;
	(void)name;
	(void)nlen;
	memset(&s, 0, sizeof s);
	if (cli_tpl_names(body, blen, note, &s) != 0)
		finding("a fragment that parsed has a tag that does not", NULL);
	if (s.n >= NAMES)
		return 0;
	if (render(body, blen, &s, "", (size_t)-1, NULL, &plain) != 0 ||
	    render(body, blen, &s, EVIL, (size_t)-1, NULL, &evil) != 0)
		finding("a fragment with every value does not render", NULL);
	grow = s.html * (strlen("&lt;&gt;&quot;&#39;&amp;")) +
	       s.url * strlen("%3C%3E%22%27%26") + s.raw * strlen(EVIL);
	if (evil.len != plain.len + grow)
		finding("a value's characters reach the page escaped wrongly",
		        NULL);
	/* no '<' of a value but through {{x|raw}} */
	size_t lt_plain = 0, lt_evil = 0;
	for (size_t i = 0; i < plain.len; i++)
		lt_plain += plain.p[i] == '<';
	for (size_t i = 0; i < evil.len; i++)
		lt_evil += evil.p[i] == '<';
	if (lt_evil != lt_plain + s.raw)
		finding("a '<' of a value reaches the page", NULL);

	cli_sbuf_puts(&b, "before");
	if (s.n > 0 && render(body, blen, &s, "v", 0, NULL, &b) == 0)
		finding("a placeholder without a value renders", s.name[0]);
	if (render(body, blen, &s, "v", (size_t)-1, "Not_a_name", &b) == 0)
		finding("a value without a placeholder renders", NULL);
	if (s.n > 0 && render(body, blen, &s, NULL, (size_t)-1, NULL, &b) == 0)
		finding("a NULL value renders", NULL);
	if (b.len != 6 || strcmp(b.p, "before") != 0)
		finding("a failed render left text behind", NULL);
	cli_sbuf_free(&plain);
	cli_sbuf_free(&evil);
	cli_sbuf_free(&b);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int embedded_checked;
	char err[256];

	if (!embedded_checked) {
		embedded_checked = 1;
		if (cli_tpl_check_all(err, sizeof err) != 0)
			finding("an embedded template does not parse", err);
	}
	/* a copy of exactly its size, no NUL after it: a read past the end
	 * shows under ASan in the plain program too */
	char *t = malloc(size ? size : 1);
	if (!t)
		return 0;
	memcpy(t, data, size);
	if (cli_tpl_check(t, size, err, sizeof err) == 0 &&
	    cli_tpl_walk(t, size, check_frag, NULL, err, sizeof err) != 0)
		finding("a file that checked does not walk", err);
	free(t);
	return 0;
}

#include "fuzz_main.h"
