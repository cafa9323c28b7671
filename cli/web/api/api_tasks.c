/*
 * api_tasks.c — the JSON API's task handlers: enqueue one, many or a
 * graph (POST /api/tasks, /api/tasks/bulk, /api/graphs), list and show (GET /api/tasks,
 * /api/tasks/ID), cancel and retry one, some ids or a filter
 * (POST /api/tasks/ID/cancel, /api/tasks/cancel …) — each as the CLI's
 * command does it, with the same JSON objects as its --json.
 *
 * Layer: the command-line program, a client of <sked.h> only; called by
 * the router (api_serve.c) with the database's mutex held, calls api_json.c;
 * api_int.h draws the files.
 */
#include "web/api/api_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

static const char *const enqueue_fields[] = {"kind",
                                             "payload",
                                             "payloads",
                                             "queue",
                                             "priority",
                                             "run_at",
                                             "in",
                                             "max_attempts",
                                             "unique_key",
                                             "concurrency_key",
                                             "traceparent",
                                             "after",
                                             "on_parent_failure",
                                             "unique_scope",
                                             "unique_for",
                                             "unique_replace",
                                             "timeout",
                                             NULL};

/* "after": parents' ids (docs/workflows.md), at most IDS_MAX of them,
 * into ids; "on_parent_failure": cancel or ignore */
static int
deps_fields(json_t *body, sked_enqueue_opts *eo, int64_t *ids, char *err,
            size_t len)
{
	json_t *arr = json_object_get(body, "after"), *v;
	const char *pf;
	size_t i;

	if (arr && !json_is_null(arr)) {
		if (!json_is_array(arr) || json_array_size(arr) > IDS_MAX) {
			snprintf(err, len,
			         "'after' must be an array of at most %d task "
			         "ids",
			         IDS_MAX);
			return -1;
		}
		json_array_foreach(arr, i, v)
		{
			if (!json_is_integer(v) || json_integer_value(v) < 1) {
				snprintf(err, len,
				         "'after' holds %s, not a task id (an "
				         "integer from 1, written without a "
				         "fraction or exponent)",
				         json_is_integer(v) ? "a number below 1"
				         : json_is_real(v)
				                 ? "a fractional number"
				                 : "something else");
				return -1;
			}
			ids[i] = json_integer_value(v);
		}
		eo->after = ids;
		eo->n_after = json_array_size(arr);
	}
	if (api_str_field(body, "on_parent_failure", &pf, err, len))
		return -1;
	if (pf && cli_parent_failure_value(pf, &eo->on_parent_failure) != 0) {
		snprintf(err, len,
		         "'on_parent_failure': give cancel or ignore, not "
		         "'%.32s'",
		         pf);
		return -1;
	}
	return 0;
}

/* A unique key's scope (docs/unique.md): "unique_scope" live or
 * pending, "unique_for" a duration (the period scope), "unique_replace"
 * true to debounce (pending unless a scope is given), as the command
 * line's --unique-scope, --unique-for and --unique-replace. */
static int
unique_fields(json_t *body, sked_enqueue_opts *eo, char *err, size_t len)
{
	const char *scope, *period;
	json_t *rep = json_object_get(body, "unique_replace");
	if (api_str_field(body, "unique_scope", &scope, err, len) ||
	    api_str_field(body, "unique_for", &period, err, len))
		return -1;
	if (rep && !json_is_boolean(rep) && !json_is_null(rep)) {
		snprintf(err, len, "'unique_replace' must be true or false");
		return -1;
	}
	if (scope && strcmp(scope, "pending") == 0)
		eo->unique_scope = SKED_UNIQUE_PENDING;
	else if (scope && strcmp(scope, "live") != 0) {
		snprintf(err, len,
		         "'unique_scope': give live or pending, not '%.32s' "
		         "(a period is 'unique_for')",
		         scope);
		return -1;
	}
	if (period &&
	    api_duration("unique_for", period, &eo->unique_for_ms, err, len))
		return -1;
	if (period && eo->unique_for_ms <= 0) {
		snprintf(err, len, "'unique_for' must be above 0");
		return -1;
	}
	if (scope && period) {
		snprintf(err, len, "'unique_scope' and 'unique_for' conflict");
		return -1;
	}
	eo->unique_replace = json_is_true(rep);
	if (eo->unique_replace && !scope && !period)
		eo->unique_scope = SKED_UNIQUE_PENDING;
	return 0;
}

