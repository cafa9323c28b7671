/*
 * dashboard_forms.c — the dashboard's changes: every POST (retry or
 * cancel tasks by id or by filter, prune dead nodes, pause or resume a
 * schedule or a queue), each as the CLI's command does it, then a
 * redirect back to the page it came from with a fixed flash code.
 *
 * Layer: the command-line program, a client of <sked.h> only; called by
 * the router (dashboard.c) once the request's CSRF token was checked,
 * calls dashboard_page.c for an error page (dashboard_int.h draws the
 * files).
 */
#include "web/dashboard/dashboard_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void
dash_post_tasks(struct dash *d, const struct cli_http_request *rq,
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
		since = dash_window_arg(rq, sv);
		if ((sv && sv[0] && !since) ||
		    (since && sked_parse_duration(since, &win) != SKED_OK))
			return dash_input_error(
			        d, rp, SKED_EINVAL,
			        "since: not one of 15m, 1h, 1d, 7d");
		if (since && sked_now(d->h, &now) != SKED_OK)
			return dash_db_error(d, rp, "cannot read the clock");
		if (since)
			f.created_after_ms = now - win;
		f.status = cli_http_form(rq, "status", 0, s, sizeof s)
		                   ? sked_status_parse(s)
		                   : -1;
		if (f.status < 0 &&
		    cli_http_form(rq, "status", 0, s, sizeof s) && s[0])
			return dash_input_error(d, rp, SKED_EINVAL,
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
		return dash_input_error(d, rp, rc,
		                        retry ? "cannot retry tasks"
		                              : "cannot cancel tasks");
	sked_log(SKED_LOG_INFO, "dashboard: %s %lld task(s)",
	         retry ? "retried" : "cancelled", (long long)done);
	redirect(rp, backp, retry ? "retried" : "cancelled", done);
}

void
dash_post_prune(struct dash *d, const struct cli_http_request *rq,
                struct cli_http_reply *rp)
{
	char buf[32];
	int64_t ms = 10 * 60000, done = 0;

	int rc;

	if (cli_http_form(rq, "older_than", 0, buf, sizeof buf) &&
	    (sked_parse_duration(buf, &ms) != SKED_OK || ms < 0))
		return dash_input_error(d, rp, SKED_EINVAL,
		                        "older_than: not a duration");
	if ((rc = sked_nodes_prune(d->h, ms, &done)) != SKED_OK)
		return dash_input_error(d, rp, rc, "cannot prune nodes");
	redirect(rp, "/nodes", "pruned", done);
}

void
dash_post_schedule(struct dash *d, const struct cli_http_request *rq,
                   struct cli_http_reply *rp, int pause)
{
	char name[160];
	int rc;

	if (!cli_http_form(rq, "name", 0, name, sizeof name))
		return redirect(rp, "/schedules", "none", 0);
	rc = pause ? sked_schedule_pause(d->h, name)
	           : sked_schedule_resume(d->h, name);
	if (rc != SKED_OK && rc != SKED_ENOTFOUND)
		return dash_input_error(d, rp, rc,
		                        "cannot change the schedule");
	redirect(rp, "/schedules", pause ? "paused" : "resumed", 1);
}

/* pause or resume a queue, as `sked queue pause|resume` */
void
dash_post_queue(struct dash *d, const struct cli_http_request *rq,
                struct cli_http_reply *rp, int pause)
{
	char queue[160];
	int rc;

	if (!cli_http_form(rq, "queue", 0, queue, sizeof queue))
		return redirect(rp, "/queues", "none", 0);
	if ((rc = sked_queue_pause(d->h, queue, pause)) != SKED_OK)
		return dash_input_error(d, rp, rc, "cannot change the queue");
	sked_log(SKED_LOG_INFO, "dashboard: %s queue %s",
	         pause ? "paused" : "resumed", queue);
	redirect(rp, "/queues", pause ? "qpaused" : "qresumed", 1);
}
