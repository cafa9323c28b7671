/*
 * cmd_demo.c — `sked demo`, the showcase, and its hidden handler program
 * `sked __demo-handler LOG`.
 *
 * Layer: the command-line program. The demo makes a fresh SQLite database
 * in a new temporary folder, enqueues a few hundred tasks (some fail and
 * are retried, a few end dead, some are delayed, some jump the queue),
 * starts four worker processes of this very binary as if they were four
 * hosts, shows live counts, and then proves from two independent records
 * (the handler's own append-only log and the database's run records) that
 * every attempt ran exactly once and no task ran twice at the same time.
 * All scheduling is the library's, reached through the same `sked worker`
 * command a user would run; this file only drives it and checks the
 * result.
 */
#include "demo/demo.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char *const kinds[] = {"email", "resize", "report", "urgent"};
#define NKINDS (sizeof kinds / sizeof kinds[0])

static int64_t
wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------ */
/* The handler program                                                */
/* ------------------------------------------------------------------ */

/* Reads the payload on stdin, works a few ms, appends one line
 *   TASK ATTEMPT NODE PPID START_MS END_MS
 * to LOG (O_APPEND, one write, so lines from concurrent processes never
 * mix), and fails when the payload says so for this attempt. */
int
cmd_demo_handler(struct cli *c, int argc, char **argv)
{
	const char *log = argc > 1 ? argv[1] : getenv("SKED_DEMO_LOG");
	const char *id_s = getenv("SKED_TASK_ID");
	const char *att_s = getenv("SKED_TASK_ATTEMPT");
	const char *node = getenv("SKED_DEMO_NODE");
	char payload[256], line[512];
	size_t n = 0;
	ssize_t got;
	int64_t start = wall_ms(), id;
	int attempt, fd, len, fail;

	if (log == NULL || id_s == NULL || att_s == NULL) {
		fprintf(stderr,
		        "__demo-handler: needs LOG, SKED_TASK_ID and "
		        "SKED_TASK_ATTEMPT (it is run by `sked demo`)\n");
		return EX_USAGE;
	}
	id = strtoll(id_s, NULL, 10);
	attempt = atoi(att_s);
	while (n < sizeof payload - 1 &&
	       (got = read(0, payload + n, sizeof payload - 1 - n)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			break;
		n += (size_t)got;
	}
	payload[n] = '\0';
	fail = attempt <= demo_fails_until(payload);

	cli_sleep_ms(5 + (id * 7) % 20); /* the "work" */

	len = snprintf(line, sizeof line,
	               "%" PRId64 " %d %s %ld %" PRId64 " %" PRId64 "\n", id,
	               attempt, node && node[0] ? node : "-", (long)getppid(),
	               start, wall_ms());
	fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, line, (size_t)len) != len) {
		fprintf(stderr, "__demo-handler: cannot append to %s: %s\n",
		        log, strerror(errno));
		return EX_IOERR;
	}
	close(fd);
	if (fail) {
		fprintf(stderr, "simulated failure on attempt %d (%s)\n",
		        attempt, payload);
		return 1;
	}
	printf("task %" PRId64 " done on attempt %d by %s\n", id, attempt,
	       node && node[0] ? node : "-");
	return 0;
}

/* ------------------------------------------------------------------ */
/* The demo                                                           */
/* ------------------------------------------------------------------ */

static const struct demo *sort_demo;

static int
cmp_by_id(const void *a, const void *b)
{
	int64_t x = sort_demo->ids[*(const size_t *)a];
	int64_t y = sort_demo->ids[*(const size_t *)b];

	return x < y ? -1 : x > y;
}

static int
has_blank(const char *s)
{
	return strpbrk(s, " \t\n") != NULL;
}

