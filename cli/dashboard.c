/*
 * dashboard.c — `sked dashboard`: the web dashboard, server-rendered.
 *
 * Size: the pages are still HTML written in C; the plan is
 * templates embedded at build time, as the static files already are
 * (issue 27, "Files with one job"), which takes most of this file away.
 *
 * Layer: the command-line program, a client of <sked.h> only. Pages are
 * HTML written here with every value from the database escaped
 * (cli_sbuf_html); the stylesheet and the little JavaScript are embedded
 * files (cli/dashboard/). The HTTP server is http.c's, one thread per
 * connection; db_mu serialises them on the one database connection.
 *
 * Security (docs/operations.md): 127.0.0.1 by default; another address
 * only with --auth, whose credentials come from a file or the environment
 * (never the command line, which `ps` shows); every change is a POST that
 * carries the CSRF token of the browser's session (a cookie; the token
 * changes every hour) and is refused from another site;
 * --read-only serves no form and refuses every POST; responses carry a
 * Content-Security-Policy that allows no inline script.
 */
#include "api.h"
#include "cli.h"
#include "dashboard.h"
#include "http.h"
#include "metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <unistd.h>

#define PAGE_SIZE    50
#define CHART_MIN    30
#define DEFAULT_ADDR "127.0.0.1:8420"
#define AUTH_MIN     8 /* the least length of a password or a token */

/* A browser's session: a cookie names it, and its CSRF token is good for
 * POSTs carrying that cookie only. The token changes every --csrf-rotate
 * (CSRF_ROTATE_MS by default); the one before stays good until the next
 * change, so a page loaded just before still works. */
struct session {
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
	struct session sess[SESSIONS];
	int64_t rotate_ms;     /* --csrf-rotate */
	char *user, *secret;   /* --auth: user may be NULL (a token) */
	char url[512];         /* redacted */
	char listen_host[256]; /* as given in --listen, without the port */
	struct cli_api *api;   /* --api-token: the JSON API, or NULL */
};

/* ---- small helpers ---- */

static void
esc(struct cli_sbuf *b, const char *s)
{
	cli_sbuf_html(b, s);
}

static const char *
ago(int64_t now, int64_t then, char *buf, size_t len)
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

static void
pill(struct cli_sbuf *b, const char *cls, const char *text)
{
	cli_sbuf_puts(b, "<span class=\"pill ");
	esc(b, cls);
	cli_sbuf_puts(b, "\">");
	esc(b, text);
	cli_sbuf_puts(b, "</span>");
}

static void
status_pill(struct cli_sbuf *b, int st)
{
	pill(b, sked_status_name(st), sked_status_name(st));
}

/* A time cell: relative, with the ISO time as its title. */
static void
time_cell(struct cli_sbuf *b, int64_t now, int64_t ms)
{
	char iso[40], rel[64];

	if (ms == 0) {
		cli_sbuf_puts(b, "<td class=\"muted\">-</td>");
		return;
	}
	cli_sbuf_printf(b, "<td title=\"%s\">%s</td>",
	                sked_format_time(ms, iso, sizeof iso),
	                ago(now, ms, rel, sizeof rel));
}

/* the CSRF token of the session of the request this thread answers */
static __thread char req_csrf[33];

static void
csrf_field(struct dash *d, struct cli_sbuf *b)
{
	(void)d;
	cli_sbuf_printf(b, "<input type=\"hidden\" name=\"csrf\" value=\"%s\">",
	                req_csrf);
}

static void
page_begin(struct dash *d, struct cli_sbuf *b, const char *title,
           const char *nav)
{
	static const char *const items[][2] = {
	        {"/", "Overview"},           {"/tasks", "Tasks"},
	        {"/failed", "Failed"},       {"/nodes", "Nodes"},
	        {"/schedules", "Schedules"}, {"/locks", "Locks"},
	        {"/queues", "Queues"}};

	cli_sbuf_puts(b, "<!doctype html><html lang=\"en\"><head>"
	                 "<meta charset=\"utf-8\"><meta name=\"viewport\" "
	                 "content=\"width=device-width, initial-scale=1\">"
	                 "<title>");
	esc(b, title);
	cli_sbuf_puts(b, " · sked</title><link rel=\"stylesheet\" "
	                 "href=\"/static/app.css\"><link rel=\"icon\" "
	                 "href=\"/static/icon.svg\"></head><body>"
	                 "<header class=\"top\"><a class=\"brand\" href=\"/\">"
	                 "<span class=\"dot\"></span>sked</a><nav>");
	for (size_t i = 0; i < sizeof items / sizeof items[0]; i++)
		cli_sbuf_printf(b, "<a href=\"%s\"%s>%s</a>", items[i][0],
		                strcmp(nav, items[i][0]) == 0 ? " class=\"on\""
		                                              : "",
		                items[i][1]);
	cli_sbuf_puts(b, "</nav><span class=\"db\" title=\"database\">");
	esc(b, d->url);
	if (d->read_only)
		cli_sbuf_puts(b, " · read-only");
	cli_sbuf_puts(b, "</span></header><main>");
}

static void
page_end(struct cli_sbuf *b)
{
	cli_sbuf_printf(b,
	                "</main><footer>sked %s · times from the database's "
	                "clock</footer><script src=\"/static/app.js\">"
	                "</script></body></html>",
	                SKED_VERSION);
}

static void
html_reply(struct cli_http_reply *rp)
{
	rp->content_type = "text/html; charset=utf-8";
	rp->no_frames = 1;
}

/* An error page: 400 when the request's own input was refused (a bad
 * name, a value out of range), with the library's reason; else 503. */
static void
input_error(struct dash *d, struct cli_http_reply *rp, int rc, const char *what)
{
	int bad = rc == SKED_EINVAL || rc == SKED_ETOOBIG || rc == SKED_ECRON ||
	          rc == SKED_ETZ || rc == SKED_ESTATE;

	html_reply(rp);
	rp->status = bad ? 400 : 503;
	cli_sbuf_free(&rp->body);
	page_begin(d, &rp->body, "Error", "");
	cli_sbuf_puts(&rp->body, "<div class=\"flash err\">");
	esc(&rp->body, what);
	cli_sbuf_puts(&rp->body, ": ");
	esc(&rp->body, sked_errmsg(d->h));
	cli_sbuf_puts(&rp->body, "</div>");
	page_end(&rp->body);
}

static void
db_error(struct dash *d, struct cli_http_reply *rp, const char *what)
{
	input_error(d, rp, SKED_EDB, what);
}

/* The flash line after a POST: a fixed text per code, never the request's
 * own words. */
static void
flash(struct cli_sbuf *b, const struct cli_http_request *rq)
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
	char num[24];

	if (!done)
		return;
	snprintf(num, sizeof num, "%lld", n ? strtoll(n, NULL, 10) : 0LL);
	for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
		if (strcmp(done, codes[i][0]) == 0) {
			cli_sbuf_puts(b, "<div class=\"flash\" id=\"flash\">");
			cli_sbuf_puts(b, codes[i][1]);
			if (codes[i][2]) {
				cli_sbuf_puts(b, num);
				cli_sbuf_puts(b, codes[i][2]);
			}
			cli_sbuf_puts(b, "</div>");
		}
}

/* ---- pages ---- */

static void
chart(struct cli_sbuf *b, const int64_t *ok, const int64_t *bad, int n)
{
	int64_t max = 1, tok = 0, tbad = 0;
	const int w = 600, hgt = 120, bw = w / n;

	for (int i = 0; i < n; i++) {
		if (ok[i] + bad[i] > max)
			max = ok[i] + bad[i];
		tok += ok[i];
		tbad += bad[i];
	}
	cli_sbuf_printf(b,
	                "<div class=\"chart\"><svg viewBox=\"0 0 %d %d\" "
	                "preserveAspectRatio=\"none\" role=\"img\" "
	                "aria-label=\"attempts per minute\">",
	                w, hgt + 1);
	for (int i = 0; i < n; i++) {
		int hok = (int)(ok[i] * hgt / max),
		    hbad = (int)(bad[i] * hgt / max);
		int x = i * bw + 1;
		if (hok > 0)
			cli_sbuf_printf(
			        b,
			        "<rect class=\"ok\" x=\"%d\" y=\"%d\" "
			        "width=\"%d\" height=\"%d\"><title>%lld "
			        "succeeded</title></rect>",
			        x, hgt - hok, bw - 2, hok, (long long)ok[i]);
		if (hbad > 0)
			cli_sbuf_printf(
			        b,
			        "<rect class=\"bad\" x=\"%d\" y=\"%d\" "
			        "width=\"%d\" height=\"%d\"><title>%lld "
			        "failed</title></rect>",
			        x, hgt - hok - hbad, bw - 2, hbad,
			        (long long)bad[i]);
	}
	cli_sbuf_printf(b,
	                "<line class=\"base\" x1=\"0\" y1=\"%d\" x2=\"%d\" "
	                "y2=\"%d\"/></svg><div class=\"axis\"><span>-%d "
	                "min</span><span>peak %lld/min</span><span>now</span>"
	                "</div>",
	                hgt, w, hgt, n, (long long)max);
	cli_sbuf_printf(b,
	                "<div class=\"legend\"><span><span class=\"sw ok\">"
	                "</span>%lld succeeded</span><span><span class=\"sw "
	                "bad\"></span>%lld failed</span><span>last %d "
	                "minutes</span></div></div>",
	                (long long)tok, (long long)tbad, n);
}

