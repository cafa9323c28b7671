/*
 * demo_check.c — what `sked demo` promises and how it checks it: the plan
 * of tasks (what each payload makes its handler do) and the report that
 * reads two independent records, the handler program's own append-only
 * log and the database's runs, and checks every attempt against the plan:
 * each ran exactly once, none overlapped, retries and dead tasks as
 * planned, priorities first, delays kept.
 *
 * Layer: the command-line program (demo.h); cmd_demo.c calls it, it calls
 * nothing of cmd_demo.c.
 */
#include "demo/demo.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What the demo enqueues. The payload tells the handler how to behave:
 * "fail-until=N" fails attempts 1..N, "fail-always" fails every one. */
const demo_plan demo_plans[] = {
        {"email", "ok", 170, 0, 0, "succeed on the first attempt"},
        {"resize", "fail-until=1", 40, 0, 0, "fail once, then succeed"},
        {"resize", "fail-until=2", 15, 0, 0,
         "fail twice, succeed on attempt 3"},
        {"report", "fail-always", 5, 0, 0,
         "always fail: dead after 3 attempts"},
        {"email", "ok", 50, 0, DEMO_DELAY_MS, "delayed by 2 s"},
        {"urgent", "ok", 20, 10, 0, "priority 10: run before the rest"},
};
const size_t demo_nplans = sizeof demo_plans / sizeof demo_plans[0];

int
demo_fails_until(const char *payload)
{
	if (strncmp(payload, "fail-until=", 11) == 0)
		return atoi(payload + 11);
	if (strcmp(payload, "fail-always") == 0)
		return INT_MAX;
	return 0;
}

