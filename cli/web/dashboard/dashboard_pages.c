/*
 * dashboard_pages.c — the dashboard's pages other than the tasks': the
 * overview (cards, throughput chart, queues), nodes, schedules, locks and
 * the queues' limits. Each reads the database through <sked.h> and fills
 * the fragments of its template (templates/NAME.html).
 *
 * Layer: the command-line program, a client of <sked.h> only; called by
 * the router (dashboard.c), calls dashboard_page.c and the renderer
 * (dashboard_int.h draws the files).
 */
#include "web/dashboard/dashboard_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHART_MIN 30 /* minutes in the throughput chart */

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
	TPL(b, "overview.chart", {"width", TPL_INT(w)},
	    {"height", TPL_INT(hgt + 1)});
	for (int i = 0; i < n; i++) {
		int hok = (int)(ok[i] * hgt / max),
		    hbad = (int)(bad[i] * hgt / max);
		int x = i * bw + 1;
		if (hok > 0)
			TPL(b, "overview.bar_ok", {"x", TPL_INT(x)},
			    {"y", TPL_INT(hgt - hok)},
			    {"width", TPL_INT(bw - 2)},
			    {"height", TPL_INT(hok)}, {"n", TPL_INT(ok[i])});
		if (hbad > 0)
			TPL(b, "overview.bar_bad", {"x", TPL_INT(x)},
			    {"y", TPL_INT(hgt - hok - hbad)},
			    {"width", TPL_INT(bw - 2)},
			    {"height", TPL_INT(hbad)}, {"n", TPL_INT(bad[i])});
	}
	TPL(b, "overview.chart_end", {"base", TPL_INT(hgt)},
	    {"width", TPL_INT(w)}, {"minutes", TPL_INT(n)},
	    {"peak", TPL_INT(max)}, {"ok", TPL_INT(tok)},
	    {"bad", TPL_INT(tbad)});
}

static const char *
age(int64_t ms, char *buf, size_t len, const char *none)
{
	return ms ? sked_format_duration(ms / 1000 * 1000, buf, len) : none;
}

static void
queues_table(struct cli_sbuf *b, const sked_queue_stats *st, size_t nst,
             const sked_cluster_gauges *g, const sked_queue_info *qi,
             size_t nqi)
{
	static const int cols[] = {SKED_PENDING,   SKED_RUNNING, SKED_RETRY,
	                           SKED_SUCCEEDED, SKED_DEAD,    SKED_CANCELLED,
	                           SKED_BLOCKED};
	char dur[32];

	TPL0(b, "overview.queues");
	for (size_t i = 0; i < nst; i++) {
		const sked_queue_gauge *qg = NULL;
		for (size_t k = 0; k < g->nqueues; k++)
			if (strcmp(g->queues[k].queue, st[i].queue) == 0)
				qg = &g->queues[k];
		TPL(b, "overview.queue", {"queue", st[i].queue});
		if (cli_queue_paused(qi, nqi, st[i].queue))
			TPL0(b, "overview.paused");
		TPL(b, "overview.queue_due",
		    {"due", TPL_INT(qg ? qg->due : 0)});
		for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++)
			TPL(b, "overview.count", {"queue", st[i].queue},
			    {"status", sked_status_name(cols[k])},
			    {"n", TPL_INT(st[i].count[cols[k]])});
		TPL(b, "overview.queue_end",
		    {"oldest", age(qg ? qg->oldest_due_age_ms : 0, dur,
		                   sizeof dur, "-")});
	}
	TPL0(b, "overview.queues_end");
}

