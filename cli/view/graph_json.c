/*
 * graph_json.c — a workflow written as JSON (docs/workflows.md, "A graph
 * in one transaction") read into the tasks of sked_enqueue_graph, and
 * its ids answered by name: what `sked enqueue --graph FILE` and
 * `POST /api/graphs` share, so that both read one format the same way.
 *
 * Folder cli/view/ (floor 10): a client of <sked.h> only. This file
 * checks the shape (fields, types, names, the parents named); the
 * library checks the rest (kinds, queues, bounds, cycles) and writes.
 */
#include "view/view.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const char *const task_fields[] = {"name",
                                          "kind",
                                          "payload",
                                          "queue",
                                          "priority",
                                          "run_at",
                                          "in",
                                          "max_attempts",
                                          "concurrency_key",
                                          "timeout",
                                          "on_parent_failure",
                                          "traceparent",
                                          "after",
                                          NULL};

/* a task's name and its index, sorted by name for lookups */
struct named {
	const char *name;
	size_t i;
};

static int
cmp_named(const void *a, const void *b)
{
	return strcmp(((const struct named *)a)->name,
	              ((const struct named *)b)->name);
}

/* a string field, or NULL when absent or null; -1 for another type */
static int
str_field(json_t *o, const char *key, const char **out, const char *who,
          char *err, size_t len)
{
	json_t *v = json_object_get(o, key);
	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		snprintf(err, len, "%s: '%s' must be a string", who, key);
		return -1;
	}
	*out = json_string_value(v);
	return 0;
}

static int
int_field(json_t *o, const char *key, long long min, long long max, int *out,
          const char *who, char *err, size_t len)
{
	json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < min ||
	    json_integer_value(v) > max) {
		snprintf(err, len,
		         "%s: '%s' must be an integer from %lld to %lld", who,
		         key, min, max);
		return -1;
	}
	*out = (int)json_integer_value(v);
	return 0;
}

static int
duration_field(json_t *o, const char *key, int64_t *ms, const char *who,
               char *err, size_t len)
{
	const char *s;
	if (str_field(o, key, &s, who, err, len))
		return -1;
	if (!s)
		return 0;
	if (sked_parse_duration(s, ms) != SKED_OK || *ms < 0 ||
	    *ms > SKED_DURATION_MAX_MS) {
		snprintf(err, len,
		         "%s: '%s': '%.64s' is not a duration (like 500ms, "
		         "30s, 10m, 2h, 1d; at most 100 years)",
		         who, key, s);
		return -1;
	}
	return 0;
}

/* The options of one task, as `enqueue`'s flags and POST /api/tasks's
 * fields name them. */
static int
task_opts(json_t *o, sked_enqueue_opts *eo, const char *who, char *err,
          size_t len)
{
	const char *at, *pf;
	if (str_field(o, "queue", &eo->queue, who, err, len) ||
	    str_field(o, "concurrency_key", &eo->concurrency_key, who, err,
	              len) ||
	    str_field(o, "traceparent", &eo->traceparent, who, err, len) ||
	    int_field(o, "priority", INT_MIN, INT_MAX, &eo->priority, who, err,
	              len) ||
	    int_field(o, "max_attempts", 1, INT_MAX, &eo->max_attempts, who,
	              err, len) ||
	    duration_field(o, "in", &eo->delay_ms, who, err, len) ||
	    duration_field(o, "timeout", &eo->timeout_ms, who, err, len) ||
	    str_field(o, "run_at", &at, who, err, len) ||
	    str_field(o, "on_parent_failure", &pf, who, err, len))
		return -1;
	if (json_object_get(o, "timeout") && eo->timeout_ms <= 0) {
		snprintf(err, len, "%s: 'timeout' must be above 0", who);
		return -1;
	}
	if (at && json_object_get(o, "in")) {
		snprintf(err, len, "%s: 'run_at' and 'in' conflict: give one",
		         who);
		return -1;
	}
	if (at && cli_zoned_time_value(at, &eo->run_at_ms) != 0) {
		snprintf(err, len,
		         "%s: 'run_at': '%.64s' is not an ISO-8601 "
		         "time with its zone (like "
		         "2026-03-08T07:30:00Z)",
		         who, at);
		return -1;
	}
	if (pf && cli_parent_failure_value(pf, &eo->on_parent_failure) != 0) {
		snprintf(err, len,
		         "%s: 'on_parent_failure': give cancel or ignore, not "
		         "'%.32s'",
		         who, pf);
		return -1;
	}
	return 0;
}

