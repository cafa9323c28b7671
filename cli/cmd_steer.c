/*
 * cmd_steer.c — `sked cancel ID` and `sked retry ID`: steer one task.
 *
 * Layer: the command-line program, a client of sked.h only. Which states
 * allow which move is the library's (sked_cancel, sked_retry); its
 * one-line refusal is passed on.
 */
#include "cli.h"

#include <inttypes.h>
#include <sysexits.h>

/* ---- cancel, retry ---- */

static int
steer(struct cli *c, const char *cmd, int argc, char **argv,
      int (*fn)(sked *, int64_t), const char *done)
{
	int64_t id;
	int ex, rc;

	if ((ex = cli_simple_args(c, cmd, argc, argv, 1, "the task ID")) >= 0)
		return ex;
	if ((ex = cli_parse_id(cmd, argv[optind], &id)) != 0)
		return ex;
	if ((ex = cli_open_existing(c)) != 0)
		return ex;
	if ((rc = fn(c->h, id)) != SKED_OK)
		return cli_fail(c->h, rc, "%s task %" PRId64, cmd, id);
	if (c->json)
		return cli_json_print(json_pack(
		        "{s:I, s:s}", "id", (json_int_t)id, "result", done));
	printf("task %" PRId64 " %s\n", id, done);
	return EX_OK;
}

int
cmd_cancel(struct cli *c, int argc, char **argv)
{
	return steer(c, "cancel", argc, argv, sked_cancel, "cancelled");
}

int
cmd_retry(struct cli *c, int argc, char **argv)
{
	return steer(c, "retry", argc, argv, sked_retry, "will run again");
}
