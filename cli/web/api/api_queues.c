/*
 * api_queues.c — the JSON API's handlers for what is not one task: the
 * counts (GET /api/stats), the queues' limits and pauses (GET
 * /api/queues, POST /api/queues/NAME/pause|resume) and the schedules
 * (GET /api/schedules, POST /api/schedules/NAME/run|pause|resume).
 *
 * Layer: the command-line program, a client of <sked.h> only; called by
 * the router (api_serve.c) with the database's mutex held, calls api_json.c;
 * api_int.h draws the files.
 */
#include "web/api/api_int.h"

#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

static json_t *
counts_json(const char *queue, const sked_queue_stats *q, int64_t oldest,
            int paused)
{
	json_t *o = json_object();

	if (queue)
		json_object_set_new(o, "queue", cli_json_cstr(queue));

	for (size_t k = 0; k < cli_nstat; k++)
		json_object_set_new(o, cli_stat_cols[k].name,
		                    json_integer(cli_stat_of(q, k)));
	json_object_set_new(o, "oldest_due_ms", cli_json_due_age(oldest));
	if (queue)
		json_object_set_new(o, "paused", json_boolean(paused));
	return o;
}

void
api_get_stats(struct cli_api *a, struct cli_http_reply *rp)
{
	sked_queue_stats *qs = NULL, total;
	sked_cluster_gauges g;
	sked_queue_info *qi = NULL; /* which queues are paused */
	size_t n = 0, nqi = 0, i, k;
	int64_t oldest = 0;
	json_t *arr;
	int rc;

	if ((rc = sked_stats(a->h, &qs, &n)) != SKED_OK)
		return api_fail_rc(a, rp, rc, "stats");
	if ((rc = sked_cluster_gauges_get(a->h, &g)) != SKED_OK) {
		free(qs);
		return api_fail_rc(a, rp, rc, "stats");
	}
	if ((rc = sked_queue_list(a->h, &qi, &nqi)) != SKED_OK) {
		sked_cluster_gauges_free(&g);
		free(qs);
		return api_fail_rc(a, rp, rc, "stats");
	}
	memset(&total, 0, sizeof total);
	arr = json_array();
	for (i = 0; i < n; i++) {
		int64_t age = 0;
		for (k = 0; k < sizeof total.count / sizeof total.count[0]; k++)
			total.count[k] += qs[i].count[k];
		total.due += qs[i].due;
		for (k = 0; k < g.nqueues; k++)
			if (strcmp(g.queues[k].queue, qs[i].queue) == 0)
				age = g.queues[k].oldest_due_age_ms;
		if (age > oldest)
			oldest = age;
		json_array_append_new(
		        arr,
		        counts_json(qs[i].queue, &qs[i], age,
		                    cli_queue_paused(qi, nqi, qs[i].queue)));
	}
	api_reply(rp, 200,
	          json_pack("{s:o, s:o, s:{s:I, s:I}}", "queues", arr, "total",
	                    counts_json(NULL, &total, oldest, 0), "nodes",
	                    "alive", (json_int_t)g.nodes_alive, "total",
	                    (json_int_t)g.nodes));
	sked_queue_info_free(qi, nqi);
	sked_cluster_gauges_free(&g);
	free(qs);
}

void
api_get_queues(struct cli_api *a, struct cli_http_reply *rp)
{
	sked_queue_info *q = NULL;
	size_t n = 0;
	json_t *arr;
	int rc;

	sked_queue_weight *w = NULL;
	size_t nw = 0;
	if ((rc = sked_queue_list(a->h, &q, &n)) != SKED_OK)
		return api_fail_rc(a, rp, rc, "queues");
	if ((rc = sked_queue_weights(a->h, NULL, &w, &nw)) != SKED_OK) {
		sked_queue_info_free(q, n);
		return api_fail_rc(a, rp, rc, "queues");
	}
	arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(
		        arr,
		        cli_queue_weights_json(cli_queue_json(&q[i]), w, nw));
	api_reply(rp, 200, json_pack("{s:o}", "queues", arr));
	sked_queue_info_free(q, n);
	sked_queue_weights_free(w, nw);
}

void
api_get_schedules(struct cli_api *a, struct cli_http_reply *rp)
{
	sked_schedule *s = NULL;
	size_t n = 0;
	json_t *arr;
	int rc;

	sked_schedule_unique *u = NULL;
	size_t nu = 0;
	if ((rc = sked_schedule_list(a->h, &s, &n)) != SKED_OK)
		return api_fail_rc(a, rp, rc, "schedules");
	if ((rc = sked_schedule_uniques(a->h, &u, &nu)) != SKED_OK) {
		sked_schedules_free(s, n);
		return api_fail_rc(a, rp, rc, "schedules");
	}
	arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(
		        arr, cli_schedule_unique_json(cli_schedule_json(&s[i]),
		                                      u, nu));
	api_reply(rp, 200, json_pack("{s:o}", "schedules", arr));
	sked_schedules_free(s, n);
	sked_schedule_uniques_free(u, nu);
}

/* run now, pause or resume the schedule name */
void
api_post_schedule(struct cli_api *a, const char *done, const char *name,
                  json_t *body, struct cli_http_reply *rp)
{
	static const char *const none[] = {NULL};
	char err[128];
	int64_t id = 0;
	int rc;

	if (api_known_fields(body, none, err, sizeof err))
		return api_fail(rp, 400, EX_DATAERR, "%s", err);
	if (strcmp(done, "run") == 0) {
		/* one new task per call, as `sked cron run NAME` */
		if ((rc = sked_schedule_run(a->h, name, &id)) != SKED_OK)
			return api_fail_rc(a, rp, rc, "run the schedule");
		return api_reply(rp, 201,
		                 json_pack("{s:s, s:I}", "name", name, "id",
		                           (json_int_t)id));
	}
	rc = strcmp(done, "paused") == 0 ? sked_schedule_pause(a->h, name)
	                                 : sked_schedule_resume(a->h, name);
	if (rc != SKED_OK)
		return api_fail_rc(a, rp, rc, "schedule");
	api_reply(rp, 200, json_pack("{s:s, s:s}", "name", name, "done", done));
}

/* pause or resume the queue name, as `sked queue pause|resume` */
void
api_post_queue(struct cli_api *a, int paused, const char *name, json_t *body,
               struct cli_http_reply *rp)
{
	static const char *const none[] = {NULL};
	char err[128];
	int rc;

	if (api_known_fields(body, none, err, sizeof err))
		return api_fail(rp, 400, EX_DATAERR, "%s", err);
	if ((rc = sked_queue_pause(a->h, name, paused)) != SKED_OK)
		return api_fail_rc(a, rp, rc, paused ? "pause" : "resume");
	api_reply(rp, 200,
	          json_pack("{s:s, s:b}", "queue", name, "paused", paused));
}