/* A payload: a string as it is, null or absent as none, any other JSON
 * value as its compact text (owned). */
static int
payload_of(json_t *v, sked_graph_task *t, char **owned)
{
	if (!v || json_is_null(v))
		return 0;
	if (json_is_string(v)) {
		t->payload = json_string_value(v);
		t->payload_len = json_string_length(v);
		return 0;
	}
	if (!(*owned = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY)))
		return -2;
	t->payload = *owned;
	t->payload_len = strlen(*owned);
	return 0;
}

/* One task's "after": names of the graph's tasks into *idx, integers
 * (existing tasks' ids) into *ids; both point into g's storage. */
static int
after_of(json_t *arr, const struct named *byname, size_t n, size_t *idx,
         int64_t *ids, sked_graph_task *t, sked_enqueue_opts *eo,
         const char *who, char *err, size_t len)
{
	json_t *v;
	size_t k;
	if (!arr || json_is_null(arr))
		return 0;
	if (!json_is_array(arr)) {
		snprintf(err, len,
		         "%s: 'after' must be an array of task names and ids",
		         who);
		return -1;
	}
	if (json_array_size(arr) > SKED_MAX_PARENTS) {
		snprintf(err, len,
		         "%s: after: %zu parents; a task has at most %d "
		         "(SKED_MAX_PARENTS)",
		         who, json_array_size(arr), SKED_MAX_PARENTS);
		return -1;
	}
	t->after_index = idx;
	eo->after = ids;
	json_array_foreach(arr, k, v)
	{
		if (json_is_string(v)) {
			struct named key = {json_string_value(v), 0}, *hit;
			hit = bsearch(&key, byname, n, sizeof *byname,
			              cmp_named);
			if (!hit) {
				snprintf(err, len,
				         "%s: 'after' names '%.64s', no task "
				         "of the graph",
				         who, key.name);
				return -1;
			}
			idx[t->n_after_index++] = hit->i;
		} else if (json_is_integer(v) && json_integer_value(v) > 0) {
			ids[eo->n_after++] = json_integer_value(v);
		} else {
			snprintf(err, len,
			         "%s: 'after' holds something that is neither "
			         "a task's name nor a task id (an integer "
			         "from 1)",
			         who);
			return -1;
		}
	}
	return 0;
}

