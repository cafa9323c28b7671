/*
 * cmd_cron.c — `sked cron next` (the next fire instants of an
 * expression) and the named schedules: `cron add`, `ls`, `rm`, `pause`,
 * `resume`, `run`, and the config file's [schedule.NAME] sections that a worker
 * adds or replaces when it starts.
 *
 * Layer: the command-line program. `cron next` is pure time maths: no
 * database, and the only clock read is the system's, for a default --from.
 * Checking expressions and zones, storing schedules and firing them are
 * the library's (sked_cron_*, sked_schedule_*); its one-line errors are
 * passed on. Exit codes: a bad expression, zone, policy or an unknown
 * schedule 65, usage 64.
 */
#include "cmd/cmd.h"
#include "view/view.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#define CRON_MAX_COUNT 1000
/* The one rule of `cron next` and `cron add`: the expression is one
 * argument. Its words are never joined back: unquoted, the shell may
 * already have turned a * into the names of files. */
#define CLI_CRON_ONE_ARG                                                       \
	"give the cron EXPR as one quoted argument, as in '0 7 * * mon-fri' "  \
	"(unquoted, the shell may expand its * into file names)"

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
	int ch, ex, rc, have_from = 0;
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
	if (argc - optind > 1)
		return cli_usage("cron next", CLI_CRON_ONE_ARG);
	if (strlen(argv[optind]) >= sizeof expr)
		return cli_usage("cron next", "the expression is too long");
	strcpy(expr, argv[optind]);
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
			json_array_append_new(
			        arr, json_string(cli_time_sec(out[k], buf,
			                                      sizeof buf)));
		ex = cli_json_print(
		        json_pack("{s:o, s:s, s:o, s:o}", "expr",
		                  cli_json_cstr(expr), "tz", tz ? tz : "UTC",
		                  "from", cli_json_time(from), "next", arr));
	} else {
		for (k = 0; k < (size_t)count; k++)
			printf("%s\n", cli_time_sec(out[k], buf, sizeof buf));
		ex = EX_OK;
	}
	free(out);
	return ex;
}

/* ---- named schedules: cron add, ls, rm, pause, resume ---- */

static int
cron_fail(struct cli *c, int rc, const char *what)
{
	return cli_fail(c->h, rc, "%s", what);
}

/* --payload TEXT, @FILE or - (stdin). *buf is malloc'd for the last two. */
static int
read_payload(const char *arg, char **buf, const char **payload, size_t *len)
{
	int ex;

	if (arg[0] == '@' || strcmp(arg, "-") == 0) {
		ex = cli_read_file("--payload", arg[0] == '@' ? arg + 1 : arg,
		                   SKED_MAX_PAYLOAD, buf, len);
		if (ex != 0)
			return ex;
		*payload = *buf;
		return 0;
	}
	*payload = arg;
	*len = strlen(arg);
	return 0;
}

