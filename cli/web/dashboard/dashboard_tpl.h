/*
 * dashboard_tpl.h — the dashboard's HTML templates and their renderer
 * (dashboard_tpl.c; the templates are templates/NAME.html, embedded in
 * the binary at build time as the static files are; docs/design.md,
 * "The dashboard's pages", says how to change one).
 *
 * Layer: the command-line program; the bottom of the dashboard's files
 * (it calls http.c's buffer only).
 *
 * A template file holds fragments:
 *
 *   {{! a comment, anywhere, over several lines if need be }}
 *   {{define row}}
 *   <tr><td>{{kind}}</td><td><a href="/tasks?queue={{queue|url}}">…
 *   {{end}}
 *
 * In a fragment a line break and the blanks that start the next line are
 * dropped, so that a fragment may be laid out on several lines and still
 * give the one-line HTML the pages always sent: break lines between tags,
 * never inside text. A placeholder {{name}} is replaced by its value
 * escaped for HTML (text and attribute values alike); {{name|url}} by its
 * value escaped for a query-string value; {{name|raw}} by its value as it
 * is, for HTML that the caller built (another fragment, a number). A
 * placeholder without a value, a value without a placeholder, a fragment
 * that does not exist and a template that does not parse are errors: the
 * render writes nothing and fails, never a silent blank, and the
 * dashboard answers 500 (a test that renders the page fails). Every
 * embedded template is parsed when `sked dashboard` starts.
 */
#ifndef SKED_CLI_DASHBOARD_TPL_H
#define SKED_CLI_DASHBOARD_TPL_H

#include <stddef.h>

#include "http/http.h"

/* A value for a placeholder: its name and its text (never NULL). */
struct cli_tpl_arg {
	const char *name;
	const char *value;
};

/* Renders the fragment FILE.FRAGMENT ("tasks.row": {{define row}} of
 * templates/tasks.html) with args into b. 0, or -1: b is as it was,
 * the reason is in cli_tpl_error() and in the log. */
int cli_tpl(struct cli_sbuf *b, const char *name,
            const struct cli_tpl_arg *args, size_t n);

#define CLI_TPL_ARGS(...) ((const struct cli_tpl_arg[]){__VA_ARGS__})
#define CLI_TPL_NARGS(...)                                                     \
	(sizeof CLI_TPL_ARGS(__VA_ARGS__) / sizeof(struct cli_tpl_arg))
/* TPL(b, "tasks.row", {"kind", t->kind}, {"id", TPL_INT(t->id)}) */
#define TPL(b, name, ...)                                                      \
	cli_tpl((b), (name), CLI_TPL_ARGS(__VA_ARGS__),                        \
	        CLI_TPL_NARGS(__VA_ARGS__))
#define TPL0(b, name) cli_tpl((b), (name), NULL, 0)
/* an integer as text, in a buffer that lives as long as the block */
#define TPL_INT(v) cli_tpl_int((char[24]){""}, (long long)(v))
char *cli_tpl_int(char *buf, long long v);

/* The first error of this thread since cli_tpl_clear(), or NULL. */
const char *cli_tpl_error(void);
void cli_tpl_clear(void);

/* Every embedded template parses: 0, or -1 with the first error in err. */
int cli_tpl_check_all(char *err, size_t len);

/* The same on a template given as text, for the fuzz target and the
 * tests: cli_tpl_check parses a whole file (and refuses two fragments of
 * one name); cli_tpl_frag finds the
 * fragment frag in it; cli_tpl_expand renders a fragment's body;
 * cli_tpl_names calls fn for each placeholder of a body, in order. */
int cli_tpl_check(const char *t, size_t len, char *err, size_t errlen);
/* calls fn for each fragment of the file t (stops when it returns 1); 0,
 * or -1 with the first syntax error in err */
int cli_tpl_walk(const char *t, size_t len,
                 int (*fn)(void *ud, const char *name, size_t nlen,
                           const char *body, size_t blen),
                 void *ud, char *err, size_t errlen);
int cli_tpl_frag(const char *t, size_t len, const char *frag, const char **body,
                 size_t *blen);
int cli_tpl_expand(struct cli_sbuf *b, const char *body, size_t blen,
                   const struct cli_tpl_arg *args, size_t n, char *err,
                   size_t errlen);
int cli_tpl_names(const char *body, size_t blen,
                  void (*fn)(void *ud, const char *name, size_t nlen,
                             const char *filter),
                  void *ud);

#endif /* SKED_CLI_DASHBOARD_TPL_H */