static int
graph_parse(json_t *root, struct cli_graph *g, char *err, size_t len)
{
	json_t *arr, *o;
	struct named *byname = NULL;
	const char *key;
	size_t n, i, nafter = 0, used = 0;
	int rc = -1;

	memset(g, 0, sizeof *g);
	if (!json_is_object(root) ||
	    !json_is_array(arr = json_object_get(root, "tasks"))) {
		snprintf(err, len,
		         "a graph is an object whose 'tasks' is an array "
		         "(docs/workflows.md)");
		return -1;
	}
	json_object_foreach(root, key, o)
	{
		if (strcmp(key, "tasks") != 0) {
			snprintf(err, len,
			         "a graph has only 'tasks', not '%.64s'", key);
			return -1;
		}
	}
	n = json_array_size(arr);
	if (n < 1 || n > SKED_MAX_GRAPH_TASKS) {
		snprintf(err, len,
		         "a graph has 1 to %d tasks (SKED_MAX_GRAPH_TASKS), "
		         "not %zu",
		         SKED_MAX_GRAPH_TASKS, n);
		return -1;
	}
	json_array_foreach(arr, i, o)
	{
		json_t *a =
		        json_is_object(o) ? json_object_get(o, "after") : NULL;
		nafter += json_is_array(a) ? json_array_size(a) : 0;
	}
	g->n = n;
	g->tasks = calloc(n, sizeof *g->tasks);
	g->opts = calloc(n, sizeof *g->opts);
	g->owned = calloc(n, sizeof *g->owned);
	g->idx = malloc((nafter + 1) * sizeof *g->idx);
	g->ids = malloc((nafter + 1) * sizeof *g->ids);
	byname = malloc(n * sizeof *byname);
	if (!g->tasks || !g->opts || !g->owned || !g->idx || !g->ids || !byname)
		goto oom;
	for (i = 0; i < n; i++)
		g->tasks[i].opts = &g->opts[i];
	/* the names first: "after" may name a task further down */
	json_array_foreach(arr, i, o)
	{
		const char *name;
		char who[32];
		snprintf(who, sizeof who, "task %zu", i);
		if (!json_is_object(o)) {
			snprintf(err, len, "%s is not an object", who);
			goto out;
		}
		if (str_field(o, "name", &name, who, err, len))
			goto out;
		if (!name || !sked_name_valid(name)) {
			snprintf(err, len,
			         "%s: 'name' must be a name (letters, digits, "
			         "'_', '.', ':', '-'; 1 to %d bytes), not "
			         "%s%.64s%s",
			         who, SKED_MAX_NAME, name ? "'" : "",
			         name ? name : "missing", name ? "'" : "");
			goto out;
		}
		g->tasks[i].name = name;
		byname[i] = (struct named){name, i};
	}
	qsort(byname, n, sizeof *byname, cmp_named);
	for (i = 1; i < n; i++)
		if (strcmp(byname[i - 1].name, byname[i].name) == 0) {
			snprintf(err, len,
			         "two tasks are named '%.64s': a name is "
			         "unique in a graph",
			         byname[i].name);
			goto out;
		}
	json_array_foreach(arr, i, o)
	{
		sked_graph_task *t = &g->tasks[i];
		char who[96];
		json_t *v;
		snprintf(who, sizeof who, "task '%.64s'", t->name);
		json_object_foreach(o, key, v)
		{
			size_t f;
			for (f = 0; task_fields[f]; f++)
				if (strcmp(key, task_fields[f]) == 0)
					break;
			if (task_fields[f])
				continue;
			if (strncmp(key, "unique", 6) == 0)
				snprintf(err, len,
				         "%s: a task of a graph cannot have a "
				         "unique key (enqueue it alone, then "
				         "name its id in 'after')",
				         who);
			else
				snprintf(err, len, "%s: unknown field '%.64s'",
				         who, key);
			goto out;
		}
		if (str_field(o, "kind", &t->kind, who, err, len))
			goto out;
		if (!t->kind) {
			snprintf(err, len, "%s: 'kind' is missing", who);
			goto out;
		}
		if (task_opts(o, &g->opts[i], who, err, len))
			goto out;
		if (after_of(json_object_get(o, "after"), byname, n,
		             g->idx + used, g->ids + used, t, &g->opts[i], who,
		             err, len))
			goto out;
		used += t->n_after_index + g->opts[i].n_after;
		if (payload_of(json_object_get(o, "payload"), t,
		               &g->owned[i]) != 0)
			goto oom;
	}
	rc = 0;
	goto out;
oom:
	snprintf(err, len, "out of memory");
	rc = -2;
out:
	free(byname);
	if (rc != 0)
		cli_graph_free(g);
	return rc;
}

/* The refusal stays one line of text whatever the file's names and
 * keys hold: their control bytes are quoted as '?' (fuzz_graph found a
 * key with a newline in it echoed into the message). */
int
cli_graph_parse(json_t *root, struct cli_graph *g, char *err, size_t len)
{
	int rc = graph_parse(root, g, err, len);
	if (rc != 0)
		for (char *c = err; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
	return rc;
}

json_t *
cli_graph_ids_json(const struct cli_graph *g, const int64_t *ids)
{
	json_t *o = json_object();
	for (size_t i = 0; o && i < g->n; i++)
		json_object_set_new(o, g->tasks[i].name,
		                    json_integer((json_int_t)ids[i]));
	return o;
}

void
cli_graph_free(struct cli_graph *g)
{
	for (size_t i = 0; g->owned && i < g->n; i++)
		free(g->owned[i]);
	free(g->owned);
	free(g->tasks);
	free(g->opts);
	free(g->idx);
	free(g->ids);
	memset(g, 0, sizeof *g);
}
