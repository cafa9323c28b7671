/*
 * event_json.c — one event of the feed (sked_events_read) as JSON: what
 * `sked events` prints a line and GET /api/events answers in "events".
 *
 * Layer: cli/view/ (floor 10), a client of <sked.h> only.
 */
#include "view/view.h"

#include <inttypes.h>
#include <stdio.h>

static const char *
type_name(int type)
{
	return type == SKED_EVENT_START     ? "start"
	       : type == SKED_EVENT_ATTEMPT ? "attempt"
	                                    : "end";
}

json_t *
cli_event_json(const sked_event *e, int more)
{
	json_t *o = json_object();
	char pos[24];
	snprintf(pos, sizeof pos, "%" PRId64, more ? e->at_ms - 1 : e->at_ms);
	json_object_set_new(o, "pos", json_string(pos));
	json_object_set_new(o, "type", json_string(type_name(e->type)));
	json_object_set_new(o, "id", json_integer(e->id));
	json_object_set_new(o, "kind", cli_json_cstr(e->kind));
	json_object_set_new(o, "queue", cli_json_cstr(e->queue));
	json_object_set_new(o, "status",
	                    e->status < 0
	                            ? json_null()
	                            : json_string(sked_status_name(e->status)));
	json_object_set_new(o, "outcome", cli_json_cstr(e->outcome));
	json_object_set_new(o, "attempt", json_integer(e->attempt));
	json_object_set_new(o, "node_id", cli_json_cstr(e->node_id));
	json_object_set_new(o, "at", cli_json_time(e->at_ms));
	json_object_set_new(o, "started_at", cli_json_time(e->started_ms));
	json_object_set_new(o, "finished_at", cli_json_time(e->finished_ms));
	json_object_set_new(o, "error", cli_json_cstr(e->error));
	json_object_set_new(o, "result", cli_json_cstr(e->result));
	return o;
}

json_t *
cli_events_json(const sked_event *e, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(
		        a,
		        cli_event_json(&e[i], i + 1 < n && e[i + 1].at_ms ==
		                                                   e[i].at_ms));
	return a;
}