/* The options every enqueue shares, from body, into eo; the parents'
 * ids go into after (room for IDS_MAX). */
static int
enqueue_opts(json_t *body, sked_enqueue_opts *eo, int64_t *after, char *err,
             size_t len)
{
	const char *at, *in, *to;
	long long v;
	int set;

	memset(eo, 0, sizeof *eo);
	if (deps_fields(body, eo, after, err, len))
		return -1;
	if (api_str_field(body, "queue", &eo->queue, err, len) ||
	    api_str_field(body, "unique_key", &eo->unique_key, err, len) ||
	    api_str_field(body, "concurrency_key", &eo->concurrency_key, err,
	                  len) ||
	    api_str_field(body, "traceparent", &eo->traceparent, err, len) ||
	    api_str_field(body, "run_at", &at, err, len) ||
	    api_str_field(body, "in", &in, err, len))
		return -1;
	if (api_int_field(body, "priority", INT_MIN, INT_MAX, &v, &set, err,
	                  len))
		return -1;
	if (set)
		eo->priority = (int)v;
	if (api_int_field(body, "max_attempts", 1, INT_MAX, &v, &set, err, len))
		return -1;
	if (set)
		eo->max_attempts = (int)v;
	if (at && in) {
		snprintf(err, len, "'run_at' and 'in' conflict: give one");
		return -1;
	}
	/* with its zone, as on the command line: Z or an offset */
	if (at && cli_zoned_time_value(at, &eo->run_at_ms) != 0) {
		snprintf(err, len,
		         "'run_at': '%.64s' is not an ISO-8601 time "
		         "with its zone (like 2026-03-08T07:30:00Z)",
		         at);
		return -1;
	}
	if (in && api_duration("in", in, &eo->delay_ms, err, len))
		return -1;
	if (api_str_field(body, "timeout", &to, err, len) ||
	    (to && api_duration("timeout", to, &eo->timeout_ms, err, len)))
		return -1;
	if (to && eo->timeout_ms <= 0) {
		snprintf(err, len, "'timeout' must be above 0");
		return -1;
	}
	return unique_fields(body, eo, err, len);
}

/* A payload: a string as it is, null as none, any other JSON value as
 * its compact text. *text is to be freed when *owned. */
static int
payload_value(json_t *v, const char **text, size_t *len, char **owned)
{
	*owned = NULL;
	*text = NULL;
	*len = 0;
	if (!v || json_is_null(v))
		return 0;
	if (json_is_string(v)) {
		*text = json_string_value(v);
		*len = json_string_length(v);
		return 0;
	}
	*owned = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	if (!*owned)
		return -1;
	*text = *owned;
	*len = strlen(*owned);
	return 0;
}

void
api_post_enqueue(struct cli_api *a, json_t *body, struct cli_http_reply *rp)
{
	sked_enqueue_opts eo;
	int64_t after[IDS_MAX];
	const char *kind, *payload;
	char err[256], *owned;
	size_t plen;
	int64_t id = 0;
	int existed = 0, rc;

	if (api_known_fields(body, enqueue_fields, err, sizeof err) ||
	    api_str_field(body, "kind", &kind, err, sizeof err) ||
	    enqueue_opts(body, &eo, after, err, sizeof err))
		return api_fail(rp, 400, EX_DATAERR, "%s", err);
	if (!kind)
		return api_fail(rp, 400, EX_DATAERR, "'kind' is missing");
	if (json_object_get(body, "payloads"))
		return api_fail(rp, 400, EX_DATAERR,
		                "'payloads' is for POST /api/tasks/bulk");
	if (payload_value(json_object_get(body, "payload"), &payload, &plen,
	                  &owned))
		return api_fail(rp, 500, EX_OSERR, "out of memory");
	rc = sked_enqueue(a->h, kind, payload, plen, &eo, &id, &existed);
	free(owned);
	if (rc != SKED_OK)
		return api_fail_rc(a, rp, rc, "enqueue");
	api_reply(rp, existed ? 200 : 201,
	          json_pack("{s:I, s:b, s:b}", "id", (json_int_t)id, "existed",
	                    existed != 0, "replaced",
	                    existed == SKED_ENQ_REPLACED));
}

