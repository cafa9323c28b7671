/*
 * api.c — the JSON API of `sked dashboard --api-token` (docs/api.md;
 * its OpenAPI 3 description is docs/openapi.yaml).
 *
 * Size: one file because every route shares the token check, the one
 * error shape and the body parser below; the routes would go to api_tasks.c
 * and api_queues.c (issue 27, "Files with one job").
 *
 * Layer: the command-line program, a client of <sked.h> only. The
 * dashboard's router hands it every request under /api/ (dashboard.c's
 * on_http); it answers JSON only, the same objects as the CLI's --json
 * (cli_task_json …), and every refusal in one shape:
 *   {"error": {"code": SYSEXITS, "message": "one line"}}
 * with the HTTP status that goes with it.
 *
 * Security: a request is authorised only by "Authorization: Bearer
 * TOKEN" with the --api-token token, compared in constant time; the
 * dashboard's --auth credentials and any cookie do not count, so a page
 * on another site, which can make a browser send cookies but not an
 * Authorization header of its choosing, can change nothing (no CSRF
 * hole). A token in the query string is refused, never read. The Host
 * check is the dashboard's; --read-only refuses every POST with 403; a
 * change needs a JSON body (Content-Type: application/json); bodies
 * over 1 MiB are refused by http.c with 413.
 */
#include "api.h"

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sysexits.h>

#define TOKEN_MIN 32    /* characters */
#define LIST_MAX  1000  /* tasks in one page */
#define LIST_DFLT 100   /* tasks in a page when no limit is given */
#define BULK_MAX  10000 /* tasks in one bulk enqueue */
#define IDS_MAX   1000  /* ids in one cancel or retry */

struct cli_api {
	char *token;
	size_t token_len;
	int read_only;
	sked *h;
	pthread_mutex_t *mu;
};

/* ---- the token ---- */

static int
weak_token(const char *t, size_t n)
{
	int seen[256] = {0}, distinct = 0;

	if (n < TOKEN_MIN)
		return 1;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)t[i];
		/* what a header value can carry, without blanks */
		if (ch <= 0x20 || ch >= 0x7f)
			return 1;
		distinct += !seen[ch]++;
	}
	return distinct < 8;
}

int
cli_api_new(const char *spec, int read_only, struct cli_api **out)
{
	struct cli_api *a;
	char *text = NULL, *nl;
	size_t len = 0;
	int ex;

	*out = NULL;
	if (strncmp(spec, "file:", 5) == 0) {
		struct stat st;
		/* its group may read it (root:sked 0640), no one else */
		if (stat(spec + 5, &st) == 0 && (st.st_mode & 027)) {
			cli_err("dashboard --api-token: %s can be %s by other "
			        "users: chmod 600 (or 640) it",
			        spec + 5,
			        st.st_mode & 007 ? "read or written"
			                         : "written");
			return EX_USAGE;
		}
		if ((ex = cli_read_file("--api-token", spec + 5, 4096, &text,
		                        &len)) != 0)
			return ex;
	} else if (strncmp(spec, "env:", 4) == 0) {
		const char *v = getenv(spec + 4);
		if (!v || !v[0]) {
			cli_err("dashboard --api-token: the environment "
			        "variable '%s' is not set",
			        spec + 4);
			return EX_USAGE;
		}
		text = strdup(v);
	} else {
		cli_err("dashboard --api-token: give file:PATH or env:NAME "
		        "(a token never goes on the command line)");
		return EX_USAGE;
	}
	if (!text) {
		cli_err("dashboard: out of memory");
		return EX_OSERR;
	}
	/* the first line, without its line end */
	if ((nl = strpbrk(text, "\r\n")))
		*nl = '\0';
	len = strlen(text);
	if (weak_token(text, len)) {
		cli_err("dashboard --api-token: the token must be at least %d "
		        "printable characters without blanks, not a few "
		        "repeated (make one with: head -c 32 /dev/urandom | "
		        "base64)",
		        TOKEN_MIN);
		free(text);
		return EX_USAGE;
	}
	a = calloc(1, sizeof *a);
	if (!a) {
		free(text);
		cli_err("dashboard: out of memory");
		return EX_OSERR;
	}
	a->token = text;
	a->token_len = len;
	a->read_only = read_only;
	*out = a;
	return 0;
}

void
cli_api_bind(struct cli_api *a, sked *h, pthread_mutex_t *mu)
{
	if (!a)
		return;
	a->h = h;
	a->mu = mu;
}

void
cli_api_free(struct cli_api *a)
{
	if (!a)
		return;
	if (a->token) {
		memset(a->token, 0, a->token_len);
		free(a->token);
	}
	free(a);
}