static int
setup(struct demo *d)
{
	const char *tmp = getenv("TMPDIR");
	char link[PATH_MAX];
	ssize_t n;
	int fd;

	if (tmp == NULL || tmp[0] == '\0')
		tmp = "/tmp";
	snprintf(d->dir, sizeof d->dir, "%s/sked-demo-XXXXXX", tmp);
	if (has_blank(d->dir)) {
		cli_err("demo: the temporary folder '%s' has blanks in its "
		        "path; set TMPDIR to one without",
		        tmp);
		return EX_CANTCREAT;
	}
	if (mkdtemp(d->dir) == NULL) {
		cli_err("demo: cannot create a folder in %s: %s", tmp,
		        strerror(errno));
		return EX_CANTCREAT;
	}
	snprintf(d->url, sizeof d->url, "sqlite:%s/sked.db", d->dir);
	snprintf(d->log, sizeof d->log, "%s/handler.log", d->dir);
	fd = open(d->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		cli_err("demo: cannot create %s: %s", d->log, strerror(errno));
		return EX_CANTCREAT;
	}
	close(fd);
	n = readlink("/proc/self/exe", d->self, sizeof d->self - 1);
	if (n <= 0) {
		cli_err("demo: cannot find this program (/proc/self/exe): %s",
		        strerror(errno));
		return EX_OSERR;
	}
	d->self[n] = '\0';
	/* Handler commands are split on blanks: reach this binary through
	 * a link in the demo folder if its own path has any. */
	snprintf(d->handler, sizeof d->handler, "%s", d->self);
	if (has_blank(d->self)) {
		snprintf(link, sizeof link, "%s/sked", d->dir);
		if (symlink(d->self, link) != 0) {
			cli_err("demo: cannot link %s: %s", link,
			        strerror(errno));
			return EX_CANTCREAT;
		}
		snprintf(d->handler, sizeof d->handler, "%s", link);
	}
	return 0;
}

static int
enqueue_all(struct demo *d)
{
	size_t p, i, k = 0, total = 0;
	const char **payloads;
	int rc;

	for (p = 0; p < demo_nplans; p++)
		total += (size_t)demo_plans[p].count;
	d->ids = calloc(total, sizeof *d->ids);
	d->plan = calloc(total, sizeof *d->plan);
	d->by_id = calloc(total, sizeof *d->by_id);
	payloads = calloc(total, sizeof *payloads);
	if (!d->ids || !d->plan || !d->by_id || !payloads) {
		free(payloads);
		cli_err("demo: out of memory");
		return EX_OSERR;
	}
	printf("Enqueuing %zu tasks, one transaction per batch "
	       "(sked_enqueue_many):\n",
	       total);
	for (p = 0; p < demo_nplans; p++) {
		sked_enqueue_opts eo;
		memset(&eo, 0, sizeof eo);
		eo.priority = demo_plans[p].priority;
		eo.delay_ms = demo_plans[p].delay_ms;
		eo.max_attempts = DEMO_MAX_ATTEMPTS;
		for (i = 0; i < (size_t)demo_plans[p].count; i++) {
			payloads[i] = demo_plans[p].payload;
			d->plan[k + i] = (int)p;
		}
		rc = sked_enqueue_many(d->h, demo_plans[p].kind,
		                       (size_t)demo_plans[p].count, payloads,
		                       NULL, &eo, d->ids + k);
		if (rc != SKED_OK) {
			free(payloads);
			return cli_fail(d->h, rc, "demo: enqueue %s",
			                demo_plans[p].kind);
		}
		printf("  %4d x %-7s %-13s %s\n", demo_plans[p].count,
		       demo_plans[p].kind, demo_plans[p].payload,
		       demo_plans[p].what);
		k += (size_t)demo_plans[p].count;
	}
	free(payloads);
	d->ntasks = total;
	for (i = 0; i < total; i++)
		d->by_id[i] = i;
	sort_demo = d;
	qsort(d->by_id, total, sizeof *d->by_id, cmp_by_id);
	return 0;
}

/* The environment of a worker: ours minus the settings that would
 * point it elsewhere, plus its node name for the handler's log. */
static char **
worker_env(const char *node)
{
	static const char *const drop[] = {
	        "SKED_CONFIG=", "SKED_STRATEGY=", "SKED_DATABASE_URL=",
	        "SKED_DEMO_NODE="};
	size_t n = 0, k = 0, i, j;
	char **env;

	while (environ[n] != NULL)
		n++;
	env = calloc(n + 2, sizeof *env);
	if (env == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		int keep = 1;
		for (j = 0; j < sizeof drop / sizeof drop[0]; j++)
			if (strncmp(environ[i], drop[j], strlen(drop[j])) == 0)
				keep = 0;
		if (keep)
			env[k++] = environ[i];
	}
	if (asprintf(&env[k], "SKED_DEMO_NODE=%s", node) < 0) {
		free(env);
		return NULL;
	}
	return env;
}