void
api_post_bulk(struct cli_api *a, json_t *body, struct cli_http_reply *rp)
{
	sked_enqueue_opts eo;
	int64_t after[IDS_MAX];
	json_t *arr = json_object_get(body, "payloads"), *ids_json;
	const char *kind, **texts = NULL;
	char err[256], **owned = NULL;
	size_t n, i, *lens = NULL;
	int64_t *ids = NULL;
	int rc = SKED_ENOMEM;

	if (api_known_fields(body, enqueue_fields, err, sizeof err) ||
	    api_str_field(body, "kind", &kind, err, sizeof err) ||
	    enqueue_opts(body, &eo, after, err, sizeof err))
		return api_fail(rp, 400, EX_DATAERR, "%s", err);
	if (!kind)
		return api_fail(rp, 400, EX_DATAERR, "'kind' is missing");
	if (eo.unique_key)
		return api_fail(rp, 400, EX_DATAERR,
		                "'unique_key' is for one task at a time "
		                "(POST /api/tasks)");
	if (json_object_get(body, "payload"))
		return api_fail(rp, 400, EX_DATAERR,
		                "a bulk enqueue takes 'payloads', an array");
	n = json_array_size(arr);
	if (!json_is_array(arr) || n < 1 || n > BULK_MAX)
		return api_fail(
		        rp, 400, EX_DATAERR,
		        "'payloads' must be an array of 1 to %d payloads",
		        BULK_MAX);
	texts = calloc(n, sizeof *texts);
	lens = calloc(n, sizeof *lens);
	owned = calloc(n, sizeof *owned);
	ids = calloc(n, sizeof *ids);
	if (!texts || !lens || !owned || !ids)
		goto out;
	for (i = 0; i < n; i++)
		if (payload_value(json_array_get(arr, i), &texts[i], &lens[i],
		                  &owned[i]))
			goto out;
	for (i = 0; i < n; i++)
		if (!texts[i])
			texts[i] = "";
	rc = sked_enqueue_many(a->h, kind, n, texts, lens, &eo, ids);
	if (rc == SKED_OK) {
		ids_json = json_array();
		for (i = 0; i < n; i++)
			json_array_append_new(ids_json, json_integer(ids[i]));
		api_reply(rp, 201, json_pack("{s:o}", "ids", ids_json));
	}
out:
	if (rc == SKED_ENOMEM)
		api_fail(rp, 500, EX_OSERR, "out of memory");
	else if (rc != SKED_OK)
		api_fail_rc(a, rp, rc, "enqueue");
	for (i = 0; owned && i < n; i++)
		free(owned[i]);
	free(owned);
	free(texts);
	free(lens);
	free(ids);
}

/* POST /api/graphs: the object `enqueue --graph FILE` reads
 * (docs/workflows.md), all or nothing; 201 {"ids": {name: id}}. */
void
api_post_graph(struct cli_api *a, json_t *body, const char *traceparent,
               struct cli_http_reply *rp)
{
	struct cli_graph g;
	char err[512];
	int64_t *ids;
	int rc;

	if ((rc = cli_graph_parse(body, &g, err, sizeof err)) != 0)
		return api_fail(rp, rc == -2 ? 500 : 400,
		                rc == -2 ? EX_OSERR : EX_DATAERR, "%s", err);
	for (size_t i = 0; i < g.n; i++)
		if (!g.opts[i].traceparent)
			g.opts[i].traceparent = traceparent;
	if (!(ids = calloc(g.n, sizeof *ids))) {
		cli_graph_free(&g);
		return api_fail(rp, 500, EX_OSERR, "out of memory");
	}
	rc = sked_enqueue_graph(a->h, g.tasks, g.n, ids);
	if (rc == SKED_OK)
		api_reply(
		        rp, 201,
		        json_pack("{s:o}", "ids", cli_graph_ids_json(&g, ids)));
	else
		api_fail_rc(a, rp, rc, "enqueue the graph");
	free(ids);
	cli_graph_free(&g);
}