int
cli_api_path(const char *path)
{
	return strncmp(path, "/api", 4) == 0 &&
	       (path[4] == '\0' || path[4] == '/');
}

/* Constant time in the token: every byte of it is looked at whatever
 * the guess, and the guess's length only shows in the result. */
static int
token_ok(const struct cli_api *a, const char *given)
{
	size_t n = strlen(given);
	unsigned diff = n != a->token_len;

	for (size_t i = 0; i < a->token_len; i++)
		diff |= (unsigned char)a->token[i] ^
		        (unsigned char)(i < n ? given[i] : 0);
	return diff == 0;
}

/* ---- replies ---- */

static void
reply(struct cli_http_reply *rp, int status, json_t *v)
{
	char *s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

	json_decref(v);
	cli_sbuf_free(&rp->body);
	rp->content_type = "application/json";
	if (!s) {
		rp->status = 500;
		cli_sbuf_puts(&rp->body, "{\"error\":{\"code\":71,\"message\":"
		                         "\"out of memory\"}}\n");
		return;
	}
	rp->status = status;
	cli_sbuf_puts(&rp->body, s);
	cli_sbuf_puts(&rp->body, "\n");
	free(s);
}

static void fail(struct cli_http_reply *rp, int status, int code,
                 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
fail(struct cli_http_reply *rp, int status, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	reply(rp, status,
	      json_pack("{s:{s:i, s:o}}", "error", "code", code, "message",
	                cli_json_cstr(msg)));
}

/* a library failure: the status its code calls for, the CLI's exit code */
static void
fail_rc(struct cli_api *a, struct cli_http_reply *rp, int rc, const char *what)
{
	const char *m = sked_errmsg(a->h);
	int status;

	switch (rc) {
	case SKED_EINVAL:
	case SKED_ETOOBIG:
	case SKED_ECRON:
	case SKED_ETZ:
		status = 400;
		break;
	case SKED_ENOTFOUND:
		status = 404;
		break;
	case SKED_ESTATE:
		status = 409;
		break;
	case SKED_EUNAVAILABLE:
	case SKED_EBUSY:
	case SKED_ETIMEOUT:
	case SKED_ELOCKED:
	case SKED_ELOST:
	case SKED_EREADONLY:
		status = 503;
		break;
	default:
		status = 500;
	}
	fail(rp, status, cli_exit_code(rc), "%s: %s", what,
	     m && m[0] ? m : sked_strerror(rc));
}

/* ---- reading a request ---- */

/* The fields a body may have, NULL-ended; one line in err for another. */
static int
known_fields(json_t *body, const char *const *names, char *err, size_t len)
{
	const char *k;
	json_t *v;

	json_object_foreach(body, k, v)
	{
		size_t i;
		for (i = 0; names[i] && strcmp(names[i], k) != 0; i++)
			;
		if (!names[i]) {
			snprintf(err, len, "unknown field '%.64s'", k);
			return -1;
		}
	}
	return 0;
}

/* A string field (NULL when absent or null); -1 for another type. */
static int
str_field(json_t *body, const char *name, const char **out, char *err,
          size_t len)
{
	json_t *v = json_object_get(body, name);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		snprintf(err, len, "'%s' must be a string", name);
		return -1;
	}
	*out = json_string_value(v);
	return 0;
}

/* An integer field within [min, max]; *set says it was there. */
static int
int_field(json_t *body, const char *name, long long min, long long max,
          long long *out, int *set, char *err, size_t len)
{
	json_t *v = json_object_get(body, name);

	*set = 0;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < min ||
	    json_integer_value(v) > max) {
		snprintf(err, len, "'%s' must be an integer from %lld to %lld",
		         name, min, max);
		return -1;
	}
	*out = json_integer_value(v);
	*set = 1;
	return 0;
}

/* A duration ("30s", "1h30m"), as the CLI reads one. */
static int
duration_value(const char *name, const char *s, int64_t *ms, char *err,
               size_t len)
{
	if (sked_parse_duration(s, ms) != SKED_OK || *ms < 0) {
		snprintf(err, len,
		         "'%s': '%.64s' is not a duration (like 500ms, 30s, "
		         "10m, 2h, 1d)",
		         name, s);
		return -1;
	}
	return 0;
}

/* The POST body: a JSON object; an empty body is an empty object. */
static json_t *
read_body(const struct cli_http_request *rq, struct cli_http_reply *rp)
{
	const char *ct = cli_http_header(rq, "Content-Type");
	json_error_t je;
	json_t *v;

	if (rq->body_len == 0)
		return json_object();
	if (!ct || strncasecmp(ct, "application/json", 16) != 0 ||
	    (ct[16] != '\0' && ct[16] != ';' && ct[16] != ' ')) {
		fail(rp, 415, EX_DATAERR,
		     "the body must be JSON, sent with Content-Type: "
		     "application/json");
		return NULL;
	}
	v = json_loadb(rq->body, rq->body_len, JSON_REJECT_DUPLICATES, &je);
	if (!v) {
		fail(rp, 400, EX_DATAERR,
		     "the body is not JSON: %s (line %d, column %d)", je.text,
		     je.line, je.column);
		return NULL;
	}
	if (!json_is_object(v)) {
		json_decref(v);
		fail(rp, 400, EX_DATAERR, "the body must be a JSON object");
		return NULL;
	}
	return v;
}

