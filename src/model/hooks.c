/*
 * hooks.c — webhooks (on_end): the leader's turn over the events feed
 * (hooks.h; docs/operations.md "Webhooks").
 *
 * Layer: the model (floor 6), on the events feed (events.c) and the
 * enqueue's steps (enqueue.h). The cursor is one row of {p}hook_cursor
 * (schema step 16): the feed position read up to and the turn that moved
 * it last. A turn reads the feed outside any transaction, then moves the
 * cursor with a statement conditional on the position it read, reads
 * back whose turn the row names, and inserts the deliveries in that same
 * transaction: a second leader that read the same position finds the row
 * moved (or waits on its lock, then finds it moved) and rolls back, so a
 * leader change enqueues nothing twice, and a turn that dies before its
 * commit moves nothing, so nothing is lost.
 */
#include "model/hooks.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/enqueue.h"

static const char *
url_for(const sked_hook_rule *r, size_t n, const sked_event *e)
{
	if (!e->kind || strcmp(e->kind, SKED_HOOK_KIND) == 0)
		return NULL; /* a delivery's end makes no delivery */
	for (size_t i = 0; i < n; i++)
		if (r[i].kind && strcmp(r[i].kind, e->kind) == 0)
			return r[i].url;
	for (size_t i = 0; i < n; i++)
		if (r[i].queue && e->queue && strcmp(r[i].queue, e->queue) == 0)
			return r[i].url;
	return NULL;
}

static json_t *
str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* {"url": URL, "event": {…}} as the delivery's payload (malloc'd) */
static char *
payload_of(const sked_event *e, const char *url)
{
	json_t *ev = json_object();
	json_t *o = json_object();
	if (!ev || !o) {
		json_decref(ev);
		json_decref(o);
		return NULL;
	}
	json_object_set_new(ev, "type", json_string("end"));
	json_object_set_new(ev, "id", json_integer(e->id));
	json_object_set_new(ev, "kind", str_or_null(e->kind));
	json_object_set_new(ev, "queue", str_or_null(e->queue));
	json_object_set_new(ev, "status",
	                    str_or_null(sked_status_name(e->status)));
	json_object_set_new(ev, "outcome", str_or_null(e->outcome));
	json_object_set_new(ev, "attempt", json_integer(e->attempt));
	json_object_set_new(ev, "node_id", str_or_null(e->node_id));
	json_object_set_new(ev, "at_ms", json_integer(e->at_ms));
	json_object_set_new(ev, "started_ms",
	                    e->started_ms ? json_integer(e->started_ms)
	                                  : json_null());
	json_object_set_new(ev, "finished_ms",
	                    e->finished_ms ? json_integer(e->finished_ms)
	                                   : json_null());
	json_object_set_new(ev, "error", str_or_null(e->error));
	json_object_set_new(ev, "result", str_or_null(e->result));
	json_object_set_new(o, "url", json_string(url));
	json_object_set_new(o, "event", ev);
	char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return s;
}

/* the cursor's position into *pos; *found 0 when there is no row */
static int
cursor_read(sked *h, int64_t *pos, int *found, char *turn, size_t turn_sz)
{
	char *sql = sked__dialect_expand(
	        h->dialect, h->prefix,
	        "SELECT pos, turn FROM {p}hook_cursor WHERE name = 'on_end'");
	if (!sql)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	sked_res r = {0};
	int rc = sked__qdyn(h, sql, NULL, 0, &r);
	free(sql);
	if (rc != SKED_OK) {
		sked__res_clear(&r);
		return sked__fail_db(h, rc, "cannot read the webhooks' cursor");
	}
	*found = r.nrows > 0;
	if (*found) {
		const char *t = sked__res_text(&r, 0, 1);
		*pos = sked__res_int(&r, 0, 0);
		if (turn)
			snprintf(turn, turn_sz, "%s", t ? t : "");
	}
	sked__res_clear(&r);
	return SKED_OK;
}

static int
run_sql(sked *h, const char *text, const sked_val *p, int np, const char *what)
{
	char *sql = sked__dialect_expand(h->dialect, h->prefix, text);
	if (!sql)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	int rc = sked__qdyn(h, sql, p, np, NULL);
	free(sql);
	return rc == SKED_OK ? SKED_OK : sked__fail_db(h, rc, what);
}

int
sked__hooks_turn(sked *h, const sked_hook_rule *rules, size_t n,
                 const char *turn_id, size_t limit, int *made, int *more)
{
	*made = 0;
	if (more)
		*more = 0;
	int64_t pos = 0;
	int found = 0;
	int rc = cursor_read(h, &pos, &found, NULL, 0);
	if (rc != SKED_OK)
		return rc;
	sked_event *ev = NULL;
	size_t nev = 0;
	int64_t next = 0;
	sked_event_filter f = {0};
	rc = sked_events_read(h, found ? pos : -1, &f, limit, &ev, &nev, &next);
	if (rc != SKED_OK)
		return rc;
	if (!found) {
		/* the first turn: from the feed's now on */
		sked_val p[2] = {SKED_INTV(next), SKED_TEXTV(turn_id)};
		rc = run_sql(h,
		             "INSERT INTO {p}hook_cursor (name, pos, turn) "
		             "VALUES ('on_end', ?1, ?2)",
		             p, 2, "cannot start the webhooks' cursor");
		sked_events_free(ev, nev);
		return rc;
	}
	if (next <= pos) {
		sked_events_free(ev, nev);
		return SKED_OK;
	}
	rc = sked__begin(h, 0);
	if (rc != SKED_OK) {
		sked_events_free(ev, nev);
		return rc;
	}
	sked_val p[3] = {SKED_INTV(next), SKED_TEXTV(turn_id), SKED_INTV(pos)};
	rc = run_sql(h,
	             "UPDATE {p}hook_cursor SET pos = ?1, turn = ?2 WHERE "
	             "name = 'on_end' AND pos = ?3",
	             p, 3, "cannot move the webhooks' cursor");
	char turn[256] = "";
	int64_t now_pos = 0;
	if (rc == SKED_OK)
		rc = cursor_read(h, &now_pos, &found, turn, sizeof turn);
	if (rc != SKED_OK || !found || now_pos != next ||
	    strcmp(turn, turn_id) != 0) {
		/* another leader moved it first: its turn enqueued these */
		sked__rollback(h);
		sked_events_free(ev, nev);
		return rc;
	}
	for (size_t i = 0; i < nev && rc == SKED_OK; i++) {
		if (ev[i].type != SKED_EVENT_END)
			continue;
		const char *url = url_for(rules, n, &ev[i]);
		if (!url)
			continue;
		char *body = payload_of(&ev[i], url);
		if (!body) {
			rc = sked__fail(h, SKED_ENOMEM, "out of memory");
			break;
		}
		sked_enqueue_opts o = {.queue = ev[i].queue};
		int64_t id = 0;
		rc = sked__enqueue_check(h, SKED_HOOK_KIND, body, strlen(body),
		                         &o);
		if (rc == SKED_OK)
			rc = sked__enqueue_insert(h, SKED_HOOK_KIND, body,
			                          strlen(body), &o, &id);
		free(body);
		if (rc == SKED_OK)
			(*made)++;
	}
	sked_events_free(ev, nev);
	if (rc == SKED_OK)
		rc = sked__commit(h);
	if (rc != SKED_OK) {
		sked__rollback(h);
		*made = 0;
	} else if (more) {
		*more = nev >= limit; /* a full page: read on at once */
	}
	return rc;
}
