/*
 * view.h — what more than one command, page or daemon shows or does the
 * same way: a task, a queue and a schedule as JSON (task_json.c,
 * queue_json.c), a workflow read from JSON (graph_json.c), cancel and
 * retry as verbs (steer_verbs.c), the config file's schedules, queues
 * and retention put in place (config_sync.c).
 * The Prometheus text of the gauges has its own header (metrics.h).
 *
 * Folder cli/view/ (floor 10, docs/design.md): above base/ and http/,
 * below every command, page and daemon that shows these; a client of
 * <sked.h> only.
 */
#ifndef SKED_CLI_VIEW_H
#define SKED_CLI_VIEW_H

#include "base/cli.h"

/* ---- task_json.c ---- */

/* A task, one attempt, a queue and a schedule as `show --json`,
 * `queue ls --json` and `cron ls --json` print them (the JSON API
 * answers the same objects). New references. */
json_t *cli_task_json(const sked_task *t);
json_t *cli_run_json(const sked_run *r);
/* A running task's "started_at", "elapsed_ms" (the database's clock),
 * "node_id" is the task's own, "progress" (its handler's latest report:
 * JSON as that value, other text as a string) and "progress_at", set on
 * o; null for a task not running (or one that ended meanwhile). One
 * read for a running task, none for the others. */
void cli_task_live_json(sked *h, const sked_task *t, json_t *o);

/* ---- event_json.c ---- */

/* One event of the feed as `sked events` prints it a line. Its "pos" is
 * the position to resume from after it: its time, or one ms less when
 * more of the page's events are of its millisecond (more), so that a
 * reader stopped between them misses none. New references; the page's
 * events as an array, each with its pos. */
json_t *cli_event_json(const sked_event *e, int more);
json_t *cli_events_json(const sked_event *e, size_t n);
int cli_show_json(sked *h, int64_t id, json_t **out, const char **what);
/* A related task's status name ("pruned" when it cannot be read) and,
 * in *kind, its kind (NULL then; free it). */
const char *cli_dep_state(sked *h, int64_t id, char **kind);

/* ---- graph_json.c ---- */

/* A workflow as JSON (docs/workflows.md): {"tasks": [{"name", "kind",
 * "payload", "after": [names or ids], …}]}, read for sked_enqueue_graph.
 * The tasks' strings point into the JSON value, which must outlive g. */
struct cli_graph {
	sked_graph_task *tasks;
	sked_enqueue_opts *opts; /* tasks[i].opts is &opts[i] */
	size_t n;
	size_t *idx;  /* the tasks' after_index, one array */
	int64_t *ids; /* the tasks' existing parents, one array */
	char **owned; /* payloads that were JSON values, as text */
};
/* 0; -1 bad data, -2 out of memory, with one line in err (nothing to
 * free then). */
int cli_graph_parse(json_t *root, struct cli_graph *g, char *err, size_t len);
/* {"name": id, …}: a new reference */
json_t *cli_graph_ids_json(const struct cli_graph *g, const int64_t *ids);
void cli_graph_free(struct cli_graph *g);

/* ---- queue_json.c ---- */

/* the columns of `stats`: a status, or -1 for the due count */
struct cli_stat_col {
	const char *name;
	int status;
};
extern const struct cli_stat_col cli_stat_cols[];
extern const size_t cli_nstat;
int64_t cli_stat_of(const sked_queue_stats *q, size_t col);
json_t *cli_queue_json(const sked_queue_info *q);
json_t *cli_schedule_json(const sked_schedule *s);
/* A schedule's unique key (u: sked_schedule_uniques, nu of them) added
 * to its object o as "unique" (null: none); returns o. And as `cron ls`
 * shows it: "KEY (live)", "KEY (pending, replace)", "KEY (for 10s)", or
 * "-". */
json_t *cli_schedule_unique_json(json_t *o, const sked_schedule_unique *u,
                                 size_t nu);
void cli_schedule_unique_text(const char *name, const sked_schedule_unique *u,
                              size_t nu, char *buf, size_t len);
/* --unique-scope live|pending for cmd; and the unique flags together as
 * `enqueue` takes them (scoped: --unique-scope given): a replace without
 * a scope holds the key until the task starts. 0 or an exit code. */
int cli_unique_scope(const char *cmd, const char *arg, int *scope);
int cli_unique_check(const char *cmd, sked_enqueue_opts *uo, int scoped);
/* A queue's key weights (w: sked_queue_weights, nw of them) added to
 * its object o as "weights": {"KEY": N, …}; returns o. And as `queue ls`
 * shows them: "a=3 b=2", the first few and "+N more", or "-". */
json_t *cli_queue_weights_json(json_t *o, const sked_queue_weight *w,
                               size_t nw);
void cli_queue_weights_text(const char *queue, const sked_queue_weight *w,
                            size_t nw, char *buf, size_t len);
/* 1 when queue is paused, as q (n of them, from sked_queue_list) says */
int cli_queue_paused(const sked_queue_info *q, size_t n, const char *queue);

/* ---- steer_verbs.c ---- */

/* cancel or retry: one task, some ids, or what a filter matches */
struct cli_verb {
	const char *cmd;  /* "cancel" */
	const char *past; /* "cancelled" */
	const char *done; /* what the one-task form says: "cancelled" */
	int (*one)(sked *, int64_t);
	int (*ids)(sked *, const int64_t *, size_t, int64_t *);
	int (*where)(sked *, const sked_list_filter *, int64_t *);
	/* the statuses it may act on, and those it acts on by default
	 * (when no status is named); -1 ends each list */
	int allowed[4], dflt[4];
};
extern const struct cli_verb cli_cancel_verb, cli_retry_verb;
/* 1 when v may act on tasks of that status */
int cli_verb_allows(const struct cli_verb *v, int status);
/* "dead", "pending or retry": the statuses of st (ending in -1) */
void cli_status_words(const int *st, char *buf, size_t len);
/* Count the tasks f matches in each status of st (ending in -1) into
 * *matched; when apply, then steer them, *changed counting those that
 * moved. On failure *at is the status being steered, or -1 when the
 * count failed. Returns a library status code. */
/* Steer one task (the CLI and the API share it): cancel, reporting the
 * tasks cancelled with it ("cancelled_with"), or retry (with_deps: with
 * the sub-graph its end cancelled, "retried_with"), reporting the status
 * it is in now; *out a JSON object. A library status code. */
int cli_steer_one(sked *h, const struct cli_verb *v, int64_t id, int with_deps,
                  json_t **out);
int cli_steer_where(sked *h, const struct cli_verb *v, sked_list_filter *f,
                    const int *st, int apply, int64_t *matched,
                    int64_t *changed, int *at);

/* ---- config_sync.c ---- */

/* Add or replace the config file's [schedule.NAME] schedules (a worker
 * does this at start; others are left alone). c->h must be open.
 * Returns 0, or a sysexits code after printing one line. */
int cli_sync_schedules(struct cli *c);
/* The config file's [queue.NAME] sections: set each queue's limits
 * (a worker does this when it starts, as for schedules). Returns 0 or a
 * sysexits code after one line. */
int cli_sync_queues(struct cli *c);
/* The retention ages in force: the config file's [retention], else the
 * defaults (SKED_KEEP_*): succeeded, dead, cancelled. */
void cli_retention(const struct cli_config *cfg, int64_t keep_ms[3]);

#endif /* SKED_CLI_VIEW_H */
