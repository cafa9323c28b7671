/*
 * cmd_steer.c — `sked cancel` and `sked retry`: steer one task by ID, or
 * every task a filter matches (--status, --kind, --queue, --older-than):
 * the count first, the change only with --yes.
 *
 * Layer: the command-line program, a client of sked.h only. Which states
 * allow which move is the library's (sked_cancel, sked_retry and their
 * _where forms, which work in short batches); its one-line refusal is
 * passed on.
 */
#include "cmd/cmd.h"
#include "view/view.h"

#include <inttypes.h>
#include <string.h>
#include <sysexits.h>

static int
steer_one(struct cli *c, const struct cli_verb *v, const char *arg,
          int with_deps)
{
	int64_t id;
	int ex, rc;
	json_t *o, *with;
	const char *st;

	if ((ex = cli_parse_id(v->cmd, arg, &id)) != 0)
		return ex;
	if ((ex = cli_open_existing(c)) != 0)
		return ex;
	if ((rc = cli_steer_one(c->h, v, id, with_deps, &o)) != SKED_OK)
		return cli_fail(c->h, rc, "%s task %" PRId64, v->cmd, id);
	if (c->json)
		return cli_json_print(o);
	st = json_string_value(json_object_get(o, "status"));
	with = json_object_get(o,
	                       with_deps ? "retried_with" : "cancelled_with");
	if (st && strcmp(st, "blocked") == 0)
		printf("task %" PRId64 " is blocked again: it runs once its "
		       "parents have succeeded\n",
		       id);
	else
		printf("task %" PRId64 " %s\n", id, v->done);
	if (json_array_size(with) > 0 && v == &cli_cancel_verb)
		printf("%zu task(s) cancelled with it (its children that "
		       "asked for cancel, and theirs; --json lists them)\n",
		       json_array_size(with));
	else if (json_array_size(with) > 0)
		printf("%zu task(s) its end had cancelled are back, blocked "
		       "until their parents succeed\n",
		       json_array_size(with));
	else if (with_deps)
		printf("no task had been cancelled with it\n");
	json_decref(o);
	return EX_OK;
}

static int
steer_where(struct cli *c, const struct cli_verb *v, sked_list_filter *f,
            const int *st, int64_t older_ms, int yes)
{
	int64_t matched, changed, now;
	char words[64];
	int ex, rc, at;

	if ((ex = cli_open_existing(c)) != 0)
		return ex;
	if (older_ms > 0) {
		if ((rc = sked_now(c->h, &now)) != SKED_OK)
			return cli_fail(c->h, rc, "read the database clock");
		f->created_before_ms = now - older_ms;
	}
	rc = cli_steer_where(c->h, v, f, st, yes, &matched, &changed, &at);
	if (rc != SKED_OK && at < 0)
		return cli_fail(c->h, rc, "count tasks");
	if (rc != SKED_OK)
		return cli_fail(c->h, rc, "%s %s task(s) (%" PRId64 " matched)",
		                v->cmd, sked_status_name(at), matched);
	cli_status_words(st, words, sizeof words);
	if (c->json)
		return cli_json_print(
		        json_pack("{s:s, s:I, s:I, s:b}", "action", v->cmd,
		                  "matched", (json_int_t)matched, "changed",
		                  (json_int_t)changed, "applied", yes));
	if (!yes)
		printf("%" PRId64 " %s task(s) match; add --yes to %s them\n",
		       matched, words, v->cmd);
	else
		printf("%" PRId64 " of %" PRId64 " matching %s task(s) %s\n",
		       changed, matched, words, v->past);
	return EX_OK;
}

static int
steer(struct cli *c, const struct cli_verb *v, int argc, char **argv)
{
	enum { O_STATUS = 1, O_KIND, O_QUEUE, O_OLDER, O_YES, O_DEPS };
	static const struct option opts[] = {
	        {"status", required_argument, NULL, O_STATUS},
	        {"kind", required_argument, NULL, O_KIND},
	        {"queue", required_argument, NULL, O_QUEUE},
	        {"older-than", required_argument, NULL, O_OLDER},
	        {"yes", no_argument, NULL, O_YES},
	        {"with-dependents", no_argument, NULL, O_DEPS},
	        CLI_COMMON_OPTIONS,
	        {NULL, 0, NULL, 0},
	};
	sked_list_filter f;
	int st[4] = {-1, -1, -1, -1};
	int64_t older_ms = 0;
	int ch, ex, yes = 0, filters = 0, deps = 0;
	char words[64];

	memset(&f, 0, sizeof f);
	f.status = -1;
	optind = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (ch) {
		case O_STATUS:
			st[0] = sked_status_parse(optarg);
			if (!cli_verb_allows(v, st[0])) {
				cli_status_words(v->allowed, words,
				                 sizeof words);
				return cli_usage(
				        v->cmd,
				        "--status: '%s' is not a status "
				        "%s can act on (%s)",
				        optarg, v->cmd, words);
			}
			filters++;
			break;
		case O_KIND:
			f.kind = optarg;
			filters++;
			break;
		case O_QUEUE:
			f.queue = optarg;
			filters++;
			break;
		case O_OLDER:
			if ((ex = cli_parse_duration("--older-than", optarg,
			                             &older_ms)) != 0)
				return ex;
			if (older_ms <= 0)
				return cli_usage(v->cmd, "--older-than: give a "
				                         "duration above zero");
			filters++;
			break;
		case O_YES:
			yes = 1;
			break;
		case O_DEPS:
			if (v != &cli_retry_verb)
				return cli_opt_error(v->cmd, '?', argv);
			deps = 1;
			break;
		case CLI_OPT_HELP:
			cli_help(stdout, v->cmd);
			return EX_OK;
		case CLI_OPT_JSON:
			c->json = 1;
			break;
		default:
			return cli_opt_error(v->cmd, ch, argv);
		}
	}
	if (argc - optind > 1)
		return cli_usage(v->cmd, "unexpected argument '%s'",
		                 argv[optind + 1]);
	if (argc - optind == 1) {
		if (filters || yes)
			return cli_usage(v->cmd, "give a task ID or filters, "
			                         "not both");
		return steer_one(c, v, argv[optind], deps);
	}
	if (deps)
		return cli_usage(v->cmd, "--with-dependents: give one task ID");
	if (!filters)
		return cli_usage(v->cmd, "missing the task ID, or a filter "
		                         "(--status, --kind, --queue, "
		                         "--older-than)");
	return steer_where(c, v, &f, st[0] >= 0 ? st : v->dflt, older_ms, yes);
}

int
cmd_cancel(struct cli *c, int argc, char **argv)
{
	return steer(c, &cli_cancel_verb, argc, argv);
}

int
cmd_retry(struct cli *c, int argc, char **argv)
{
	return steer(c, &cli_retry_verb, argc, argv);
}