static void
page_overview(struct dash *d, const struct cli_http_request *rq,
              struct cli_http_reply *rp)
{
	struct cli_sbuf *b = &rp->body;
	sked_cluster_gauges g;
	sked_queue_stats *st = NULL;
	size_t nst = 0;
	int64_t ok[CHART_MIN], bad[CHART_MIN];
	int64_t due = 0, running = 0, retry = 0, dead = 0, oldest = 0;
	char dur[32];

	if (sked_cluster_gauges_get(d->h, &g) != SKED_OK)
		return db_error(d, rp, "cannot read the queues");
	if (sked_stats(d->h, &st, &nst) != SKED_OK) {
		sked_cluster_gauges_free(&g);
		return db_error(d, rp, "cannot count tasks");
	}
	if (sked_throughput(d->h, CHART_MIN, ok, bad) != SKED_OK) {
		sked_cluster_gauges_free(&g);
		free(st);
		return db_error(d, rp, "cannot read recent runs");
	}
	/* which queues are paused (a row of its own in the limits table) */
	sked_queue_info *qi = NULL;
	size_t nqi = 0;
	if (sked_queue_list(d->h, &qi, &nqi) != SKED_OK)
		qi = NULL, nqi = 0;
	for (size_t i = 0; i < g.nqueues; i++) {
		due += g.queues[i].due;
		running += g.queues[i].running;
		retry += g.queues[i].retrying;
		if (g.queues[i].oldest_due_age_ms > oldest)
			oldest = g.queues[i].oldest_due_age_ms;
	}
	for (size_t i = 0; i < nst; i++)
		dead += st[i].count[SKED_DEAD];

	html_reply(rp);
	page_begin(d, b, "Overview", "/");
	cli_sbuf_puts(b, "<h1>Overview <label class=\"muted refresh\">"
	                 "<input type=\"checkbox\" "
	                 "id=\"autorefresh\"> <small>auto-refresh</small>"
	                 "</label></h1>");
	flash(b, rq);
	cli_sbuf_puts(b, "<div class=\"cards\">");
	cli_sbuf_printf(b,
	                "<div class=\"card%s\"><div class=\"label\">Nodes "
	                "alive</div><div class=\"value\">%lld<span "
	                "class=\"muted\"> / %lld</span></div><div "
	                "class=\"sub\"><a href=\"/nodes\">nodes</a></div>"
	                "</div>",
	                g.nodes_alive > 0 ? " ok" : " warn",
	                (long long)g.nodes_alive, (long long)g.nodes);
	cli_sbuf_printf(b,
	                "<div class=\"card\"><div class=\"label\">Due now"
	                "</div><div class=\"value\">%lld</div><div "
	                "class=\"sub\">waiting for a worker</div></div>",
	                (long long)due);
	cli_sbuf_printf(b,
	                "<div class=\"card\"><div class=\"label\">Running"
	                "</div><div class=\"value\">%lld</div><div "
	                "class=\"sub\">leased by a node</div></div>",
	                (long long)running);
	cli_sbuf_printf(b,
	                "<div class=\"card%s\"><div class=\"label\">Oldest "
	                "due</div><div class=\"value\">%s</div><div "
	                "class=\"sub\">the age people alert on</div></div>",
	                oldest > 60000 ? " warn" : "",
	                oldest ? sked_format_duration(oldest / 1000 * 1000, dur,
	                                              sizeof dur)
	                       : "0s");
	cli_sbuf_printf(b,
	                "<div class=\"card%s\"><div class=\"label\">Retrying"
	                "</div><div class=\"value\">%lld</div><div "
	                "class=\"sub\"><a href=\"/failed?status=retry\">"
	                "failed attempts</a></div></div>",
	                retry ? " warn" : "", (long long)retry);
	cli_sbuf_printf(b,
	                "<div class=\"card%s\"><div class=\"label\">Dead"
	                "</div><div class=\"value\">%lld</div><div "
	                "class=\"sub\"><a href=\"/failed\">attempts spent"
	                "</a></div></div>",
	                dead ? " bad" : "", (long long)dead);
	cli_sbuf_puts(b, "</div><div class=\"panel\"><h2>Throughput</h2>");
	chart(b, ok, bad, CHART_MIN);
	cli_sbuf_puts(b, "</div><div class=\"panel\"><h2>Queues</h2>");
	if (nst == 0) {
		cli_sbuf_puts(b, "<div class=\"empty\">No tasks yet. Enqueue "
		                 "one with <span class=\"mono\">sked enqueue "
		                 "KIND</span>.</div></div>");
	} else {
		static const int cols[] = {SKED_PENDING, SKED_RUNNING,
		                           SKED_RETRY,   SKED_SUCCEEDED,
		                           SKED_DEAD,    SKED_CANCELLED,
		                           SKED_BLOCKED};
		const size_t ncols = sizeof cols / sizeof cols[0];
		cli_sbuf_puts(b, "<div class=\"scroll\"><table><thead><tr>"
		                 "<th>Queue</th><th class=\"num\">Due</th>");
		for (size_t k = 0; k < ncols; k++)
			cli_sbuf_printf(b, "<th class=\"num\">%s</th>",
			                sked_status_name(cols[k]));
		cli_sbuf_puts(b, "<th class=\"num\">Oldest due</th></tr>"
		                 "</thead><tbody>");
		for (size_t i = 0; i < nst; i++) {
			const sked_queue_gauge *qg = NULL;
			for (size_t k = 0; k < g.nqueues; k++)
				if (strcmp(g.queues[k].queue, st[i].queue) == 0)
					qg = &g.queues[k];
			cli_sbuf_puts(b, "<tr><td><a href=\"/tasks?queue=");
			cli_sbuf_url(b, st[i].queue);
			cli_sbuf_puts(b, "\">");
			esc(b, st[i].queue);
			cli_sbuf_puts(b, "</a>");
			if (cli_queue_paused(qi, nqi, st[i].queue)) {
				cli_sbuf_puts(b, " ");
				pill(b, "retry", "paused");
			}
			cli_sbuf_printf(b, "</td><td class=\"num\">%lld</td>",
			                (long long)(qg ? qg->due : 0));
			for (size_t k = 0; k < ncols; k++) {
				cli_sbuf_puts(b, "<td class=\"num\"><a "
				                 "href=\"/tasks?queue=");
				cli_sbuf_url(b, st[i].queue);
				cli_sbuf_printf(
				        b, "&amp;status=%s\">%lld</a></td>",
				        sked_status_name(cols[k]),
				        (long long)st[i].count[cols[k]]);
			}
			cli_sbuf_printf(
			        b, "<td class=\"num\">%s</td></tr>",
			        qg && qg->oldest_due_age_ms
			                ? sked_format_duration(
			                          qg->oldest_due_age_ms / 1000 *
			                                  1000,
			                          dur, sizeof dur)
			                : "-");
		}
		cli_sbuf_puts(b, "</tbody></table></div></div>");
	}
	page_end(b);
	sked_cluster_gauges_free(&g);
	sked_queue_info_free(qi, nqi);
	free(st);
}

/* a name from the query, or NULL when absent, empty or not a name */
static const char *
name_arg(const struct cli_http_request *rq, const char *key)
{
	const char *v = cli_http_arg(rq, key);

	return v && v[0] && sked_name_valid(v) ? v : NULL;
}

/* the creation windows the filter offers, as durations */
static const char *const windows[] = {"15m", "1h", "1d", "7d"};

static const char *
window_arg(const struct cli_http_request *rq, const char *v)
{
	if (!v)
		v = cli_http_arg(rq, "since");
	for (size_t i = 0; v && i < sizeof windows / sizeof windows[0]; i++)
		if (strcmp(v, windows[i]) == 0)
			return windows[i];
	return NULL;
}

static void
filter_fields(struct cli_sbuf *b, const sked_list_filter *f, const char *since)
{
	if (f->node_id) {
		cli_sbuf_puts(b,
		              "<input type=\"hidden\" name=\"node\" value=\"");
		esc(b, f->node_id);
		cli_sbuf_puts(b, "\">");
	}
	if (since)
		cli_sbuf_printf(b,
		                "<input type=\"hidden\" name=\"since\" "
		                "value=\"%s\">",
		                since);
	if (f->queue) {
		cli_sbuf_puts(b,
		              "<input type=\"hidden\" name=\"queue\" value=\"");
		esc(b, f->queue);
		cli_sbuf_puts(b, "\">");
	}
	if (f->kind) {
		cli_sbuf_puts(b,
		              "<input type=\"hidden\" name=\"kind\" value=\"");
		esc(b, f->kind);
		cli_sbuf_puts(b, "\">");
	}
	if (f->status >= 0)
		cli_sbuf_printf(b,
		                "<input type=\"hidden\" name=\"status\" "
		                "value=\"%s\">",
		                sked_status_name(f->status));
}

/* the query string of a filter (for links), already escaped for HTML */
static void
filter_query(struct cli_sbuf *b, const sked_list_filter *f, const char *since)
{
	if (f->node_id) {
		cli_sbuf_puts(b, "&amp;node=");
		cli_sbuf_url(b, f->node_id);
	}
	if (since)
		cli_sbuf_printf(b, "&amp;since=%s", since);
	if (f->queue) {
		cli_sbuf_puts(b, "&amp;queue=");
		cli_sbuf_url(b, f->queue);
	}
	if (f->kind) {
		cli_sbuf_puts(b, "&amp;kind=");
		cli_sbuf_url(b, f->kind);
	}
	if (f->status >= 0)
		cli_sbuf_printf(b, "&amp;status=%s",
		                sked_status_name(f->status));
}

