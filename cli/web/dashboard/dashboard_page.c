/*
 * dashboard_page.c — what every page of `sked dashboard` shares: the head
 * with its navigation and the foot, error and flash lines, status pills,
 * time cells, the CSRF field, and the task filter's arguments (read from
 * the query, written back as hidden fields and as a link's query).
 *
 * Layer: the command-line program, a client of <sked.h> only; the
 * dashboard's rendering, above the template renderer (dashboard_tpl.c)
 * and below the pages (dashboard_int.h draws the files). The HTML is
 * templates/layout.html.
 */
#include "web/dashboard/dashboard_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the CSRF token of the session of the request this thread answers */
static __thread char req_csrf[33];

void
dash_set_csrf(const char *tok)
{
	snprintf(req_csrf, sizeof req_csrf, "%s", tok);
}

void
dash_csrf_field(struct cli_sbuf *b)
{
	TPL(b, "layout.csrf", {"token", req_csrf});
}

const char *
dash_ago(int64_t now, int64_t then, char *buf, size_t len)
{
	char d[32];

	if (then == 0)
		return "-";
	if (now < then) {
		snprintf(buf, len, "in %s",
		         sked_format_duration((then - now) / 1000 * 1000, d,
		                              sizeof d));
		return buf;
	}
	if (now - then < 1000)
		return "just now";
	snprintf(buf, len, "%s ago",
	         sked_format_duration((now - then) / 1000 * 1000, d, sizeof d));
	return buf;
}

void
dash_pill(struct cli_sbuf *b, const char *cls, const char *text)
{
	TPL(b, "layout.pill", {"class", cls}, {"text", text});
}

void
dash_status_pill(struct cli_sbuf *b, int st)
{
	dash_pill(b, sked_status_name(st), sked_status_name(st));
}

/* A time cell: relative, with the ISO time as its title. */
void
dash_time_cell(struct cli_sbuf *b, int64_t now, int64_t ms)
{
	char iso[40], rel[64];

	if (ms == 0) {
		TPL0(b, "layout.time_none");
		return;
	}
	TPL(b, "layout.time", {"iso", sked_format_time(ms, iso, sizeof iso)},
	    {"rel", dash_ago(now, ms, rel, sizeof rel)});
}

void
dash_page_begin(struct dash *d, struct cli_sbuf *b, const char *title,
                const char *nav)
{
	static const char *const items[][2] = {
	        {"/", "Overview"},           {"/tasks", "Tasks"},
	        {"/failed", "Failed"},       {"/nodes", "Nodes"},
	        {"/schedules", "Schedules"}, {"/locks", "Locks"},
	        {"/queues", "Queues"}};
	struct cli_sbuf links = {0};

	for (size_t i = 0; i < sizeof items / sizeof items[0]; i++)
		TPL(&links,
		    strcmp(nav, items[i][0]) == 0 ? "layout.nav_on"
		                                  : "layout.nav",
		    {"href", items[i][0]}, {"label", items[i][1]});
	TPL(b, "layout.head", {"title", title}, {"nav", links.p ? links.p : ""},
	    {"db", d->url}, {"read_only", d->read_only ? " · read-only" : ""});
	cli_sbuf_free(&links);
}

void
dash_page_end(struct cli_sbuf *b)
{
	TPL(b, "layout.foot", {"version", SKED_VERSION});
}

void
dash_html_reply(struct cli_http_reply *rp)
{
	rp->content_type = "text/html; charset=utf-8";
	rp->no_frames = 1;
}

void
dash_input_error(struct dash *d, struct cli_http_reply *rp, int rc,
                 const char *what)
{
	int bad = rc == SKED_EINVAL || rc == SKED_ETOOBIG || rc == SKED_ECRON ||
	          rc == SKED_ETZ || rc == SKED_ESTATE;
	const char *m = sked_errmsg(d->h);

	dash_html_reply(rp);
	rp->status = bad ? 400 : 503;
	cli_sbuf_free(&rp->body);
	dash_page_begin(d, &rp->body, "Error", "");
	TPL(&rp->body, "layout.error", {"what", what}, {"reason", m ? m : ""});
	dash_page_end(&rp->body);
}