/* ---- enqueue ---- */

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
				         "'after' holds %s, not a task id",
				         json_is_integer(v) ? "a number below 1"
				                            : "something else");
				return -1;
			}
			ids[i] = json_integer_value(v);
		}
		eo->after = ids;
		eo->n_after = json_array_size(arr);
	}
	if (str_field(body, "on_parent_failure", &pf, err, len))
		return -1;
	if (pf && strcmp(pf, "ignore") == 0)
		eo->on_parent_failure = SKED_PARENT_IGNORE;
	else if (pf && strcmp(pf, "cancel") != 0) {
		snprintf(err, len,
		         "'on_parent_failure': give cancel or ignore, not "
		         "'%.32s'",
		         pf);
		return -1;
	}
	return 0;
}

/* The options every enqueue shares, from body, into eo; the parents'
 * ids go into after (room for IDS_MAX). */
static int
enqueue_opts(json_t *body, sked_enqueue_opts *eo, int64_t *after, char *err,
             size_t len)
{
	const char *at, *in;
	long long v;
	int set;

	memset(eo, 0, sizeof *eo);
	if (deps_fields(body, eo, after, err, len))
		return -1;
	if (str_field(body, "queue", &eo->queue, err, len) ||
	    str_field(body, "unique_key", &eo->unique_key, err, len) ||
	    str_field(body, "concurrency_key", &eo->concurrency_key, err,
	              len) ||
	    str_field(body, "traceparent", &eo->traceparent, err, len) ||
	    str_field(body, "run_at", &at, err, len) ||
	    str_field(body, "in", &in, err, len))
		return -1;
	if (int_field(body, "priority", INT_MIN, INT_MAX, &v, &set, err, len))
		return -1;
	if (set)
		eo->priority = (int)v;
	if (int_field(body, "max_attempts", 1, INT_MAX, &v, &set, err, len))
		return -1;
	if (set)
		eo->max_attempts = (int)v;
	if (at && in) {
		snprintf(err, len, "'run_at' and 'in' conflict: give one");
		return -1;
	}
	if (at) {
		/* with its zone, as on the command line: Z or an offset */
		const char *t = strpbrk(at, "Tt ");
		if (sked_parse_time(at, &eo->run_at_ms) != SKED_OK || !t ||
		    !strpbrk(t, "Zz+-")) {
			snprintf(err, len,
			         "'run_at': '%.64s' is not an ISO-8601 time "
			         "with its zone (like 2026-03-08T07:30:00Z)",
			         at);
			return -1;
		}
	}
	if (in && duration_value("in", in, &eo->delay_ms, err, len))
		return -1;
	return 0;
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

static void
post_enqueue(struct cli_api *a, json_t *body, struct cli_http_reply *rp)
{
	sked_enqueue_opts eo;
	int64_t after[IDS_MAX];
	const char *kind, *payload;
	char err[256], *owned;
	size_t plen;
	int64_t id = 0;
	int existed = 0, rc;

	if (known_fields(body, enqueue_fields, err, sizeof err) ||
	    str_field(body, "kind", &kind, err, sizeof err) ||
	    enqueue_opts(body, &eo, after, err, sizeof err))
		return fail(rp, 400, EX_DATAERR, "%s", err);
	if (!kind)
		return fail(rp, 400, EX_DATAERR, "'kind' is missing");
	if (json_object_get(body, "payloads"))
		return fail(rp, 400, EX_DATAERR,
		            "'payloads' is for POST /api/tasks/bulk");
	if (payload_value(json_object_get(body, "payload"), &payload, &plen,
	                  &owned))
		return fail(rp, 500, EX_OSERR, "out of memory");
	rc = sked_enqueue(a->h, kind, payload, plen, &eo, &id, &existed);
	free(owned);
	if (rc != SKED_OK)
		return fail_rc(a, rp, rc, "enqueue");
	reply(rp, existed ? 200 : 201,
	      json_pack("{s:I, s:b}", "id", (json_int_t)id, "existed",
	                existed));
}

static void
post_bulk(struct cli_api *a, json_t *body, struct cli_http_reply *rp)
{
	sked_enqueue_opts eo;
	int64_t after[IDS_MAX];
	json_t *arr = json_object_get(body, "payloads"), *ids_json;
	const char *kind, **texts = NULL;
	char err[256], **owned = NULL;
	size_t n, i, *lens = NULL;
	int64_t *ids = NULL;
	int rc = SKED_ENOMEM;

	if (known_fields(body, enqueue_fields, err, sizeof err) ||
	    str_field(body, "kind", &kind, err, sizeof err) ||
	    enqueue_opts(body, &eo, after, err, sizeof err))
		return fail(rp, 400, EX_DATAERR, "%s", err);
	if (!kind)
		return fail(rp, 400, EX_DATAERR, "'kind' is missing");
	if (eo.unique_key)
		return fail(rp, 400, EX_DATAERR,
		            "'unique_key' is for one task at a time "
		            "(POST /api/tasks)");
	if (json_object_get(body, "payload"))
		return fail(rp, 400, EX_DATAERR,
		            "a bulk enqueue takes 'payloads', an array");
	n = json_array_size(arr);
	if (!json_is_array(arr) || n < 1 || n > BULK_MAX)
		return fail(rp, 400, EX_DATAERR,
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
		reply(rp, 201, json_pack("{s:o}", "ids", ids_json));
	}
out:
	if (rc == SKED_ENOMEM)
		fail(rp, 500, EX_OSERR, "out of memory");
	else if (rc != SKED_OK)
		fail_rc(a, rp, rc, "enqueue");
	for (i = 0; owned && i < n; i++)
		free(owned[i]);
	free(owned);
	free(texts);
	free(lens);
	free(ids);
}

/* ---- reading tasks ---- */

/* A query argument as a name (queue, kind, node); -1 when not one. */
static int
name_arg(const struct cli_http_request *rq, const char *key, const char **out,
         char *err, size_t len)
{
	const char *v = cli_http_arg(rq, key);

	*out = NULL;
	if (!v || !v[0])
		return 0;
	if (!sked_name_valid(v)) {
		snprintf(err, len, "'%s': '%.64s' is not a name", key, v);
		return -1;
	}
	*out = v;
	return 0;
}

static int
status_value(const char *key, const char *s, int *out, char *err, size_t len)
{
	*out = sked_status_parse(s);
	if (*out >= 0)
		return 0;
	snprintf(err, len,
	         "'%s': '%.32s' is not one of pending, running, succeeded, "
	         "dead, retry, cancelled",
	         key, s);
	return -1;
}

static int
count_arg(const struct cli_http_request *rq, const char *key, long long min,
          long long max, long long *out, char *err, size_t len)
{
	const char *v = cli_http_arg(rq, key);
	char *end;

	if (!v)
		return 0;
	errno = 0;
	*out = strtoll(v, &end, 10);
	if (!v[0] || *end || errno || *out < min || *out > max) {
		snprintf(err, len, "'%s' must be an integer from %lld to %lld",
		         key, min, max);
		return -1;
	}
	return 0;
}

static void
get_tasks(struct cli_api *a, const struct cli_http_request *rq,
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
	if (name_arg(rq, "queue", &f.queue, err, sizeof err) ||
	    name_arg(rq, "kind", &f.kind, err, sizeof err) ||
	    name_arg(rq, "node", &f.node_id, err, sizeof err) ||
	    count_arg(rq, "limit", 1, LIST_MAX, &limit, err, sizeof err) ||
	    count_arg(rq, "before", 1, LLONG_MAX, &before, err, sizeof err))
		return fail(rp, 400, EX_DATAERR, "%s", err);
	if ((s = cli_http_arg(rq, "status")) && s[0] &&
	    status_value("status", s, &f.status, err, sizeof err))
		return fail(rp, 400, EX_DATAERR, "%s", err);
	if (cli_http_arg(rq, "since") || cli_http_arg(rq, "older_than")) {
		if ((rc = sked_now(a->h, &now)) != SKED_OK)
			return fail_rc(a, rp, rc, "read the database clock");
	}
	if ((s = cli_http_arg(rq, "since"))) {
		if (duration_value("since", s, &ms, err, sizeof err))
			return fail(rp, 400, EX_DATAERR, "%s", err);
		f.created_after_ms = now - ms;
	}
	if ((s = cli_http_arg(rq, "older_than"))) {
		if (duration_value("older_than", s, &ms, err, sizeof err))
			return fail(rp, 400, EX_DATAERR, "%s", err);
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
		    (!f.kind || strcmp(t->kind, f.kind) == 0))
			json_array_append_new(arr, cli_task_json(t));
		if (t)
			sked_tasks_free(t, 1);
		if (rc != SKED_OK && rc != SKED_ENOTFOUND) {
			json_decref(arr);
			return fail_rc(a, rp, rc, "find the unique key");
		}
		return reply(
		        rp, 200,
		        json_pack("{s:o, s:n}", "tasks", arr, "next_before"));
	}
	f.before_id = before;
	f.limit = (int)limit + 1; /* one more: is there a next page? */
	if ((rc = sked_task_list(a->h, &f, &t, &n)) != SKED_OK) {
		json_decref(arr);
		return fail_rc(a, rp, rc, "list tasks");
	}
	shown = n > (size_t)limit ? (size_t)limit : n;
	for (i = 0; i < shown; i++)
		json_array_append_new(arr, cli_task_json(&t[i]));
	reply(rp, 200,
	      json_pack("{s:o, s:o}", "tasks", arr, "next_before",
	                n > shown ? json_integer(t[shown - 1].id)
	                          : json_null()));
	sked_tasks_free(t, n);
}