/* A task in a list: its payload cut to LIST_PREVIEW bytes (at a UTF-8
 * character's start), with "payload_bytes" and "payload_cut" saying so;
 * GET /api/tasks/ID has it whole. A page is then at most LIST_MAX
 * previews, not LIST_MAX payloads of 1 MiB (issue 39). */
#define LIST_PREVIEW 1024

static json_t *
list_entry(sked *h, const sked_task *t)
{
	json_t *o = cli_task_json(t);
	size_t cut = LIST_PREVIEW;

	if (o)
		cli_task_live_json(h, t, o);
	if (!o || !t->payload || t->payload_len <= LIST_PREVIEW)
		return o;
	while (cut > 0 && ((unsigned char)t->payload[cut] & 0xc0) == 0x80)
		cut--;
	json_object_set_new(o, "payload", cli_json_str(t->payload, cut));
	json_object_set_new(o, "payload_bytes",
	                    json_integer((json_int_t)t->payload_len));
	json_object_set_new(o, "payload_cut", json_true());
	return o;
}

void
api_get_tasks(struct cli_api *a, const struct cli_http_request *rq,
              struct cli_http_reply *rp)
{
	sked_list_filter f;
	sked_task *t = NULL;
	size_t n = 0, shown, i;
	const char *s, *key = cli_http_arg(rq, "unique_key");
	long long limit = LIST_DFLT, before = 0;
	int64_t now = 0, ms;
	char err[256];
	json_t *arr;
	int rc;

	memset(&f, 0, sizeof f);
	f.status = -1;
	if (api_name_arg(rq, "queue", &f.queue, err, sizeof err) ||
	    api_name_arg(rq, "kind", &f.kind, err, sizeof err) ||
	    api_name_arg(rq, "node", &f.node_id, err, sizeof err) ||
	    api_count_arg(rq, "limit", 1, LIST_MAX, &limit, err, sizeof err) ||
	    api_count_arg(rq, "before", 1, LLONG_MAX, &before, err, sizeof err))
		return api_fail(rp, 400, EX_DATAERR, "%s", err);
	if ((s = cli_http_arg(rq, "status")) && s[0] &&
	    api_status_value("status", s, &f.status, err, sizeof err))
		return api_fail(rp, 400, EX_DATAERR, "%s", err);
	if (cli_http_arg(rq, "since") || cli_http_arg(rq, "older_than")) {
		if ((rc = sked_now(a->h, &now)) != SKED_OK)
			return api_fail_rc(a, rp, rc,
			                   "read the database clock");
	}
	if ((s = cli_http_arg(rq, "since"))) {
		if (api_duration("since", s, &ms, err, sizeof err))
			return api_fail(rp, 400, EX_DATAERR, "%s", err);
		f.created_after_ms = now - ms;
	}
	if ((s = cli_http_arg(rq, "older_than"))) {
		if (api_duration("older_than", s, &ms, err, sizeof err))
			return api_fail(rp, 400, EX_DATAERR, "%s", err);
		f.created_before_ms = now - ms;
	}
	arr = json_array();
	if (key && key[0]) {
		/* the task of a unique key: a page of one, or of none; its
		 * status, queue and kind must match those asked for too */
		int64_t id;
		rc = sked_task_find_unique(a->h, key, &id);
		if (rc == SKED_OK)
			rc = sked_task_get(a->h, id, &t);
		if (rc == SKED_OK && (f.status < 0 || t->status == f.status) &&
		    (!f.queue || strcmp(t->queue, f.queue) == 0) &&
		    (!f.kind || strcmp(t->kind, f.kind) == 0)) {
			json_t *o = cli_task_json(t);
			if (o)
				cli_task_live_json(a->h, t, o);
			json_array_append_new(arr, o);
		}
		if (t)
			sked_tasks_free(t, 1);
		if (rc != SKED_OK && rc != SKED_ENOTFOUND) {
			json_decref(arr);
			return api_fail_rc(a, rp, rc, "find the unique key");
		}
		return api_reply(
		        rp, 200,
		        json_pack("{s:o, s:n}", "tasks", arr, "next_before"));
	}
	f.before_id = before;
	f.limit = (int)limit + 1; /* one more: is there a next page? */
	if ((rc = sked_task_list(a->h, &f, &t, &n)) != SKED_OK) {
		json_decref(arr);
		return api_fail_rc(a, rp, rc, "list tasks");
	}
	shown = n > (size_t)limit ? (size_t)limit : n;
	for (i = 0; i < shown; i++)
		json_array_append_new(arr, list_entry(a->h, &t[i]));
	api_reply(rp, 200,
	          json_pack("{s:o, s:o}", "tasks", arr, "next_before",
	                    n > shown ? json_integer(t[shown - 1].id)
	                              : json_null()));
	sked_tasks_free(t, n);
}

