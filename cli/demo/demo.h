/*
 * demo.h — what `sked demo`'s two files share: the plan of tasks, the
 * demo's state, and the checks (cmd_demo.c drives the workers and the
 * schedule part; demo_check.c holds the plan and checks the records
 * against it, calling nothing of cmd_demo.c).
 */
#ifndef SKED_CLI_DEMO_H
#define SKED_CLI_DEMO_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/cli.h"
#include "base/fleet.h"

#define DEMO_WORKERS      4
#define DEMO_MAX_ATTEMPTS 3
#define DEMO_DELAY_MS     2000
#define DEMO_DEADLINE_MS  120000
#define DEMO_TICK_MS      300

/* What the demo enqueues. The payload tells the handler how to behave:
 * "fail-until=N" fails attempts 1..N, "fail-always" fails every one. */
typedef struct demo_plan {
	const char *kind;
	const char *payload;
	int count;
	int priority;
	int64_t delay_ms;
	const char *what;
} demo_plan;
extern const demo_plan demo_plans[];
extern const size_t demo_nplans;

/* What the demo names each worker process by; its pid and exits are in
 * the fleet's slot of the same index. */
struct demo_node {
	char node[32];
	char logpath[PATH_MAX];
};

struct demo {
	char dir[PATH_MAX - 64];
	char url[PATH_MAX];
	char log[PATH_MAX];
	char self[PATH_MAX];
	char handler[PATH_MAX]; /* the handler program, no blanks */
	sked *h;
	sked_info info;
	size_t ntasks;
	int64_t *ids;  /* the tasks, in enqueue order */
	int *plan;     /* ids[i] was made from plans[plan[i]] */
	size_t *by_id; /* indexes into ids, sorted by id */
	struct demo_node w[DEMO_WORKERS];
	struct cli_fleet fleet; /* DEMO_WORKERS slots */
	pid_t pids_seen[64];    /* every worker pid, for PPID → node */
	char nodes_seen[64][32];
	size_t npids;
	int checks_failed;
};

/* How many attempts fail for a payload (INT_MAX: all of them). */
int demo_fails_until(const char *payload);
/* The index of task id in d->ids, or -1 (d->by_id must be sorted). */
long demo_task_index(const struct demo *d, int64_t id);
/* Print one check line; a failed one counts in d->checks_failed. */
void demo_check(struct demo *d, int ok, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* The report: every attempt of the handlers' own log against the
 * database's runs, as the demo prints it. */
void demo_report(struct demo *d, int64_t elapsed_ms);

int cmd_demo(struct cli *c, int argc, char **argv);
int cmd_demo_handler(struct cli *c, int argc, char **argv);

#endif