static int
spawn_worker(struct demo *d, size_t i)
{
	char hv[NKINDS][PATH_MAX * 2 + 64];
	const char *argv[32];
	const struct demo_node *w = &d->w[i];
	char **env;
	size_t k, a = 0;
	int rc;

	argv[a++] = d->self;
	argv[a++] = "--db";
	argv[a++] = d->url;
	argv[a++] = "worker";
	argv[a++] = "--node-id";
	argv[a++] = w->node;
	argv[a++] = "--concurrency";
	argv[a++] = "4";
	argv[a++] = "--lease";
	argv[a++] = "5s";
	argv[a++] = "--poll";
	argv[a++] = "200ms";
	argv[a++] = "--retry-base";
	argv[a++] = "200ms";
	argv[a++] = "--retry-max";
	argv[a++] = "1s";
	argv[a++] = "--grace";
	argv[a++] = "5s";
	argv[a++] = "--until-empty";
	for (k = 0; k < NKINDS; k++) {
		snprintf(hv[k], sizeof hv[k], "%s=%s __demo-handler %s",
		         kinds[k], d->handler, d->log);
		argv[a++] = "--handler";
		argv[a++] = hv[k];
	}
	argv[a] = NULL;

	env = worker_env(w->node);
	if (env == NULL)
		return ENOMEM;
	rc = cli_fleet_spawn(&d->fleet, i, d->self, argv, env, w->logpath);
	for (k = 0; env[k] != NULL; k++)
		;
	free(env[k - 1]); /* our SKED_DEMO_NODE=; the rest is borrowed */
	free(env);
	if (rc == 0 &&
	    d->npids < sizeof d->pids_seen / sizeof d->pids_seen[0]) {
		d->pids_seen[d->npids] = d->fleet.p[i].pid;
		memcpy(d->nodes_seen[d->npids], w->node,
		       sizeof d->nodes_seen[0]); /* both char[32] */
		d->npids++;
	}
	return rc;
}

static int
totals(struct demo *d, int64_t count[6], int64_t *due)
{
	sked_queue_stats *qs = NULL;
	size_t n = 0, i, k;
	int rc = sked_stats(d->h, &qs, &n);

	memset(count, 0, 6 * sizeof *count);
	*due = 0;
	for (i = 0; rc == SKED_OK && i < n; i++) {
		for (k = 0; k < 6; k++)
			count[k] += qs[i].count[k];
		*due += qs[i].due;
	}
	free(qs);
	return rc;
}

static int
spawn_all(struct demo *d)
{
	size_t i;
	int rc;

	for (i = 0; i < DEMO_WORKERS; i++) {
		if (d->fleet.p[i].pid != 0)
			continue;
		rc = spawn_worker(d, i);
		if (rc != 0) {
			cli_err("demo: cannot start %s: %s", d->self,
			        strerror(rc));
			return EX_OSERR;
		}
	}
	return 0;
}

/* Run the workers to completion, showing counts every DEMO_TICK_MS. */
static int
run_workers(struct demo *d, int64_t *elapsed_ms)
{
	int tty = isatty(1), alive, rc, rounds = 1;
	int64_t t0 = cli_mono_ms(), last_line = 0, count[6], due, unfinished;
	size_t i;
	int ex;

	printf("\nStarting %d worker processes (this binary, posix_spawn), "
	       "4 slots each,\nas if on %d hosts; their logs are in the demo "
	       "folder:\n",
	       DEMO_WORKERS, DEMO_WORKERS);
	for (i = 0; i < DEMO_WORKERS; i++) {
		struct demo_node *w = &d->w[i];
		snprintf(w->node, sizeof w->node, "demo-node-%zu", i + 1);
		snprintf(w->logpath, sizeof w->logpath, "%s/demo-node-%zu.log",
		         d->dir, i + 1);
	}
	if ((ex = spawn_all(d)) != 0)
		return ex;
	for (i = 0; i < DEMO_WORKERS; i++)
		printf("  %s  pid %ld\n", d->w[i].node,
		       (long)d->fleet.p[i].pid);
	printf("\n");
	fflush(stdout);

	for (;;) {
		cli_sleep_ms(DEMO_TICK_MS);
		alive = cli_fleet_reap(&d->fleet, 0, NULL);
		rc = totals(d, count, &due);
		unfinished = count[SKED_PENDING] + count[SKED_RUNNING] +
		             count[SKED_RETRY];
		if (rc == SKED_OK &&
		    (tty || cli_mono_ms() - last_line >= 1000)) {
			printf("%s  [%5.1fs] pending %3" PRId64
			       "  running %2" PRId64 "  retry %3" PRId64
			       "  succeeded %3" PRId64 "  dead %" PRId64
			       "   workers %d%s",
			       tty ? "\r\033[K" : "",
			       (double)(cli_mono_ms() - t0) / 1000.0,
			       count[SKED_PENDING], count[SKED_RUNNING],
			       count[SKED_RETRY], count[SKED_SUCCEEDED],
			       count[SKED_DEAD], alive, tty ? "" : "\n");
			fflush(stdout);
			last_line = cli_mono_ms();
		}
		if (alive == 0 && rc == SKED_OK && unfinished == 0)
			break;
		if (alive == 0 && !cli_fleet_all_ok(&d->fleet)) {
			printf("%s", tty ? "\n" : "");
			cli_err("demo: a worker failed; see its log below");
			break;
		}
		/* --until-empty lets a worker leave while tasks wait for
		 * their time (a delay, a retry backoff): start them again
		 * once something is due. */
		if (alive == 0 && rc == SKED_OK && due > 0 && rounds < 20) {
			printf("%s  (workers left with %" PRId64
			       " tasks still waiting for their time; "
			       "starting them again)\n",
			       tty ? "\n" : "", unfinished);
			rounds++;
			if ((ex = spawn_all(d)) != 0)
				return ex;
		}
		if (cli_mono_ms() - t0 > DEMO_DEADLINE_MS) {
			printf("\n");
			cli_err("demo: not finished after %d s; stopping the "
			        "workers",
			        DEMO_DEADLINE_MS / 1000);
			cli_fleet_stop(&d->fleet, 10000);
			d->checks_failed++;
			break;
		}
	}
	if (tty)
		printf("\n");
	*elapsed_ms = cli_mono_ms() - t0;
	return 0;
}

