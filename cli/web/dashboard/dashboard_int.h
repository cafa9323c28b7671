/*
 * dashboard_int.h — what the files of `sked dashboard` share, bottom-up:
 *
 *   dashboard.c          the command and the router (which request goes
 *                        where, the checks every request passes)
 *   dashboard_session.c  who may ask: --auth, the Host check, sessions
 *                        and their CSRF tokens
 *   dashboard_forms.c    the changes (POST) and where they lead back to
 *   dashboard_pages.c    the overview, nodes, schedules, locks, queues
 *   dashboard_tasks.c    the task lists and one task's page
 *   dashboard_graph.c    the picture of a task's workflow on its page
 *   dashboard_page.c     what every page shares: head and foot, error
 *                        and flash lines, pills, time cells, the filter
 *   dashboard_tpl.c      the template renderer (templates/NAME.html)
 *
 * Each calls only the files below it in this list.
 *
 * Layer: the command-line program, a client of <sked.h> only.
 */
#ifndef SKED_CLI_DASHBOARD_INT_H
#define SKED_CLI_DASHBOARD_INT_H

#include <pthread.h>
#include <stdint.h>

#include "web/api/api.h"
#include "base/cli.h"
#include "web/dashboard/dashboard_tpl.h"
#include "http/http.h"
#include "view/view.h"

#define PAGE_SIZE 50 /* tasks in a list's page */
/* a text that may be NULL, for a placeholder: "" then */
#define DASH_S(s) ((s) ? (s) : "")

/* A browser's session: a cookie names it, and its CSRF token is good for
 * POSTs carrying that cookie only. The token changes every --csrf-rotate
 * (CSRF_ROTATE_MS by default); the one before stays good until the next
 * change, so a page loaded just before still works. */
struct dash_session {
	char id[33], tok[33], prev[33];
	int64_t rotated, used; /* monotonic ms; used 0: a free slot */
};

#define SESSIONS        256                   /* the least recently used go */
#define CSRF_ROTATE_MS  (60 * 60 * 1000)      /* an hour */
#define SESSION_IDLE_MS (12 * 60 * 60 * 1000) /* then it is forgotten */

struct dash {
	sked *h;
	pthread_mutex_t db_mu; /* guards h */
	int read_only;
	pthread_mutex_t sess_mu; /* guards sess */
	struct dash_session sess[SESSIONS];
	int64_t rotate_ms;     /* --csrf-rotate */
	char *user, *secret;   /* --auth: user may be NULL (a token) */
	char url[512];         /* redacted */
	char listen_host[256]; /* as given in --listen, without the port */
	struct cli_api *api;   /* --api-token: the JSON API, or NULL */
};

/* ---- dashboard_session.c ---- */
int dash_load_auth(struct dash *d, const char *spec);
int dash_random_token(char *out, size_t len);
int dash_same_origin(const struct cli_http_request *rq);
int dash_host_allowed(const struct dash *d, const struct cli_http_request *rq);
int dash_authorized(struct dash *d, const struct cli_http_request *rq);
int dash_session_of(struct dash *d, const struct cli_http_request *rq,
                    struct cli_http_reply *rp, int create, char *tok,
                    char *prev);

/* ---- dashboard_forms.c ---- */
void dash_post_tasks(struct dash *d, const struct cli_http_request *rq,
                     struct cli_http_reply *rp, int retry);
void dash_post_prune(struct dash *d, const struct cli_http_request *rq,
                     struct cli_http_reply *rp);
void dash_post_schedule(struct dash *d, const struct cli_http_request *rq,
                        struct cli_http_reply *rp, int pause);
void dash_post_queue(struct dash *d, const struct cli_http_request *rq,
                     struct cli_http_reply *rp, int pause);

/* ---- dashboard_pages.c ---- */
void dash_overview(struct dash *d, const struct cli_http_request *rq,
                   struct cli_http_reply *rp);
void dash_nodes(struct dash *d, const struct cli_http_request *rq,
                struct cli_http_reply *rp);
void dash_schedules(struct dash *d, const struct cli_http_request *rq,
                    struct cli_http_reply *rp);
void dash_locks(struct dash *d, const struct cli_http_request *rq,
                struct cli_http_reply *rp);
void dash_queues(struct dash *d, const struct cli_http_request *rq,
                 struct cli_http_reply *rp);

/* ---- dashboard_tasks.c ---- */
void dash_tasks(struct dash *d, const struct cli_http_request *rq,
                struct cli_http_reply *rp, int failed_view);
void dash_task(struct dash *d, const struct cli_http_request *rq,
               struct cli_http_reply *rp, int64_t id);

/* ---- dashboard_graph.c ---- */
/* the task's workflow as an SVG panel; nothing when it has no parents
 * and no children */
void dash_graph_panel(struct dash *d, struct cli_sbuf *b, int64_t id);

/* ---- dashboard_page.c ---- */
/* the CSRF token of the session of the request this thread answers */
void dash_set_csrf(const char *tok);
void dash_csrf_field(struct cli_sbuf *b);
void dash_html_reply(struct cli_http_reply *rp);
void dash_page_begin(struct dash *d, struct cli_sbuf *b, const char *title,
                     const char *nav);
void dash_page_end(struct cli_sbuf *b);
/* An error page: 400 when the request's own input was refused (a bad
 * name, a value out of range), with the library's reason; else 503. */
void dash_input_error(struct dash *d, struct cli_http_reply *rp, int rc,
                      const char *what);
void dash_db_error(struct dash *d, struct cli_http_reply *rp, const char *what);
void dash_not_found(struct dash *d, struct cli_http_reply *rp);
/* A reply whose page a template could not render: 500, one line. */
void dash_template_failed(struct cli_http_reply *rp, const char *why);
void dash_flash(struct cli_sbuf *b, const struct cli_http_request *rq);
void dash_pill(struct cli_sbuf *b, const char *cls, const char *text);
void dash_status_pill(struct cli_sbuf *b, int st);
void dash_time_cell(struct cli_sbuf *b, int64_t now, int64_t ms);
const char *dash_ago(int64_t now, int64_t then, char *buf, size_t len);
/* a name from the query, or NULL when absent, empty or not a name */
const char *dash_name_arg(const struct cli_http_request *rq, const char *key);
/* v (or the query's since) when it is one of the windows the filter
 * offers (15m, 1h, 1d, 7d), else NULL */
const char *dash_window_arg(const struct cli_http_request *rq, const char *v);
extern const char *const dash_windows[4];
/* a filter as hidden fields of a form, and as the arguments of a link */
void dash_filter_fields(struct cli_sbuf *b, const sked_list_filter *f,
                        const char *since);
void dash_filter_query(struct cli_sbuf *b, const sked_list_filter *f,
                       const char *since);

#endif /* SKED_CLI_DASHBOARD_INT_H */
