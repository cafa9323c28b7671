/*
 * cmd_setup.c — `sked init` (create or upgrade the schema) and `sked
 * info` (what was built, detected and chosen, and why).
 *
 * Layer: the command-line program, a client of sked.h only. The choice of
 * driver, dialect and claim strategy is the library's (sked_get_info);
 * this file prints it.
 */
#include "cmd/cmd.h"

#include <string.h>
#include <sysexits.h>

/* ---- init, info ---- */

int
cmd_init(struct cli *c, int argc, char **argv)
{
	sked_info info;
	int ex, rc;

	if ((ex = cli_simple_args(c, "init", argc, argv, 0, "")) >= 0)
		return ex;
	if ((ex = cli_open(c)) != 0)
		return ex;
	if ((rc = sked_migrate(c->h)) != SKED_OK)
		return cli_fail(c->h, rc, "init");
	if ((rc = sked_get_info(c->h, &info)) != SKED_OK)
		return cli_fail(c->h, rc, "init");
	if (c->json)
		return cli_json_print(json_pack("{s:i, s:s}", "schema_version",
		                                info.schema_version, "url",
		                                info.url));
	printf("schema at version %d\n", info.schema_version);
	return EX_OK;
}

int
cmd_info(struct cli *c, int argc, char **argv)
{
	sked_info i;
	int ex, rc, schema_ok = 0;
	char schema[96];

	if ((ex = cli_simple_args(c, "info", argc, argv, 0, "")) >= 0)
		return ex;
	/* asked before 'sked init' as well: what would sked pick here? */
	if ((ex = cli_open_info(c, &schema_ok)) != 0)
		return ex;
	if ((rc = sked_get_info(c->h, &i)) != SKED_OK)
		return cli_fail(c->h, rc, "info");
	if (c->json)
		return cli_json_print(json_pack(
		        "{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:i, s:i, s:s}",
		        "url", cli_json_cstr(i.url), "driver",
		        cli_json_cstr(i.driver), "dialect",
		        cli_json_cstr(i.dialect), "product",
		        cli_json_cstr(i.product), "version",
		        cli_json_cstr(i.version), "strategy",
		        cli_json_cstr(i.strategy), "reason",
		        cli_json_cstr(i.reason), "schema_version",
		        i.schema_version, "schema_expected", i.schema_expected,
		        "sked_version", SKED_VERSION));
	if (i.schema_version == 0)
		snprintf(schema, sizeof schema, "none (run sked init)");
	else if (schema_ok)
		snprintf(schema, sizeof schema,
		         "version %d (this sked expects %d)", i.schema_version,
		         i.schema_expected);
	else
		snprintf(schema, sizeof schema,
		         "version %d (this sked expects %d: %s)",
		         i.schema_version, i.schema_expected,
		         i.schema_version < i.schema_expected ? "run sked init"
		                                              : "upgrade sked");
	printf("url       %s\n", i.url);
	printf("driver    %s (dialect %s)\n", i.driver, i.dialect);
	printf("product   %s %s\n", i.product, i.version);
	printf("strategy  %s\n", i.strategy);
	printf("  why     %s\n", i.reason);
	printf("schema    %s\n", schema);
	printf("sked      %s\n", SKED_VERSION);
	return EX_OK;
}