static void
page_tasks(struct dash *d, const struct cli_http_request *rq,
           struct cli_http_reply *rp, int failed_view)
{
	struct cli_sbuf *b = &rp->body;
	sked_list_filter f;
	sked_task *t = NULL;
	size_t n = 0;
	const char *s, *q = cli_http_arg(rq, "q");
	const char *since = window_arg(rq, NULL);
	int64_t now = 0, win = 0;
	const char *nav = failed_view ? "/failed" : "/tasks";

	memset(&f, 0, sizeof f);
	f.status = -1;
	f.queue = name_arg(rq, "queue");
	f.kind = name_arg(rq, "kind");
	f.node_id = name_arg(rq, "node");
	if (sked_now(d->h, &now) != SKED_OK)
		return db_error(d, rp, "cannot list tasks");
	if (since && sked_parse_duration(since, &win) == SKED_OK)
		f.created_after_ms = now - win;
	if ((s = cli_http_arg(rq, "status")) && s[0])
		f.status = sked_status_parse(s);
	if (failed_view && f.status != SKED_RETRY && f.status != SKED_CANCELLED)
		f.status = SKED_DEAD;
	if ((s = cli_http_arg(rq, "before")))
		f.before_id = strtoll(s, NULL, 10);
	f.limit = PAGE_SIZE + 1;

	/* search: an id, else a unique key */
	if (q && q[0]) {
		char *end;
		int64_t id = strtoll(q, &end, 10);
		if (*end != '\0' || id <= 0) {
			if (sked_task_find_unique(d->h, q, &id) != SKED_OK)
				id = 0;
		}
		if (id > 0) {
			rp->status = 303;
			snprintf(rp->location, sizeof rp->location,
			         "/task/%" PRId64, id);
			return;
		}
	}
	int rc = sked_task_list(d->h, &f, &t, &n);
	if (rc != SKED_OK)
		return input_error(d, rp, rc, "cannot list tasks");

	html_reply(rp);
	page_begin(d, b, failed_view ? "Failed tasks" : "Tasks", nav);
	cli_sbuf_printf(b, "<h1>%s</h1>",
	                failed_view ? "Dead and failed tasks" : "Tasks");
	flash(b, rq);
	if (q && q[0]) {
		cli_sbuf_puts(b, "<div class=\"flash err\">No task has the id "
		                 "or unique key “");
		esc(b, q);
		cli_sbuf_puts(b, "”.</div>");
	}
	/* the filter form */
	cli_sbuf_printf(b,
	                "<form class=\"filters\" method=\"get\" "
	                "action=\"%s\">",
	                nav);
	cli_sbuf_puts(b, "<label>Queue<input name=\"queue\" size=\"12\" "
	                 "value=\"");
	esc(b, f.queue);
	cli_sbuf_puts(b, "\"></label><label>Kind<input name=\"kind\" "
	                 "size=\"12\" value=\"");
	esc(b, f.kind);
	cli_sbuf_puts(b, "\"></label><label>Status<select name=\"status\">");
	if (!failed_view)
		cli_sbuf_printf(b, "<option value=\"\"%s>any</option>",
		                f.status < 0 ? " selected" : "");
	for (int st = 0; st < 6; st++) {
		if (failed_view && st != SKED_DEAD && st != SKED_RETRY &&
		    st != SKED_CANCELLED)
			continue;
		cli_sbuf_printf(b, "<option%s>%s</option>",
		                f.status == st ? " selected" : "",
		                sked_status_name(st));
	}
	cli_sbuf_puts(b, "</select></label><label>Created<select "
	                 "name=\"since\">");
	cli_sbuf_printf(b, "<option value=\"\"%s>any time</option>",
	                since ? "" : " selected");
	for (size_t i = 0; i < sizeof windows / sizeof windows[0]; i++)
		cli_sbuf_printf(b, "<option value=\"%s\"%s>last %s</option>",
		                windows[i],
		                since == windows[i] ? " selected" : "",
		                windows[i]);
	cli_sbuf_puts(b, "</select></label><label>Node<input name=\"node\" "
	                 "size=\"12\" value=\"");
	esc(b, f.node_id);
	cli_sbuf_puts(b, "\"></label><label>Id or unique key<input "
	                 "name=\"q\" size=\"16\" placeholder=\"search\">"
	                 "</label><button type=\"submit\">Filter</button>"
	                 "</form>");

	int more = n > PAGE_SIZE;
	size_t shown = more ? PAGE_SIZE : n;
	int can_retry = f.status < 0 || f.status == SKED_DEAD ||
	                f.status == SKED_RETRY || f.status == SKED_CANCELLED;
	int can_cancel = f.status < 0 || f.status == SKED_PENDING ||
	                 f.status == SKED_RETRY || f.status == SKED_RUNNING;

	/* bulk by filter */
	if (!d->read_only && f.status >= 0 && shown > 0 &&
	    (can_retry || can_cancel)) {
		const char *verb = can_retry ? "retry" : "cancel";
		cli_sbuf_printf(b,
		                "<form class=\"actions\" method=\"post\" "
		                "action=\"/tasks/%s\" data-confirm=\"%s every "
		                "%s task that matches this filter?\">",
		                verb, can_retry ? "Retry" : "Cancel",
		                sked_status_name(f.status));
		csrf_field(d, b);
		filter_fields(b, &f, since);
		cli_sbuf_printf(b,
		                "<input type=\"hidden\" name=\"scope\" "
		                "value=\"filter\"><input type=\"hidden\" "
		                "name=\"back\" value=\"%s\">",
		                nav);
		cli_sbuf_printf(b,
		                "<button type=\"submit\" id=\"bulk-filter\" "
		                "class=\"%s\">%s all %s tasks",
		                can_retry ? "" : "danger",
		                can_retry ? "Retry" : "Cancel",
		                sked_status_name(f.status));
		if (f.kind) {
			cli_sbuf_puts(b, " of kind ");
			esc(b, f.kind);
		}
		if (f.queue) {
			cli_sbuf_puts(b, " in queue ");
			esc(b, f.queue);
		}
		cli_sbuf_puts(b, "</button></form>");
	}

	cli_sbuf_puts(b, "<div class=\"panel\">");
	if (shown == 0) {
		cli_sbuf_puts(b, "<div class=\"empty\">No tasks match.</div>");
	} else {
		if (!d->read_only) {
			cli_sbuf_puts(b,
			              "<form method=\"post\" "
			              "action=\"/tasks/retry\" id=\"bulk\">");
			csrf_field(d, b);
			cli_sbuf_printf(b,
			                "<input type=\"hidden\" name=\"back\" "
			                "value=\"%s\">",
			                nav);
			filter_fields(b, &f, since);
			cli_sbuf_puts(b, "<div class=\"actions\">");
			if (can_retry)
				cli_sbuf_puts(b, "<button type=\"submit\" "
				                 "id=\"retry-selected\" "
				                 "formaction=\"/tasks/retry\">"
				                 "Retry selected</button>");
			if (can_cancel)
				cli_sbuf_puts(b, "<button type=\"submit\" "
				                 "class=\"ghost\" "
				                 "id=\"cancel-selected\" "
				                 "formaction=\"/tasks/cancel\">"
				                 "Cancel selected</button>");
			cli_sbuf_puts(b, "</div>");
		}
		cli_sbuf_puts(b, "<div class=\"scroll\"><table><thead><tr>");
		if (!d->read_only)
			cli_sbuf_puts(b, "<th><input type=\"checkbox\" "
			                 "data-select-all aria-label=\"select "
			                 "all\"></th>");
		cli_sbuf_puts(
		        b, "<th class=\"num\">Id</th><th>Kind</th>"
		           "<th class=\"hide-sm\">Queue</th><th>Status</th><th "
		           "class=\"num\">Attempts</th><th>Run at</th>"
		           "<th class=\"hide-sm\">Last error</th></tr>"
		           "</thead><tbody>");
		for (size_t i = 0; i < shown; i++) {
			cli_sbuf_puts(b, "<tr>");
			if (!d->read_only)
				cli_sbuf_printf(
				        b,
				        "<td><input type=\"checkbox\" "
				        "name=\"id\" value=\"%" PRId64
				        "\" aria-label=\"select\"></td>",
				        t[i].id);
			cli_sbuf_printf(
			        b,
			        "<td class=\"num\"><a href=\"/task/%" PRId64
			        "\">%" PRId64 "</a></td><td>",
			        t[i].id, t[i].id);
			esc(b, t[i].kind);
			cli_sbuf_puts(b, "</td><td class=\"hide-sm\">");
			esc(b, t[i].queue);
			cli_sbuf_puts(b, "</td><td>");
			status_pill(b, t[i].status);
			cli_sbuf_printf(b, "</td><td class=\"num\">%d/%d</td>",
			                t[i].attempts, t[i].max_attempts);
			time_cell(b, now, t[i].run_at_ms);
			cli_sbuf_puts(b, "<td class=\"wrap hide-sm mono\">");
			if (t[i].last_error) {
				size_t el = strlen(t[i].last_error);
				cli_sbuf_htmln(b, t[i].last_error,
				               el > 140 ? 140 : el);
				if (el > 140)
					cli_sbuf_puts(b, "…");
			}
			cli_sbuf_puts(b, "</td></tr>");
		}
		cli_sbuf_puts(b, "</tbody></table></div>");
		if (!d->read_only)
			cli_sbuf_puts(b, "</form>");
	}
	cli_sbuf_puts(b, "</div><div class=\"pager\">");
	if (f.before_id > 0) {
		cli_sbuf_printf(b, "<a href=\"%s?x=1", nav);
		filter_query(b, &f, since);
		cli_sbuf_puts(b, "\">« newest</a>");
	}
	if (more) {
		cli_sbuf_printf(b, "<a id=\"older\" href=\"%s?before=%" PRId64,
		                nav, t[shown - 1].id);
		filter_query(b, &f, since);
		cli_sbuf_puts(b, "\">older »</a>");
	}
	cli_sbuf_printf(b, "<span class=\"muted\">%zu shown</span></div>",
	                shown);
	page_end(b);
	sked_tasks_free(t, n);
}