void
dash_overview(struct dash *d, const struct cli_http_request *rq,
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
		return dash_db_error(d, rp, "cannot read the queues");
	if (sked_stats(d->h, &st, &nst) != SKED_OK) {
		sked_cluster_gauges_free(&g);
		return dash_db_error(d, rp, "cannot count tasks");
	}
	if (sked_throughput(d->h, CHART_MIN, ok, bad) != SKED_OK) {
		sked_cluster_gauges_free(&g);
		free(st);
		return dash_db_error(d, rp, "cannot read recent runs");
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

	dash_html_reply(rp);
	dash_page_begin(d, b, "Overview", "/");
	TPL0(b, "overview.top");
	dash_flash(b, rq);
	/* why work waits (docs/operations.md) */
	sked_unserved *un = NULL;
	size_t nun = 0;
	if (sked_unserved_get(d->h, &un, &nun) != SKED_OK)
		un = NULL, nun = 0;
	for (size_t i = 0; i < nun; i++)
		TPL(b, "overview.unserved", {"due", TPL_INT(un[i].due)},
		    {"kind", un[i].kind}, {"queue", un[i].queue},
		    {"oldest",
		     age(un[i].oldest_due_ms, dur, sizeof dur, "0s")});
	sked_unserved_free(un);
	TPL(b, "overview.cards",
	    {"nodes_class", g.nodes_alive > 0 ? " ok" : " warn"},
	    {"alive", TPL_INT(g.nodes_alive)}, {"nodes", TPL_INT(g.nodes)},
	    {"due", TPL_INT(due)}, {"running", TPL_INT(running)},
	    {"oldest_class", oldest > 60000 ? " warn" : ""},
	    {"oldest", age(oldest, dur, sizeof dur, "0s")},
	    {"retry_class", retry ? " warn" : ""}, {"retry", TPL_INT(retry)},
	    {"dead_class", dead ? " bad" : ""}, {"dead", TPL_INT(dead)});
	chart(b, ok, bad, CHART_MIN);
	if (nst == 0)
		TPL0(b, "overview.no_tasks");
	else
		queues_table(b, st, nst, &g, qi, nqi);
	dash_page_end(b);
	sked_cluster_gauges_free(&g);
	sked_queue_info_free(qi, nqi);
	free(st);
}

void
dash_nodes(struct dash *d, const struct cli_http_request *rq,
           struct cli_http_reply *rp)
{
	struct cli_sbuf *b = &rp->body;
	sked_node *nd = NULL;
	size_t n = 0;
	int64_t now = 0;

	if (sked_nodes(d->h, &nd, &n) != SKED_OK ||
	    sked_now(d->h, &now) != SKED_OK)
		return dash_db_error(d, rp, "cannot list nodes");
	dash_html_reply(rp);
	dash_page_begin(d, b, "Nodes", "/nodes");
	TPL0(b, "nodes.title");
	dash_flash(b, rq);
	if (!d->read_only) {
		TPL0(b, "nodes.prune");
		dash_csrf_field(b);
		TPL0(b, "nodes.prune_end");
	}
	TPL0(b, "layout.panel");
	if (n == 0) {
		TPL0(b, "nodes.none");
	} else {
		TPL0(b, "nodes.table");
		for (size_t i = 0; i < n; i++) {
			TPL(b, "nodes.node", {"id", nd[i].id});
			dash_pill(b, nd[i].alive ? "yes" : "no",
			          nd[i].alive ? "alive" : "dead");
			TPL(b, "nodes.counts", {"id", nd[i].id},
			    {"busy", TPL_INT(nd[i].busy)},
			    {"ahead", TPL_INT(nd[i].running - nd[i].busy)},
			    {"slots", TPL_INT(nd[i].slots)});
			dash_time_cell(b, now, nd[i].heartbeat_ms);
			dash_time_cell(b, now, nd[i].started_ms);
			TPL(b, "nodes.node_end",
			    {"host", nd[i].host ? nd[i].host : ""},
			    {"pid", TPL_INT(nd[i].pid)},
			    {"strategy", nd[i].strategy ? nd[i].strategy : ""},
			    {"version", nd[i].version ? nd[i].version : ""});
		}
		TPL0(b, "layout.table_end");
	}
	TPL0(b, "layout.div_end");
	dash_page_end(b);
	sked_nodes_free(nd, n);
}

/* a pause or resume button in a row */
static void
toggle(struct cli_sbuf *b, const char *action, const char *field,
       const char *value, const char *label)
{
	TPL(b, "layout.inline", {"action", action});
	dash_csrf_field(b);
	TPL(b, "layout.inline_end", {"name", field}, {"value", value},
	    {"label", label});
}

void
dash_schedules(struct dash *d, const struct cli_http_request *rq,
               struct cli_http_reply *rp)
{
	struct cli_sbuf *b = &rp->body;
	sked_schedule *s = NULL;
	size_t n = 0;
	int64_t now = 0;

	if (sked_schedule_list(d->h, &s, &n) != SKED_OK ||
	    sked_now(d->h, &now) != SKED_OK)
		return dash_db_error(d, rp, "cannot list schedules");
	dash_html_reply(rp);
	dash_page_begin(d, b, "Schedules", "/schedules");
	TPL0(b, "schedules.title");
	dash_flash(b, rq);
	TPL0(b, "layout.panel");
	if (n == 0) {
		TPL0(b, "schedules.none");
	} else {
		TPL0(b, "schedules.table");
		for (size_t i = 0; i < n; i++) {
			int64_t next[3];
			char err[128], iso[40];
			TPL(b, "schedules.schedule", {"name", s[i].name},
			    {"expr", s[i].expr}, {"tz", s[i].tz ? s[i].tz : ""},
			    {"kind", s[i].kind}, {"queue", s[i].queue});
			dash_pill(b, s[i].enabled ? "yes" : "cancelled",
			          s[i].enabled ? "active" : "paused");
			TPL0(b, "schedules.next");
			if (s[i].enabled &&
			    sked_cron_next(s[i].expr, s[i].tz, now, 3, next,
			                   err, sizeof err) == SKED_OK)
				for (int k = 0; k < 3; k++)
					TPL(b,
					    k ? "schedules.fire_next"
					      : "schedules.fire",
					    {"time",
					     sked_format_time(next[k], iso,
					                      sizeof iso)});
			else
				TPL0(b, "schedules.no_next");
			TPL0(b, "layout.td_end");
			dash_time_cell(b, now, s[i].last_fire_ms);
			TPL0(b, "layout.td");
			if (!d->read_only)
				toggle(b,
				       s[i].enabled ? "/schedules/pause"
				                    : "/schedules/resume",
				       "name", s[i].name,
				       s[i].enabled ? "Pause" : "Resume");
			TPL0(b, "layout.row_end");
		}
		TPL0(b, "layout.table_end");
	}
	TPL0(b, "layout.div_end");
	dash_page_end(b);
	sked_schedules_free(s, n);
}

void
dash_locks(struct dash *d, const struct cli_http_request *rq,
           struct cli_http_reply *rp)
{
	struct cli_sbuf *b = &rp->body;
	sked_lock_row *l = NULL;
	size_t n = 0;
	int64_t now = 0;

	(void)rq;
	if (sked_lock_list(d->h, &l, &n) != SKED_OK ||
	    sked_now(d->h, &now) != SKED_OK)
		return dash_db_error(d, rp, "cannot list locks");
	dash_html_reply(rp);
	dash_page_begin(d, b, "Locks", "/locks");
	TPL0(b, "locks.title");
	if (n == 0) {
		TPL0(b, "locks.none");
	} else {
		TPL0(b, "locks.table");
		for (size_t i = 0; i < n; i++) {
			TPL(b, "locks.lock", {"name", l[i].name});
			dash_pill(b, l[i].held ? "running" : "pending",
			          l[i].held ? "held" : "free");
			TPL(b, "locks.holder",
			    {"holder",
			     l[i].held && l[i].owner ? l[i].owner : ""},
			    {"token", TPL_INT(l[i].token)});
			dash_time_cell(b, now, l[i].locked_at_ms);
			dash_time_cell(b, now,
			               l[i].held ? l[i].locked_until_ms : 0);
			TPL0(b, "locks.lock_end");
		}
		TPL0(b, "layout.table_end");
	}
	TPL0(b, "layout.div_end");
	dash_page_end(b);
	sked_lock_rows_free(l, n);
}

/* Queue limits (docs/limits.md): each limited or paused queue, and each
 * with running tasks, with its state, its limits and how much of each is
 * in use, and a button to pause or resume it. */
void
dash_queues(struct dash *d, const struct cli_http_request *rq,
            struct cli_http_reply *rp)
{
	struct cli_sbuf *b = &rp->body;
	sked_queue_info *q = NULL;
	size_t n = 0;

	(void)rq;
	if (sked_queue_list(d->h, &q, &n) != SKED_OK)
		return dash_db_error(d, rp, "cannot list the queues' limits");
	dash_html_reply(rp);
	dash_page_begin(d, b, "Queues", "/queues");
	TPL0(b, "queues.title");
	if (n == 0) {
		TPL0(b, "queues.none");
	} else {
		TPL0(b, "queues.table");
		for (size_t i = 0; i < n; i++) {
			char w[32], rate[48];
			int pk = q[i].per_key > 0;
			TPL(b, "queues.queue", {"queue", q[i].queue},
			    {"state", q[i].paused ? "paused" : "active"},
			    {"running", TPL_INT(q[i].running)},
			    {"concurrency", q[i].concurrency > 0
			                            ? TPL_INT(q[i].concurrency)
			                            : "-"},
			    {"per_key", pk ? TPL_INT(q[i].per_key) : "-"},
			    {"keys_running", TPL_INT(q[i].keys_running)},
			    {"keys_full", pk ? TPL_INT(q[i].keys_full) : "-"});
			if (q[i].rate_n > 0) {
				snprintf(rate, sizeof rate, "%d/%s",
				         q[i].rate_n,
				         sked_format_duration(
				                 q[i].rate_window_ms, w,
				                 sizeof w));
				TPL(b, "queues.rate", {"rate", rate},
				    {"used", TPL_INT(q[i].rate_used)});
			} else {
				TPL0(b, "queues.no_rate");
			}
			TPL0(b, "layout.td");
			if (!d->read_only)
				toggle(b,
				       q[i].paused ? "/queues/resume"
				                   : "/queues/pause",
				       "queue", q[i].queue,
				       q[i].paused ? "Resume" : "Pause");
			TPL0(b, "layout.row_end");
		}
		TPL0(b, "layout.table_end");
	}
	TPL0(b, "layout.div_end");
	dash_page_end(b);
	sked_queue_info_free(q, n);
}
