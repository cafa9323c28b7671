/*
 * cmd_cron.c — `sked cron next`: the next fire instants of an expression.
 *
 * Layer: the command-line program. Pure time maths: no database, and the
 * only clock read is the system's, for a default --from. Parsing the
 * expression and the time zone is the library's (sked_cron_next); its
 * one-line error is passed on. The schedule commands (cron add, ls, rm,
 * pause, resume) will live here once the library has a schedule API; the
 * command table in main.c already names them.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#define CRON_MAX_COUNT 1000

int
cmd_cron_next(struct cli *c, int argc, char **argv)
{
	enum { O_TZ = 1, O_FROM, O_COUNT };
	static const struct option opts[] = {
	        {"tz", required_argument, NULL, O_TZ},
	        {"from", required_argument, NULL, O_FROM},
	        {"count", required_argument, NULL, O_COUNT},
	        CLI_COMMON_OPTIONS,
	        {NULL, 0, NULL, 0},
	};
	const char *tz = NULL;
	char expr[1024] = "", err[256] = "", buf[32];
	int64_t from = 0, *out;
	long long count = 5;
	int ch, ex, rc, have_from = 0, i;
	size_t k;

	optind = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (ch) {
		case O_TZ:
			tz = optarg;
			break;
		case O_FROM:
			if ((ex = cli_parse_time("--from", optarg, &from)) != 0)
				return ex;
			have_from = 1;
			break;
		case O_COUNT:
			if ((ex = cli_parse_int("--count", optarg, 1,
			                        CRON_MAX_COUNT, &count)) != 0)
				return ex;
			break;
		case CLI_OPT_HELP:
			cli_help(stdout, "cron next");
			return EX_OK;
		case CLI_OPT_JSON:
			c->json = 1;
			break;
		default:
			return cli_opt_error("cron next", ch, argv);
		}
	}
	if (optind >= argc)
		return cli_usage("cron next", "missing the cron EXPR");
	/* An unquoted expression arrives as several words: join them. */
	for (i = optind; i < argc; i++) {
		if (strlen(expr) + strlen(argv[i]) + 2 > sizeof expr)
			return cli_usage("cron next", "the expression is too "
			                              "long");
		if (i > optind)
			strcat(expr, " ");
		strcat(expr, argv[i]);
	}
	if (!have_from) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		from = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	}
	out = calloc((size_t)count, sizeof *out);
	if (out == NULL) {
		cli_err("cron next: out of memory");
		return EX_OSERR;
	}
	rc = sked_cron_next(expr, tz, from, (size_t)count, out, err,
	                    sizeof err);
	if (rc != SKED_OK) {
		free(out);
		cli_err("cron next: %s", err[0] ? err : sked_strerror(rc));
		return cli_exit_code(rc);
	}
	if (c->json) {
		json_t *arr = json_array();
		for (k = 0; k < (size_t)count; k++)
			json_array_append_new(arr, cli_json_time(out[k]));
		ex = cli_json_print(
		        json_pack("{s:o, s:s, s:o, s:o}", "expr",
		                  cli_json_cstr(expr), "tz", tz ? tz : "UTC",
		                  "from", cli_json_time(from), "next", arr));
	} else {
		for (k = 0; k < (size_t)count; k++)
			printf("%s\n",
			       sked_format_time(out[k], buf, sizeof buf));
		ex = EX_OK;
	}
	free(out);
	return ex;
}
