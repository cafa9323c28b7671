/*
 * dashboard_tasks.c — the dashboard's task pages: the lists (/tasks, and
 * /failed for dead, retrying and cancelled tasks) with their filter, bulk
 * forms and pager, and one task's page (/task/ID) with its fields,
 * attempts, parents and children. The HTML is templates/tasks.html
 * and task.html.
 *
 * Layer: the command-line program, a client of <sked.h> only; called by
 * the router (dashboard.c), calls dashboard_page.c and the renderer
 * (dashboard_int.h draws the files).
 */
#include "web/dashboard/dashboard_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERROR_SHOWN 140 /* bytes of a last error in a list */
#define DEPS_SHOWN  100 /* parents or children listed */

static void
filter_form(struct cli_sbuf *b, const sked_list_filter *f, const char *since,
            const char *nav, int failed_view)
{
	TPL(b, "tasks.filters", {"action", nav}, {"queue", DASH_S(f->queue)},
	    {"kind", DASH_S(f->kind)});
	if (!failed_view)
		TPL(b, "tasks.status_any",
		    {"selected", f->status < 0 ? " selected" : ""});
	/* every status, blocked (the last) too */
	for (int st = 0; st <= SKED_BLOCKED; st++) {
		if (failed_view && st != SKED_DEAD && st != SKED_RETRY &&
		    st != SKED_CANCELLED)
			continue;
		TPL(b, "tasks.status",
		    {"selected", f->status == st ? " selected" : ""},
		    {"status", sked_status_name(st)});
	}
	TPL0(b, "tasks.filters_since");
	TPL(b, "tasks.since_any", {"selected", since ? "" : " selected"});
	for (size_t i = 0; i < 4; i++)
		TPL(b, "tasks.since", {"since", dash_windows[i]},
		    {"selected", since == dash_windows[i] ? " selected" : ""});
	TPL(b, "tasks.filters_end", {"node", DASH_S(f->node_id)});
}

/* every task of the filter, retried or cancelled. The button says what
 * it does in words: "Retry all dead tasks", "Cancel all pending tasks",
 * and for the tasks waiting to retry, which a retry runs now, "Retry
 * now all tasks waiting to retry" (once "Retry all retry tasks"). */
static void
bulk_form(struct cli_sbuf *b, const sked_list_filter *f, const char *since,
          const char *nav, int can_retry)
{
	const char *label = can_retry ? "Retry" : "Cancel";
	char what[64];

	if (f->status == SKED_RETRY) {
		snprintf(what, sizeof what, "tasks waiting to retry");
		if (can_retry)
			label = "Retry now";
	} else {
		snprintf(what, sizeof what, "%s tasks",
		         sked_status_name(f->status));
	}
	TPL(b, "tasks.bulk", {"verb", can_retry ? "retry" : "cancel"},
	    {"label", label}, {"what", what});
	dash_csrf_field(b);
	dash_filter_fields(b, f, since);
	TPL(b, "tasks.bulk_button", {"back", nav},
	    {"class", can_retry ? "" : "danger"}, {"label", label},
	    {"what", what});
	if (f->kind)
		TPL(b, "tasks.of_kind", {"kind", f->kind});
	if (f->queue)
		TPL(b, "tasks.in_queue", {"queue", f->queue});
	TPL0(b, "tasks.bulk_end");
}

/* A running task's node, start and progress, under its status pill: one
 * read for each running task of the page, none for the others. */
static void
live_line(sked *h, struct cli_sbuf *b, const sked_task *t, int64_t now)
{
	sked_task_live l = {0};
	char rel[64], took[32];

	if (t->status != SKED_RUNNING ||
	    sked_task_live_get(h, t->id, &l) != SKED_OK)
		return;
	TPL(b, "tasks.live", {"node", DASH_S(l.node_id)},
	    {"started", dash_ago(now, l.started_ms, rel, sizeof rel)},
	    {"elapsed", sked_format_duration(l.elapsed_ms, took, sizeof took)});
	if (l.progress)
		TPL(b, "tasks.live_progress", {"progress", l.progress});
	TPL0(b, "layout.div_end");
	sked_task_live_clear(&l);
}