static void
field(struct cli_sbuf *b, const char *name, const char *value)
{
	cli_sbuf_puts(b, "<dt>");
	esc(b, name);
	cli_sbuf_puts(b, "</dt><dd>");
	if (value)
		esc(b, value);
	else
		cli_sbuf_puts(b, "<span class=\"muted\">-</span>");
	cli_sbuf_puts(b, "</dd>");
}

static void
field_time(struct cli_sbuf *b, const char *name, int64_t ms, int64_t now)
{
	char iso[40], rel[64], both[128];

	if (ms == 0)
		return; /* an empty time says nothing */
	snprintf(both, sizeof both, "%s (%s)",
	         sked_format_time(ms, iso, sizeof iso),
	         ago(now, ms, rel, sizeof rel));
	field(b, name, both);
}

/* A task's parents and children, each linked with its state, and for a
 * blocked task which parents it still waits for (docs/workflows.md). */
#define DEPS_SHOWN 100
static void
deps_panel(struct dash *d, struct cli_sbuf *b, const sked_task *t)
{
	static const char *const title[2] = {"Parents", "Children"};
	int64_t *dep[2] = {NULL, NULL};
	size_t nd[2] = {0, 0};

	if (sked_task_deps(d->h, t->id, &dep[0], &nd[0], &dep[1], &nd[1]) !=
	    SKED_OK) {
		cli_sbuf_puts(b, "<div class=\"panel\"><h2>Dependencies</h2>"
		                 "<div class=\"flash err\">Cannot read this "
		                 "task's parents and children.</div></div>");
		return;
	}
	for (int k = 0; k < 2; k++) {
		size_t open = 0;
		if (nd[k] == 0)
			continue;
		cli_sbuf_printf(b,
		                "<div class=\"panel\" id=\"%s\"><h2>%s "
		                "<span class=\"muted\">(%zu)</span></h2>",
		                k ? "children" : "parents", title[k], nd[k]);
		cli_sbuf_puts(b, "<div class=\"scroll\"><table><thead><tr><th "
		                 "class=\"num\">Task</th><th>Kind</th><th>"
		                 "Status</th></tr></thead><tbody>");
		for (size_t i = 0; i < nd[k]; i++) {
			sked_task *o = NULL;
			int got = sked_task_get(d->h, dep[k][i], &o) == SKED_OK;
			int st = got ? o->status : -1;
			if (k == 0 && got && st != SKED_SUCCEEDED &&
			    st != SKED_DEAD && st != SKED_CANCELLED)
				open++;
			if (i < DEPS_SHOWN) {
				cli_sbuf_printf(b,
				                "<tr><td class=\"num\"><a "
				                "href=\"/task/%" PRId64
				                "\">%" PRId64 "</a></td><td>",
				                dep[k][i], dep[k][i]);
				esc(b, got ? o->kind : NULL);
				cli_sbuf_puts(b, "</td><td>");
				if (got)
					status_pill(b, st);
				else
					cli_sbuf_puts(b,
					              "<span class=\"muted\">"
					              "pruned</span>");
				cli_sbuf_puts(b, "</td></tr>");
			}
			if (got)
				sked_tasks_free(o, 1);
		}
		cli_sbuf_puts(b, "</tbody></table></div>");
		if (nd[k] > DEPS_SHOWN)
			cli_sbuf_printf(b,
			                "<div class=\"muted\">… and %zu more "
			                "(sked show %" PRId64 ")</div>",
			                nd[k] - DEPS_SHOWN, t->id);
		if (k == 0 && t->status == SKED_BLOCKED)
			cli_sbuf_printf(b,
			                "<div class=\"flash\" id=\"waits\">"
			                "Waits for %zu of its %zu parents to "
			                "end; it becomes pending when the last "
			                "one does.</div>",
			                open, nd[k]);
		cli_sbuf_puts(b, "</div>");
	}
	free(dep[0]);
	free(dep[1]);
}

static void
page_task(struct dash *d, const struct cli_http_request *rq,
          struct cli_http_reply *rp, int64_t id)
{
	struct cli_sbuf *b = &rp->body;
	sked_task *t = NULL;
	sked_run *r = NULL;
	size_t nr = 0;
	int64_t now = 0;
	char num[64];
	int rc = sked_task_get(d->h, id, &t);

	if (rc == SKED_ENOTFOUND) {
		html_reply(rp);
		rp->status = 404;
		page_begin(d, b, "Not found", "/tasks");
		cli_sbuf_printf(b,
		                "<h1>Task %" PRId64 "</h1><div class=\"flash "
		                "err\">There is no such task (it may have been "
		                "pruned).</div>",
		                id);
		page_end(b);
		return;
	}
	if (rc != SKED_OK || sked_runs_get(d->h, id, &r, &nr) != SKED_OK ||
	    sked_now(d->h, &now) != SKED_OK) {
		sked_tasks_free(t, t ? 1 : 0);
		return db_error(d, rp, "cannot read the task");
	}
	html_reply(rp);
	page_begin(d, b, "Task", "/tasks");
	cli_sbuf_printf(b, "<h1>Task %" PRId64 " ", id);
	status_pill(b, t->status);
	cli_sbuf_puts(b, "</h1>");
	flash(b, rq);
	if (!d->read_only) {
		int st = t->status;
		cli_sbuf_puts(b, "<div class=\"actions\">");
		if (st == SKED_DEAD || st == SKED_CANCELLED ||
		    st == SKED_RETRY || st == SKED_PENDING) {
			cli_sbuf_puts(b,
			              "<form class=\"inline\" method=\"post\" "
			              "action=\"/tasks/retry\">");
			csrf_field(d, b);
			cli_sbuf_printf(
			        b,
			        "<input type=\"hidden\" name=\"id\" "
			        "value=\"%" PRId64 "\"><input "
			        "type=\"hidden\" name=\"back\" "
			        "value=\"/task/%" PRId64 "\"><button "
			        "type=\"submit\" id=\"retry-one\">Retry "
			        "now</button></form>",
			        id, id);
		}
		if (st == SKED_PENDING || st == SKED_RETRY ||
		    st == SKED_RUNNING || st == SKED_BLOCKED) {
			cli_sbuf_puts(b,
			              "<form class=\"inline\" method=\"post\" "
			              "action=\"/tasks/cancel\">");
			csrf_field(d, b);
			cli_sbuf_printf(
			        b,
			        "<input type=\"hidden\" name=\"id\" "
			        "value=\"%" PRId64 "\"><input "
			        "type=\"hidden\" name=\"back\" "
			        "value=\"/task/%" PRId64 "\"><button "
			        "type=\"submit\" class=\"danger\" "
			        "id=\"cancel-one\">Cancel</button></form>",
			        id, id);
		}
		cli_sbuf_puts(b, "</div>");
	}
	cli_sbuf_puts(b, "<div class=\"grid2\"><div class=\"panel\"><h2>"
	                 "Fields</h2><dl class=\"fields\">");
	field(b, "kind", t->kind);
	field(b, "queue", t->queue);
	field(b, "status", sked_status_name(t->status));
	snprintf(num, sizeof num, "%d", t->priority);
	field(b, "priority", num);
	snprintf(num, sizeof num, "%d of %d", t->attempts, t->max_attempts);
	field(b, "attempts", num);
	field_time(b, "run at", t->run_at_ms, now);
	if (t->node_id)
		field(b, "node", t->node_id);
	field_time(b, "lease until", t->lease_until_ms, now);
	if (t->unique_key)
		field(b, "unique key", t->unique_key);
	if (t->schedule_name)
		field(b, "schedule", t->schedule_name);
	if (t->traceparent)
		field(b, "traceparent", t->traceparent);
	field_time(b, "fire time", t->fire_time_ms, now);
	field_time(b, "created", t->created_ms, now);
	field_time(b, "updated", t->updated_ms, now);
	field_time(b, "finished", t->finished_ms, now);
	if (t->last_error)
		field(b, "last error", t->last_error);
	cli_sbuf_printf(b,
	                "</dl></div><div class=\"panel\"><h2>Payload "
	                "<span class=\"muted\">(%zu bytes)</span></h2><pre "
	                "class=\"payload\" id=\"payload\">",
	                t->payload_len);
	cli_sbuf_htmln(b, t->payload ? t->payload : "", t->payload_len);
	cli_sbuf_puts(b, "</pre></div>");
	if (t->result) {
		size_t rl = strlen(t->result);
		cli_sbuf_printf(b,
		                "<div class=\"panel\"><h2>Result <span "
		                "class=\"muted\">(%zu bytes)</span></h2><pre "
		                "class=\"payload\" id=\"result\">",
		                rl);
		cli_sbuf_htmln(b, t->result, rl);
		cli_sbuf_puts(b, "</pre></div>");
	}
	cli_sbuf_puts(b, "</div><div class=\"panel\"><h2>"
	                 "Attempts</h2>");
	if (nr == 0) {
		cli_sbuf_puts(b, "<div class=\"empty\">No attempt recorded "
		                 "yet.</div>");
	} else {
		cli_sbuf_puts(b, "<div class=\"scroll\"><table><thead><tr><th "
		                 "class=\"num\">#</th><th>Node</th><th>Started"
		                 "</th><th class=\"num\">Took</th><th>Outcome"
		                 "</th><th class=\"num\">Exit</th><th>Error"
		                 "</th><th>Output</th></tr></thead><tbody>");
		for (size_t i = 0; i < nr; i++) {
			char took[32];
			const char *oc = r[i].outcome ? r[i].outcome : "?";
			cli_sbuf_printf(b, "<tr><td class=\"num\">%d</td><td>",
			                r[i].attempt);
			esc(b, r[i].node_id);
			cli_sbuf_puts(b, "</td>");
			time_cell(b, now, r[i].started_ms);
			cli_sbuf_printf(
			        b, "<td class=\"num\">%s</td><td>",
			        r[i].finished_ms && r[i].started_ms
			                ? sked_format_duration(
			                          r[i].finished_ms -
			                                  r[i].started_ms,
			                          took, sizeof took)
			                : "-");
			pill(b,
			     strcmp(oc, "succeeded") == 0  ? "succeeded"
			     : strcmp(oc, "released") == 0 ? "pending"
			                                   : "dead",
			     oc);
			if (r[i].exit_code >= 0)
				cli_sbuf_printf(b, "</td><td class=\"num\">%d",
				                r[i].exit_code);
			else
				cli_sbuf_puts(b, "</td><td class=\"num "
				                 "muted\">-");
			cli_sbuf_puts(b, "</td><td class=\"wrap mono\">");
			esc(b, r[i].error);
			cli_sbuf_puts(b, "</td><td class=\"wrap\"><pre "
			                 "class=\"payload\">");
			esc(b, r[i].output);
			cli_sbuf_puts(b, "</pre></td></tr>");
		}
		cli_sbuf_puts(b, "</tbody></table></div>");
	}
	cli_sbuf_puts(b, "</div>");
	deps_panel(d, b, t);
	page_end(b);
	sked_runs_free(r, nr);
	sked_tasks_free(t, 1);
}