void
api_get_task(struct cli_api *a, int64_t id, struct cli_http_reply *rp)
{
	json_t *o;
	const char *what;
	int rc;

	if ((rc = cli_show_json(a->h, id, &o, &what)) != SKED_OK)
		return api_fail_rc(a, rp, rc, "show");
	api_reply(rp, 200, o);
}

void
api_post_one(struct cli_api *a, const struct cli_verb *v, int64_t id,
             json_t *body, struct cli_http_reply *rp)
{
	static const char *const none[] = {NULL};
	static const char *const retry[] = {"with_dependents", NULL};
	json_t *deps = json_object_get(body, "with_dependents"), *o;
	char err[128];
	int rc;

	if (api_known_fields(body, v == &cli_retry_verb ? retry : none, err,
	                     sizeof err))
		return api_fail(rp, 400, EX_DATAERR, "%s", err);
	if (deps && !json_is_boolean(deps))
		return api_fail(rp, 400, EX_DATAERR,
		                "'with_dependents' must be true or false");
	if ((rc = cli_steer_one(a->h, v, id, json_is_true(deps), &o)) !=
	    SKED_OK)
		return api_fail_rc(a, rp, rc, v->cmd);
	api_reply(rp, 200, o);
}

static int
cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* How many distinct tasks of ids[0..n) exist (the ids are sorted here):
 * an answer's `matched` counts tasks, as a filter's does, not ids given.
 * One lookup an id, after the change, at most IDS_MAX. */
static int
ids_found(sked *h, int64_t *ids, size_t n, int64_t *found)
{
	*found = 0;
	qsort(ids, n, sizeof *ids, cmp_id);
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && ids[i] == ids[i - 1])
			continue;
		sked_task *t = NULL;
		int rc = sked_task_get(h, ids[i], &t);
		if (rc == SKED_OK)
			(*found)++;
		else if (rc != SKED_ENOTFOUND)
			return rc;
		if (t)
			sked_tasks_free(t, 1);
	}
	return SKED_OK;
}

void
api_post_many(struct cli_api *a, const struct cli_verb *v, json_t *body,
              struct cli_http_reply *rp)
{
	static const char *const fields[] = {"ids",   "status",     "kind",
	                                     "queue", "older_than", "confirm",
	                                     NULL};
	json_t *ids = json_object_get(body, "ids");
	json_t *confirm = json_object_get(body, "confirm");
	const char *status, *older;
	sked_list_filter f;
	int64_t matched = 0, changed = 0, now;
	char err[256];
	int st[4], rc, at;