static void
get_task(struct cli_api *a, int64_t id, struct cli_http_reply *rp)
{
	json_t *o;
	const char *what;
	int rc;

	if ((rc = cli_show_json(a->h, id, &o, &what)) != SKED_OK)
		return fail_rc(a, rp, rc, "show");
	reply(rp, 200, o);
}

/* ---- cancel, retry ---- */

static void
post_one(struct cli_api *a, const struct cli_verb *v, int64_t id, json_t *body,
         struct cli_http_reply *rp)
{
	static const char *const none[] = {NULL};
	char err[128];
	int rc;

	if (known_fields(body, none, err, sizeof err))
		return fail(rp, 400, EX_DATAERR, "%s", err);
	if ((rc = v->one(a->h, id)) != SKED_OK)
		return fail_rc(a, rp, rc, v->cmd);
	reply(rp, 200,
	      json_pack("{s:I, s:s}", "id", (json_int_t)id, "result", v->done));
}

static void
post_many(struct cli_api *a, const struct cli_verb *v, json_t *body,
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

	if (known_fields(body, fields, err, sizeof err))
		return fail(rp, 400, EX_DATAERR, "%s", err);
	memset(&f, 0, sizeof f);
	if (str_field(body, "status", &status, err, sizeof err) ||
	    str_field(body, "kind", &f.kind, err, sizeof err) ||
	    str_field(body, "queue", &f.queue, err, sizeof err) ||
	    str_field(body, "older_than", &older, err, sizeof err))
		return fail(rp, 400, EX_DATAERR, "%s", err);
	if (confirm && !json_is_boolean(confirm))
		return fail(rp, 400, EX_DATAERR,
		            "'confirm' must be true or "
		            "false");
	if (ids) {
		int64_t list[IDS_MAX];
		size_t n = json_array_size(ids), i;
		if (status || f.kind || f.queue || older || confirm)
			return fail(rp, 400, EX_DATAERR,
			            "give 'ids' or a filter, not both");
		if (!json_is_array(ids) || n < 1 || n > IDS_MAX)
			return fail(rp, 400, EX_DATAERR,
			            "'ids' must be an array of 1 to %d task "
			            "ids",
			            IDS_MAX);
		for (i = 0; i < n; i++) {
			json_t *e = json_array_get(ids, i);
			if (!json_is_integer(e) || json_integer_value(e) < 1)
				return fail(rp, 400, EX_DATAERR,
				            "'ids' must hold task ids "
				            "(integers from 1)");
			list[i] = json_integer_value(e);
		}
		if ((rc = v->ids(a->h, list, n, &changed)) != SKED_OK)
			return fail_rc(a, rp, rc, v->cmd);
		return reply(rp, 200,
		             json_pack("{s:s, s:I, s:I, s:b}", "action", v->cmd,
		                       "matched", (json_int_t)n, "changed",
		                       (json_int_t)changed, "applied", 1));
	}
	/* by filter, as the CLI: the statuses it may touch */
	memcpy(st, v->dflt, sizeof st);
	if (status) {
		int s;
		if (status_value("status", status, &s, err, sizeof err))
			return fail(rp, 400, EX_DATAERR, "%s", err);
		if (!cli_verb_allows(v, s)) {
			cli_status_words(v->allowed, err, sizeof err);
			return fail(
			        rp, 400, EX_DATAERR,
			        "'status': %s takes tasks that are %s, not %s",
			        v->cmd, err, status);
		}
		st[0] = s;
		st[1] = -1;
	}
	if ((f.kind && !sked_name_valid(f.kind)) ||
	    (f.queue && !sked_name_valid(f.queue)))
		return fail(rp, 400, EX_DATAERR, "'%s' is not a name",
		            f.kind && !sked_name_valid(f.kind) ? "kind"
		                                               : "queue");
	if (older) {
		int64_t ms;
		if (duration_value("older_than", older, &ms, err, sizeof err))
			return fail(rp, 400, EX_DATAERR, "%s", err);
		if (ms <= 0)
			return fail(rp, 400, EX_DATAERR,
			            "'older_than': give a duration above zero");
		if ((rc = sked_now(a->h, &now)) != SKED_OK)
			return fail_rc(a, rp, rc, "read the database clock");
		f.created_before_ms = now - ms;
	}
	rc = cli_steer_where(a->h, v, &f, st, json_is_true(confirm), &matched,
	                     &changed, &at);
	if (rc != SKED_OK)
		return fail_rc(a, rp, rc, at < 0 ? "count tasks" : v->cmd);
	reply(rp, 200,
	      json_pack("{s:s, s:I, s:I, s:b}", "action", v->cmd, "matched",
	                (json_int_t)matched, "changed", (json_int_t)changed,
	                "applied", json_is_true(confirm)));
}