static void
page_nodes(struct dash *d, const struct cli_http_request *rq,
           struct cli_http_reply *rp)
{
	struct cli_sbuf *b = &rp->body;
	sked_node *nd = NULL;
	size_t n = 0;
	int64_t now = 0;

	if (sked_nodes(d->h, &nd, &n) != SKED_OK ||
	    sked_now(d->h, &now) != SKED_OK)
		return db_error(d, rp, "cannot list nodes");
	html_reply(rp);
	page_begin(d, b, "Nodes", "/nodes");
	cli_sbuf_puts(b, "<h1>Nodes</h1>");
	flash(b, rq);
	if (!d->read_only) {
		cli_sbuf_puts(b,
		              "<form class=\"actions\" method=\"post\" "
		              "action=\"/nodes/prune\" data-confirm=\"Remove "
		              "the rows of dead nodes?\">");
		csrf_field(d, b);
		cli_sbuf_puts(b,
		              "<label class=\"muted\">Remove nodes silent "
		              "for more than <select name=\"older_than\">"
		              "<option>1m</option><option selected>10m"
		              "</option><option>1h</option><option>1d"
		              "</option></select></label><button "
		              "type=\"submit\" class=\"ghost\" "
		              "id=\"prune\">Prune dead nodes</button></form>");
	}
	cli_sbuf_puts(b, "<div class=\"panel\">");
	if (n == 0) {
		cli_sbuf_puts(b, "<div class=\"empty\">No worker is registered."
		                 "</div>");
	} else {
		cli_sbuf_puts(b,
		              "<div class=\"scroll\"><table><thead><tr><th>"
		              "Node</th><th>Alive</th><th class=\"num\">"
		              "Running</th><th class=\"num\" title=\"claimed,"
		              " waiting for a free thread\">Held ahead</th>"
		              "<th class=\"num\">Slots</th>"
		              "<th>Heartbeat</th><th>Started"
		              "</th><th>Host</th><th class=\"num\">Pid</th>"
		              "<th>Strategy</th><th>Version</th></tr>"
		              "</thead><tbody>");
		for (size_t i = 0; i < n; i++) {
			cli_sbuf_puts(b, "<tr><td class=\"mono\">");
			esc(b, nd[i].id);
			cli_sbuf_puts(b, "</td><td>");
			pill(b, nd[i].alive ? "yes" : "no",
			     nd[i].alive ? "alive" : "dead");
			cli_sbuf_puts(b,
			              "</td><td class=\"num\"><a "
			              "href=\"/tasks?status=running&amp;node=");
			cli_sbuf_url(b, nd[i].id);
			cli_sbuf_printf(b,
			                "\">%lld</a></td><td class=\"num\">%lld"
			                "</td><td class=\"num\">%d</td>",
			                (long long)nd[i].busy,
			                (long long)(nd[i].running - nd[i].busy),
			                nd[i].slots);
			time_cell(b, now, nd[i].heartbeat_ms);
			time_cell(b, now, nd[i].started_ms);
			cli_sbuf_puts(b, "<td>");
			esc(b, nd[i].host);
			cli_sbuf_printf(b, "</td><td class=\"num\">%d</td><td>",
			                nd[i].pid);
			esc(b, nd[i].strategy);
			cli_sbuf_puts(b, "</td><td>");
			esc(b, nd[i].version);
			cli_sbuf_puts(b, "</td></tr>");
		}
		cli_sbuf_puts(b, "</tbody></table></div>");
	}
	cli_sbuf_puts(b, "</div>");
	page_end(b);
	sked_nodes_free(nd, n);
}

static void
page_schedules(struct dash *d, const struct cli_http_request *rq,
               struct cli_http_reply *rp)
{
	struct cli_sbuf *b = &rp->body;
	sked_schedule *s = NULL;
	size_t n = 0;
	int64_t now = 0;

	if (sked_schedule_list(d->h, &s, &n) != SKED_OK ||
	    sked_now(d->h, &now) != SKED_OK)
		return db_error(d, rp, "cannot list schedules");
	html_reply(rp);
	page_begin(d, b, "Schedules", "/schedules");
	cli_sbuf_puts(b, "<h1>Schedules</h1>");
	flash(b, rq);
	cli_sbuf_puts(b, "<div class=\"panel\">");
	if (n == 0) {
		cli_sbuf_puts(b, "<div class=\"empty\">No schedule. Add one "
		                 "with <span class=\"mono\">sked cron add"
		                 "</span>.</div>");
	} else {
		cli_sbuf_puts(b, "<div class=\"scroll\"><table><thead><tr><th>"
		                 "Name</th><th>Cron</th><th>Zone</th><th>Kind"
		                 "</th><th>Queue</th><th>State</th><th>Next "
		                 "fires</th><th>Last fire</th><th></th></tr>"
		                 "</thead><tbody>");
		for (size_t i = 0; i < n; i++) {
			int64_t next[3];
			char err[128], iso[40];
			cli_sbuf_puts(b, "<tr><td>");
			esc(b, s[i].name);
			cli_sbuf_puts(b, "</td><td class=\"mono\">");
			esc(b, s[i].expr);
			cli_sbuf_puts(b, "</td><td>");
			esc(b, s[i].tz);
			cli_sbuf_puts(b, "</td><td>");
			esc(b, s[i].kind);
			cli_sbuf_puts(b, "</td><td>");
			esc(b, s[i].queue);
			cli_sbuf_puts(b, "</td><td>");
			pill(b, s[i].enabled ? "yes" : "cancelled",
			     s[i].enabled ? "active" : "paused");
			cli_sbuf_puts(b, "</td><td class=\"mono\">");
			if (s[i].enabled &&
			    sked_cron_next(s[i].expr, s[i].tz, now, 3, next,
			                   err, sizeof err) == SKED_OK)
				for (int k = 0; k < 3; k++) {
					cli_sbuf_puts(b, k ? "<br>" : "");
					esc(b, sked_format_time(next[k], iso,
					                        sizeof iso));
				}
			else
				cli_sbuf_puts(b, "-");
			cli_sbuf_puts(b, "</td>");
			time_cell(b, now, s[i].last_fire_ms);
			cli_sbuf_puts(b, "<td>");
			if (!d->read_only) {
				cli_sbuf_printf(b,
				                "<form class=\"inline\" "
				                "method=\"post\" "
				                "action=\"/schedules/%s\">",
				                s[i].enabled ? "pause"
				                             : "resume");
				csrf_field(d, b);
				cli_sbuf_puts(b, "<input type=\"hidden\" "
				                 "name=\"name\" value=\"");
				esc(b, s[i].name);
				cli_sbuf_printf(b,
				                "\"><button type=\"submit\" "
				                "class=\"ghost\">%s</button>"
				                "</form>",
				                s[i].enabled ? "Pause"
				                             : "Resume");
			}
			cli_sbuf_puts(b, "</td></tr>");
		}
		cli_sbuf_puts(b, "</tbody></table></div>");
	}
	cli_sbuf_puts(b, "</div>");
	page_end(b);
	sked_schedules_free(s, n);
}

