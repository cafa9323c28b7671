/*
 * queue_json.c — queues and schedules as the commands, the JSON API and
 * the dashboard show them: a queue's limits and pause as JSON, whether
 * a queue is paused, the columns of `stats`, a schedule as JSON.
 *
 * Layer: cli/view/, what more than one command or page shows; a client
 * of <sked.h> only.
 */
#include "view/view.h"

#include <stdio.h>
#include <string.h>

#include "sked_cli.h"

/* One queue as `queue ls --json` prints it. */
json_t *
cli_queue_json(const sked_queue_info *q)
{
	char d[32];
	json_t *rate =
	        q->rate_n > 0
	                ? json_pack("{s:i, s:I, s:s, s:i}", "n", q->rate_n,
	                            "window_ms", (json_int_t)q->rate_window_ms,
	                            "window",
	                            sked_format_duration(q->rate_window_ms, d,
	                                                 sizeof d),
	                            "used", q->rate_used)
	                : json_null();
	return json_pack(
	        "{s:o, s:b, s:b, s:o, s:o, s:o, s:i, s:i, s:i, s:b}", "queue",
	        cli_json_cstr(q->queue), "paused", q->paused, "limited",
	        q->limited, "concurrency",
	        q->concurrency > 0 ? json_integer(q->concurrency) : json_null(),
	        "per_key",
	        q->per_key > 0 ? json_integer(q->per_key) : json_null(), "rate",
	        rate, "running", q->running, "keys_running", q->keys_running,
	        "keys_full", q->keys_full, "fair", q->fair);
}

int
cli_queue_paused(const sked_queue_info *q, size_t n, const char *queue)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(q[i].queue, queue) == 0)
			return q[i].paused;
	return 0;
}

/* The columns of `stats` (and the JSON API's), in order, and where each
 * count lives. */
const struct cli_stat_col cli_stat_cols[] = {
        {"pending", SKED_PENDING},     {"running", SKED_RUNNING},
        {"retry", SKED_RETRY},         {"due", -1},
        {"succeeded", SKED_SUCCEEDED}, {"dead", SKED_DEAD},
        {"cancelled", SKED_CANCELLED}, {"blocked", SKED_BLOCKED},
};
const size_t cli_nstat = sizeof cli_stat_cols / sizeof cli_stat_cols[0];

int64_t
cli_stat_of(const sked_queue_stats *q, size_t col)
{
	return cli_stat_cols[col].status < 0
	               ? q->due
	               : q->count[cli_stat_cols[col].status];
}

/* One schedule as `cron ls --json` prints it. */
json_t *
cli_schedule_json(const sked_schedule *s)
{
	return json_pack(
	        "{s:o, s:o, s:o, s:o, s:o, s:o, s:i, s:i, s:s, s:s, s:b, s:o, "
	        "s:o}",
	        "name", cli_json_cstr(s->name), "expr", cli_json_cstr(s->expr),
	        "tz", cli_json_cstr(s->tz), "kind", cli_json_cstr(s->kind),
	        "payload", cli_json_str(s->payload, s->payload_len), "queue",
	        cli_json_cstr(s->queue), "priority", s->priority,
	        "max_attempts", s->max_attempts, "misfire",
	        sked_misfire_name(s->misfire), "overlap",
	        sked_overlap_name(s->overlap), "enabled", s->enabled,
	        "next_fire", cli_json_time(s->next_fire_ms), "last_fire",
	        cli_json_time(s->last_fire_ms));
}

/* ---- a schedule's unique key (docs/schedules.md, "Unique keys") ---- */

static const sked_schedule_unique *
unique_for(const char *name, const sked_schedule_unique *u, size_t nu)
{
	for (size_t i = 0; i < nu; i++)
		if (strcmp(u[i].name, name) == 0)
			return &u[i];
	return NULL;
}

static const char *
scope_name(int scope)
{
	return scope == SKED_UNIQUE_PENDING  ? "pending"
	       : scope == SKED_UNIQUE_PERIOD ? "period"
	                                     : "live";
}