	if (api_known_fields(body, fields, err, sizeof err))
		return api_fail(rp, 400, EX_DATAERR, "%s", err);
	memset(&f, 0, sizeof f);
	if (api_str_field(body, "status", &status, err, sizeof err) ||
	    api_str_field(body, "kind", &f.kind, err, sizeof err) ||
	    api_str_field(body, "queue", &f.queue, err, sizeof err) ||
	    api_str_field(body, "older_than", &older, err, sizeof err))
		return api_fail(rp, 400, EX_DATAERR, "%s", err);
	if (json_is_null(confirm)) /* as a filter left null: absent */
		confirm = NULL;
	if (confirm && !json_is_boolean(confirm))
		return api_fail(rp, 400, EX_DATAERR,
		                "'confirm' must be true or "
		                "false");
	if (ids) {
		int64_t list[IDS_MAX];
		size_t n = json_array_size(ids), i;
		if (status || f.kind || f.queue || older || confirm)
			return api_fail(rp, 400, EX_DATAERR,
			                "give 'ids' or a filter, not both");
		if (!json_is_array(ids) || n < 1 || n > IDS_MAX)
			return api_fail(
			        rp, 400, EX_DATAERR,
			        "'ids' must be an array of 1 to %d task "
			        "ids",
			        IDS_MAX);
		for (i = 0; i < n; i++) {
			json_t *e = json_array_get(ids, i);
			if (!json_is_integer(e) || json_integer_value(e) < 1)
				return api_fail(rp, 400, EX_DATAERR,
				                "'ids' must hold task ids "
				                "(integers from 1, written "
				                "without a fraction or "
				                "exponent)");
			list[i] = json_integer_value(e);
		}
		if ((rc = v->ids(a->h, list, n, &changed)) != SKED_OK)
			return api_fail_rc(a, rp, rc, v->cmd);
		if ((rc = ids_found(a->h, list, n, &matched)) != SKED_OK)
			return api_fail_rc(a, rp, rc, "count tasks");
		return api_reply(rp, 200,
		                 json_pack("{s:s, s:I, s:I, s:b}", "action",
		                           v->cmd, "matched",
		                           (json_int_t)matched, "changed",
		                           (json_int_t)changed, "applied", 1));
	}
	/* a change of everything is refused, as the CLI's cancel --yes
	 * without a filter is (a filter left null counts as absent) */
	if (json_is_true(confirm) && !status && !f.kind && !f.queue && !older)
		return api_fail(rp, 400, EX_USAGE,
		                "%s by filter needs one of 'status', 'kind', "
		                "'queue' or 'older_than' (or 'ids')",
		                v->cmd);
	/* by filter, as the CLI: the statuses it may touch */
	memcpy(st, v->dflt, sizeof st);
	if (status) {
		int s;
		if (api_status_value("status", status, &s, err, sizeof err))
			return api_fail(rp, 400, EX_DATAERR, "%s", err);
		if (!cli_verb_allows(v, s)) {
			cli_status_words(v->allowed, err, sizeof err);
			return api_fail(
			        rp, 400, EX_DATAERR,
			        "'status': %s takes tasks that are %s, not %s",
			        v->cmd, err, status);
		}
		st[0] = s;
		st[1] = -1;
	}
	if ((f.kind && !sked_name_valid(f.kind)) ||
	    (f.queue && !sked_name_valid(f.queue)))
		return api_fail(rp, 400, EX_DATAERR, "'%s' is not a name",
		                f.kind && !sked_name_valid(f.kind) ? "kind"
		                                                   : "queue");
	if (older) {
		int64_t ms;
		if (api_duration("older_than", older, &ms, err, sizeof err))
			return api_fail(rp, 400, EX_DATAERR, "%s", err);
		if (ms <= 0)
			return api_fail(
			        rp, 400, EX_DATAERR,
			        "'older_than': give a duration above zero");
		if ((rc = sked_now(a->h, &now)) != SKED_OK)
			return api_fail_rc(a, rp, rc,
			                   "read the database clock");
		f.created_before_ms = now - ms;
	}
	rc = cli_steer_where(a->h, v, &f, st, json_is_true(confirm), &matched,
	                     &changed, &at);
	if (rc != SKED_OK)
		return api_fail_rc(a, rp, rc, at < 0 ? "count tasks" : v->cmd);
	api_reply(rp, 200,
	          json_pack("{s:s, s:I, s:I, s:b}", "action", v->cmd, "matched",
	                    (json_int_t)matched, "changed", (json_int_t)changed,
	                    "applied", json_is_true(confirm)));
}
