/*
 * bench.c — what both kinds of `sked bench` run share: the file the
 * workers stamp (and the no-op handler that stamps it, run inside
 * `sked worker --builtin-noop`), the private folder and environment of
 * the workers, starting and reaping them, the timed drain and its CPU
 * split (the machine's, the workers' and the database server's).
 *
 * Layer: the command-line program, a client of <sked.h> only; bench.h
 * says what the bench's files call of each other. The plain run's phases
 * and the command are cmd_bench.c's, the dependency patterns
 * bench_deps.c's.
 */
#include "bench/bench.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

const char *const cli_bench_pat_names[] = {"",      "baseline", "fanout",
                                           "fanin", "chain",    "layered"};

/* Machine CPU from /proc/stat: busy and total jiffies over all cores.
 * 0 and 0 where there is no /proc. */
static void
cpu_jiffies(long long *busy, long long *total)
{
	long long v[8] = {0};
	FILE *f = fopen("/proc/stat", "r");
	int i;

	*busy = *total = 0;
	if (f == NULL)
		return;
	if (fscanf(f, "cpu %lld %lld %lld %lld %lld %lld %lld %lld", &v[0],
	           &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
		for (i = 0; i < 8; i++)
			*total += v[i];
		*busy = *total - v[3] - v[4]; /* less idle and iowait */
	}
	fclose(f);
}

/* The wall clock in ms since the epoch. */
static long long
wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* CPU ticks (utime + stime) that process pid has used, with its reaped
 * children and its live ones: a database server on this machine (its
 * postmaster and the backends it forks; mysqld's threads are its own).
 * -1 where there is no such process or no /proc. */
static long long
proc_ticks(long pid, int with_children)
{
	char path[64], buf[1024];
	long long v[4] = {0};
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')'); /* the name may hold blanks */
	if (p == NULL ||
	    sscanf(p + 2,
	           "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lld "
	           "%lld %lld %lld",
	           &v[0], &v[1], &v[2], &v[3]) != 4)
		return -1;
	return v[0] + v[1] + (with_children ? v[2] + v[3] : 0);
}

static long long
server_ticks(long pid)
{
	char path[64];
	long long t;
	long child;
	if (pid <= 0 || (t = proc_ticks(pid, 1)) < 0)
		return -1;
	snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", pid, pid);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return t;
	while (fscanf(f, "%ld", &child) == 1) {
		long long c = proc_ticks(child, 0);
		if (c > 0)
			t += c;
	}
	fclose(f);
	return t;
}

/* ---- the worker side (called from cmd_worker.c) ---- */

void *
cli_bench_attach(void)
{
	const char *path = getenv(BENCH_SHM_ENV);
	struct stat st;
	void *p;
	int fd;

	if (path == NULL || path[0] == '\0')
		return NULL;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0 ||
	    (size_t)st.st_size < sizeof(struct bench_shm)) {
		cli_err("bench: cannot open %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED,
	         fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

int
cli_bench_noop(sked_job *job, void *userdata)
{
	int64_t t = cli_mono_ns(); /* the first thing the handler does */
	struct bench_shm *s = userdata;
	const char *p;
	size_t len;

	if (s == NULL)
		return 0;
	p = sked_job_payload(job, &len);
	if (len > 1 && p[0] == 'L') {
		char *end;
		long long i = strtoll(p + 1, &end, 10);
		long long zero = 0;
		if (i >= 0 && i < s->nlat &&
		    atomic_compare_exchange_strong(&s->lat_start_ns[i], &zero,
		                                   t))
			atomic_fetch_add(&s->lat_handled, 1);
	} else if (len > 1 && p[0] == 'D') {
		/* a graph job: its start, its end, how often it ran; the end
		 * is stamped last, as the handler returns */
		char *end;
		long long i = strtoll(p + 1, &end, 10);
		long long zero = 0;
		if (i >= 0 && i < s->ndep) {
			atomic_compare_exchange_strong(
			        &dep_slots(s, DEP_START)[i], &zero, t);
			atomic_fetch_add(&dep_slots(s, DEP_CALLS)[i], 1);
			atomic_store(&dep_slots(s, DEP_END)[i], cli_mono_ns());
		}
	}
	atomic_fetch_add(&s->handled, 1);
	return 0;
}

/* ---- the parent ---- */

void
cli_bench_progress(struct bench *b, const char *fmt, ...)
{
	va_list ap;

	if (!b->tty)
		return;
	va_start(ap, fmt);
	fputs("\r\033[Ksked bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
}

void
cli_bench_progress_end(struct bench *b)
{
	if (b->tty)
		fputs("\r\033[K", stderr);
}

/* Counts of the bench queue (per status), and the rows in the whole task
 * table. */
int
cli_bench_counts(struct bench *b, int64_t st[7], int64_t *rows)
{
	sked_queue_stats *qs = NULL;
	size_t n = 0, i;
	int rc, k;

	if ((rc = sked_stats(b->c->h, &qs, &n)) != SKED_OK)
		return cli_fail(b->c->h, rc, "bench: stats");
	memset(st, 0, 7 * sizeof st[0]);
	if (rows != NULL)
		*rows = 0;
	for (i = 0; i < n; i++) {
		for (k = 0; k < 7; k++) {
			if (strcmp(qs[i].queue, BENCH_QUEUE) == 0)
				st[k] += qs[i].count[k];
			if (rows != NULL)
				*rows += qs[i].count[k];
		}
	}
	free(qs);
	return 0;
}

int64_t
cli_bench_unfinished(const int64_t st[7])
{
	return st[SKED_PENDING] + st[SKED_RUNNING] + st[SKED_RETRY] +
	       st[SKED_BLOCKED];
}

/* The bench queue's live tasks (pending, waiting to retry, running or
 * blocked): one count per status over the bench queue's rows only, each
 * on the partial index of its status, so the end of a drain is seen at
 * the same cost whatever else the table holds. (It read the cluster's
 * gauges, whose counts go over every live row: beside a million tasks
 * delayed for later, each poll took a fifth of a second of the timed
 * drain.) */
static int
live(struct bench *b, int64_t *n)
{
	static const int live_status[] = {SKED_PENDING, SKED_RUNNING,
	                                  SKED_RETRY, SKED_BLOCKED};
	sked_list_filter f;
	int rc;

	*n = 0;
	memset(&f, 0, sizeof f);
	f.queue = BENCH_QUEUE;
	for (size_t i = 0; i < sizeof live_status / sizeof *live_status; i++) {
		int64_t k = 0;
		f.status = live_status[i];
		if ((rc = sked_task_count(b->c->h, &f, &k)) != SKED_OK)
			return cli_fail(b->c->h, rc, "bench: count");
		*n += k;
	}
	return 0;
}

/* A private folder with the shared file and a config file naming the
 * prefix; the workers' environment points at both. The URL travels in
 * SKED_DATABASE_URL, never on a command line others can read. */
int
cli_bench_setup(struct bench *b)
{
	const char *tmp = getenv("TMPDIR");
	size_t nenv = 0, i, k = 0;
	FILE *f;
	int fd;

	snprintf(b->dir, sizeof b->dir, "%s/sked-bench.XXXXXX",
	         tmp && *tmp && strlen(tmp) < 32 ? tmp : "/tmp");
	if (mkdtemp(b->dir) == NULL) {
		cli_err("bench: cannot make a temporary folder: %s",
		        strerror(errno));
		b->dir[0] = '\0';
		return EX_CANTCREAT;
	}
	snprintf(b->shm_path, sizeof b->shm_path, "%s/shm", b->dir);
	snprintf(b->conf_path, sizeof b->conf_path, "%s/sked.conf", b->dir);
	b->shm_size = sizeof(struct bench_shm) +
	              (size_t)(b->lat_tasks + (b->pattern ? 3 * b->tasks : 0)) *
	                      sizeof(atomic_llong);
	fd = open(b->shm_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)b->shm_size) != 0) {
		cli_err("bench: %s: %s", b->shm_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return EX_CANTCREAT;
	}
	b->shm = mmap(NULL, b->shm_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
	              0);
	close(fd);
	if (b->shm == MAP_FAILED) {
		b->shm = NULL;
		cli_err("bench: mmap: %s", strerror(errno));
		return EX_OSERR;
	}
	b->shm->nlat = b->lat_tasks;
	b->shm->ndep = b->pattern ? b->tasks : 0;

	f = fopen(b->conf_path, "w");
	if (f == NULL || fprintf(f, "[sked]\nprefix = %s\n", b->prefix) < 0 ||
	    fclose(f) != 0) {
		cli_err("bench: %s: %s", b->conf_path, strerror(errno));
		return EX_CANTCREAT;
	}

	while (environ[nenv] != NULL)
		nenv++;
	b->env = calloc(nenv + 6, sizeof *b->env);
	if (b->env == NULL)
		return EX_OSERR;
	for (i = 0; i < nenv; i++)
		if (strncmp(environ[i], "SKED_", 5) != 0 ||
		    strncmp(environ[i], "SKED_LOG=", 9) == 0)
			b->env[k++] = strdup(environ[i]);
	if (asprintf(&b->env[k++], "SKED_DATABASE_URL=%s", b->c->url) < 0 ||
	    asprintf(&b->env[k++], "SKED_CONFIG=%s", b->conf_path) < 0 ||
	    asprintf(&b->env[k++], "%s=%s", BENCH_SHM_ENV, b->shm_path) < 0)
		return EX_OSERR;
	if (b->c->strategy != NULL &&
	    asprintf(&b->env[k++], "SKED_STRATEGY=%s", b->c->strategy) < 0)
		return EX_OSERR;
	if (getenv("SKED_LOG") == NULL)
		b->env[k++] = strdup("SKED_LOG=warn");
	for (i = 0; i < k; i++)
		if (b->env[i] == NULL)
			return EX_OSERR;
	return 0;
}

void
cli_bench_teardown(struct bench *b)
{
	size_t i;

	if (b->shm != NULL)
		munmap(b->shm, b->shm_size);
	if (b->shm_path[0])
		unlink(b->shm_path);
	if (b->conf_path[0])
		unlink(b->conf_path);
	if (b->dir[0])
		rmdir(b->dir);
	for (i = 0; b->env != NULL && b->env[i] != NULL; i++)
		free(b->env[i]);
	free(b->env);
	cli_fleet_free(&b->fleet);
	free(b->lat_ns);
	free(b->waits);
}

/* Start one `sked worker --builtin-noop` from this binary; its stdout
 * goes to our stderr so that --json output stays one document. */
int
cli_bench_spawn_worker(struct bench *b, long long threads, int until_empty)
{
	char conc[24], poll[32];
	const char *argv[18];
	int n = 0, err;

	snprintf(conc, sizeof conc, "%lld", threads);
	argv[n++] = "sked";
	argv[n++] = "worker";
	argv[n++] = "--builtin-noop";
	argv[n++] = BENCH_KIND;
	argv[n++] = "--queues";
	argv[n++] = BENCH_QUEUE;
	argv[n++] = "--concurrency";
	argv[n++] = conc;
	char pre[24], lanes[24];
	if (b->lanes > 0) {
		snprintf(lanes, sizeof lanes, "%lld", b->lanes);
		argv[n++] = "--lanes";
		argv[n++] = lanes;
	}
	if (until_empty && b->prefetch > 0) {
		snprintf(pre, sizeof pre, "%lld", b->prefetch);
		argv[n++] = "--prefetch";
		argv[n++] = pre;
	}
	if (until_empty)
		argv[n++] = "--until-empty";
	if (b->poll_ms > 0) {
		sked_format_duration(b->poll_ms, poll, sizeof poll);
		argv[n++] = "--poll";
		argv[n++] = poll;
	}
	argv[n] = NULL;
	err = cli_fleet_spawn(&b->fleet, b->fleet.n, "/proc/self/exe", argv,
	                      b->env, NULL);
	if (err != 0) {
		cli_err("bench: cannot start a worker: %s", strerror(err));
		return EX_OSERR;
	}
	return 0;
}

/* Reap workers that exited. Returns how many are still running, or -1
 * when one failed (the fleet says which). */
int
cli_bench_reap(struct bench *b, int block)
{
	int failed = 0, alive = cli_fleet_reap(&b->fleet, block, &failed);

	return failed ? -1 : alive;
}

int
cli_bench_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest sample with at least p % of the samples at
 * or below it. */
double
cli_bench_pct_ms(const int64_t *sorted, long long n, double p)
{
	long long r = (long long)((p / 100.0) * (double)n + 0.999999);

	if (r < 1)
		r = 1;
	if (r > n)
		r = n;
	return (double)sorted[r - 1] / 1e6;
}

int
cli_bench_drain(struct bench *b)
{
	int64_t st[7] = {0}, t0, t1 = 0, deadline, last = 0, stop_at, left = 0;
	struct rusage ru;
	long long i, busy0, total0, busy1, total1;
	int ex, alive;

	if ((ex = cli_bench_counts(b, st, NULL)) != 0)
		return ex;
	if (st[SKED_PENDING] + st[SKED_BLOCKED] != b->tasks) {
		cli_err("bench: expected %lld pending or blocked tasks, the "
		        "database has %" PRId64,
		        b->tasks, st[SKED_PENDING] + st[SKED_BLOCKED]);
		return EX_SOFTWARE;
	}
	atomic_store(&b->shm->handled, 0);
	long long srv0 = server_ticks(b->server_pid), srv1 = -1;
	cpu_jiffies(&busy0, &total0);
	t0 = cli_mono_ns();
	b->drain_t0_ms = wall_ms();
	deadline = t0 + b->timeout_ms * 1000000;
	for (i = 0; i < b->workers; i++)
		if ((ex = cli_bench_spawn_worker(b, b->threads, 1)) != 0) {
			cli_fleet_signal(&b->fleet, SIGTERM);
			cli_bench_reap(b, 1);
			return ex;
		}
	/* The handlers' counter first, without touching the database. */
	while (atomic_load(&b->shm->handled) < b->tasks) {
		int64_t now = cli_mono_ns();
		cli_sleep_ns(2000000);
		if (now - last > 250000000) {
			long long h = atomic_load(&b->shm->handled);
			last = now;
			cli_bench_progress(
			        b, "drained %lld/%lld (%.0f tasks/s)", h,
			        b->tasks, (double)h * 1e9 / (double)(now - t0));
		}
		if ((alive = cli_bench_reap(b, 0)) <= 0 || now > deadline) {
			cli_bench_progress_end(b);
			if (alive == 0)
				cli_err("bench: the workers stopped after "
				        "%lld of %lld tasks",
				        atomic_load(&b->shm->handled),
				        b->tasks);
			else if (alive > 0)
				cli_err("bench: timed out after %lld of %lld "
				        "tasks",
				        atomic_load(&b->shm->handled),
				        b->tasks);
			cli_fleet_signal(&b->fleet, SIGTERM);
			cli_bench_reap(b, 1);
			return EX_SOFTWARE;
		}
	}
	/* Then the database: done when it holds no unfinished bench task
	 * (the live rows only: ended ones are never read here). */
	for (;;) {
		if ((ex = live(b, &left)) != 0)
			break;
		if (left == 0) {
			t1 = cli_mono_ns();
			b->drain_t1_ms = wall_ms();
			cpu_jiffies(&busy1, &total1);
			srv1 = server_ticks(b->server_pid);
			break;
		}
		if (cli_mono_ns() > deadline) {
			cli_err("bench: timed out with %" PRId64
			        " tasks unfinished",
			        left);
			ex = EX_SOFTWARE;
			break;
		}
		cli_sleep_ns(2000000);
	}
	/* after the timer: how many succeeded (this one reads them all) */
	if (ex == 0)
		ex = cli_bench_counts(b, st, NULL);
	cli_bench_progress_end(b);
	b->handled = atomic_load(&b->shm->handled);
	if (ex != 0) {
		cli_fleet_signal(&b->fleet, SIGTERM);
		cli_bench_reap(b, 1);
		return ex;
	}
	b->drain_s = (double)(t1 - t0) / 1e9;
	if (total1 > total0)
		b->machine_pct = 100.0 * (double)(busy1 - busy0) /
		                 (double)(total1 - total0);
	/* /proc/stat's jiffies and /proc/PID/stat's ticks are both
	 * USER_HZ: the server's share of every core's time */
	b->server_pct = -1;
	if (total1 > total0 && srv0 >= 0 && srv1 >= srv0)
		b->server_pct = 100.0 * (double)(srv1 - srv0) /
		                (double)(total1 - total0);
	if (st[SKED_SUCCEEDED] - b->finished_before < b->tasks)
		cli_err("bench: warning: only %" PRId64 " tasks succeeded",
		        st[SKED_SUCCEEDED] - b->finished_before);
	/* The workers leave on their own (--until-empty). */
	stop_at = cli_mono_ns() + 30000000000LL;
	while ((alive = cli_bench_reap(b, 0)) > 0 && cli_mono_ns() < stop_at)
		cli_sleep_ns(1000000);
	if (alive > 0) {
		cli_fleet_signal(&b->fleet, SIGTERM);
		alive = cli_bench_reap(b, 1);
	}
	b->exit_s = (double)(cli_mono_ns() - t0) / 1e9;
	b->fleet.n = 0;
	if (getrusage(RUSAGE_CHILDREN, &ru) == 0) {
		b->worker_cpu_s = (double)ru.ru_utime.tv_sec +
		                  (double)ru.ru_utime.tv_usec / 1e6 +
		                  (double)ru.ru_stime.tv_sec +
		                  (double)ru.ru_stime.tv_usec / 1e6;
		b->worker_rss_kb = ru.ru_maxrss; /* kB on Linux */
	}
	{
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		if (ncpu > 0 && b->exit_s > 0)
			b->worker_pct = 100.0 * b->worker_cpu_s /
			                (b->exit_s * (double)ncpu);
	}
	return alive < 0 ? EX_SOFTWARE : 0;
}

double
cli_bench_per_s(long long n, double s)
{
	return s > 0 ? (double)n / s : 0;
}

/* The drain's figures, as --json gives them with or without --pattern. */
json_t *
cli_bench_thr_json(struct bench *b)
{
	json_t *thr;

	thr = json_pack(
	        "{s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, "
	        "s:I, "
	        "s:I, s:I}",
	        "tasks", (json_int_t)b->tasks, "workers",
	        (json_int_t)b->workers, "threads", (json_int_t)b->threads,
	        "concurrency", (json_int_t)(b->workers * b->threads), "seconds",
	        b->drain_s, "tasks_per_s",
	        cli_bench_per_s(b->tasks, b->drain_s), "workers_exited_s",
	        b->exit_s, "worker_cpu_s", b->worker_cpu_s, "machine_cpu_pct",
	        b->machine_pct, "worker_cpu_pct", b->worker_pct,
	        "handler_calls", (json_int_t)b->handled, "finished_rows_before",
	        (json_int_t)b->finished_before, "worker_max_rss_kb",
	        (json_int_t)b->worker_rss_kb);
	if (b->server_pct >= 0)
		json_object_set_new(thr, "server_cpu_pct",
		                    json_real(b->server_pct));
	if (b->drain_t1_ms > 0) {
		json_object_set_new(thr, "drain_start_unix_ms",
		                    json_integer(b->drain_t0_ms));
		json_object_set_new(thr, "drain_end_unix_ms",
		                    json_integer(b->drain_t1_ms));
	}
	return thr;
}

json_t *
cli_bench_db_json(const sked_info *info)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:o}", "url",
	                 cli_json_cstr(info->url), "driver",
	                 cli_json_cstr(info->driver), "product",
	                 cli_json_cstr(info->product), "version",
	                 cli_json_cstr(info->version), "strategy",
	                 cli_json_cstr(info->strategy));
}