static void
task_row(sked *h, struct cli_sbuf *b, const sked_task *t, int64_t now,
         int read_only)
{
	const char *e = DASH_S(t->last_error);
	size_t el = strlen(e);
	char cut[ERROR_SHOWN + 4];

	TPL0(b, "tasks.row");
	if (!read_only)
		TPL(b, "tasks.select_one", {"id", TPL_INT(t->id)});
	TPL(b, "tasks.task", {"id", TPL_INT(t->id)}, {"kind", DASH_S(t->kind)},
	    {"queue", DASH_S(t->queue)});
	dash_status_pill(b, t->status);
	live_line(h, b, t, now);
	TPL(b, "tasks.attempts", {"attempts", TPL_INT(t->attempts)},
	    {"max", TPL_INT(t->max_attempts)});
	dash_time_cell(b, now, t->run_at_ms);
	if (el > ERROR_SHOWN) {
		memcpy(cut, e, ERROR_SHOWN);
		memcpy(cut + ERROR_SHOWN, "…", 4); /* with its NUL */
		TPL(b, "tasks.last_error", {"error", cut});
	} else {
		TPL(b, "tasks.last_error", {"error", e});
	}
}

void
dash_tasks(struct dash *d, const struct cli_http_request *rq,
           struct cli_http_reply *rp, int failed_view)
{
	struct cli_sbuf *b = &rp->body;
	sked_list_filter f;
	sked_task *t = NULL;
	size_t n = 0;
	const char *s, *q = cli_http_arg(rq, "q");
	const char *since = dash_window_arg(rq, NULL);
	int64_t now = 0, win = 0;
	const char *nav = failed_view ? "/failed" : "/tasks";

	memset(&f, 0, sizeof f);
	f.status = -1;
	f.queue = dash_name_arg(rq, "queue");
	f.kind = dash_name_arg(rq, "kind");
	f.node_id = dash_name_arg(rq, "node");
	if (sked_now(d->h, &now) != SKED_OK)
		return dash_db_error(d, rp, "cannot list tasks");
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
		return dash_input_error(d, rp, rc, "cannot list tasks");

	dash_html_reply(rp);
	dash_page_begin(d, b, failed_view ? "Failed tasks" : "Tasks", nav);
	TPL(b, "tasks.title",
	    {"title", failed_view ? "Dead and failed tasks" : "Tasks"});
	dash_flash(b, rq);
	if (q && q[0])
		TPL(b, "tasks.no_match", {"q", q});
	filter_form(b, &f, since, nav, failed_view);

	int more = n > PAGE_SIZE;
	size_t shown = more ? PAGE_SIZE : n;
	int can_retry = f.status < 0 || f.status == SKED_DEAD ||
	                f.status == SKED_RETRY || f.status == SKED_CANCELLED;
	int can_cancel = f.status < 0 || f.status == SKED_PENDING ||
	                 f.status == SKED_RETRY || f.status == SKED_RUNNING;

	if (!d->read_only && f.status >= 0 && shown > 0 &&
	    (can_retry || can_cancel))
		bulk_form(b, &f, since, nav, can_retry);

	TPL0(b, "layout.panel");
	if (shown == 0) {
		TPL0(b, "tasks.no_tasks");
	} else {
		if (!d->read_only) {
			TPL0(b, "tasks.select");
			dash_csrf_field(b);
			TPL(b, "layout.hidden", {"name", "back"},
			    {"value", nav});
			dash_filter_fields(b, &f, since);
			TPL0(b, "layout.actions");
			if (can_retry)
				TPL0(b, "tasks.retry_selected");
			if (can_cancel)
				TPL0(b, "tasks.cancel_selected");
			TPL0(b, "layout.div_end");
		}
		TPL0(b, "tasks.table");
		if (!d->read_only)
			TPL0(b, "tasks.select_all");
		TPL0(b, "tasks.head");
		for (size_t i = 0; i < shown; i++)
			task_row(d->h, b, &t[i], now, d->read_only);
		TPL0(b, "layout.table_end");
		if (!d->read_only)
			TPL0(b, "tasks.form_end");
	}
	TPL0(b, "tasks.pager");
	if (f.before_id > 0 || more) {
		struct cli_sbuf qs = {0};
		dash_filter_query(&qs, &f, since);
		if (f.before_id > 0)
			TPL(b, "tasks.newest", {"path", nav},
			    {"query", DASH_S(qs.p)});
		if (more)
			TPL(b, "tasks.older", {"path", nav},
			    {"before", TPL_INT(t[shown - 1].id)},
			    {"query", DASH_S(qs.p)});
		cli_sbuf_free(&qs);
	}
	TPL(b, "tasks.pager_end", {"shown", TPL_INT(shown)});
	dash_page_end(b);
	sked_tasks_free(t, n);
}

static void
field(struct cli_sbuf *b, const char *name, const char *value)
{
	if (value)
		TPL(b, "task.field", {"name", name}, {"value", value});
	else
		TPL(b, "task.field_none", {"name", name});
}