/* ---- stats, queues, schedules ---- */

static json_t *
counts_json(const char *queue, const sked_queue_stats *q, int64_t oldest,
            int paused)
{
	json_t *o = json_object();

	if (queue)
		json_object_set_new(o, "queue", cli_json_cstr(queue));

	for (size_t k = 0; k < cli_nstat; k++)
		json_object_set_new(o, cli_stat_cols[k].name,
		                    json_integer(cli_stat_of(q, k)));
	json_object_set_new(o, "oldest_due_ms", json_integer(oldest));
	if (queue)
		json_object_set_new(o, "paused", json_boolean(paused));
	return o;
}

static void
get_stats(struct cli_api *a, struct cli_http_reply *rp)
{
	sked_queue_stats *qs = NULL, total;
	sked_cluster_gauges g;
	sked_queue_info *qi = NULL; /* which queues are paused */
	size_t n = 0, nqi = 0, i, k;
	int64_t oldest = 0;
	json_t *arr;
	int rc;

	if ((rc = sked_stats(a->h, &qs, &n)) != SKED_OK)
		return fail_rc(a, rp, rc, "stats");
	if ((rc = sked_cluster_gauges_get(a->h, &g)) != SKED_OK) {
		free(qs);
		return fail_rc(a, rp, rc, "stats");
	}
	if ((rc = sked_queue_list(a->h, &qi, &nqi)) != SKED_OK) {
		sked_cluster_gauges_free(&g);
		free(qs);
		return fail_rc(a, rp, rc, "stats");
	}
	memset(&total, 0, sizeof total);
	arr = json_array();
	for (i = 0; i < n; i++) {
		int64_t age = 0;
		for (k = 0; k < sizeof total.count / sizeof total.count[0]; k++)
			total.count[k] += qs[i].count[k];
		total.due += qs[i].due;
		for (k = 0; k < g.nqueues; k++)
			if (strcmp(g.queues[k].queue, qs[i].queue) == 0)
				age = g.queues[k].oldest_due_age_ms;
		if (age > oldest)
			oldest = age;
		json_array_append_new(
		        arr,
		        counts_json(qs[i].queue, &qs[i], age,
		                    cli_queue_paused(qi, nqi, qs[i].queue)));
	}
	reply(rp, 200,
	      json_pack("{s:o, s:o, s:{s:I, s:I}}", "queues", arr, "total",
	                counts_json(NULL, &total, oldest, 0), "nodes", "alive",
	                (json_int_t)g.nodes_alive, "total",
	                (json_int_t)g.nodes));
	sked_queue_info_free(qi, nqi);
	sked_cluster_gauges_free(&g);
	free(qs);
}