/* A per-second schedule fired by the 4 worker nodes for a few seconds:
 * each fire enqueued once, by whichever node claimed it first. */
#define DEMO_SCHED_MS 5000

static int
cmp_fire(const void *a, const void *b)
{
	int64_t x = (*(const sked_task *const *)a)->fire_time_ms;
	int64_t y = (*(const sked_task *const *)b)->fire_time_ms;

	return x < y ? -1 : x > y;
}

static void
schedule_part(struct demo *d)
{
	static const char *const name = "demo-every-second";
	sked_list_filter f = {.status = -1, .kind = "tick", .limit = 1000};
	struct demo_node w[DEMO_WORKERS];
	struct cli_fleet fl;
	sked_task *tasks = NULL, **by_fire = NULL;
	size_t n = 0, i, dups = 0, gaps = 0;
	char t1[32], t2[32];
	int rc;

	printf("\nSchedules: '* * * * * *' (every second) fired by %d "
	       "nodes for %d s\n\n",
	       DEMO_WORKERS, DEMO_SCHED_MS / 1000);
	rc = sked_schedule_put(d->h, name, "* * * * * *", "tick", NULL, NULL);
	if (rc != SKED_OK) {
		cli_fail(d->h, rc, "demo: cannot add the schedule");
		d->checks_failed++;
		return;
	}
	memset(w, 0, sizeof w);
	if (cli_fleet_init(&fl, "demo", DEMO_WORKERS) != 0) {
		cli_err("demo: out of memory");
		d->checks_failed++;
		return;
	}
	for (i = 0; i < DEMO_WORKERS; i++) {
		const char *argv[] = {d->self,  "--db",      d->url,
		                      "worker", "--node-id", w[i].node,
		                      "--poll", "200ms",     "--lease",
		                      "5s",     "--handler", "tick=true",
		                      NULL};
		char **env;

		snprintf(w[i].node, sizeof w[i].node, "node-%zu", i + 1);
		char node[sizeof w[i].node];
		memcpy(node, w[i].node, sizeof node); /* not overlapping w */
		if (snprintf(w[i].logpath, sizeof w[i].logpath,
		             "%s/cron-%s.log", d->dir,
		             node) >= (int)sizeof w[i].logpath ||
		    (env = worker_env(w[i].node)) == NULL)
			continue;
		/* a node that does not start leaves the others to fire */
		(void)cli_fleet_spawn(&fl, i, d->self, argv, env, w[i].logpath);
		for (n = 0; env[n] != NULL; n++)
			;
		free(env[n - 1]);
		free(env);
	}
	cli_sleep_ms(DEMO_SCHED_MS);
	/* stop firing, then stop the nodes */
	if (sked_schedule_pause(d->h, name) != SKED_OK)
		d->checks_failed++;
	cli_fleet_signal(&fl, SIGTERM);
	cli_fleet_reap(&fl, 1, NULL);
	cli_fleet_free(&fl);

	n = 0;
	rc = sked_task_list(d->h, &f, &tasks, &n);
	if (rc == SKED_OK && n > 0 &&
	    (by_fire = calloc(n, sizeof *by_fire)) == NULL)
		rc = SKED_ENOMEM;
	if (rc != SKED_OK) {
		cli_fail(d->h, rc, "demo: cannot read the schedule's tasks");
		d->checks_failed++;
		sked_tasks_free(tasks, n);
		return;
	}
	for (i = 0; i < n; i++)
		by_fire[i] = &tasks[i];
	qsort(by_fire, n, sizeof *by_fire, cmp_fire);
	for (i = 0; i < n; i++) {
		const sked_task *t = by_fire[i];
		if (i > 0 && t->fire_time_ms == by_fire[i - 1]->fire_time_ms)
			dups++;
		else if (i > 0 &&
		         t->fire_time_ms != by_fire[i - 1]->fire_time_ms + 1000)
			gaps++;
		printf("  fire %s  task %-5" PRId64 " %-10s run by %s\n",
		       sked_format_time(t->fire_time_ms, t1, sizeof t1), t->id,
		       sked_status_name(t->status),
		       t->node_id ? t->node_id : "-");
	}
	demo_check(d, n >= DEMO_SCHED_MS / 1000 - 1 && dups == 0 && gaps == 0,
	           "each fire enqueued exactly once across %d nodes: %zu fires "
	           "from %s to %s, %zu duplicates, %zu gaps",
	           DEMO_WORKERS, n,
	           n ? sked_format_time(by_fire[0]->fire_time_ms, t1, sizeof t1)
	             : "-",
	           n ? sked_format_time(by_fire[n - 1]->fire_time_ms, t2,
	                                sizeof t2)
	             : "-",
	           dups, gaps);
	free(by_fire);
	sked_tasks_free(tasks, n);
	printf("  (see docs/schedules.md; try: sked --db %s cron ls)\n",
	       d->url);
}