long
demo_task_index(const struct demo *d, int64_t id)
{
	size_t lo = 0, hi = d->ntasks;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int64_t v = d->ids[d->by_id[mid]];
		if (v == id)
			return (long)d->by_id[mid];
		if (v < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

void
demo_check(struct demo *d, int ok, const char *fmt, ...)
{
	va_list ap;

	printf("  [%s] ", ok ? " ok " : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!ok)
		d->checks_failed++;
}

struct entry {
	int64_t task;
	int attempt;
	char node[32];
	long ppid;
	int64_t start, end;
};

static int
cmp_task_attempt(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->task != y->task)
		return x->task < y->task ? -1 : 1;
	if (x->attempt != y->attempt)
		return x->attempt < y->attempt ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int
cmp_task_start(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->task != y->task)
		return x->task < y->task ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int
cmp_start(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Read the handler log; lines that do not parse are counted in *bad. */
static struct entry *
read_log(struct demo *d, size_t *n, size_t *bad)
{
	FILE *f = fopen(d->log, "re");
	struct entry *es = NULL, e;
	char *line = NULL;
	size_t cap = 0, lcap = 0, i;

	*n = 0;
	*bad = 0;
	if (f == NULL)
		return NULL;
	while (getline(&line, &lcap, f) > 0) {
		memset(&e, 0, sizeof e);
		if (sscanf(line, "%" SCNd64 " %d %31s %ld %" SCNd64 " %" SCNd64,
		           &e.task, &e.attempt, e.node, &e.ppid, &e.start,
		           &e.end) != 6) {
			(*bad)++;
			continue;
		}
		if (strcmp(e.node, "-") == 0) /* no node name: use the pid */
			for (i = 0; i < d->npids; i++)
				if ((long)d->pids_seen[i] == e.ppid)
					snprintf(e.node, sizeof e.node, "%s",
					         d->nodes_seen[i]);
		if (*n == cap) {
			struct entry *p;
			cap = cap ? cap * 2 : 512;
			p = realloc(es, cap * sizeof *p);
			if (p == NULL)
				break;
			es = p;
		}
		es[(*n)++] = e;
	}
	free(line);
	fclose(f);
	return es;
}

struct node_count {
	char node[64];
	int runs, ok;
};

static void
count_node(struct node_count *nc, size_t *nn, const char *node, int ok)
{
	size_t i;

	for (i = 0; i < *nn; i++)
		if (strcmp(nc[i].node, node) == 0)
			break;
	if (i == *nn) {
		if (*nn == 16)
			return;
		snprintf(nc[i].node, sizeof nc[i].node, "%s", node);
		nc[i].runs = nc[i].ok = 0;
		(*nn)++;
	}
	nc[i].runs++;
	nc[i].ok += ok;
}

static int
cmp_node(const void *a, const void *b)
{
	return strcmp(((const struct node_count *)a)->node,
	              ((const struct node_count *)b)->node);
}

static void
print_tail(const char *path)
{
	char buf[1024];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	off_t size;
	ssize_t n;

	if (fd < 0)
		return;
	size = lseek(fd, 0, SEEK_END);
	lseek(fd,
	      size > (off_t)sizeof buf - 1 ? size - (off_t)sizeof buf + 1 : 0,
	      SEEK_SET);
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n > 0) {
		buf[n] = '\0';
		printf("    --- the end of %s ---\n%s\n", path, buf);
	}
}

void
demo_report(struct demo *d, int64_t elapsed_ms)
{
	struct entry *es;
	size_t nes, bad, i, j, nn = 0, unknown = 0, dups = 0, gaps = 0;
	size_t overlaps = 0, final = 0, as_planned = 0, agree = 0;
	size_t nruns_total = 0, by_attempt[DEMO_MAX_ATTEMPTS + 2] = {0};
	size_t ndead = 0, nsucc = 0, db_errors = 0, rank = 0, nfirst = 0;
	struct node_count nc[16];
	int64_t min_wait = INT64_MAX, retried_example = 0;
	size_t *log_count = calloc(d->ntasks, sizeof *log_count);
	sked_task **tasks = calloc(d->ntasks, sizeof *tasks);
	int rc;

	printf("\nReport (workers took %.1f s)\n\n", (double)elapsed_ms / 1000);
	es = read_log(d, &nes, &bad);
	if (log_count == NULL || tasks == NULL) {
		cli_err("demo: out of memory");
		d->checks_failed++;
		goto out;
	}

	/* 1. The handler's own log: each (task, attempt) exactly once,
	 *    attempts 1..k with no gap, never two at once. */
	qsort(es, nes, sizeof *es, cmp_task_attempt);
	for (i = 0; i < nes; i++) {
		long ti = demo_task_index(d, es[i].task);
		if (ti < 0) {
			unknown++;
			continue;
		}
		log_count[ti]++;
		if (i > 0 && es[i - 1].task == es[i].task &&
		    es[i - 1].attempt == es[i].attempt)
			dups++;
		else if (es[i].attempt !=
		         ((i > 0 && es[i - 1].task == es[i].task)
		                  ? es[i - 1].attempt + 1
		                  : 1))
			gaps++;
	}
	qsort(es, nes, sizeof *es, cmp_task_start);
	for (i = 1; i < nes; i++)
		if (es[i - 1].task == es[i].task && es[i].start < es[i - 1].end)
			overlaps++;
	demo_check(d, bad == 0 && unknown == 0,
	           "handler log: %zu lines, all naming demo tasks", nes);
	demo_check(
	        d, dups == 0 && gaps == 0,
	        "every (task, attempt) ran exactly once: %zu duplicates, %zu "
	        "gaps",
	        dups, gaps);
	demo_check(
	        d, overlaps == 0,
	        "no task ran twice at the same time: %zu overlapping attempts",
	        overlaps);

	/* 2. The database: final states, as planned, runs agree with the
	 *    log. */
	qsort(es, nes, sizeof *es, cmp_task_attempt);
	memset(nc, 0, sizeof nc);
	for (i = 0; i < d->ntasks; i++) {
		const demo_plan *p = &demo_plans[d->plan[i]];
		int fu = demo_fails_until(p->payload);
		int want_dead = fu >= DEMO_MAX_ATTEMPTS;
		int want_attempts = want_dead ? DEMO_MAX_ATTEMPTS : fu + 1;
		sked_run *runs = NULL;
		size_t nr = 0, k, match = 0;

		rc = sked_task_get(d->h, d->ids[i], &tasks[i]);
		if (rc == SKED_OK)
			rc = sked_runs_get(d->h, d->ids[i], &runs, &nr);
		if (rc != SKED_OK) {
			if (db_errors++ == 0)
				cli_fail(d->h, rc, "demo: task %" PRId64,
				         d->ids[i]);
			continue;
		}
		if (tasks[i]->status == SKED_SUCCEEDED ||
		    tasks[i]->status == SKED_DEAD)
			final++;
		if (tasks[i]->status ==
		            (want_dead ? SKED_DEAD : SKED_SUCCEEDED) &&
		    tasks[i]->attempts == want_attempts)
			as_planned++;
		if (tasks[i]->status == SKED_SUCCEEDED) {
			nsucc++;
			if (tasks[i]->attempts <= DEMO_MAX_ATTEMPTS + 1)
				by_attempt[tasks[i]->attempts]++;
			if (tasks[i]->attempts > 1 && retried_example == 0)
				retried_example = tasks[i]->id;
		} else if (tasks[i]->status == SKED_DEAD) {
			ndead++;
		}
		nruns_total += nr;
		/* Each run record has its log line, on the same node. */
		for (k = 0; k < nr; k++) {
			int ok = runs[k].outcome != NULL &&
			         strcmp(runs[k].outcome, "succeeded") == 0;
			count_node(nc, &nn,
			           runs[k].node_id ? runs[k].node_id : "?", ok);
			for (j = 0; j < nes; j++)
				if (es[j].task == d->ids[i] &&
				    es[j].attempt == runs[k].attempt &&
				    runs[k].node_id != NULL &&
				    strcmp(es[j].node, runs[k].node_id) == 0) {
					match++;
					break;
				}
		}
		if (match == nr && nr == log_count[i] &&
		    nr == (size_t)tasks[i]->attempts)
			agree++;
		if (p->delay_ms > 0 && nr > 0 &&
		    runs[0].started_ms - tasks[i]->created_ms < min_wait)
			min_wait = runs[0].started_ms - tasks[i]->created_ms;
		sked_runs_free(runs, nr);
	}
	demo_check(
	        d, db_errors == 0 && final == d->ntasks,
	        "every task reached a final state: %zu of %zu (%zu succeeded, "
	        "%zu dead)",
	        final, d->ntasks, nsucc, ndead);
	demo_check(d, as_planned == d->ntasks,
	           "every task ended as its payload planned (status and "
	           "attempts): %zu of %zu",
	           as_planned, d->ntasks);
	demo_check(
	        d, agree == d->ntasks,
	        "database and handler log agree on every attempt and its node: "
	        "%zu run records, %zu log lines",
	        nruns_total, nes);
	demo_check(d, min_wait != INT64_MAX && min_wait >= DEMO_DELAY_MS - 10,
	           "delayed tasks waited their 2 s: the first started %.2f s "
	           "after "
	           "enqueue",
	           min_wait == INT64_MAX ? 0.0 : (double)min_wait / 1000);
	for (i = 0, j = 0; i < DEMO_WORKERS; i++)
		j += d->fleet.p[i].ok;
	demo_check(d, j == DEMO_WORKERS,
	           "all %d worker processes exited cleanly", DEMO_WORKERS);
	for (i = 0; i < DEMO_WORKERS; i++)
		if (!d->fleet.p[i].ok)
			print_tail(d->w[i].logpath);

	/* 3. What happened, for the reader. */
	qsort(nc, nn, sizeof *nc, cmp_node);
	printf("\nRuns per node (from the database):\n");
	for (i = 0; i < nn; i++)
		printf("  %-12s %4d runs  (%d succeeded, %d failed)\n",
		       nc[i].node, nc[i].runs, nc[i].ok, nc[i].runs - nc[i].ok);
	printf("\nRetried, then succeeded:");
	for (i = 2; i <= DEMO_MAX_ATTEMPTS; i++)
		printf("%s %zu on attempt %zu", i > 2 ? "," : "", by_attempt[i],
		       i);
	printf("\n");
	if (retried_example != 0)
		printf("  e.g. task %" PRId64 "\n", retried_example);
	printf("\nDead after %d attempts:\n", DEMO_MAX_ATTEMPTS);
	if (ndead == 0)
		printf("  (none)\n");
	for (i = 0; i < d->ntasks; i++)
		if (tasks[i] != NULL && tasks[i]->status == SKED_DEAD)
			printf("  task %-5" PRId64 " %-7s last error: %s\n",
			       tasks[i]->id, tasks[i]->kind,
			       tasks[i]->last_error ? tasks[i]->last_error
			                            : "-");

	/* Priority: where the urgent tasks' first attempts fell among all
	 * first attempts of the tasks that were due at once. */
	qsort(es, nes, sizeof *es, cmp_start);
	for (i = 0; i < nes; i++) {
		long ti = demo_task_index(d, es[i].task);
		if (ti < 0 || es[i].attempt != 1 ||
		    demo_plans[d->plan[ti]].delay_ms > 0)
			continue;
		nfirst++;
		if (demo_plans[d->plan[ti]].priority > 0)
			rank = nfirst;
	}
	printf("\nPriority: every priority-10 task started among the first "
	       "%zu of %zu tasks due at once.\n",
	       rank, nfirst);
	printf("Strategy: %s (%s)\n", d->info.strategy, d->info.reason);

	printf("\nWhat to try next:\n");
	printf("  sked --db %s stats\n", d->url);
	printf("  sked --db %s list --status dead\n", d->url);
	for (i = 0; i < d->ntasks; i++)
		if (tasks[i] != NULL && tasks[i]->status == SKED_DEAD) {
			printf("  sked --db %s show %" PRId64 "\n", d->url,
			       tasks[i]->id);
			printf("  sked --db %s retry %" PRId64 "\n", d->url,
			       tasks[i]->id);
			break;
		}
	printf("  sked --db %s nodes\n", d->url);
	printf("  sked cron next '30 7 * * mon-fri' --tz Europe/Paris "
	       "--count 3\n");
	printf("  (the handler log is %s)\n", d->log);
out:
	for (i = 0; tasks != NULL && i < d->ntasks; i++)
		sked_tasks_free(tasks[i], tasks[i] ? 1 : 0);
	free(tasks);
	free(log_count);
	free(es);
}