static void
get_queues(struct cli_api *a, struct cli_http_reply *rp)
{
	sked_queue_info *q = NULL;
	size_t n = 0;
	json_t *arr;
	int rc;

	if ((rc = sked_queue_list(a->h, &q, &n)) != SKED_OK)
		return fail_rc(a, rp, rc, "queues");
	arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, cli_queue_json(&q[i]));
	reply(rp, 200, json_pack("{s:o}", "queues", arr));
	sked_queue_info_free(q, n);
}

static void
get_schedules(struct cli_api *a, struct cli_http_reply *rp)
{
	sked_schedule *s = NULL;
	size_t n = 0;
	json_t *arr;
	int rc;

	if ((rc = sked_schedule_list(a->h, &s, &n)) != SKED_OK)
		return fail_rc(a, rp, rc, "schedules");
	arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, cli_schedule_json(&s[i]));
	reply(rp, 200, json_pack("{s:o}", "schedules", arr));
	sked_schedules_free(s, n);
}

/* run now, pause or resume the schedule name */
static void
post_schedule(struct cli_api *a, const char *done, const char *name,
              json_t *body, struct cli_http_reply *rp)
{
	static const char *const none[] = {NULL};
	char err[128];
	int64_t id = 0;
	int rc;

	if (known_fields(body, none, err, sizeof err))
		return fail(rp, 400, EX_DATAERR, "%s", err);
	if (strcmp(done, "run") == 0) {
		/* one new task per call, as `sked cron run NAME` */
		if ((rc = sked_schedule_run(a->h, name, &id)) != SKED_OK)
			return fail_rc(a, rp, rc, "run the schedule");
		return reply(rp, 201,
		             json_pack("{s:s, s:I}", "name", name, "id",
		                       (json_int_t)id));
	}
	rc = strcmp(done, "paused") == 0 ? sked_schedule_pause(a->h, name)
	                                 : sked_schedule_resume(a->h, name);
	if (rc != SKED_OK)
		return fail_rc(a, rp, rc, "schedule");
	reply(rp, 200, json_pack("{s:s, s:s}", "name", name, "done", done));
}