json_t *
cli_schedule_unique_json(json_t *o, const sked_schedule_unique *u, size_t nu)
{
	const char *name = json_string_value(json_object_get(o, "name"));
	const sked_schedule_unique *x = name ? unique_for(name, u, nu) : NULL;
	if (!x) {
		json_object_set_new(o, "unique", json_null());
		return o;
	}
	json_object_set_new(
	        o, "unique",
	        json_pack("{s:o, s:s, s:o, s:b}", "key", cli_json_cstr(x->key),
	                  "scope", scope_name(x->scope), "for_ms",
	                  x->scope == SKED_UNIQUE_PERIOD
	                          ? json_integer((json_int_t)x->for_ms)
	                          : json_null(),
	                  "replace", x->replace));
	return o;
}

void
cli_schedule_unique_text(const char *name, const sked_schedule_unique *u,
                         size_t nu, char *buf, size_t len)
{
	const sked_schedule_unique *x = unique_for(name, u, nu);
	char d[32];
	if (!x)
		snprintf(buf, len, "-");
	else if (x->scope == SKED_UNIQUE_PERIOD)
		snprintf(buf, len, "%s (for %s)", x->key,
		         sked_format_duration(x->for_ms, d, sizeof d));
	else
		snprintf(buf, len, "%s (%s%s)", x->key, scope_name(x->scope),
		         x->replace ? ", replace" : "");
}

int
cli_unique_scope(const char *cmd, const char *arg, int *scope)
{
	if (strcmp(arg, "live") == 0)
		*scope = SKED_UNIQUE_LIVE;
	else if (strcmp(arg, "pending") == 0)
		*scope = SKED_UNIQUE_PENDING;
	else
		return cli_usage(cmd,
		                 "--unique-scope: give live or pending, not "
		                 "'%s' (a period is --unique-for D)",
		                 arg);
	return 0;
}

int
cli_unique_check(const char *cmd, sked_enqueue_opts *uo, int scoped)
{
	if ((scoped || uo->unique_for_ms || uo->unique_replace) &&
	    uo->unique_key == NULL)
		return cli_usage(cmd, "--unique-scope, --unique-for and "
		                      "--unique-replace need --unique KEY");
	if (scoped && uo->unique_for_ms)
		return cli_usage(cmd, "--unique-scope and --unique-for "
		                      "conflict (a key is held by state or "
		                      "for a period)");
	if (uo->unique_replace && uo->unique_for_ms)
		return cli_usage(cmd, "--unique-replace works with the live "
		                      "and pending scopes, not with "
		                      "--unique-for");
	/* as `enqueue`: a running task must not swallow the new payload,
	 * so a replace holds the key until the task starts unless told */
	if (uo->unique_replace && !scoped)
		uo->unique_scope = SKED_UNIQUE_PENDING;
	return 0;
}

/* ---- a fair queue's key weights (docs/limits.md, "Fair queues") ---- */

json_t *
cli_queue_weights_json(json_t *o, const sked_queue_weight *w, size_t nw)
{
	const char *queue = json_string_value(json_object_get(o, "queue"));
	json_t *m = json_object();
	for (size_t i = 0; queue && i < nw; i++)
		if (strcmp(w[i].queue, queue) == 0)
			json_object_set_new(m, w[i].key,
			                    json_integer(w[i].weight));
	json_object_set_new(o, "weights", m);
	return o;
}

#define WEIGHTS_SHOWN 5

void
cli_queue_weights_text(const char *queue, const sked_queue_weight *w, size_t nw,
                       char *buf, size_t len)
{
	size_t at = 0, shown = 0, more = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < nw; i++) {
		if (strcmp(w[i].queue, queue) != 0)
			continue;
		if (shown == WEIGHTS_SHOWN) {
			more++;
			continue;
		}
		int k = snprintf(buf + at, len - at, "%s%s=%d",
		                 shown ? " " : "", w[i].key, w[i].weight);
		if (k < 0 || (size_t)k >= len - at) {
			more++;
			continue;
		}
		at += (size_t)k;
		shown++;
	}
	if (more && at < len)
		snprintf(buf + at, len - at, " +%zu more", more);
	if (!shown)
		snprintf(buf, len, "-");
}