static void
field_time(struct cli_sbuf *b, const char *name, int64_t ms, int64_t now)
{
	char iso[40], rel[64], both[128];

	if (ms == 0)
		return; /* an empty time says nothing */
	snprintf(both, sizeof both, "%s (%s)",
	         sked_format_time(ms, iso, sizeof iso),
	         dash_ago(now, ms, rel, sizeof rel));
	field(b, name, both);
}

/* A task's parents and children, each linked with its state, and for a
 * blocked task which parents it still waits for (docs/workflows.md).
 * The states are read a list at a time (sked_task_states): every parent
 * (for the count of those still open), the children shown only; a page
 * that updates itself every few seconds must not read one row per
 * task. */
static void
deps_panel(struct dash *d, struct cli_sbuf *b, const sked_task *t)
{
	static const char *const title[2] = {"Parents", "Children"};
	int64_t *dep[2] = {NULL, NULL};
	size_t nd[2] = {0, 0};
	sked_graph_node *st = NULL;

	if (sked_task_deps(d->h, t->id, &dep[0], &nd[0], &dep[1], &nd[1]) !=
	    SKED_OK) {
		TPL0(b, "task.deps_error");
		return;
	}
	for (int k = 0; k < 2; k++) {
		size_t open = 0,
		       read = k ? (nd[k] < DEPS_SHOWN ? nd[k] : DEPS_SHOWN)
		                : nd[k];
		if (nd[k] == 0)
			continue;
		free(st);
		if (!(st = calloc(read, sizeof *st))) {
			TPL0(b, "task.deps_error");
			break;
		}
		int ok = 1;
		for (size_t i = 0; ok && i < read; i += SKED_GRAPH_MAX) {
			size_t m = read - i < SKED_GRAPH_MAX ? read - i
			                                     : SKED_GRAPH_MAX;
			ok = sked_task_states(d->h, dep[k] + i, m, st + i) ==
			     SKED_OK;
		}
		if (!ok) {
			sked_task_states_clear(st, read);
			TPL0(b, "task.deps_error");
			break;
		}
		TPL(b, "task.deps", {"id", k ? "children" : "parents"},
		    {"title", title[k]}, {"n", TPL_INT(nd[k])});
		for (size_t i = 0; i < read; i++) {
			int s = st[i].status;
			if (k == 0 && s >= 0 && s != SKED_SUCCEEDED &&
			    s != SKED_DEAD && s != SKED_CANCELLED)
				open++;
			if (i < DEPS_SHOWN) {
				TPL(b, "task.dep", {"id", TPL_INT(dep[k][i])},
				    {"kind", DASH_S(st[i].kind)});
				if (s >= 0)
					dash_status_pill(b, s);
				else
					TPL0(b, "task.pruned");
				TPL0(b, "layout.row_end");
			}
		}
		sked_task_states_clear(st, read);
		TPL0(b, "layout.table_end");
		if (nd[k] > DEPS_SHOWN)
			TPL(b, "task.deps_more",
			    {"more", TPL_INT(nd[k] - DEPS_SHOWN)},
			    {"id", TPL_INT(t->id)});
		if (k == 0 && t->status == SKED_BLOCKED)
			TPL(b, "task.waits", {"open", TPL_INT(open)},
			    {"n", TPL_INT(nd[k])});
		TPL0(b, "layout.div_end");
	}
	free(st);
	free(dep[0]);
	free(dep[1]);
}

static void
actions(struct cli_sbuf *b, const sked_task *t)
{
	int st = t->status;

	TPL0(b, "layout.actions");
	if (st == SKED_DEAD || st == SKED_CANCELLED || st == SKED_RETRY ||
	    st == SKED_PENDING) {
		TPL0(b, "task.retry");
		dash_csrf_field(b);
		TPL(b, "task.retry_end", {"id", TPL_INT(t->id)});
	}
	if (st == SKED_DEAD || st == SKED_CANCELLED) {
		TPL0(b, "task.retry");
		dash_csrf_field(b);
		TPL(b, "task.retry_deps_end", {"id", TPL_INT(t->id)});
	}
	if (st == SKED_PENDING || st == SKED_RETRY || st == SKED_RUNNING ||
	    st == SKED_BLOCKED) {
		TPL0(b, "task.cancel");
		dash_csrf_field(b);
		TPL(b, "task.cancel_end", {"id", TPL_INT(t->id)});
	}
	TPL0(b, "layout.div_end");
}

/* n bytes as a string, a NUL byte as U+FFFD (as the escaping shows
 * one); to be freed; NULL when out of memory */
static char *
text_of(const char *s, size_t n)
{
	char *out = malloc(3 * n + 1), *o = out;

	for (size_t i = 0; out && i < n; i++)
		if (s[i]) {
			*o++ = s[i];
		} else {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
		}
	if (out)
		*o = '\0';
	return out;
}