/* pause or resume the queue name, as `sked queue pause|resume` */
static void
post_queue(struct cli_api *a, int paused, const char *name, json_t *body,
           struct cli_http_reply *rp)
{
	static const char *const none[] = {NULL};
	char err[128];
	int rc;

	if (known_fields(body, none, err, sizeof err))
		return fail(rp, 400, EX_DATAERR, "%s", err);
	if ((rc = sked_queue_pause(a->h, name, paused)) != SKED_OK)
		return fail_rc(a, rp, rc, paused ? "pause" : "resume");
	reply(rp, 200,
	      json_pack("{s:s, s:b}", "queue", name, "paused", paused));
}

/* ---- the router ---- */

/* "PREFIX/NAME/ACTION" (PREFIX "/api/schedules/", "/api/queues/"): NAME
 * into name, and ACTION; NULL when p is not of that form or NAME is not
 * a name */
static const char *
name_path(const char *p, const char *prefix, char *name, size_t len)
{
	const char *n = p + strlen(prefix), *slash;

	if (strncmp(p, prefix, strlen(prefix)) != 0 ||
	    !(slash = strchr(n, '/')) || (size_t)(slash - n) >= len)
		return NULL;
	memcpy(name, n, (size_t)(slash - n));
	name[slash - n] = '\0';
	return sked_name_valid(name) ? slash + 1 : NULL;
}

/* "/api/tasks/123" and "/api/tasks/123/retry": the id and what follows */
static int64_t
task_path(const char *p, const char **rest)
{
	const char *d = p + strlen("/api/tasks/");
	size_t nd = strspn(d, "0123456789");
	long long id;

	if (strncmp(p, "/api/tasks/", 11) != 0 || nd == 0 || nd > 18 ||
	    d[0] == '0')
		return 0;
	id = strtoll(d, NULL, 10);
	*rest = d + nd;
	return id;
}

/* The query names under which a token might be sent by mistake. */
static const char *const url_token_names[] = {
        "access_token", "token", "api_token", "api_key", "key", NULL};

static void
route(struct cli_api *a, const struct cli_http_request *rq,
      struct cli_http_reply *rp)
{
	const char *p = rq->path, *rest = "";
	int get = strcmp(rq->method, "GET") == 0 ||
	          strcmp(rq->method, "HEAD") == 0;
	int post = strcmp(rq->method, "POST") == 0;
	int64_t id = task_path(p, &rest);
	json_t *body = NULL;