int
cmd_cron_add(struct cli *c, int argc, char **argv)
{
	enum {
		O_TZ = 1,
		O_PAYLOAD,
		O_QUEUE,
		O_PRIO,
		O_MAXATT,
		O_MISFIRE,
		O_OVERLAP,
		O_UNIQUE,
		O_USCOPE,
		O_UFOR,
		O_UREPLACE
	};
	static const struct option opts[] = {
	        {"tz", required_argument, NULL, O_TZ},
	        {"payload", required_argument, NULL, O_PAYLOAD},
	        {"queue", required_argument, NULL, O_QUEUE},
	        {"priority", required_argument, NULL, O_PRIO},
	        {"max-attempts", required_argument, NULL, O_MAXATT},
	        {"misfire", required_argument, NULL, O_MISFIRE},
	        {"overlap", required_argument, NULL, O_OVERLAP},
	        {"unique", required_argument, NULL, O_UNIQUE},
	        {"unique-scope", required_argument, NULL, O_USCOPE},
	        {"unique-for", required_argument, NULL, O_UFOR},
	        {"unique-replace", no_argument, NULL, O_UREPLACE},
	        CLI_COMMON_OPTIONS,
	        {NULL, 0, NULL, 0},
	};
	sked_schedule_opts so;
	sked_enqueue_opts uo = {0}; /* the unique options only */
	const char *payload_arg = NULL;
	char *buf = NULL, err[256] = "";
	long long n;
	int ch, ex, rc, created = 0, scoped = 0;

	memset(&so, 0, sizeof so);
	optind = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (ch) {
		case O_TZ:
			so.tz = optarg;
			break;
		case O_PAYLOAD:
			payload_arg = optarg;
			break;
		case O_QUEUE:
			so.queue = optarg;
			break;
		case O_PRIO:
			if ((ex = cli_parse_int("--priority", optarg, -1000000,
			                        1000000, &n)) != 0)
				return ex;
			so.priority = (int)n;
			break;
		case O_MAXATT:
			if ((ex = cli_parse_int("--max-attempts", optarg, 1,
			                        1000, &n)) != 0)
				return ex;
			so.max_attempts = (int)n;
			break;
		case O_MISFIRE:
			if ((so.misfire = sked_misfire_parse(optarg)) < 0) {
				cli_err("cron add: --misfire '%s' is not "
				        "fire-once, fire-all or skip",
				        optarg);
				return EX_DATAERR;
			}
			break;
		case O_OVERLAP:
			if ((so.overlap = sked_overlap_parse(optarg)) < 0) {
				cli_err("cron add: --overlap '%s' is not allow "
				        "or skip",
				        optarg);
				return EX_DATAERR;
			}
			break;
		case O_UNIQUE:
			uo.unique_key = optarg;
			break;
		case O_USCOPE:
			if ((ex = cli_unique_scope("cron add", optarg,
			                           &uo.unique_scope)) != 0)
				return ex;
			scoped = 1;
			break;
		case O_UFOR:
			if ((ex = cli_parse_duration("--unique-for", optarg,
			                             &uo.unique_for_ms)) != 0)
				return ex;
			if (uo.unique_for_ms <= 0)
				return cli_usage("cron add",
				                 "--unique-for: give a period "
				                 "above 0");
			break;
		case O_UREPLACE:
			uo.unique_replace = 1;
			break;
		case CLI_OPT_HELP:
			cli_help(stdout, "cron add");
			return EX_OK;
		case CLI_OPT_JSON:
			c->json = 1;
			break;
		default:
			return cli_opt_error("cron add", ch, argv);
		}
	}
	if (argc - optind != 3)
		return cli_usage("cron add", argc - optind < 3
		                                     ? "want NAME EXPR KIND"
		                                     : CLI_CRON_ONE_ARG);
	if ((ex = cli_unique_check("cron add", &uo, scoped)) != 0)
		return ex;
	/* the expression and zone first: a bad one needs no database */
	rc = sked_cron_check(argv[optind + 1], so.tz, err, sizeof err);
	if (rc != SKED_OK) {
		cli_err("cron add: %s", err[0] ? err : sked_strerror(rc));
		return cli_exit_code(rc);
	}
	if (payload_arg != NULL &&
	    (ex = read_payload(payload_arg, &buf, &so.payload,
	                       &so.payload_len)) != 0)
		return ex;
	if (so.payload != NULL && so.payload_len == 0)
		so.payload = NULL; /* 0 would mean strlen */
	if ((ex = cli_open(c)) != 0) {
		free(buf);
		return ex;
	}
	rc = sked_schedule_put_unique(c->h, argv[optind], argv[optind + 1],
	                              argv[optind + 2], &so, &uo, &created);
	free(buf);
	if (rc != SKED_OK)
		return cron_fail(c, rc, "cron add");
	if (c->json)
		return cli_json_print(json_pack("{s:s, s:b}", "name",
		                                argv[optind], "created",
		                                created));
	printf("%s schedule %s\n", created ? "added" : "updated", argv[optind]);
	return EX_OK;
}

