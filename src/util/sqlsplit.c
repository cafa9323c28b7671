/*
 * sqlsplit.c — one statement at a time out of a text of several (the
 * rules are in sqlsplit.h).
 *
 * Layer: util. The text is read as a run of units: a blank, a comment, a
 * quoted piece (to its close), or one other character; a ';' unit ends a
 * statement.
 */
#include "util/sqlsplit.h"

#include <stddef.h>
#include <string.h>

enum { CODE, BLANK, COMMENT };

static int
blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
	       c == '\v';
}

/* A character that may continue a word (an identifier, a number, a
 * dollar-quote tag). */
static int
word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || (unsigned char)c >= 0x80;
}

/* p at a '$' that starts no word: the length of its tag ("$$" 2,
 * "$ab$" 4), or 0 when it opens none ($1, a lone '$'). */
static size_t
dollar_tag(const char *p)
{
	const char *t = p + 1;
	if (*t >= '0' && *t <= '9')
		return 0;
	while (word(*t))
		t++;
	return *t == '$' ? (size_t)(t - p) + 1 : 0;
}

/* Where the unit at p ends; *kind says what it is. after_word: the unit
 * before p was a word character (then '$' continues it). */
static const char *
unit(const char *p, int after_word, int *kind)
{
	*kind = CODE;
	if (blank(*p)) {
		*kind = BLANK;
		return p + 1;
	}
	if (p[0] == '-' && p[1] == '-') {
		*kind = COMMENT;
		const char *nl = strchr(p, '\n');
		return nl ? nl : p + strlen(p);
	}
	if (p[0] == '/' && p[1] == '*') {
		*kind = COMMENT;
		const char *c = strstr(p + 2, "*/");
		return c ? c + 2 : p + strlen(p);
	}
	if (*p == '\'' || *p == '"' || *p == '`') {
		char q = *p++;
		for (; *p; p++) {
			if (*p == '\\' && q != '`' && p[1])
				p++;
			else if (*p == q && p[1] == q)
				p++;
			else if (*p == q)
				return p + 1;
		}
		return p;
	}
	size_t n = *p == '$' && !after_word ? dollar_tag(p) : 0;
	if (n > 0) {
		const char *c = p + n;
		for (; *c; c++)
			if (*c == '$' && strncmp(c, p, n) == 0)
				return c + n;
		return c;
	}
	return p + 1;
}

int
sked__sql_next(const char **at, const char **b, const char **e)
{
	const char *p = *at;
	while (*p) {
		const char *first = NULL, *last = NULL;
		int code = 0, after_word = 0, kind;
		while (*p && *p != ';') {
			const char *next = unit(p, after_word, &kind);
			if (kind != BLANK) {
				if (!first)
					first = p;
				last = next;
				code |= kind == CODE;
			}
			after_word = kind == CODE && next == p + 1 &&
			             (word(*p) || *p == '$');
			p = next;
		}
		if (*p == ';')
			p++;
		if (code) {
			*b = first;
			*e = last;
			*at = p;
			return 1;
		}
	}
	*at = p;
	return 0;
}