static void
page_locks(struct dash *d, const struct cli_http_request *rq,
           struct cli_http_reply *rp)
{
	struct cli_sbuf *b = &rp->body;
	sked_lock_row *l = NULL;
	size_t n = 0;
	int64_t now = 0;

	(void)rq;
	if (sked_lock_list(d->h, &l, &n) != SKED_OK ||
	    sked_now(d->h, &now) != SKED_OK)
		return db_error(d, rp, "cannot list locks");
	html_reply(rp);
	page_begin(d, b, "Locks", "/locks");
	cli_sbuf_puts(b, "<h1>Cluster locks</h1><div class=\"panel\">");
	if (n == 0) {
		cli_sbuf_puts(b, "<div class=\"empty\">No lock was ever taken. "
		                 "<span class=\"mono\">sked lock run</span> "
		                 "takes one.</div>");
	} else {
		cli_sbuf_puts(b, "<div class=\"scroll\"><table><thead><tr><th>"
		                 "Name</th><th>State</th><th>Holder</th><th "
		                 "class=\"num\">Fencing token</th><th>Taken"
		                 "</th><th>Until</th></tr></thead><tbody>");
		for (size_t i = 0; i < n; i++) {
			cli_sbuf_puts(b, "<tr><td class=\"mono\">");
			esc(b, l[i].name);
			cli_sbuf_puts(b, "</td><td>");
			pill(b, l[i].held ? "running" : "pending",
			     l[i].held ? "held" : "free");
			cli_sbuf_puts(b, "</td><td class=\"mono\">");
			esc(b, l[i].held ? l[i].owner : "");
			cli_sbuf_printf(b, "</td><td class=\"num\">%lld</td>",
			                (long long)l[i].token);
			time_cell(b, now, l[i].locked_at_ms);
			time_cell(b, now, l[i].held ? l[i].locked_until_ms : 0);
			cli_sbuf_puts(b, "</tr>");
		}
		cli_sbuf_puts(b, "</tbody></table></div>");
	}
	cli_sbuf_puts(b, "</div>");
	page_end(b);
	sked_lock_rows_free(l, n);
}

/* Queue limits (docs/limits.md): each limited or paused queue, and each
 * with running tasks, with its state, its limits and how much of each is
 * in use, and a button to pause or resume it. */
static void
page_queues(struct dash *d, const struct cli_http_request *rq,
            struct cli_http_reply *rp)
{
	struct cli_sbuf *b = &rp->body;
	sked_queue_info *q = NULL;
	size_t n = 0;

	(void)rq;
	if (sked_queue_list(d->h, &q, &n) != SKED_OK)
		return db_error(d, rp, "cannot list the queues' limits");
	html_reply(rp);
	page_begin(d, b, "Queues", "/queues");
	cli_sbuf_puts(b, "<h1>Queues</h1><div class=\"panel\">");
	if (n == 0) {
		cli_sbuf_puts(b, "<div class=\"empty\">No queue is limited or "
		                 "paused and none has running tasks. <span "
		                 "class=\"mono\">sked queue set</span> sets a "
		                 "limit, <span class=\"mono\">sked queue "
		                 "pause</span> pauses a queue.</div>");
	} else {
		cli_sbuf_puts(b,
		              "<div class=\"scroll\"><table><thead><tr><th>"
		              "Queue</th><th>State</th><th class=\"num\">"
		              "Running</th><th "
		              "class=\"num\">Concurrency</th><th class=\"num\">"
		              "Per key</th><th class=\"num\">Keys running</th>"
		              "<th class=\"num\">Keys full</th><th>Rate</th>"
		              "<th class=\"num\">Starts in window</th><th></th>"
		              "</tr></thead><tbody>");
		for (size_t i = 0; i < n; i++) {
			char w[32];
			cli_sbuf_puts(b, "<tr><td class=\"mono\">");
			esc(b, q[i].queue);
			cli_sbuf_printf(b,
			                "</td><td>%s</td><td class=\"num\">%d"
			                "</td>",
			                q[i].paused ? "paused" : "active",
			                q[i].running);
			if (q[i].concurrency > 0)
				cli_sbuf_printf(b, "<td class=\"num\">%d</td>",
				                q[i].concurrency);
			else
				cli_sbuf_puts(b, "<td class=\"num\">-</td>");
			if (q[i].per_key > 0)
				cli_sbuf_printf(b,
				                "<td class=\"num\">%d</td><td "
				                "class=\"num\">%d</td><td "
				                "class=\"num\">%d</td>",
				                q[i].per_key, q[i].keys_running,
				                q[i].keys_full);
			else
				cli_sbuf_printf(b,
				                "<td class=\"num\">-</td><td "
				                "class=\"num\">%d</td><td "
				                "class=\"num\">-</td>",
				                q[i].keys_running);
			if (q[i].rate_n > 0)
				cli_sbuf_printf(
				        b,
				        "<td class=\"mono\">%d/%s</td><td "
				        "class=\"num\">%d</td>",
				        q[i].rate_n,
				        sked_format_duration(
				                q[i].rate_window_ms, w,
				                sizeof w),
				        q[i].rate_used);
			else
				cli_sbuf_puts(b, "<td>-</td><td class=\"num\">-"
				                 "</td>");
			cli_sbuf_puts(b, "<td>");
			if (!d->read_only) {
				cli_sbuf_printf(b,
				                "<form class=\"inline\" "
				                "method=\"post\" "
				                "action=\"/queues/%s\">",
				                q[i].paused ? "resume"
				                            : "pause");
				csrf_field(d, b);
				cli_sbuf_puts(b, "<input type=\"hidden\" "
				                 "name=\"queue\" value=\"");
				esc(b, q[i].queue);
				cli_sbuf_printf(b,
				                "\"><button type=\"submit\" "
				                "class=\"ghost\">%s</button>"
				                "</form>",
				                q[i].paused ? "Resume"
				                            : "Pause");
			}
			cli_sbuf_puts(b, "</td></tr>");
		}
		cli_sbuf_puts(b, "</tbody></table></div>");
	}
	cli_sbuf_puts(b, "</div>");
	page_end(b);
	sked_queue_info_free(q, n);
}

/* ---- changes (POST) ---- */

/* where to go after a POST: a path of ours, never a URL from elsewhere */
static void
redirect(struct cli_http_reply *rp, const char *back, const char *done,
         int64_t n)
{
	if (!cli_http_own_path(back))
		back = "/";
	rp->status = 303;
	snprintf(rp->location, sizeof rp->location, "%s?done=%s&n=%" PRId64,
	         back, done, n);
}

static void
post_tasks(struct dash *d, const struct cli_http_request *rq,
           struct cli_http_reply *rp, int retry)
{
	char buf[160], back[256];
	const char *backp = cli_http_form(rq, "back", 0, back, sizeof back);
	int64_t done = 0;
	int rc;

	if (cli_http_form(rq, "scope", 0, buf, sizeof buf) &&
	    strcmp(buf, "filter") == 0) {
		char q[160], k[160], s[32], nd[160], w[16];
		const char *since;
		int64_t now, win;
		sked_list_filter f;
		memset(&f, 0, sizeof f);
		f.queue = cli_http_form(rq, "queue", 0, q, sizeof q);
		f.kind = cli_http_form(rq, "kind", 0, k, sizeof k);
		f.node_id = cli_http_form(rq, "node", 0, nd, sizeof nd);
		/* a filter that is not understood must not widen a bulk
		 * change: refused, never ignored */
		const char *sv = cli_http_form(rq, "since", 0, w, sizeof w);
		since = window_arg(rq, sv);
		if ((sv && sv[0] && !since) ||
		    (since && sked_parse_duration(since, &win) != SKED_OK))
			return input_error(d, rp, SKED_EINVAL,
			                   "since: not one of 15m, 1h, 1d, 7d");
		if (since && sked_now(d->h, &now) != SKED_OK)
			return db_error(d, rp, "cannot read the clock");
		if (since)
			f.created_after_ms = now - win;
		f.status = cli_http_form(rq, "status", 0, s, sizeof s)
		                   ? sked_status_parse(s)
		                   : -1;
		if (f.status < 0 &&
		    cli_http_form(rq, "status", 0, s, sizeof s) && s[0])
			return input_error(d, rp, SKED_EINVAL,
			                   "status: not a task status");
		rc = retry ? sked_retry_where(d->h, &f, &done)
		           : sked_cancel_where(d->h, &f, &done);
	} else {
		int64_t ids[1000];
		size_t n = 0;
		while (n < sizeof ids / sizeof ids[0] &&
		       cli_http_form(rq, "id", (int)n, buf, sizeof buf)) {
			ids[n] = strtoll(buf, NULL, 10);
			n++;
		}
		if (n == 0)
			return redirect(rp, backp, "none", 0);
		rc = retry ? sked_retry_ids(d->h, ids, n, &done)
		           : sked_cancel_ids(d->h, ids, n, &done);
	}
	if (rc != SKED_OK)
		return input_error(d, rp, rc,
		                   retry ? "cannot retry tasks"
		                         : "cannot cancel tasks");
	sked_log(SKED_LOG_INFO, "dashboard: %s %lld task(s)",
	         retry ? "retried" : "cancelled", (long long)done);
	redirect(rp, backp, retry ? "retried" : "cancelled", done);
}