	/* first what exists, and by which method */
	enum {
		NONE,
		LIST,
		ENQ,
		BULK,
		SHOW,
		ONE_C,
		ONE_R,
		MANY_C,
		MANY_R,
		STATS,
		QUEUES,
		SCHED,
		SCHED_RUN,
		SCHED_PAUSE,
		SCHED_RESUME,
		QUEUE_PAUSE,
		QUEUE_RESUME
	} what = NONE;
	char name[SKED_MAX_NAME + 1], qname[SKED_MAX_NAME + 1];
	const char *act = name_path(p, "/api/schedules/", name, sizeof name);
	const char *qact = name_path(p, "/api/queues/", qname, sizeof qname);
	int want_post = 0;
	if (strcmp(p, "/api/tasks") == 0) {
		what = post ? ENQ : LIST;
		want_post = -1; /* either */
	} else if (strcmp(p, "/api/tasks/bulk") == 0) {
		what = BULK;
	} else if (strcmp(p, "/api/tasks/cancel") == 0) {
		what = MANY_C;
	} else if (strcmp(p, "/api/tasks/retry") == 0) {
		what = MANY_R;
	} else if (id > 0 && rest[0] == '\0') {
		what = SHOW;
	} else if (id > 0 && strcmp(rest, "/cancel") == 0) {
		what = ONE_C;
	} else if (id > 0 && strcmp(rest, "/retry") == 0) {
		what = ONE_R;
	} else if (strcmp(p, "/api/stats") == 0)
		what = STATS;
	else if (strcmp(p, "/api/queues") == 0)
		what = QUEUES;
	else if (strcmp(p, "/api/schedules") == 0)
		what = SCHED;
	else if (act && strcmp(act, "run") == 0)
		what = SCHED_RUN;
	else if (act && strcmp(act, "pause") == 0)
		what = SCHED_PAUSE;
	else if (act && strcmp(act, "resume") == 0)
		what = SCHED_RESUME;
	else if (qact && strcmp(qact, "pause") == 0)
		what = QUEUE_PAUSE;
	else if (qact && strcmp(qact, "resume") == 0)
		what = QUEUE_RESUME;
	if (what != NONE && what != LIST && what != ENQ && what != SHOW &&
	    what != STATS && what != QUEUES && what != SCHED)
		want_post = 1;
	if (what == NONE)
		return fail(rp, 404, EX_USAGE, "no such endpoint: %.200s", p);
	if ((want_post == 1 && !post) || (want_post == 0 && !get) ||
	    (want_post == -1 && !get && !post))
		return fail(rp, 405, EX_USAGE, "%s is not allowed on %.200s",
		            rq->method, p);
	if (post && a->read_only)
		return fail(rp, 403, EX_NOPERM,
		            "this dashboard is read-only: changes are "
		            "refused");
	if (post && !(body = read_body(rq, rp)))
		return;
	/* an enqueue made while serving a traced request: the request's
	 * own W3C trace context, unless the body names one */
	const char *tph = cli_http_header(rq, "traceparent");
	if ((what == ENQ || what == BULK) && tph && json_is_object(body) &&
	    !json_object_get(body, "traceparent"))
		json_object_set_new(body, "traceparent", json_string(tph));

	pthread_mutex_lock(a->mu);
	switch (what) {
	case LIST:
		get_tasks(a, rq, rp);
		break;
	case ENQ:
		post_enqueue(a, body, rp);
		break;
	case BULK:
		post_bulk(a, body, rp);
		break;
	case SHOW:
		get_task(a, id, rp);
		break;
	case ONE_C:
		post_one(a, &cli_cancel_verb, id, body, rp);
		break;
	case ONE_R:
		post_one(a, &cli_retry_verb, id, body, rp);
		break;
	case MANY_C:
		post_many(a, &cli_cancel_verb, body, rp);
		break;
	case MANY_R:
		post_many(a, &cli_retry_verb, body, rp);
		break;
	case STATS:
		get_stats(a, rp);
		break;
	case QUEUES:
		get_queues(a, rp);
		break;
	case SCHED:
		get_schedules(a, rp);
		break;
	case SCHED_RUN:
	case SCHED_PAUSE:
	case SCHED_RESUME:
		post_schedule(a,
		              what == SCHED_RUN     ? "run"
		              : what == SCHED_PAUSE ? "paused"
		                                    : "resumed",
		              name, body, rp);
		break;
	case QUEUE_PAUSE:
	case QUEUE_RESUME:
		post_queue(a, what == QUEUE_PAUSE, qname, body, rp);
		break;
	case NONE:
		break;
	}
	pthread_mutex_unlock(a->mu);
	json_decref(body);
	if (post && rp->status < 300)
		sked_log(SKED_LOG_INFO, "api: %s %s: %d", rq->method, p,
		         rp->status);
}

void
cli_api_serve(struct cli_api *a, int host_ok, const struct cli_http_request *rq,
              struct cli_http_reply *rp)
{
	const char *auth;

	if (!host_ok)
		return fail(rp, 403, EX_NOPERM,
		            "this dashboard answers to its own address only");
	if (!a)
		return fail(rp, 404, EX_UNAVAILABLE,
		            "the JSON API is off: start sked dashboard with "
		            "--api-token file:PATH or env:NAME");
	for (size_t i = 0; url_token_names[i]; i++)
		if (cli_http_arg(rq, url_token_names[i]))
			return fail(rp, 400, EX_USAGE,
			            "a token never goes in a URL ('%s'): send "
			            "the header Authorization: Bearer TOKEN",
			            url_token_names[i]);
	auth = cli_http_header(rq, "Authorization");
	if (!auth || strncasecmp(auth, "Bearer ", 7) != 0) {
		rp->www_authenticate = "Bearer realm=\"sked\"";
		return fail(rp, 401, EX_NOPERM,
		            "send the API token as Authorization: Bearer "
		            "TOKEN");
	}
	if (!token_ok(a, auth + 7)) {
		rp->www_authenticate =
		        "Bearer realm=\"sked\", error=\"invalid_token\"";
		return fail(rp, 401, EX_NOPERM, "wrong API token");
	}
	route(a, rq, rp);
}
