/*
 * api_serve.c — the JSON API of `sked dashboard --api-token` (docs/api.md;
 * its OpenAPI 3 description is docs/openapi.yaml).
 *
 * This file: the token (read, checked in constant time) and the router
 * (which path and method go to which handler, the checks every request
 * passes first). The handlers are api_tasks.c and api_queues.c; reading
 * a request and writing the JSON reply, api_json.c; api_int.h draws them.
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
#include "web/api/api_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sysexits.h>

#define TOKEN_MIN 32 /* characters, at least 8 different */

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
	len = strlen(text); /* what token_ok compares: the line, not the file */
	if (cli_secret_weak(text, TOKEN_MIN, 8)) {
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
	cli_api_wait_free(a);
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
		GRAPH,
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
		QUEUE_RESUME,
		EVENTS
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
	} else if (strcmp(p, "/api/graphs") == 0) {
		what = GRAPH;
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
	else if (strcmp(p, "/api/events") == 0)
		what = EVENTS;
	if (what != NONE && what != LIST && what != ENQ && what != SHOW &&
	    what != STATS && what != QUEUES && what != SCHED && what != EVENTS)
		want_post = 1;
	if (what == NONE)
		return api_fail(rp, 404, EX_USAGE, "no such endpoint: %.200s",
		                p);
	if ((want_post == 1 && !post) || (want_post == 0 && !get) ||
	    (want_post == -1 && !get && !post))
		return api_fail(rp, 405, EX_USAGE,
		                "%s is not allowed on %.200s", rq->method, p);
	if (post && a->read_only)
		return api_fail(rp, 403, EX_NOPERM,
		                "this dashboard is read-only: changes are "
		                "refused");
	if (post && !(body = api_read_body(rq, rp)))
		return;
	/* an enqueue made while serving a traced request: the request's
	 * own W3C trace context, unless the body names one */
	const char *tph = cli_http_header(rq, "traceparent");
	if ((what == ENQ || what == BULK) && tph && json_is_object(body) &&
	    !json_object_get(body, "traceparent"))
		json_object_set_new(body, "traceparent", json_string(tph));

	/* the events' long-poll takes the handle between its sleeps */
	if (what == EVENTS)
		return api_get_events(a, rq, rp);
	/* a long-poll waits before it takes the handle (api_wait.c) */
	const char *wait = what == SHOW ? cli_http_arg(rq, "wait") : NULL;
	if (wait) {
		int64_t ms;
		char err[160];
		if (api_duration("wait", wait, &ms, err, sizeof err) != 0)
			return api_fail(rp, 400, EX_USAGE, "%s", err);
		api_wait_task(a, id, ms);
	}
	pthread_mutex_lock(a->mu);
	switch (what) {
	case LIST:
		api_get_tasks(a, rq, rp);
		break;
	case ENQ:
		api_post_enqueue(a, body, rp);
		break;
	case BULK:
		api_post_bulk(a, body, rp);
		break;
	case GRAPH:
		api_post_graph(a, body, tph, rp);
		break;
	case SHOW:
		api_get_task(a, id, rp);
		break;
	case ONE_C:
		api_post_one(a, &cli_cancel_verb, id, body, rp);
		break;
	case ONE_R:
		api_post_one(a, &cli_retry_verb, id, body, rp);
		break;
	case MANY_C:
		api_post_many(a, &cli_cancel_verb, body, rp);
		break;
	case MANY_R:
		api_post_many(a, &cli_retry_verb, body, rp);
		break;
	case STATS:
		api_get_stats(a, rp);
		break;
	case QUEUES:
		api_get_queues(a, rp);
		break;
	case SCHED:
		api_get_schedules(a, rp);
		break;
	case SCHED_RUN:
	case SCHED_PAUSE:
	case SCHED_RESUME:
		api_post_schedule(a,
		                  what == SCHED_RUN     ? "run"
		                  : what == SCHED_PAUSE ? "paused"
		                                        : "resumed",
		                  name, body, rp);
		break;
	case QUEUE_PAUSE:
	case QUEUE_RESUME:
		api_post_queue(a, what == QUEUE_PAUSE, qname, body, rp);
		break;
	case EVENTS:
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
		return api_fail(
		        rp, 403, EX_NOPERM,
		        "this dashboard answers to its own address only");
	if (!a)
		return api_fail(
		        rp, 404, EX_UNAVAILABLE,
		        "the JSON API is off: start sked dashboard with "
		        "--api-token file:PATH or env:NAME");
	for (size_t i = 0; url_token_names[i]; i++)
		if (cli_http_arg(rq, url_token_names[i]))
			return api_fail(
			        rp, 400, EX_USAGE,
			        "a token never goes in a URL ('%s'): send "
			        "the header Authorization: Bearer TOKEN",
			        url_token_names[i]);
	auth = cli_http_header(rq, "Authorization");
	if (!auth || strncasecmp(auth, "Bearer ", 7) != 0) {
		rp->www_authenticate = "Bearer realm=\"sked\"";
		return api_fail(rp, 401, EX_NOPERM,
		                "send the API token as Authorization: Bearer "
		                "TOKEN");
	}
	if (!token_ok(a, auth + 7)) {
		rp->www_authenticate =
		        "Bearer realm=\"sked\", error=\"invalid_token\"";
		return api_fail(rp, 401, EX_NOPERM, "wrong API token");
	}
	route(a, rq, rp);
}
