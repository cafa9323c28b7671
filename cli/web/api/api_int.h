/*
 * api_int.h — what the files of the JSON API (`sked dashboard
 * --api-token`; docs/api.md) share, bottom-up:
 *
 *   api_serve.c   the token and the router: which path and method go to
 *                 which handler, the checks every request passes first
 *   api_tasks.c   enqueue (one, many, a graph), list, show, cancel and
 *                 retry tasks
 *   api_queues.c  stats, queues' limits and pauses, schedules
 *   api_json.c    reading a request, writing a reply or an error
 *
 * Each calls only the files below it in this list.
 *
 * Layer: the command-line program, a client of <sked.h> only.
 */
#ifndef SKED_CLI_API_INT_H
#define SKED_CLI_API_INT_H

#include <pthread.h>
#include <stdint.h>

#include "view/view.h"
#include "web/api/api.h"

#define LIST_MAX  1000  /* tasks in one page */
#define LIST_DFLT 100   /* tasks in a page when no limit is given */
#define BULK_MAX  10000 /* tasks in one bulk enqueue */
#define IDS_MAX   1000  /* ids in one cancel or retry */
/* the long-poll (api_wait.c): the longest wait, the most at once */
#define API_WAIT_MAX_MS 30000
#define API_WAITS       64

struct cli_api {
	char *token;
	size_t token_len;
	int read_only;
	sked *h;
	pthread_mutex_t *mu;
	struct cli_api_wait *wait; /* the long-poll's; NULL: none */
};

/* ---- api_tasks.c ---- */
void api_post_enqueue(struct cli_api *a, json_t *body,
                      struct cli_http_reply *rp);
void api_post_bulk(struct cli_api *a, json_t *body, struct cli_http_reply *rp);
/* a workflow (view/graph_json.c) in one transaction; traceparent: the
 * request's header, for the tasks that name none (NULL: none) */
void api_post_graph(struct cli_api *a, json_t *body, const char *traceparent,
                    struct cli_http_reply *rp);
void api_get_tasks(struct cli_api *a, const struct cli_http_request *rq,
                   struct cli_http_reply *rp);
void api_get_task(struct cli_api *a, int64_t id, struct cli_http_reply *rp);
/* cancel or retry (v) the task id */
void api_post_one(struct cli_api *a, const struct cli_verb *v, int64_t id,
                  json_t *body, struct cli_http_reply *rp);
/* cancel or retry (v) some ids or a filter's tasks */
void api_post_many(struct cli_api *a, const struct cli_verb *v, json_t *body,
                   struct cli_http_reply *rp);

/* ---- api_wait.c ---- */
/* Wait up to ms (cut to API_WAIT_MAX_MS) for task id to end, without
 * the handle; 1 when it ended meanwhile, 0 otherwise (live, gone, no
 * room among API_WAITS: the caller shows it as it is). */
int api_wait_task(struct cli_api *a, int64_t id, int64_t ms);
void cli_api_wait_free(struct cli_api *a);

/* ---- api_events.c ---- */
/* GET /api/events: takes the handle's mutex itself (a long-poll sleeps
 * without it); the router calls it without. */
void api_get_events(struct cli_api *a, const struct cli_http_request *rq,
                    struct cli_http_reply *rp);

/* ---- api_queues.c ---- */
void api_get_stats(struct cli_api *a, struct cli_http_reply *rp);
void api_get_queues(struct cli_api *a, struct cli_http_reply *rp);
void api_get_schedules(struct cli_api *a, struct cli_http_reply *rp);
/* done: "run", "paused" or "resumed" */
void api_post_schedule(struct cli_api *a, const char *done, const char *name,
                       json_t *body, struct cli_http_reply *rp);
void api_post_queue(struct cli_api *a, int paused, const char *name,
                    json_t *body, struct cli_http_reply *rp);

/* ---- api_json.c ---- */
/* v (taken) as the reply's JSON body with status */
void api_reply(struct cli_http_reply *rp, int status, json_t *v);
/* the one error shape, code a sysexits code */
void api_fail(struct cli_http_reply *rp, int status, int code, const char *fmt,
              ...) __attribute__((format(printf, 4, 5)));
/* a library failure: the status its code calls for, the CLI's exit code */
void api_fail_rc(struct cli_api *a, struct cli_http_reply *rp, int rc,
                 const char *what);
/* The fields a body may have, NULL-ended; one line in err for another. */
int api_known_fields(json_t *body, const char *const *names, char *err,
                     size_t len);
/* A string field (NULL when absent or null); -1 for another type. */
int api_str_field(json_t *body, const char *name, const char **out, char *err,
                  size_t len);
/* An integer field within [min, max]; *set says it was there. */
int api_int_field(json_t *body, const char *name, long long min, long long max,
                  long long *out, int *set, char *err, size_t len);
/* A duration ("30s", "1h30m"), as the CLI reads one. */
int api_duration(const char *name, const char *s, int64_t *ms, char *err,
                 size_t len);
/* The POST body: a JSON object; an empty body is an empty object. NULL:
 * the error is in rp already. */
json_t *api_read_body(const struct cli_http_request *rq,
                      struct cli_http_reply *rp);
/* A query argument as a name (queue, kind, node); -1 when not one. */
int api_name_arg(const struct cli_http_request *rq, const char *key,
                 const char **out, char *err, size_t len);
int api_status_value(const char *key, const char *s, int *out, char *err,
                     size_t len);
int api_count_arg(const struct cli_http_request *rq, const char *key,
                  long long min, long long max, long long *out, char *err,
                  size_t len);

#endif /* SKED_CLI_API_INT_H */