void
dash_db_error(struct dash *d, struct cli_http_reply *rp, const char *what)
{
	dash_input_error(d, rp, SKED_EDB, what);
}

void
dash_not_found(struct dash *d, struct cli_http_reply *rp)
{
	dash_html_reply(rp);
	rp->status = 404;
	dash_page_begin(d, &rp->body, "Not found", "");
	TPL0(&rp->body, "layout.not_found");
	dash_page_end(&rp->body);
}

void
dash_template_failed(struct cli_http_reply *rp, const char *why)
{
	cli_sbuf_free(&rp->body);
	rp->status = 500;
	rp->content_type = "text/plain; charset=utf-8";
	rp->location[0] = '\0';
	(void)why; /* in the log already: the page tells no internals */
	cli_sbuf_puts(&rp->body, "the page could not be made (a template "
	                         "error, which the log names)\n");
}

/* The flash line after a POST: a fixed text per code, never the request's
 * own words. */
void
dash_flash(struct cli_sbuf *b, const struct cli_http_request *rq)
{
	static const char *const codes[][3] = {
	        {"retried", "Retried ", " task(s)."},
	        {"cancelled", "Cancelled ", " task(s)."},
	        {"pruned", "Removed ", " dead node(s)."},
	        {"paused", "Schedule paused.", NULL},
	        {"resumed", "Schedule resumed.", NULL},
	        {"qpaused",
	         "Queue paused: workers stop claiming its tasks "
	         "within 2 s.",
	         NULL},
	        {"qresumed", "Queue resumed.", NULL},
	        {"none", "Nothing selected.", NULL}};
	const char *done = cli_http_arg(rq, "done");
	const char *n = cli_http_arg(rq, "n");
	char text[128];

	if (!done)
		return;
	for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
		if (strcmp(done, codes[i][0]) == 0) {
			if (codes[i][2])
				snprintf(text, sizeof text, "%s%lld%s",
				         codes[i][1],
				         n ? strtoll(n, NULL, 10) : 0LL,
				         codes[i][2]);
			else
				snprintf(text, sizeof text, "%s", codes[i][1]);
			TPL(b, "layout.flash", {"text", text});
		}
}

const char *
dash_name_arg(const struct cli_http_request *rq, const char *key)
{
	const char *v = cli_http_arg(rq, key);

	return v && v[0] && sked_name_valid(v) ? v : NULL;
}

/* the creation windows the filter offers, as durations */
const char *const dash_windows[4] = {"15m", "1h", "1d", "7d"};

const char *
dash_window_arg(const struct cli_http_request *rq, const char *v)
{
	if (!v)
		v = cli_http_arg(rq, "since");
	for (size_t i = 0;
	     v && i < sizeof dash_windows / sizeof dash_windows[0]; i++)
		if (strcmp(v, dash_windows[i]) == 0)
			return dash_windows[i];
	return NULL;
}

/* the filter's arguments that are set, in the order the pages always
 * wrote them: as hidden fields, or as a link's query */
static void
filter_args(struct cli_sbuf *b, const sked_list_filter *f, const char *since,
            int query)
{
	const char *k[5], *v[5];
	size_t n = 0;

	if (f->node_id)
		k[n] = "node", v[n++] = f->node_id;
	if (since)
		k[n] = "since", v[n++] = since;
	if (f->queue)
		k[n] = "queue", v[n++] = f->queue;
	if (f->kind)
		k[n] = "kind", v[n++] = f->kind;
	if (f->status >= 0)
		k[n] = "status", v[n++] = sked_status_name(f->status);
	for (size_t i = 0; i < n; i++)
		TPL(b, query ? "tasks.arg" : "layout.hidden", {"name", k[i]},
		    {"value", v[i]});
}

void
dash_filter_fields(struct cli_sbuf *b, const sked_list_filter *f,
                   const char *since)
{
	filter_args(b, f, since, 0);
}

void
dash_filter_query(struct cli_sbuf *b, const sked_list_filter *f,
                  const char *since)
{
	filter_args(b, f, since, 1);
}
