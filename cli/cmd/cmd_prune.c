/*
 * cmd_prune.c — `sked prune`: retention by hand, and the retention ages
 * the worker's own pruner uses.
 *
 * Layer: the command-line program, a client of <sked.h> only; the batches
 * and their SQL are the library's (src/model/retention.c).
 */
#include "cmd/cmd.h"
#include "view/view.h"

#include <string.h>
#include <sysexits.h>

/* sked prune [--older-than D] [--status S]: remove ended tasks (and their
 * runs) older than D, or than each status's retention. */
int
cmd_prune(struct cli *c, int argc, char **argv)
{
	enum { O_OLDER = 1, O_STATUS };
	static const struct option opts[] = {
	        {"older-than", required_argument, NULL, O_OLDER},
	        {"status", required_argument, NULL, O_STATUS},
	        CLI_COMMON_OPTIONS,
	        {NULL, 0, NULL, 0},
	};
	static const int ended[3] = {SKED_SUCCEEDED, SKED_DEAD, SKED_CANCELLED};
	int64_t older = -1, keep[3], removed[3] = {0, 0, 0};
	int status = -1, ch, ex, rc;

	optind = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (ch) {
		case O_OLDER:
			if ((ex = cli_parse_duration("--older-than", optarg,
			                             &older)) != 0)
				return ex;
			break;
		case O_STATUS:
			status = sked_status_parse(optarg);
			if (status != SKED_SUCCEEDED && status != SKED_DEAD &&
			    status != SKED_CANCELLED)
				return cli_usage(
				        "prune",
				        "--status: '%s' is not an ended "
				        "status (succeeded, dead, "
				        "cancelled)",
				        optarg);
			break;
		case CLI_OPT_HELP:
			cli_help(stdout, "prune");
			return EX_OK;
		case CLI_OPT_JSON:
			c->json = 1;
			break;
		default:
			return cli_opt_error("prune", ch, argv);
		}
	}
	if (optind < argc)
		return cli_usage("prune", "unexpected argument '%s'",
		                 argv[optind]);
	cli_retention(&c->cfg, keep);
	if ((ex = cli_open_existing(c)) != 0)
		return ex;
	int64_t total = 0;
	for (int i = 0; i < 3; i++) {
		if (status != -1 && status != ended[i])
			continue;
		int64_t age = older >= 0 ? older : keep[i];
		if (age == 0 && older < 0)
			continue; /* kept for ever */
		rc = sked_prune(c->h, ended[i], age, 0, &removed[i]);
		total += removed[i];
		if (rc != SKED_OK)
			return cli_fail(c->h, rc, "prune");
	}
	if (c->json)
		return cli_json_print(json_pack(
		        "{s:I, s:{s:I, s:I, s:I}}", "removed",
		        (json_int_t)total, "by_status", "succeeded",
		        (json_int_t)removed[0], "dead", (json_int_t)removed[1],
		        "cancelled", (json_int_t)removed[2]));
	printf("%lld task(s) removed\n", (long long)total);
	return 0;
}