static void
post_prune(struct dash *d, const struct cli_http_request *rq,
           struct cli_http_reply *rp)
{
	char buf[32];
	int64_t ms = 10 * 60000, done = 0;

	int rc;

	if (cli_http_form(rq, "older_than", 0, buf, sizeof buf) &&
	    (sked_parse_duration(buf, &ms) != SKED_OK || ms < 0))
		return input_error(d, rp, SKED_EINVAL,
		                   "older_than: not a duration");
	if ((rc = sked_nodes_prune(d->h, ms, &done)) != SKED_OK)
		return input_error(d, rp, rc, "cannot prune nodes");
	redirect(rp, "/nodes", "pruned", done);
}

static void
post_schedule(struct dash *d, const struct cli_http_request *rq,
              struct cli_http_reply *rp, int pause)
{
	char name[160];
	int rc;

	if (!cli_http_form(rq, "name", 0, name, sizeof name))
		return redirect(rp, "/schedules", "none", 0);
	rc = pause ? sked_schedule_pause(d->h, name)
	           : sked_schedule_resume(d->h, name);
	if (rc != SKED_OK && rc != SKED_ENOTFOUND)
		return input_error(d, rp, rc, "cannot change the schedule");
	redirect(rp, "/schedules", pause ? "paused" : "resumed", 1);
}

/* pause or resume a queue, as `sked queue pause|resume` */
static void
post_queue(struct dash *d, const struct cli_http_request *rq,
           struct cli_http_reply *rp, int pause)
{
	char queue[160];
	int rc;

	if (!cli_http_form(rq, "queue", 0, queue, sizeof queue))
		return redirect(rp, "/queues", "none", 0);
	if ((rc = sked_queue_pause(d->h, queue, pause)) != SKED_OK)
		return input_error(d, rp, rc, "cannot change the queue");
	sked_log(SKED_LOG_INFO, "dashboard: %s queue %s",
	         pause ? "paused" : "resumed", queue);
	redirect(rp, "/queues", pause ? "qpaused" : "qresumed", 1);
}

/* ---- the router ---- */

/* A POST comes from this dashboard's own pages: Sec-Fetch-Site says so
 * (checked by the caller), or, from a browser too old to send it, the
 * Origin names this host. */
static int
same_origin(const struct cli_http_request *rq)
{
	const char *origin = cli_http_header(rq, "Origin");
	const char *host = cli_http_header(rq, "Host");
	const char *o;

	if (cli_http_header(rq, "Sec-Fetch-Site") || !origin)
		return 1;
	if (!host || strcmp(origin, "null") == 0)
		return 0;
	o = strstr(origin, "://");
	return o && strcmp(o + 3, host) == 0;
}

/* Without --auth, answer only requests addressed to a loopback name or
 * to the address listened on: a page elsewhere that points a name of its
 * own at 127.0.0.1 (DNS rebinding) must not read or steer the dashboard. */
static int
host_allowed(const struct dash *d, const struct cli_http_request *rq)
{
	const char *host = cli_http_header(rq, "Host");
	char name[256];
	size_t n;

	if (d->secret)
		return 1;
	if (!host)
		return 0;
	if (host[0] == '[') {
		const char *close = strchr(host, ']');
		n = close ? (size_t)(close - host + 1) : strlen(host);
	} else {
		n = strcspn(host, ":");
	}
	if (n >= sizeof name)
		return 0;
	memcpy(name, host, n);
	name[n] = '\0';
	return strcmp(name, "localhost") == 0 || strcmp(name, "[::1]") == 0 ||
	       (strncmp(name, "127.", 4) == 0 &&
	        strspn(name, "0123456789.") == n) ||
	       (d->listen_host[0] && strcmp(name, d->listen_host) == 0);
}

static int
authorized(struct dash *d, const struct cli_http_request *rq)
{
	const char *a, *user, *pass;
	char dec[512];

	if (!d->secret)
		return 1;
	a = cli_http_header(rq, "Authorization");
	if (!a)
		return 0;
	if (strncmp(a, "Bearer ", 7) == 0)
		return !d->user && cli_http_same(a + 7, d->secret);
	if (cli_http_basic(a, dec, sizeof dec, &user, &pass) != 0)
		return 0;
	/* a token works as the password of any user name */
	return (!d->user || cli_http_same(user, d->user)) &
	       cli_http_same(pass, d->secret);
}

static int random_token(char *out, size_t len);

/* The session the request's cookie names, touched, its token rotated when
 * due; with create, a new one when there is none (the reply sets its
 * cookie), the least recently used giving way. Copies its tokens into
 * tok and prev; 0, or -1 when there is none (or no randomness). */
static int
session_of(struct dash *d, const struct cli_http_request *rq,
           struct cli_http_reply *rp, int create, char *tok, char *prev)
{
	const char *id = cli_http_cookie(rq, "sked_session");
	int64_t now = cli_mono_ms();
	struct session *se = NULL, *lru = &d->sess[0];
	int rc = 0;

	pthread_mutex_lock(&d->sess_mu);
	for (int i = 0; i < SESSIONS; i++) {
		struct session *x = &d->sess[i];
		if (x->used && now - x->used > SESSION_IDLE_MS)
			memset(x, 0, sizeof *x);
		if (id && x->used && strlen(id) == 32 &&
		    cli_http_same(id, x->id))
			se = x;
		if (x->used < lru->used)
			lru = x;
	}
	if (!se && create) {
		se = lru;
		memset(se, 0, sizeof *se);
		if (random_token(se->id, sizeof se->id) != 0 ||
		    random_token(se->tok, sizeof se->tok) != 0) {
			memset(se, 0, sizeof *se);
			se = NULL;
		} else {
			se->rotated = now;
			snprintf(rp->set_cookie, sizeof rp->set_cookie,
			         "sked_session=%s; Path=/; HttpOnly; "
			         "SameSite=Strict",
			         se->id);
		}
	}
	if (se && now - se->rotated >= d->rotate_ms) {
		char fresh[33];
		if (random_token(fresh, sizeof fresh) == 0) {
			memcpy(se->prev, se->tok, sizeof se->prev);
			memcpy(se->tok, fresh, sizeof se->tok);
			se->rotated = now;
		}
	}
	if (se) {
		se->used = now ? now : 1;
		memcpy(tok, se->tok, sizeof se->tok);
		memcpy(prev, se->prev, sizeof se->prev);
	} else {
		rc = -1;
	}
	pthread_mutex_unlock(&d->sess_mu);
	return rc;
}

static void
on_http(void *ud, const struct cli_http_request *rq, struct cli_http_reply *rp)
{
	struct dash *d = ud;
	int get = strcmp(rq->method, "GET") == 0 ||
	          strcmp(rq->method, "HEAD") == 0;
	int post = strcmp(rq->method, "POST") == 0;
	const char *p = rq->path;
	char tok[64], stok[33], sprev[33];

	/* for a load balancer or a probe: reads nothing, tells nothing */
	if (get && strcmp(p, "/healthz") == 0) {
		cli_sbuf_puts(&rp->body, "ok");
		return;
	}
	if (!host_allowed(d, rq)) {
		rp->status = 403;
		cli_sbuf_puts(&rp->body, "this dashboard answers to its own "
		                         "address only\n");
		return;
	}
	if (!authorized(d, rq)) {
		rp->status = 401;
		rp->www_authenticate =
		        "Basic realm=\"sked\", charset=\"UTF-8\"";
		cli_sbuf_puts(&rp->body, "authentication required\n");
		return;
	}
	if (get && strncmp(p, "/static/", 8) == 0) {
		for (const struct cli_asset *a = cli_assets; a->path; a++)
			if (strcmp(a->path, p) == 0) {
				rp->content_type = a->type;
				cli_sbuf_put(&rp->body, a->data, a->len);
				return;
			}
		rp->status = 404;
		cli_sbuf_puts(&rp->body, "not found\n");
		return;
	}
	if (get && strcmp(p, "/metrics") == 0) {
		/* the cluster-wide gauges, served while no worker is up
		 * (docs/operations.md, "Where to scrape"); no session for a
		 * scraper */
		rp->content_type = "text/plain; version=0.0.4; charset=utf-8";
		cli_metrics_cluster(d->h, &d->db_mu, &rp->body);
		return;
	}
	if (post) {
		const char *site = cli_http_header(rq, "Sec-Fetch-Site");
		if (d->read_only) {
			rp->status = 403;
			cli_sbuf_puts(&rp->body, "read-only dashboard\n");
			return;
		}
		if ((site && strcmp(site, "same-origin") != 0 &&
		     strcmp(site, "none") != 0) ||
		    !same_origin(rq) ||
		    !cli_http_form(rq, "csrf", 0, tok, sizeof tok) ||
		    session_of(d, rq, rp, 0, stok, sprev) != 0 ||
		    !(cli_http_same(tok, stok) ||
		      (sprev[0] && cli_http_same(tok, sprev)))) {
			rp->status = 403;
			cli_sbuf_puts(&rp->body,
			              "missing or wrong CSRF token\n");
			return;
		}
		memcpy(req_csrf, stok, sizeof req_csrf);
	} else if (!get) {
		rp->status = 405;
		cli_sbuf_puts(&rp->body, "method not allowed\n");
		return;
	} else if (session_of(d, rq, rp, 1, stok, sprev) != 0) {
		rp->status = 503;
		cli_sbuf_puts(&rp->body, "cannot read /dev/urandom\n");
		return;
	} else {
		memcpy(req_csrf, stok, sizeof req_csrf);
	}

	pthread_mutex_lock(&d->db_mu);
	if (get && strcmp(p, "/") == 0)
		page_overview(d, rq, rp);
	else if (get && strcmp(p, "/tasks") == 0)
		page_tasks(d, rq, rp, 0);
	else if (get && strcmp(p, "/failed") == 0)
		page_tasks(d, rq, rp, 1);
	else if (get && strncmp(p, "/task/", 6) == 0 && p[6] >= '1' &&
	         p[6] <= '9' && strspn(p + 6, "0123456789") == strlen(p + 6))
		page_task(d, rq, rp, strtoll(p + 6, NULL, 10));
	else if (get && strcmp(p, "/nodes") == 0)
		page_nodes(d, rq, rp);
	else if (get && strcmp(p, "/schedules") == 0)
		page_schedules(d, rq, rp);
	else if (get && strcmp(p, "/locks") == 0)
		page_locks(d, rq, rp);
	else if (get && strcmp(p, "/queues") == 0)
		page_queues(d, rq, rp);
	else if (post && strcmp(p, "/tasks/retry") == 0)
		post_tasks(d, rq, rp, 1);
	else if (post && strcmp(p, "/tasks/cancel") == 0)
		post_tasks(d, rq, rp, 0);
	else if (post && strcmp(p, "/nodes/prune") == 0)
		post_prune(d, rq, rp);
	else if (post && strcmp(p, "/schedules/pause") == 0)
		post_schedule(d, rq, rp, 1);
	else if (post && strcmp(p, "/schedules/resume") == 0)
		post_schedule(d, rq, rp, 0);
	else if (post && strcmp(p, "/queues/pause") == 0)
		post_queue(d, rq, rp, 1);
	else if (post && strcmp(p, "/queues/resume") == 0)
		post_queue(d, rq, rp, 0);
	else {
		html_reply(rp);
		rp->status = 404;
		page_begin(d, &rp->body, "Not found", "");
		cli_sbuf_puts(&rp->body, "<h1>Not found</h1>");
		page_end(&rp->body);
	}
	pthread_mutex_unlock(&d->db_mu);
}

