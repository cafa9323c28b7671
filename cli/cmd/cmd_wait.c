/*
 * cmd_wait.c — `sked wait ID… [--timeout D]`: block until tasks end,
 * print each one's outcome, exit with a code that says it; and the
 * waiting half of `sked enqueue … --wait` (cli_wait_ids).
 *
 * Layer: the command-line program, a client of <sked.h> only. The
 * waiting itself is the library's (sked_wait: woken by the ending
 * transaction on PostgreSQL, a back-off elsewhere). The exit codes
 * (docs/cli.md) are sked wait's own, in the sysexits range and used by
 * no other sked error, the worst outcome winning: 0 all succeeded,
 * CLI_WAIT_CANCELLED 67, CLI_WAIT_DEAD 68, EX_TEMPFAIL 75 (the time ran
 * out before every task ended).
 */
#include "cmd/cmd.h"
#include "view/view.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

/* One line of text per task: ID STATUS, then its result (succeeded) or
 * its last error (dead, cancelled), on one line. */
static void
print_text(const sked_task *t)
{
	const char *more =
	        t->status == SKED_SUCCEEDED ? t->result : t->last_error;
	printf("%" PRId64 " %s", t->id, sked_status_name(t->status));
	if (more && *more) {
		putchar(' ');
		for (const char *s = more; *s; s++)
			putchar(*s == '\n' || *s == '\r' ? ' ' : *s);
	}
	putchar('\n');
}

/* The worst outcome of the tasks as an exit code. */
static int
outcome_code(int status, int worst)
{
	int ex = status == SKED_SUCCEEDED   ? EX_OK
	         : status == SKED_CANCELLED ? CLI_WAIT_CANCELLED
	         : status == SKED_DEAD      ? CLI_WAIT_DEAD
	                                    : EX_TEMPFAIL;
	/* rank: timeout > dead > cancelled > succeeded */
	static const int rank[] = {EX_OK, CLI_WAIT_CANCELLED, CLI_WAIT_DEAD,
	                           EX_TEMPFAIL};
	int a = 0, b = 0;
	for (int i = 0; i < 4; i++) {
		if (rank[i] == ex)
			a = i;
		if (rank[i] == worst)
			b = i;
	}
	return a > b ? ex : worst;
}

int
cli_wait_ids(struct cli *c, const int64_t *ids, size_t n, int64_t timeout_ms)
{
	int64_t bad = 0;
	int rc = sked_wait(c->h, ids, n, timeout_ms, NULL, &bad);
	if (rc != SKED_OK && rc != SKED_ETIMEOUT)
		return cli_fail(c->h, rc, "wait");
	int ex = EX_OK;
	json_t *arr = c->json ? json_array() : NULL;
	for (size_t i = 0; i < n; i++) {
		sked_task *t = NULL;
		int trc = sked_task_get(c->h, ids[i], &t);
		if (trc != SKED_OK) {
			if (arr)
				json_decref(arr);
			return cli_fail(c->h, trc, "task %" PRId64, ids[i]);
		}
		ex = outcome_code(t->status, ex);
		if (arr) {
			json_t *o = cli_task_json(t);
			json_object_set_new(o, "result",
			                    cli_json_cstr(t->result));
			/* one still running when the time ran out */
			cli_task_live_json(c->h, t, o);
			json_array_append_new(arr, o);
		} else {
			print_text(t);
		}
		sked_tasks_free(t, 1);
	}
	if (arr) {
		int pex = cli_json_print(arr);
		if (pex != 0)
			return pex;
	}
	if (fflush(stdout) != 0)
		return cli_broken_pipe();
	if (rc == SKED_ETIMEOUT)
		cli_err("wait: %s", sked_errmsg(c->h));
	return ex;
}

int
cmd_wait(struct cli *c, int argc, char **argv)
{
	enum { O_TIMEOUT = 0x200 };
	static const struct option opts[] = {
	        {"timeout", required_argument, NULL, O_TIMEOUT},
	        CLI_COMMON_OPTIONS,
	        {NULL, 0, NULL, 0},
	};
	int64_t timeout_ms = -1;
	int ch, ex;

	optind = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (ch) {
		case O_TIMEOUT:
			if ((ex = cli_parse_duration("--timeout", optarg,
			                             &timeout_ms)) != 0)
				return ex;
			break;
		case CLI_OPT_HELP:
			cli_help(stdout, "wait");
			return EX_OK;
		case CLI_OPT_JSON:
			c->json = 1;
			break;
		default:
			return cli_opt_error("wait", ch, argv);
		}
	}
	size_t n = (size_t)(argc - optind);
	if (n == 0)
		return cli_usage("wait", "missing the task ID");
	if (n > SKED_WAIT_MAX)
		return cli_usage("wait", "at most %d task ids, not %zu",
		                 SKED_WAIT_MAX, n);
	int64_t *ids = calloc(n, sizeof *ids);
	if (!ids) {
		cli_err("wait: out of memory");
		return EX_OSERR;
	}
	for (size_t i = 0; i < n; i++)
		if ((ex = cli_parse_id("wait", argv[optind + (int)i],
		                       &ids[i])) != 0)
			goto out;
	if ((ex = cli_open_existing(c)) != 0)
		goto out;
	ex = cli_wait_ids(c, ids, n, timeout_ms);
out:
	free(ids);
	return ex;
}
