/*
 * render.c — the template language of the SQL registry: a statement's
 * text with {tokens} (the prefix, the clock, times and milliseconds,
 * placeholders, typed rows) rendered for one dialect, once per handle,
 * and the per-call tokens filled in for each call ({ids}, {rows7}...).
 *
 * Layer: dialect seam (see dialect.h), beside dialect.c, whose registry
 * (sked__sql_text) it renders; it knows no statement by name.
 */
#include "dialect/dialect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dialect/detect.h"
#include "sked.h"
#include "util/buf.h"
#include "util/log.h"

/* ---- rendering ---- */

static void
putf(sked_buf *b, const char *fmt, const char *arg, size_t arglen)
{
	/* fmt holds "{}" where arg goes (any number of times: Oracle's
	 * {ms:C} names C four times); arg is not NUL-terminated */
	const char *pct;
	while ((pct = strstr(fmt, "{}")) != NULL) {
		sked__buf_put(b, fmt, (size_t)(pct - fmt));
		sked__buf_put(b, arg, arglen);
		fmt = pct + 2;
	}
	sked__buf_put(b, fmt, strlen(fmt));
}

static int
is(const char *in, size_t n, const char *word)
{
	return n == strlen(word) && memcmp(in, word, n) == 0;
}

/* the tokens sked__sql_fill fills per call: kept as they are */
static int
per_call(const char *in, size_t n)
{
	return is(in, n, "arg") || is(in, n, "ids") || is(in, n, "rows") ||
	       is(in, n, "rows7") || is(in, n, "rows8") ||
	       is(in, n, "rows7t") || is(in, n, "rows8t");
}

/* An argument of {now+X}, {ts:X}, {ms:X}, {len:X} or {lim:X}: text without
 * braces, or exactly the per-call {arg}. */
static int
arg_ok(const char *a, size_t n)
{
	if (!memchr(a, '{', n) && !memchr(a, '}', n))
		return 1;
	return is(a, n, "{arg}");
}

/* The '}' closing the '{' at open (one level of nesting, as in
 * {lim:{arg}}), or NULL. */
static const char *
closing(const char *open)
{
	int depth = 0;
	for (const char *c = open; *c; c++) {
		if (*c == '{')
			depth++;
		else if (*c == '}' && --depth == 0)
			return c;
	}
	return NULL;
}

/* Render t into *out. SKED_EINVAL (err says which token) for a token
 * this renderer does not know or a '{' left open: such text never
 * reaches a server. */
static int
expand(const sked_dialect *d, const char *prefix, const char *t, char **out,
       char *err, size_t errlen)
{
	const char *tmpl = t;
	sked_buf b = {0};
	*out = NULL;
	sked__buf_put(&b, "", 0);
	while (*t) {
		const char *open = strchr(t, '{');
		if (!open) {
			sked__buf_put(&b, t, strlen(t));
			break;
		}
		sked__buf_put(&b, t, (size_t)(open - t));
		const char *close = closing(open);
		const char *in = open + 1;
		size_t n = close ? (size_t)(close - in) : 0;
		int ok = close != NULL;
		if (!ok)
			;
		else if (is(in, n, "p"))
			sked__buf_put(&b, prefix, strlen(prefix));
		else if (is(in, n, "now"))
			sked__buf_put(&b, d->now, strlen(d->now));
		else if (is(in, n, "nowms"))
			sked__buf_put(&b, d->nowms, strlen(d->nowms));
		else if (is(in, n, "ret"))
			sked__buf_put(&b, d->ret, strlen(d->ret));
		else if (per_call(in, n))
			sked__buf_put(&b, open, n + 2);
		else if (n > 4 && memcmp(in, "now+", 4) == 0 &&
		         arg_ok(in + 4, n - 4))
			putf(&b, d->now_plus, in + 4, n - 4);
		else if (n > 3 && memcmp(in, "ts:", 3) == 0 &&
		         arg_ok(in + 3, n - 3))
			putf(&b, d->ts, in + 3, n - 3);
		else if (n > 3 && memcmp(in, "ms:", 3) == 0 &&
		         arg_ok(in + 3, n - 3))
			putf(&b, d->ms, in + 3, n - 3);
		else if (n > 4 && memcmp(in, "len:", 4) == 0 &&
		         arg_ok(in + 4, n - 4))
			putf(&b, d->len ? d->len : "LENGTH({})", in + 4, n - 4);
		else if (n > 6 && memcmp(in, "kinds:", 6) == 0 &&
		         arg_ok(in + 6, n - 6))
			putf(&b, d->kinds_in, in + 6, n - 6);
		else if (n > 4 && memcmp(in, "lim:", 4) == 0 &&
		         arg_ok(in + 4, n - 4))
			putf(&b, d->limit ? d->limit : " LIMIT {}", in + 4,
			     n - 4);
		else
			ok = 0;
		if (!ok) {
			if (err)
				snprintf(err, errlen,
				         "the %s dialect's template has %s "
				         "'%.32s' (in \"%.60s…\")",
				         d->name,
				         close ? "an unknown token"
				               : "a '{' without its '}':",
				         open, tmpl);
			free(b.p);
			return SKED_EINVAL;
		}
		t = close + 1;
	}
	if (b.oom) {
		free(b.p);
		if (err)
			snprintf(err, errlen, "out of memory");
		return SKED_ENOMEM;
	}
	*out = b.p;
	return SKED_OK;
}

