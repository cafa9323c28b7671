/*
 * sked-sql — every statement sked runs, as each dialect renders it.
 *
 * Layer: a developer's tool beside the library (it links libsked's
 * static archive and reads the dialect registry, src/dialect/, as the
 * unit tests do); never installed. It answers "which SQL does this path
 * run" in one command:
 *
 *   build/sked-sql postgresql            # every statement, prefix sked_
 *   build/sked-sql sqlserver app_        # another prefix
 *   build/sked-sql oracle                # Oracle's (never run here)
 *   build/sked-sql mysql | grep -A3 'CLAIM_ANY '
 *   build/sked-sql --schema sqlite       # the schema steps instead
 *   build/sked-sql --run sqlserver       # only what the dialect runs,
 *                                        # per-call tokens filled
 *
 * --run is what a grammar reads (tests/sqlgrammar): the statements the
 * dialect's capability flags and claim shape make it run, each with its
 * per-call tokens ({ids}, {rows}, {arg}, …) filled for a few values as
 * sked__sql_fill fills them.
 *
 * A statement's name is its enum sked_sql member without SKED_SQL_; the
 * names come from src/dialect/dialect.h at build time (sql_names.h), and
 * the build fails when they no longer match the enum's length.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dialect/dialect.h"
#include "util/buf.h"
#include "sql_names.h"

_Static_assert(sizeof sked_sql_names / sizeof sked_sql_names[0] ==
                       SKED_SQL__COUNT,
               "sql_names.h does not match enum sked_sql");

static const struct {
	const char *name;
	const sked_dialect *d;
} dialects[] = {
        {"sqlite", &sked__dialect_sqlite},
        {"postgresql", &sked__dialect_postgresql},
        {"mysql", &sked__dialect_mysql},
        {"sqlserver", &sked__dialect_sqlserver},
        {"oracle", &sked__dialect_oracle},
};
#define NDIALECTS (sizeof dialects / sizeof dialects[0])

static int
usage(void)
{
	fprintf(stderr, "usage: sked-sql [--schema|--run] "
	                "sqlite|postgresql|mysql|sqlserver|oracle [PREFIX]\n");
	return 64;
}

int
main(int argc, char **argv)
{
	int schema = argc > 1 && strcmp(argv[1], "--schema") == 0;
	int run = !schema && argc > 1 && strcmp(argv[1], "--run") == 0;
	if (run)
		schema = 1; /* the same place for the dialect's name */
	const char *which = argc > 1 + schema ? argv[1 + schema] : NULL;
	const char *prefix = argc > 2 + schema ? argv[2 + schema] : "sked_";
	const sked_dialect *d = NULL;
	char *sql[SKED_SQL__COUNT], err[256];

	if (!which || argc > 3 + schema)
		return usage();
	for (size_t i = 0; i < NDIALECTS; i++)
		if (strcmp(which, dialects[i].name) == 0)
			d = dialects[i].d;
	if (!d)
		return usage();
	if (schema && !run) {
		for (const struct sked_schema_step *st = d->schema; st->version;
		     st++) {
			char *s = sked__dialect_expand(d, prefix, st->sql);
			if (!s)
				return 70;
			printf("-- %s schema step %d\n%s\n", which, st->version,
			       s);
			free(s);
		}
		return 0;
	}
	if (sked__dialect_render(d, prefix, sql, err, sizeof err) != 0) {
		fprintf(stderr, "sked-sql: %s\n", err);
		return 65;
	}
	for (int i = 0; run && i < SKED_SQL__COUNT; i++) {
		if (!sql[i] || !sked__sql_needed(d, (sked_sql)i))
			continue;
		/* {arg} from ?1; {ids} three ids from ?3 (after node and
		 * lease, as the claims bind them); rows two */
		sked_buf b = {0};
		sked__sql_fill(&b, sql[i], 3, strstr(sql[i], "{rows") ? 2 : 3);
		if (b.oom)
			return 70;
		printf("-- %s %s (%d)\n%s;\n\n", which, sked_sql_names[i], i,
		       b.p);
		sked__buf_free(&b);
	}
	for (int i = 0; !run && i < SKED_SQL__COUNT; i++) {
		printf("-- %s %s (%d)\n", which, sked_sql_names[i], i);
		if (sql[i])
			printf("%s;\n\n", sql[i]);
		else
			printf("-- (no text: this dialect never runs it)\n\n");
	}
	sked__dialect_free_rendered(sql);
	return 0;
}
