/*
 * fuzz_sqlsplit.c — a fuzz target for the one SQL splitter
 * (sked__sql_next, util/sqlsplit.c), which the MySQL drivers' text path
 * and the schema steps run sked's multi-statement texts through.
 * Oracles, beyond the sanitizers: the statements come in order, each
 * inside the text and after the one before, none empty and none starting
 * with a blank; the walk always ends, at the text's end; and a
 * statement split again is that one statement whole (the split is
 * stable: no statement holds a ';' the splitter would cut at). Input: the
 * text (bytes as they come; a NUL ends it). Built as a libFuzzer program
 * with -DSKED_LIBFUZZER (`make fuzz`) and as a plain program replaying
 * tests/fuzz/corpus/sqlsplit.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/sqlsplit.h"

static int
blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
	       c == '\v';
}

static void
finding(const char *what, const char *text)
{
	fprintf(stderr, "sqlsplit: %s in\n%s\n", what, text);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	size_t len = strlen(text);
	const char *at = text, *b, *e, *prev = text;
	size_t n = 0;
	while (sked__sql_next(&at, &b, &e)) {
		if (++n > len)
			finding("more statements than bytes", text);
		if (b < prev || b >= e || e > at || at > text + len)
			finding("a statement out of order or out of the text",
			        text);
		if (blank(*b))
			finding("a statement that starts with a blank", text);
		/* split again: the same statement, whole */
		size_t k = (size_t)(e - b);
		char *one = malloc(k + 1);
		if (!one)
			break;
		memcpy(one, b, k);
		one[k] = '\0';
		const char *at2 = one, *b2, *e2;
		if (!sked__sql_next(&at2, &b2, &e2) || b2 != one ||
		    e2 != one + k || sked__sql_next(&at2, &b2, &e2))
			finding("a statement that splits again differently",
			        text);
		free(one);
		prev = at;
	}
	if (at != text + len)
		finding("a walk that stops before the end", text);
	free(text);
	return 0;
}

#include "fuzz_main.h"
