/*
 * cmd_nodes.c — operator commands beside `nodes` and `stats`: pruning dead
 * nodes (`sked nodes --prune`) and the oldest due task's age that `stats`
 * shows per queue.
 *
 * Layer: the command-line program, a client of <sked.h> only.
 * cmd_inspect.c's `nodes` and `stats` call in here; the SQL is the library's
 * (src/model/nodes.c, src/model/gauges.c).
 */
#include "cmd/cmd.h"

#include <string.h>
#include <sysexits.h>

/* sked nodes --prune [--older-than D]: remove the rows of nodes silent
 * for longer than D (default 1h) that hold no running task. */
int
cli_nodes_prune(struct cli *c, int argc, char **argv)
{
	enum { O_OLDER = 1 };
	static const struct option opts[] = {
	        {"older-than", required_argument, NULL, O_OLDER},
	        {"prune", no_argument, NULL, 'p'},
	        CLI_COMMON_OPTIONS,
	        {NULL, 0, NULL, 0},
	};
	int64_t older = 3600 * 1000, removed = 0;
	int ch, ex, rc;

	optind = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (ch) {
		case O_OLDER:
			if ((ex = cli_parse_duration("--older-than", optarg,
			                             &older)) != 0)
				return ex;
			break;
		case 'p':
			break;
		case CLI_OPT_HELP:
			cli_help(stdout, "nodes");
			return EX_OK;
		case CLI_OPT_JSON:
			c->json = 1;
			break;
		default:
			return cli_opt_error("nodes", ch, argv);
		}
	}
	if (optind < argc)
		return cli_usage("nodes", "unexpected argument '%s'",
		                 argv[optind]);
	if ((ex = cli_open_existing(c)) != 0)
		return ex;
	if ((rc = sked_nodes_prune(c->h, older, &removed)) != SKED_OK)
		return cli_fail(c->h, rc, "nodes --prune");
	if (c->json)
		return cli_json_print(
		        json_pack("{s:I}", "removed", (json_int_t)removed));
	printf("%lld node(s) removed\n", (long long)removed);
	return 0;
}

int64_t
cli_oldest_due_ms(const sked_cluster_gauges *g, const char *queue)
{
	int64_t age = 0;

	for (size_t i = 0; i < g->nqueues; i++)
		if ((!queue || strcmp(g->queues[i].queue, queue) == 0) &&
		    g->queues[i].oldest_due_age_ms > age)
			age = g->queues[i].oldest_due_age_ms;
	return age;
}