/* The JSON API (api.c) before the pages: its own token, never --auth
 * nor a cookie; the pages' Host check. */
static void
on_request(void *ud, const struct cli_http_request *rq,
           struct cli_http_reply *rp)
{
	struct dash *d = ud;

	if (cli_api_path(rq->path))
		return cli_api_serve(d->api, host_allowed(d, rq), rq, rp);
	on_http(ud, rq, rp);
}

/* ---- the command ---- */

/* --auth file:PATH or env:NAME: "user:password" or a token, first line */
static int
load_auth(struct dash *d, const char *spec)
{
	char *text = NULL, *nl;
	size_t len = 0;
	int ex;

	if (strncmp(spec, "file:", 5) == 0) {
		struct stat st;
		if ((ex = cli_read_file("--auth", spec + 5, 4096, &text,
		                        &len)) != 0)
			return ex;
		if (stat(spec + 5, &st) == 0 && (st.st_mode & 077))
			sked_log(SKED_LOG_WARN,
			         "dashboard --auth: %s can be read by other "
			         "users (chmod 600 it)",
			         spec + 5);
	} else if (strncmp(spec, "env:", 4) == 0) {
		const char *v = getenv(spec + 4);
		if (!v || !v[0]) {
			cli_err("dashboard --auth: the environment variable "
			        "'%s' is not set",
			        spec + 4);
			return EX_USAGE;
		}
		text = strdup(v);
	} else {
		cli_err("dashboard --auth: give file:PATH or env:NAME "
		        "(credentials never go on the command line)");
		return EX_USAGE;
	}
	if (!text) {
		cli_err("dashboard: out of memory");
		return EX_OSERR;
	}
	if ((nl = strpbrk(text, "\r\n")))
		*nl = '\0';
	/* the password (or the token) alone must be long enough: the user
	 * name is no secret */
	char *colon = strchr(text, ':');
	const char *secret = colon ? colon + 1 : text;
	if (colon == text || strlen(secret) < AUTH_MIN) {
		cli_err("dashboard --auth: %s",
		        colon == text ? "the user name before ':' is empty"
		        : colon       ? "the password after 'user:' is shorter "
		                        "than 8 characters"
		                : "the token is shorter than 8 characters");
		free(text);
		return EX_USAGE;
	}
	if (colon) {
		*colon = '\0';
		d->user = strdup(text);
		d->secret = strdup(colon + 1);
		free(text);
		if (!d->user || !d->secret) {
			cli_err("dashboard: out of memory");
			return EX_OSERR;
		}
	} else {
		d->secret = text;
	}
	return 0;
}

static int
random_token(char *out, size_t len)
{
	unsigned char raw[16];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || read(fd, raw, sizeof raw) != (ssize_t)sizeof raw) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	for (size_t i = 0; i < sizeof raw && 2 * i + 2 < len; i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

int
cmd_dashboard(struct cli *c, int argc, char **argv)
{
	enum { O_LISTEN = 1, O_AUTH, O_RO, O_API, O_ROTATE };
	static const struct option opts[] = {
	        {"listen", required_argument, NULL, O_LISTEN},
	        {"csrf-rotate", required_argument, NULL, O_ROTATE},
	        {"auth", required_argument, NULL, O_AUTH},
	        {"api-token", required_argument, NULL, O_API},
	        {"read-only", no_argument, NULL, O_RO},
	        CLI_COMMON_OPTIONS,
	        {NULL, 0, NULL, 0},
	};
	const char *listen = DEFAULT_ADDR,
	           *auth = getenv("SKED_DASHBOARD_AUTH"), *api = NULL;
	struct dash d;
	struct cli_http *srv = NULL;
	char ss[128], err[256];
	unsigned alen;
	int ch, ex = 0, loop = 0, port = 0, sig;
	sigset_t set;

	memset(&d, 0, sizeof d);
	d.rotate_ms = CSRF_ROTATE_MS;
	pthread_mutex_init(&d.db_mu, NULL);
	pthread_mutex_init(&d.sess_mu, NULL);
	optind = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (ch) {
		case O_LISTEN:
			listen = optarg;
			break;
		case O_AUTH:
			auth = optarg;
			break;
		case O_RO:
			d.read_only = 1;
			break;
		case O_API:
			api = optarg;
			break;
		case O_ROTATE:
			if ((ex = cli_parse_duration("--csrf-rotate", optarg,
			                             &d.rotate_ms)) != 0)
				goto out;
			if (d.rotate_ms < 1000) {
				ex = cli_usage("dashboard",
				               "--csrf-rotate: at least 1s");
				goto out;
			}
			break;
		case CLI_OPT_HELP:
			cli_help(stdout, "dashboard");
			goto out;
		case CLI_OPT_JSON:
			break;
		default:
			ex = cli_opt_error("dashboard", ch, argv);
			goto out;
		}
	}
	if (optind < argc) {
		ex = cli_usage("dashboard", "unexpected argument '%s'",
		               argv[optind]);
		goto out;
	}
	if (cli_http_parse_listen(listen, ss, &alen, &loop, err, sizeof err)) {
		ex = cli_usage("dashboard", "--listen: %s", err);
		goto out;
	}
	if (auth && auth[0] && (ex = load_auth(&d, auth)) != 0)
		goto out;
	if (api && (ex = cli_api_new(api, d.read_only, &d.api)) != 0)
		goto out;
	{
		const char *colon = strrchr(listen, ':');
		size_t hl = colon ? (size_t)(colon - listen) : 0;
		if (hl < sizeof d.listen_host) {
			memcpy(d.listen_host, listen, hl);
			d.listen_host[hl] = '\0';
		}
	}
	if (!loop && !d.secret) {
		cli_err("dashboard: refusing to listen on %s, which is not a "
		        "loopback address, without --auth",
		        listen);
		ex = EX_USAGE;
		goto out;
	}
	{
		char probe[33];
		if (random_token(probe, sizeof probe) != 0) {
			cli_err("dashboard: cannot read /dev/urandom");
			ex = EX_OSERR;
			goto out;
		}
	}
	if ((ex = cli_open(c)) != 0)
		goto out;
	d.h = c->h;
	cli_api_bind(d.api, c->h, &d.db_mu);
	sked_redact_url(c->url, d.url, sizeof d.url);
	/* the server's threads inherit this mask: signals come to sigwait */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	srv = cli_http_start(listen, on_request, &d, &port, err, sizeof err);
	if (!srv) {
		cli_err("dashboard: %s", err);
#ifdef SKED_HAVE_MHD
		ex = EX_OSERR;
#else
		ex = EX_UNAVAILABLE;
#endif
		goto out;
	}
	printf("sked dashboard on port %d (%s%s%s%s); Ctrl-C stops it\n", port,
	       listen, d.secret ? ", with --auth" : "",
	       d.api ? ", JSON API at /api/" : "",
	       d.read_only ? ", read-only" : "");
	fflush(stdout);
	for (;;) {
		if (sigwait(&set, &sig) != 0)
			break;
		if (sig != SIGHUP)
			break;
	}
	cli_http_stop(srv);
out:
	cli_api_free(d.api);
	free(d.user);
	free(d.secret);
	pthread_mutex_destroy(&d.db_mu);
	pthread_mutex_destroy(&d.sess_mu);
	return ex;
}