char *
sked__dialect_expand(const sked_dialect *d, const char *prefix, const char *t)
{
	char err[256], *out;
	int rc = expand(d, prefix, t, &out, err, sizeof err);
	if (rc == SKED_EINVAL)
		sked__log(SKED_LOG_ERROR, "%s", err);
	return out;
}

int
sked__dialect_render(const sked_dialect *d, const char *prefix,
                     char *out[SKED_SQL__COUNT], char *err, size_t errlen)
{
	for (int i = 0; i < SKED_SQL__COUNT; i++)
		out[i] = NULL;
	for (int i = 0; i < SKED_SQL__COUNT; i++) {
		const char *t = sked__sql_text(d, (sked_sql)i);
		if (!t)
			continue;
		int rc = expand(d, prefix, t, &out[i], err, errlen);
		if (rc != SKED_OK) {
			sked__dialect_free_rendered(out);
			return rc;
		}
	}
	return SKED_OK;
}

void
sked__dialect_free_rendered(char *out[SKED_SQL__COUNT])
{
	for (int i = 0; i < SKED_SQL__COUNT; i++) {
		free(out[i]);
		out[i] = NULL;
	}
}

/* ---- padded lists (sked__dialect_pad) ---- */

/* The statements whose list may be longer than what is bound, with the
 * token to pad and the text that must surround it for that to be
 * harmless: a NULL in a positive IN list matches nothing, and a row of
 * NULLs joined to the task table on its id finds no task. A text that
 * no longer reads so is left alone (correct, only slower). */
static const struct {
	sked_sql id;
	const char *token, *before, *after;
} pads[] = {
        {SKED_SQL_DONE_COPY, "{ids}", " IN (", ")"},
        {SKED_SQL_DONE_DROP, "{ids}", " IN (", ")"},
        {SKED_SQL_DONE_DROP_RET, "{ids}", " IN (", ")"},
        {SKED_SQL_DONE_COPY_RUN, "{rows8}", "FROM (", ") v JOIN "},
};

int
sked__dialect_pad(char *out[SKED_SQL__COUNT])
{
	for (size_t i = 0; i < sizeof pads / sizeof pads[0]; i++) {
		char *s = out[pads[i].id];
		const char *t = s ? strstr(s, pads[i].token) : NULL;
		size_t tl = strlen(pads[i].token), bl = strlen(pads[i].before);
		/* one token, in its place, in no NOT IN */
		if (!t || strstr(t + tl, pads[i].token) ||
		    (size_t)(t - s) < bl ||
		    memcmp(t - bl, pads[i].before, bl) != 0 ||
		    strncmp(t + tl, pads[i].after, strlen(pads[i].after)) !=
		            0 ||
		    ((size_t)(t - s) >= bl + 3 &&
		     memcmp(t - bl - 3, "NOT", 3) == 0))
			continue;
		sked_buf b = {0};
		sked__buf_put(&b, s, (size_t)(t - s) + tl - 1);
		sked__buf_puts(&b, "+}");
		sked__buf_puts(&b, t + tl);
		if (b.oom) {
			free(b.p);
			return SKED_ENOMEM;
		}
		free(s);
		out[pads[i].id] = b.p;
	}
	return SKED_OK;
}

/* The length a padded list of n items (w markers each, the first ?first)
 * is given: the next of a few sizes, each about half again the last, so
 * at most a third of it is padding; never past ?999, the fewest markers
 * a product whose driver pads allows (SQLite before 3.32). */
static int
padded(int n, int first, int w)
{
	static const int sizes[] = {1,   2,   3,   4,   6,   8,   12,
	                            16,  24,  32,  48,  64,  96,  128,
	                            192, 256, 384, 512, 768, 1000};
	int room = (999 - first + 1) / w;
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		if (sizes[i] >= n)
			return sizes[i] <= room ? sizes[i]
			                        : (n > room ? n : room);
	return n;
}

