/*
 * task_json.c — a task, its attempts, parents and children as JSON: what
 * `sked list --json` and `sked show --json` print and the JSON API
 * answers, the same objects.
 *
 * Layer: cli/view/, what more than one command or page shows; a client
 * of <sked.h> only.
 */
#include "view/view.h"

#include <stdlib.h>
#include <string.h>

json_t *
cli_task_json(const sked_task *t)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_integer(t->id));
	json_object_set_new(o, "queue", cli_json_cstr(t->queue));
	json_object_set_new(o, "kind", cli_json_cstr(t->kind));
	json_object_set_new(o, "status",
	                    json_string(sked_status_name(t->status)));
	json_object_set_new(o, "priority", json_integer(t->priority));
	json_object_set_new(o, "run_at", cli_json_time(t->run_at_ms));
	json_object_set_new(o, "attempts", json_integer(t->attempts));
	json_object_set_new(o, "max_attempts", json_integer(t->max_attempts));
	json_object_set_new(o, "node_id", cli_json_cstr(t->node_id));
	json_object_set_new(o, "lease_until", cli_json_time(t->lease_until_ms));
	json_object_set_new(o, "unique_key", cli_json_cstr(t->unique_key));
	json_object_set_new(o, "schedule_name",
	                    cli_json_cstr(t->schedule_name));
	json_object_set_new(o, "fire_time", cli_json_time(t->fire_time_ms));
	json_object_set_new(o, "last_error", cli_json_cstr(t->last_error));
	json_object_set_new(o, "payload",
	                    cli_json_str(t->payload, t->payload_len));
	json_object_set_new(o, "created_at", cli_json_time(t->created_ms));
	json_object_set_new(o, "updated_at", cli_json_time(t->updated_ms));
	json_object_set_new(o, "finished_at", cli_json_time(t->finished_ms));
	json_object_set_new(o, "traceparent", cli_json_cstr(t->traceparent));
	return o;
}

void
cli_task_live_json(sked *h, const sked_task *t, json_t *o)
{
	sked_task_live l = {0};
	int running = t->status == SKED_RUNNING &&
	              sked_task_live_get(h, t->id, &l) == SKED_OK;
	json_object_set_new(o, "started_at", cli_json_time(l.started_ms));
	json_object_set_new(o, "elapsed_ms",
	                    running ? json_integer(l.elapsed_ms) : json_null());
	json_object_set_new(o, "progress", cli_json_result(l.progress));
	json_object_set_new(o, "progress_at", cli_json_time(l.progress_ms));
	sked_task_live_clear(&l);
}

json_t *
cli_run_json(const sked_run *r)
{
	json_t *o = json_object();

	json_object_set_new(o, "attempt", json_integer(r->attempt));
	json_object_set_new(o, "node_id", cli_json_cstr(r->node_id));
	json_object_set_new(o, "started_at", cli_json_time(r->started_ms));
	json_object_set_new(o, "finished_at", cli_json_time(r->finished_ms));
	json_object_set_new(o, "outcome", cli_json_cstr(r->outcome));
	json_object_set_new(o, "exit_code",
	                    r->exit_code < 0 ? json_null()
	                                     : json_integer(r->exit_code));
	json_object_set_new(o, "error", cli_json_cstr(r->error));
	json_object_set_new(o, "output", cli_json_cstr(r->output));
	return o;
}

/* A related task's state ("?" when it cannot be read: pruned since). */
const char *
cli_dep_state(sked *h, int64_t id, char **kind)
{
	sked_task *t = NULL;
	*kind = NULL;
	if (sked_task_get(h, id, &t) != SKED_OK)
		return "pruned";
	int st = t->status;
	*kind = strdup(t->kind);
	sked_tasks_free(t, 1);
	return sked_status_name(st);
}

/* parents or children, with their states, as JSON */
static json_t *
deps_json(sked *h, const int64_t *ids, size_t n)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++) {
		char *kind;
		const char *st = cli_dep_state(h, ids[i], &kind);
		json_array_append_new(arr,
		                      json_pack("{s:I, s:s, s:s?}", "id",
		                                (json_int_t)ids[i], "status",
		                                st, "kind", kind));
		free(kind);
	}
	return arr;
}

/* A task, its attempts, parents and children as `show --json` prints
 * them (and the JSON API answers). SKED_OK and *out, or a code and
 * *what, the part that could not be read. */
int
cli_show_json(sked *h, int64_t id, json_t **out, const char **what)
{
	sked_task *t = NULL;
	sked_run *runs = NULL;
	size_t n = 0;
	int64_t *dep[2] = {NULL, NULL};
	size_t ndep[2] = {0, 0};
	int rc;

	*what = "task";
	if ((rc = sked_task_get(h, id, &t)) != SKED_OK)
		return rc;
	*what = "runs of task";
	if ((rc = sked_runs_get(h, id, &runs, &n)) != SKED_OK) {
		sked_tasks_free(t, 1);
		return rc;
	}
	*what = "dependencies of task";
	if ((rc = sked_task_deps(h, id, &dep[0], &ndep[0], &dep[1],
	                         &ndep[1])) != SKED_OK) {
		sked_runs_free(runs, n);
		sked_tasks_free(t, 1);
		return rc;
	}
	json_t *o = cli_task_json(t), *arr = json_array();
	json_object_set_new(o, "result", cli_json_result(t->result));
	cli_task_live_json(h, t, o);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, cli_run_json(&runs[i]));
	json_object_set_new(o, "runs", arr);
	json_object_set_new(o, "parents", deps_json(h, dep[0], ndep[0]));
	json_object_set_new(o, "children", deps_json(h, dep[1], ndep[1]));
	free(dep[0]);
	free(dep[1]);
	sked_runs_free(runs, n);
	sked_tasks_free(t, 1);
	*out = o;
	return SKED_OK;
}