int
cmd_cron_ls(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {CLI_COMMON_OPTIONS,
	                                     {NULL, 0, NULL, 0}};
	static const char *const headers[] = {"NAME",      "EXPR",  "TZ",
	                                      "KIND",      "QUEUE", "MISFIRE",
	                                      "OVERLAP",   "STATE", "NEXT FIRE",
	                                      "LAST FIRE", "UNIQUE"};
	sked_schedule *s = NULL;
	sked_schedule_unique *u = NULL;
	size_t n = 0, nu = 0, i;
	int ch, ex, rc;

	optind = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (ch == CLI_OPT_HELP) {
			cli_help(stdout, "cron ls");
			return EX_OK;
		}
		if (ch != CLI_OPT_JSON)
			return cli_opt_error("cron ls", ch, argv);
		c->json = 1;
	}
	if (optind < argc)
		return cli_usage("cron ls", "unexpected argument '%s'",
		                 argv[optind]);
	if ((ex = cli_open_existing(c)) != 0)
		return ex;
	if ((rc = sked_schedule_list(c->h, &s, &n)) != SKED_OK)
		return cron_fail(c, rc, "cron ls");
	if ((rc = sked_schedule_uniques(c->h, &u, &nu)) != SKED_OK) {
		sked_schedules_free(s, n);
		return cron_fail(c, rc, "cron ls");
	}
	if (c->json) {
		json_t *arr = json_array();
		for (i = 0; i < n; i++)
			json_array_append_new(
			        arr, cli_schedule_unique_json(
			                     cli_schedule_json(&s[i]), u, nu));
		sked_schedules_free(s, n);
		sked_schedule_uniques_free(u, nu);
		return cli_json_print(arr);
	}
	if (n == 0) {
		sked_schedule_uniques_free(u, nu);
		printf("no schedules\n");
		return EX_OK;
	}
	struct cli_table *t = cli_table_new(11, headers);
	for (i = 0; t != NULL && i < n; i++) {
		char next[32], last[32], uniq[SKED_MAX_NAME + 64];
		cli_schedule_unique_text(s[i].name, u, nu, uniq, sizeof uniq);
		const char *row[11] = {
		        s[i].name,
		        s[i].expr,
		        s[i].tz,
		        s[i].kind,
		        s[i].queue,
		        sked_misfire_name(s[i].misfire),
		        sked_overlap_name(s[i].overlap),
		        s[i].enabled ? "active" : "paused",
		        s[i].enabled
		                ? cli_time(s[i].next_fire_ms, next, sizeof next)
		                : "-",
		        cli_time(s[i].last_fire_ms, last, sizeof last),
		        uniq,
		};
		cli_table_add(t, row);
	}
	sked_schedules_free(s, n);
	sked_schedule_uniques_free(u, nu);
	if (t == NULL) {
		cli_err("cron ls: out of memory");
		return EX_OSERR;
	}
	cli_table_print(t, stdout);
	cli_table_free(t);
	return EX_OK;
}

/* cron rm / pause / resume NAME */
static int
by_name(struct cli *c, int argc, char **argv, const char *cmd,
        int (*fn)(sked *, const char *), const char *done)
{
	static const struct option opts[] = {CLI_COMMON_OPTIONS,
	                                     {NULL, 0, NULL, 0}};
	int ch, ex, rc;

	optind = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (ch == CLI_OPT_HELP) {
			cli_help(stdout, cmd);
			return EX_OK;
		}
		if (ch != CLI_OPT_JSON)
			return cli_opt_error(cmd, ch, argv);
		c->json = 1;
	}
	if (argc - optind != 1)
		return cli_usage(cmd, argc - optind < 1 ? "missing the NAME"
		                                        : "too many arguments");
	if ((ex = cli_open_existing(c)) != 0)
		return ex;
	if ((rc = fn(c->h, argv[optind])) != SKED_OK)
		return cron_fail(c, rc, cmd);
	if (c->json)
		return cli_json_print(json_pack("{s:s, s:s}", "name",
		                                argv[optind], "done", done));
	printf("%s schedule %s\n", done, argv[optind]);
	return EX_OK;
}

int
cmd_cron_rm(struct cli *c, int argc, char **argv)
{
	return by_name(c, argc, argv, "cron rm", sked_schedule_remove,
	               "removed");
}

int
cmd_cron_pause(struct cli *c, int argc, char **argv)
{
	return by_name(c, argc, argv, "cron pause", sked_schedule_pause,
	               "paused");
}

int
cmd_cron_resume(struct cli *c, int argc, char **argv)
{
	return by_name(c, argc, argv, "cron resume", sked_schedule_resume,
	               "resumed");
}

/* cron run NAME: one task of the schedule, now */
int
cmd_cron_run(struct cli *c, int argc, char **argv)
{
	int64_t id = 0;
	int ex, rc;

	if ((ex = cli_simple_args(c, "cron run", argc, argv, 1, "the NAME")) >=
	    0)
		return ex;
	if ((ex = cli_open_existing(c)) != 0)
		return ex;
	if ((rc = sked_schedule_run(c->h, argv[optind], &id)) != SKED_OK)
		return cron_fail(c, rc, "cron run");
	if (c->json)
		return cli_json_print(json_pack("{s:s, s:I}", "name",
		                                argv[optind], "id",
		                                (json_int_t)id));
	printf("%" PRId64 "\n", id);
	return EX_OK;
}