/* ?N after what p (the marker's prefix, "" or ", ") says */
static void
put_marker(sked_buf *b, const char *p, int64_t n)
{
	char num[SKED_I64_DIGITS + 4];
	size_t pl = strlen(p);
	memcpy(num, p, pl);
	num[pl] = '?';
	size_t k = pl + 1 + sked__i64_digits(num + pl + 1, n);
	sked__buf_put(b, num, k);
}

/* ---- per-call tokens ---- */

/* {rows7t}, {rows8t}: the rows of {rows7}/{rows8} for a product whose
 * SELECT needs a FROM and whose UNION ALL wants one type per column
 * (Oracle: a NULL bound as text above a number is ORA-01790). The
 * columns are those of SKED_SQL_RUN_ROWS and SKED_SQL_DONE_COPY_RUN:
 * c1 task id, c2 attempt, c3 started ms and c5 exit code are numbers,
 * c4 the outcome a short text, c6 error, c7 output and c8 result long
 * texts. */
static void
fill_typed(sked_buf *b, int first, int n, int w)
{
	/* each value: what goes before its marker, and after */
	static const char *const pre[8] = {"CAST(",    "CAST(",   "CAST(",
	                                   "CAST(",    "CAST(",   "TO_CLOB(",
	                                   "TO_CLOB(", "TO_CLOB("};
	static const char *const post[8] = {" AS NUMBER(19))",
	                                    " AS NUMBER(19))",
	                                    " AS NUMBER(19))",
	                                    " AS VARCHAR2(32))",
	                                    " AS NUMBER(19))",
	                                    ")",
	                                    ")",
	                                    ")"};
	char num[48];
	for (int i = 0; i < n; i++) {
		sked__buf_puts(b, i ? " UNION ALL SELECT " : "SELECT ");
		for (int k = 0; k < w; k++) {
			snprintf(num, sizeof num, "%s?%d", k ? ", " : "",
			         first + w * i + k);
			sked__buf_puts(b, k ? ", " : "");
			sked__buf_puts(b, pre[k]);
			sked__buf_puts(b, num + (k ? 2 : 0));
			sked__buf_puts(b, post[k]);
			if (i == 0) {
				snprintf(num, sizeof num, " AS c%d", k + 1);
				sked__buf_puts(b, num);
			}
		}
		sked__buf_puts(b, " FROM DUAL");
	}
}

void
sked__sql_fill(sked_buf *b, const char *s, int first, int n)
{
	char num[48];
	if (!s) { /* a statement the dialect lacks: test_dialect.c */
		b->oom = 1;
		return;
	}
	for (;;) {
		const char *open = strchr(s, '{');
		if (!open) {
			sked__buf_puts(b, s);
			return;
		}
		sked__buf_put(b, s, (size_t)(open - s));
		if (strncmp(open, "{arg}", 5) == 0) {
			snprintf(num, sizeof num, "?%d", first);
			sked__buf_puts(b, num);
			s = open + 5;
		} else if (strncmp(open, "{ids}", 5) == 0 ||
		           strncmp(open, "{ids+}", 6) == 0) {
			int pad = open[4] == '+';
			int m = pad ? padded(n, first, 1) : n;
			for (int i = 0; i < m; i++)
				put_marker(b, i ? "," : "", first + i);
			s = open + (pad ? 6 : 5);
		} else if (strncmp(open, "{rows7t}", 8) == 0 ||
		           strncmp(open, "{rows8t}", 8) == 0) {
			fill_typed(b, first, n, open[5] - '0');
			s = open + 8;
		} else if (strncmp(open, "{rows7}", 7) == 0 ||
		           strncmp(open, "{rows8}", 7) == 0 ||
		           strncmp(open, "{rows8+}", 8) == 0) {
			int w = open[5] - '0', pad = open[6] == '+';
			int m = pad ? padded(n, first, w) : n;
			for (int i = 0; i < m; i++) {
				int a = first + w * i;
				if (i == 0)
					snprintf(num, sizeof num,
					         "SELECT ?%d AS c1, ?%d AS c2",
					         a, a + 1);
				else
					snprintf(num, sizeof num,
					         " UNION ALL SELECT ?%d, ?%d",
					         a, a + 1);
				sked__buf_puts(b, num);
				for (int k = 2; k < w; k++) {
					put_marker(b, ", ", a + k);
					if (i == 0) {
						snprintf(num, sizeof num,
						         " AS c%d", k + 1);
						sked__buf_puts(b, num);
					}
				}
			}
			s = open + (pad ? 8 : 7);
		} else if (strncmp(open, "{rows}", 6) == 0) {
			for (int i = 0; i < n; i++) {
				snprintf(num, sizeof num, "%s(?%d, %d)",
				         i ? ", " : "", first + i, i);
				sked__buf_puts(b, num);
			}
			s = open + 6;
		} else { /* the renderer lets no other token through */
			sked__buf_put(b, open, 1);
			s = open + 1;
		}
	}
}
