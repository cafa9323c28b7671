/*
 * test_sqlsplit.c — the one SQL splitter (util/sqlsplit.c): a text of
 * several statements, as the MySQL drivers' text path and the schema
 * steps hand it over, comes apart at each ';' outside quotes ('…', "…",
 * `…`, with doubled quotes and backslash escapes), dollar quotes
 * ($$…$$, $tag$…$tag$) and comments (-- and / * … * /), with blanks at
 * the ends left out and empty or comment-only pieces skipped; and every
 * dialect's schema steps split into one statement per line that ends in
 * ';', the convention of the files in sql/.
 *
 * Layer: tests (pure: no database).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dialect/dialect.h"
#include "util/sqlsplit.h"

/* The statements of sql, each on a line of its own after "|". */
static void
split(const char *sql, char *out, size_t cap)
{
	const char *at = sql, *b, *e;
	size_t n = 0;
	out[0] = '\0';
	while (sked__sql_next(&at, &b, &e)) {
		assert_true(b < e);
		n += (size_t)snprintf(out + n, cap - n, "|%.*s\n", (int)(e - b),
		                      b);
		assert_true(n < cap);
	}
	assert_true(*at == '\0');
}

static void
expect(const char *sql, const char *want)
{
	char got[4096];
	split(sql, got, sizeof got);
	if (strcmp(got, want) != 0)
		fail_msg("split of\n%s\ngave\n%swanted\n%s", sql, got, want);
}

static void
plain(void **state)
{
	(void)state;
	expect("", "");
	expect("  \n\t ", "");
	expect("SELECT 1", "|SELECT 1\n");
	expect("SELECT 1;", "|SELECT 1\n");
	expect("SELECT 1; SELECT 2", "|SELECT 1\n|SELECT 2\n");
	/* the MySQL dialect's session settings */
	expect("SET time_zone = '+00:00'; "
	       "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
	       "|SET time_zone = '+00:00'\n"
	       "|SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED\n");
	/* empty pieces are no statements */
	expect(";; ;\n;SELECT 1 ;\n ; ", "|SELECT 1\n");
}

static void
quotes(void **state)
{
	(void)state;
	expect("SELECT ';'; SELECT 2", "|SELECT ';'\n|SELECT 2\n");
	expect("SELECT 'it''s; ok'; SELECT 2",
	       "|SELECT 'it''s; ok'\n|SELECT 2\n");
	expect("SELECT \"a;b\", `c;d`; SELECT 2",
	       "|SELECT \"a;b\", `c;d`\n|SELECT 2\n");
	/* a backslash takes the next character with it in '…' and "…" */
	expect("SELECT 'a\\';b'; SELECT 2", "|SELECT 'a\\';b'\n|SELECT 2\n");
	expect("SELECT 'a\\\\'; SELECT 2", "|SELECT 'a\\\\'\n|SELECT 2\n");
	/* not in `…`, where MySQL has no escapes */
	expect("SELECT `a\\`; SELECT 2", "|SELECT `a\\`\n|SELECT 2\n");
	/* an unclosed quote runs to the end */
	expect("SELECT 'a; SELECT 2", "|SELECT 'a; SELECT 2\n");
}

static void
comments(void **state)
{
	(void)state;
	/* a comment stays with the statement it comes before; an
	 * apostrophe or ';' in it is no quote and no end */
	expect("-- the queue's row; locked\nSELECT 1;\nSELECT 2",
	       "|-- the queue's row; locked\nSELECT 1\n|SELECT 2\n");
	expect("SELECT 1 /* a; 'b */ + 1; SELECT 2",
	       "|SELECT 1 /* a; 'b */ + 1\n|SELECT 2\n");
	/* a piece of comments alone is no statement */
	expect("SELECT 1;\n-- the end;\n", "|SELECT 1\n");
	expect("/* only */; SELECT 1", "|SELECT 1\n");
	/* unclosed: to the end */
	expect("SELECT 1 /* a; b", "|SELECT 1 /* a; b\n");
	expect("SELECT 1 -- a; b", "|SELECT 1 -- a; b\n");
	/* a minus alone is no comment */
	expect("SELECT 1-1; SELECT 2", "|SELECT 1-1\n|SELECT 2\n");
}

static void
dollars(void **state)
{
	(void)state;
	expect("CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ "
	       "LANGUAGE sql; SELECT 2",
	       "|CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ "
	       "LANGUAGE sql\n|SELECT 2\n");
	expect("DO $x$ BEGIN PERFORM ';'; $$; END $x$; SELECT 2",
	       "|DO $x$ BEGIN PERFORM ';'; $$; END $x$\n|SELECT 2\n");
	/* parameters and identifiers with '$' open no quote */
	expect("SELECT $1; SELECT 2", "|SELECT $1\n|SELECT 2\n");
	expect("SELECT a$b$; SELECT 2", "|SELECT a$b$\n|SELECT 2\n");
	/* unclosed: to the end */
	expect("SELECT $q$ a; b", "|SELECT $q$ a; b\n");
}

/* Every schema step of every dialect: one statement per line that ends
 * in ';' (outside comment lines), none of them empty. */
static void
schema_steps(void **state)
{
	(void)state;
	const sked_dialect *const ds[] = {
	        &sked__dialect_sqlite, &sked__dialect_postgresql,
	        &sked__dialect_mysql, &sked__dialect_sqlserver};
	for (size_t k = 0; k < sizeof ds / sizeof ds[0]; k++) {
		for (const sked_schema_step *st = ds[k]->schema; st->version;
		     st++) {
			char *sql = sked__dialect_expand(ds[k], "p_", st->sql);
			assert_non_null(sql);
			int lines = 0, stmts = 0;
			for (const char *l = sql; *l;) {
				const char *nl = strchr(l, '\n');
				const char *end = nl ? nl : l + strlen(l);
				const char *t = end;
				while (t > l &&
				       (t[-1] == ' ' || t[-1] == '\t' ||
				        t[-1] == '\r'))
					t--;
				const char *s = l;
				while (s < t && (*s == ' ' || *s == '\t'))
					s++;
				if (t > s && t[-1] == ';' &&
				    strncmp(s, "--", 2) != 0)
					lines++;
				l = nl ? nl + 1 : end;
			}
			const char *at = sql, *b, *e;
			while (sked__sql_next(&at, &b, &e))
				stmts++;
			if (stmts != lines)
				fail_msg("%s step %d: %d statements, %d lines "
				         "ending in ';'",
				         ds[k]->name, st->version, stmts,
				         lines);
			free(sql);
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(plain),        cmocka_unit_test(quotes),
	        cmocka_unit_test(comments),     cmocka_unit_test(dollars),
	        cmocka_unit_test(schema_steps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
