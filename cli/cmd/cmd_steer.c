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
#include "base/cli.h"

#include <inttypes.h>
#include <string.h>
#include <sysexits.h>

const struct cli_verb cli_cancel_verb = {
        "cancel",
        "cancelled",
        "cancelled",
        sked_cancel,
        sked_cancel_ids,
        sked_cancel_where,
        {SKED_PENDING, SKED_RETRY, SKED_RUNNING, -1},
        {SKED_PENDING, SKED_RETRY, -1, -1},
};

const struct cli_verb cli_retry_verb = {
        "retry",
        "retried",
        "will run again",
        sked_retry,
        sked_retry_ids,
        sked_retry_where,
        {SKED_DEAD, SKED_CANCELLED, SKED_RETRY, -1},
        {SKED_DEAD, -1, -1, -1},
};

int
cli_verb_allows(const struct cli_verb *v, int status)
{
	for (int i = 0; i < 4 && v->allowed[i] >= 0; i++)
		if (v->allowed[i] == status)
			return 1;
	return 0;
}

static json_t *
id_array(const int64_t *ids, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, json_integer((json_int_t)ids[i]));
	return a;
}

int
cli_steer_one(sked *h, const struct cli_verb *v, int64_t id, int with_deps,
              json_t **out)
{
	int64_t *ids = NULL;
	size_t n = 0;
	sked_task *t = NULL;
	int rc;

	*out = NULL;
	if (v == &cli_cancel_verb)
		rc = sked_cancel_graph(h, id, &ids, &n);
	else if (with_deps)
		rc = sked_retry_graph(h, id, &ids, &n);
	else
		rc = v->one(h, id);
	if (rc != SKED_OK)
		return rc;
	*out = json_pack("{s:I, s:s}", "id", (json_int_t)id, "result", v->done);
	if (v == &cli_cancel_verb) {
		json_object_set_new(*out, "cancelled_with", id_array(ids, n));
	} else {
		/* retried: pending, or blocked again while a parent has not
		 * succeeded (the retry never runs it early) */
		if (sked_task_get(h, id, &t) == SKED_OK)
			json_object_set_new(
			        *out, "status",
			        json_string(sked_status_name(t->status)));
		sked_tasks_free(t, t ? 1 : 0);
		if (with_deps)
			json_object_set_new(*out, "retried_with",
			                    id_array(n > 0 ? ids + 1 : ids,
			                             n > 0 ? n - 1 : 0));
	}
	free(ids);
	return SKED_OK;
}

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

void
cli_status_words(const int *st, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = '\0';
	for (int i = 0; i < 4 && st[i] >= 0 && off < len; i++) {
		int last = i == 3 || st[i + 1] < 0;
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
		                        i == 0 ? ""
		                        : last ? " or "
		                               : ", ",
		                        sked_status_name(st[i]));
	}
}

int
cli_steer_where(sked *h, const struct cli_verb *v, sked_list_filter *f,
                const int *st, int apply, int64_t *matched, int64_t *changed,
                int *at)
{
	int64_t n;
	int rc;

	*matched = *changed = 0;
	*at = -1;
	for (int i = 0; i < 4 && st[i] >= 0; i++) {
		f->status = st[i];
		if ((rc = sked_task_count(h, f, &n)) != SKED_OK)
			return rc;
		*matched += n;
	}
	for (int i = 0; apply && *matched > 0 && i < 4 && st[i] >= 0; i++) {
		f->status = st[i];
		n = 0;
		rc = v->where(h, f, &n);
		*changed += n;
		if (rc != SKED_OK) {
			*at = st[i];
			return rc;
		}
	}
	return SKED_OK;
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