static void
fields(struct cli_sbuf *b, const sked_task *t, const sked_task_live *l,
       int64_t now)
{
	char num[64];

	TPL0(b, "task.fields");
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
	if (l) {
		/* running: since when, for how long, how far */
		char took[32];
		field_time(b, "started", l->started_ms, now);
		field(b, "elapsed",
		      sked_format_duration(l->elapsed_ms, took, sizeof took));
		field(b, "progress", l->progress);
		if (l->progress)
			field_time(b, "progress as of", l->progress_ms, now);
	}
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
	/* the payload may hold NUL bytes: each shows as U+FFFD */
	char *payload = text_of(t->payload, t->payload_len);
	TPL(b, "task.payload", {"bytes", TPL_INT(t->payload_len)},
	    {"payload", DASH_S(payload)});
	free(payload);
	if (t->result)
		TPL(b, "task.result", {"bytes", TPL_INT(strlen(t->result))},
		    {"result", t->result});
}

static void
runs_panel(struct cli_sbuf *b, const sked_task *t, const sked_task_live *l,
           const sked_run *r, size_t nr, int64_t now)
{
	char rel[64];

	TPL0(b, "task.runs");
	/* the attempt under way has no record until it ends */
	if (l)
		TPL(b, "task.running", {"attempt", TPL_INT(t->attempts)},
		    {"node", DASH_S(l->node_id)},
		    {"started", dash_ago(now, l->started_ms, rel, sizeof rel)});
	if (nr == 0 && l) {
		/* said above */
	} else if (nr == 0) {
		TPL0(b, "task.no_runs");
	} else {
		TPL0(b, "task.runs_table");
		for (size_t i = 0; i < nr; i++) {
			char took[32];
			const char *oc = r[i].outcome ? r[i].outcome : "?";
			TPL(b, "task.run", {"attempt", TPL_INT(r[i].attempt)},
			    {"node", DASH_S(r[i].node_id)});
			dash_time_cell(b, now, r[i].started_ms);
			TPL(b, "task.took",
			    {"took", r[i].finished_ms && r[i].started_ms
			                     ? sked_format_duration(
			                               r[i].finished_ms -
			                                       r[i].started_ms,
			                               took, sizeof took)
			                     : "-"});
			dash_pill(b,
			          strcmp(oc, "succeeded") == 0  ? "succeeded"
			          : strcmp(oc, "released") == 0 ? "pending"
			                                        : "dead",
			          oc);
			if (r[i].exit_code >= 0)
				TPL(b, "task.exit",
				    {"exit", TPL_INT(r[i].exit_code)});
			else
				TPL0(b, "task.exit_none");
			TPL(b, "task.run_end", {"error", DASH_S(r[i].error)},
			    {"output", DASH_S(r[i].output)});
		}
		TPL0(b, "layout.table_end");
	}
	TPL0(b, "layout.div_end");
}

void
dash_task(struct dash *d, const struct cli_http_request *rq,
          struct cli_http_reply *rp, int64_t id)
{
	struct cli_sbuf *b = &rp->body;
	sked_task *t = NULL;
	sked_run *r = NULL;
	size_t nr = 0;
	int64_t now = 0;
	int rc = sked_task_get(d->h, id, &t);

	if (rc == SKED_ENOTFOUND) {
		dash_html_reply(rp);
		rp->status = 404;
		dash_page_begin(d, b, "Not found", "/tasks");
		TPL(b, "task.gone", {"id", TPL_INT(id)});
		dash_page_end(b);
		return;
	}
	if (rc != SKED_OK || sked_runs_get(d->h, id, &r, &nr) != SKED_OK ||
	    sked_now(d->h, &now) != SKED_OK) {
		sked_tasks_free(t, t ? 1 : 0);
		return dash_db_error(d, rp, "cannot read the task");
	}
	dash_html_reply(rp);
	dash_page_begin(d, b, "Task", "/tasks");
	TPL(b, "task.title", {"id", TPL_INT(id)});
	dash_status_pill(b, t->status);
	TPL0(b, "task.title_end");
	dash_flash(b, rq);
	if (!d->read_only)
		actions(b, t);
	sked_task_live live = {0};
	int running = t->status == SKED_RUNNING &&
	              sked_task_live_get(d->h, id, &live) == SKED_OK;
	fields(b, t, running ? &live : NULL, now);
	runs_panel(b, t, running ? &live : NULL, r, nr, now);
	sked_task_live_clear(&live);
	dash_graph_panel(d, b, id);
	deps_panel(d, b, t);
	dash_page_end(b);
	sked_runs_free(r, nr);
	sked_tasks_free(t, 1);
}