int
cmd_demo(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {CLI_COMMON_OPTIONS,
	                                     {NULL, 0, NULL, 0}};
	struct demo *d;
	sked_options o;
	int64_t elapsed = 0;
	int ch, ex, rc;

	optind = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (ch == CLI_OPT_HELP) {
			cli_help(stdout, "demo");
			return EX_OK;
		}
		if (ch != CLI_OPT_JSON)
			return cli_opt_error("demo", ch, argv);
	}
	if (optind < argc)
		return cli_usage("demo", "unexpected argument '%s'",
		                 argv[optind]);
	d = calloc(1, sizeof *d);
	if (d == NULL) {
		cli_err("demo: out of memory");
		return EX_OSERR;
	}
	if (cli_fleet_init(&d->fleet, "demo", DEMO_WORKERS) != 0) {
		free(d);
		cli_err("demo: out of memory");
		return EX_OSERR;
	}
	if ((ex = setup(d)) != 0)
		goto out;

	/* 1. The database, and what sked made of it. */
	memset(&o, 0, sizeof o);
	o.migrate = 1;
	rc = sked_open(d->url, &o, &d->h);
	if (rc == SKED_OK)
		rc = sked_get_info(d->h, &d->info);
	if (rc != SKED_OK) {
		ex = cli_fail(d->h, rc, "demo: cannot open %s", d->url);
		goto out;
	}
	printf("sked demo: %d worker processes share one database; the "
	       "database decides who runs what.\n\n",
	       DEMO_WORKERS);
	printf("  folder    %s\n", d->dir);
	printf("  database  %s (%s %s)\n", d->info.url, d->info.product,
	       d->info.version);
	printf("  strategy  %s: %s\n", d->info.strategy, d->info.reason);
	printf("  schema    version %d\n\n", d->info.schema_version);

	/* 2. The work. */
	if ((ex = enqueue_all(d)) != 0)
		goto out;
	fflush(stdout);

	/* 3, 4. The workers, with live counts. */
	if ((ex = run_workers(d, &elapsed)) != 0) {
		cli_fleet_stop(&d->fleet, 10000);
		goto out;
	}

	/* 5. The proof. */
	demo_report(d, elapsed);
	schedule_part(d);
	if (d->checks_failed == 0) {
		printf("\nPASS: every check passed.\n");
		ex = EX_OK;
	} else {
		printf("\nFAIL: %d check(s) failed; the folder %s keeps the "
		       "evidence.\n",
		       d->checks_failed, d->dir);
		ex = EX_SOFTWARE;
	}
out:
	sked_close(d->h);
	free(d->ids);
	free(d->plan);
	free(d->by_id);
	cli_fleet_free(&d->fleet);
	free(d);
	return ex;
}
