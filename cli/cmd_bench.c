/*
 * cmd_bench.c — `sked bench`: enqueue rate, drain throughput and pick-up
 * latency of no-op tasks on the configured database.
 *
 * Layer: the command-line program, a client of <sked.h> only. The bench
 * drives real `sked worker` processes spawned from this very binary with
 * the hidden flag --builtin-noop KIND (cmd_worker.c), so what it measures
 * is what a user runs: the library's claim, pool, batched finish and
 * wake-up. Claiming and finishing are left entirely to the library.
 *
 * The parent and its workers share one small file mapped MAP_SHARED (its
 * path travels in SKED_BENCH_SHM): the no-op handler counts its calls
 * there, and for a latency task it writes the moment it started. Both
 * sides read CLOCK_MONOTONIC, which every process of one host shares, so
 * a latency is "handler started − the enqueue call returned", the same
 * two instants the peers harness (/work/shared/peers) takes in one
 * process.
 *
 * Phases:
 *   enqueue     N tasks in batches of B with sked_enqueue_many, timed.
 *   throughput  the timer starts just before the first worker is spawned
 *               (W processes × T threads, --until-empty); once the
 *               handlers have been called N times the parent asks the
 *               database every 2 ms until no bench task is pending,
 *               running or waiting to retry; that is when it stops.
 *               That question is sked_cluster_gauges_get, which reads
 *               only live rows: on a table that has seen a million
 *               tasks it costs what it costs on a fresh one, so the
 *               check does not slow the drain it times.
 *   latency     one worker of L threads, idle for 1 s, then M tasks
 *               enqueued one at a time with sked_enqueue at R per second
 *               on a fixed schedule; p50/p95/p99 by nearest rank.
 *
 * Every run uses a fresh table prefix (or the one given with --prefix, to
 * measure on a table that already holds finished tasks). The CLI has no
 * call that drops tables: the prefix is printed so a script can.
 */
#include "cli.h"
#include "fleet.h"

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

#define BENCH_KIND    "bench.noop"
#define BENCH_QUEUE   "bench"
#define BENCH_SHM_ENV "SKED_BENCH_SHM"

/* The shared page(s). Written by the workers' handlers, read by the
 * parent. Lock-free 64-bit atomics work across processes on one mapping. */
struct bench_shm {
	atomic_llong handled;        /* handler calls, any bench task */
	atomic_llong lat_handled;    /* latency tasks started (first call) */
	int64_t nlat;                /* slots in lat_start_ns */
	atomic_llong lat_start_ns[]; /* CLOCK_MONOTONIC ns; 0: not yet */
};

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
	}
	atomic_fetch_add(&s->handled, 1);
	return 0;
}

/* ---- the parent ---- */

struct bench {
	struct cli *c;
	long long tasks, workers, threads, batch, lat_tasks, lat_threads;
	long long prefetch; /* the drain workers' --prefetch */
	long long lanes;    /* their --lanes (0: the default) */
	double rate;
	int64_t poll_ms, timeout_ms;
	char prefix[40];
	int fresh; /* the prefix was made up here */
	int tty;
	char dir[64]; /* temporary folder: shm file and config */
	char shm_path[128], conf_path[128];
	struct bench_shm *shm;
	size_t shm_size;
	char **env;             /* the workers' environment */
	struct cli_fleet fleet; /* the workers of the current phase */
	/* results */
	int64_t rows_before, finished_before;
	double enq_s, drain_s, exit_s, worker_cpu_s;
	long server_pid;    /* SKED_BENCH_SERVER_PID: the database server */
	double server_pct;  /* its CPU during the drain, % of the machine */
	double machine_pct; /* machine busy during the drain, % of all cores */
	double worker_pct;  /* the workers' share of the machine, % */
	long worker_rss_kb; /* the largest drain worker's peak resident set */
	long long handled;
	int64_t *lat_ns;
	long long lat_n, lat_negative;
};

static void progress(struct bench *b, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

static void
progress(struct bench *b, const char *fmt, ...)
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

static void
progress_end(struct bench *b)
{
	if (b->tty)
		fputs("\r\033[K", stderr);
}

/* Counts of the bench queue (per status), and the rows in the whole task
 * table. */
static int
counts(struct bench *b, int64_t st[6], int64_t *rows)
{
	sked_queue_stats *qs = NULL;
	size_t n = 0, i;
	int rc, k;

	if ((rc = sked_stats(b->c->h, &qs, &n)) != SKED_OK)
		return cli_fail(b->c->h, rc, "bench: stats");
	memset(st, 0, 6 * sizeof st[0]);
	if (rows != NULL)
		*rows = 0;
	for (i = 0; i < n; i++) {
		for (k = 0; k < 6; k++) {
			if (strcmp(qs[i].queue, BENCH_QUEUE) == 0)
				st[k] += qs[i].count[k];
			if (rows != NULL)
				*rows += qs[i].count[k];
		}
	}
	free(qs);
	return 0;
}

static int64_t
unfinished(const int64_t st[6])
{
	return st[SKED_PENDING] + st[SKED_RUNNING] + st[SKED_RETRY];
}

/* The bench queue's live tasks (pending, waiting to retry or running),
 * from the gauges: one statement over live rows only, whatever number of
 * ended tasks the table has seen. */
static int
live(struct bench *b, int64_t *n)
{
	sked_cluster_gauges g;
	size_t i;
	int rc;

	*n = 0;
	if ((rc = sked_cluster_gauges_get(b->c->h, &g)) != SKED_OK)
		return cli_fail(b->c->h, rc, "bench: gauges");
	for (i = 0; i < g.nqueues; i++)
		if (strcmp(g.queues[i].queue, BENCH_QUEUE) == 0)
			*n += g.queues[i].pending + g.queues[i].retrying +
			      g.queues[i].running;
	sked_cluster_gauges_free(&g);
	return 0;
}

/* A private folder with the shared file and a config file naming the
 * prefix; the workers' environment points at both. The URL travels in
 * SKED_DATABASE_URL, never on a command line others can read. */
static int
setup(struct bench *b)
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
	              (size_t)b->lat_tasks * sizeof(atomic_llong);
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

static void
teardown(struct bench *b)
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
}

/* Start one `sked worker --builtin-noop` from this binary; its stdout
 * goes to our stderr so that --json output stays one document. */
static int
spawn_worker(struct bench *b, long long threads, int until_empty)
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
static int
reap(struct bench *b, int block)
{
	int failed = 0, alive = cli_fleet_reap(&b->fleet, block, &failed);

	return failed ? -1 : alive;
}

static int
phase_enqueue(struct bench *b)
{
	sked_enqueue_opts o;
	char *buf;
	const char **pl;
	size_t *lens;
	int64_t *ids, t0, last = 0;
	long long i, done = 0;
	int rc, ex = 0;

	memset(&o, 0, sizeof o);
	o.queue = BENCH_QUEUE;
	buf = malloc((size_t)b->batch * 24);
	pl = malloc((size_t)b->batch * sizeof *pl);
	lens = malloc((size_t)b->batch * sizeof *lens);
	ids = malloc((size_t)b->batch * sizeof *ids);
	if (!buf || !pl || !lens || !ids) {
		cli_err("bench: out of memory");
		ex = EX_OSERR;
		goto out;
	}
	t0 = cli_mono_ns();
	while (done < b->tasks) {
		long long n =
		        b->tasks - done < b->batch ? b->tasks - done : b->batch;
		for (i = 0; i < n; i++) {
			char *p = buf + i * 24;
			int len = snprintf(p, 24, "T%lld", done + i);
			pl[i] = p;
			lens[i] = (size_t)len;
		}
		rc = sked_enqueue_many(b->c->h, BENCH_KIND, (size_t)n, pl, lens,
		                       &o, ids);
		if (rc != SKED_OK) {
			progress_end(b);
			ex = cli_fail(b->c->h, rc, "bench: enqueue");
			goto out;
		}
		done += n;
		if (cli_mono_ns() - last > 200000000) {
			last = cli_mono_ns();
			progress(b, "enqueued %lld/%lld", done, b->tasks);
		}
	}
	b->enq_s = (double)(cli_mono_ns() - t0) / 1e9;
	progress_end(b);
out:
	free(buf);
	free(pl);
	free(lens);
	free(ids);
	return ex;
}

static int
phase_drain(struct bench *b)
{
	int64_t st[6] = {0}, t0, t1 = 0, deadline, last = 0, stop_at, left = 0;
	struct rusage ru;
	long long i, busy0, total0, busy1, total1;
	int ex, alive;

	if ((ex = counts(b, st, NULL)) != 0)
		return ex;
	if (st[SKED_PENDING] != b->tasks) {
		cli_err("bench: expected %lld pending tasks, the database "
		        "has %" PRId64,
		        b->tasks, st[SKED_PENDING]);
		return EX_SOFTWARE;
	}
	atomic_store(&b->shm->handled, 0);
	long long srv0 = server_ticks(b->server_pid), srv1 = -1;
	cpu_jiffies(&busy0, &total0);
	t0 = cli_mono_ns();
	deadline = t0 + b->timeout_ms * 1000000;
	for (i = 0; i < b->workers; i++)
		if ((ex = spawn_worker(b, b->threads, 1)) != 0) {
			cli_fleet_signal(&b->fleet, SIGTERM);
			reap(b, 1);
			return ex;
		}
	/* The handlers' counter first, without touching the database. */
	while (atomic_load(&b->shm->handled) < b->tasks) {
		int64_t now = cli_mono_ns();
		cli_sleep_ns(2000000);
		if (now - last > 250000000) {
			long long h = atomic_load(&b->shm->handled);
			last = now;
			progress(b, "drained %lld/%lld (%.0f tasks/s)", h,
			         b->tasks,
			         (double)h * 1e9 / (double)(now - t0));
		}
		if ((alive = reap(b, 0)) <= 0 || now > deadline) {
			progress_end(b);
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
			reap(b, 1);
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
		ex = counts(b, st, NULL);
	progress_end(b);
	b->handled = atomic_load(&b->shm->handled);
	if (ex != 0) {
		cli_fleet_signal(&b->fleet, SIGTERM);
		reap(b, 1);
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
	while ((alive = reap(b, 0)) > 0 && cli_mono_ns() < stop_at)
		cli_sleep_ns(1000000);
	if (alive > 0) {
		cli_fleet_signal(&b->fleet, SIGTERM);
		alive = reap(b, 1);
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

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest sample with at least p % of the samples at
 * or below it. */
static double
pct_ms(const int64_t *sorted, long long n, double p)
{
	long long r = (long long)((p / 100.0) * (double)n + 0.999999);

	if (r < 1)
		r = 1;
	if (r > n)
		r = n;
	return (double)sorted[r - 1] / 1e6;
}

static int
phase_latency(struct bench *b)
{
	sked_enqueue_opts o;
	int64_t *ret, t0, step, wait_end, id;
	long long i;
	int rc, ex = 0;

	memset(&o, 0, sizeof o);
	o.queue = BENCH_QUEUE;
	ret = calloc((size_t)b->lat_tasks, sizeof *ret);
	b->lat_ns = calloc((size_t)b->lat_tasks, sizeof *b->lat_ns);
	if (!ret || !b->lat_ns) {
		free(ret);
		cli_err("bench: out of memory");
		return EX_OSERR;
	}
	b->fleet.n = 0;
	if ((ex = spawn_worker(b, b->lat_threads, 0)) != 0)
		goto out;
	/* Give the worker a second to start and fall idle, as the peers
	 * harness does. */
	progress(b, "latency: worker starting");
	cli_sleep_ns(1000000000);
	if (reap(b, 0) <= 0) {
		progress_end(b);
		cli_err("bench: the latency worker did not stay up");
		ex = EX_SOFTWARE;
		goto out;
	}
	step = (int64_t)(1e9 / b->rate);
	t0 = cli_mono_ns();
	for (i = 0; i < b->lat_tasks; i++) {
		char p[24];
		int64_t due = t0 + i * step, now = cli_mono_ns();
		int len = snprintf(p, sizeof p, "L%lld", i);
		if (due > now)
			cli_sleep_ns(due - now);
		rc = sked_enqueue(b->c->h, BENCH_KIND, p, (size_t)len, &o, &id,
		                  NULL);
		ret[i] = cli_mono_ns();
		if (rc != SKED_OK) {
			progress_end(b);
			ex = cli_fail(b->c->h, rc, "bench: enqueue");
			goto out;
		}
		if (i % 20 == 0)
			progress(b, "latency: %lld/%lld enqueued, %lld started",
			         i + 1, b->lat_tasks,
			         atomic_load(&b->shm->lat_handled));
	}
	wait_end = cli_mono_ns() + 30000000000LL;
	while (atomic_load(&b->shm->lat_handled) < b->lat_tasks &&
	       cli_mono_ns() < wait_end)
		cli_sleep_ns(2000000);
	progress_end(b);
	b->lat_n = 0;
	for (i = 0; i < b->lat_tasks; i++) {
		int64_t s = atomic_load(&b->shm->lat_start_ns[i]);
		if (s == 0)
			continue;
		b->lat_ns[b->lat_n] = s - ret[i];
		if (b->lat_ns[b->lat_n] < 0)
			b->lat_negative++;
		b->lat_n++;
	}
	if (b->lat_n < b->lat_tasks) {
		cli_err("bench: only %lld of %lld latency tasks started within "
		        "30 s",
		        b->lat_n, b->lat_tasks);
		ex = EX_SOFTWARE;
	}
	qsort(b->lat_ns, (size_t)b->lat_n, sizeof *b->lat_ns, cmp_i64);
out:
	cli_fleet_signal(&b->fleet, SIGTERM);
	if (reap(b, 1) < 0 && ex == 0)
		ex = EX_SOFTWARE;
	b->fleet.n = 0;
	free(ret);
	return ex;
}

static double
per_s(long long n, double s)
{
	return s > 0 ? (double)n / s : 0;
}

static int
report(struct bench *b, const sked_info *info)
{
	double p50 = 0, p95 = 0, p99 = 0, lmin = 0, lmax = 0;

	if (b->lat_n > 0) {
		p50 = pct_ms(b->lat_ns, b->lat_n, 50);
		p95 = pct_ms(b->lat_ns, b->lat_n, 95);
		p99 = pct_ms(b->lat_ns, b->lat_n, 99);
		lmin = (double)b->lat_ns[0] / 1e6;
		lmax = (double)b->lat_ns[b->lat_n - 1] / 1e6;
	}
	if (b->c->json) {
		json_t *db = json_pack("{s:o, s:o, s:o, s:o, s:o}", "url",
		                       cli_json_cstr(info->url), "driver",
		                       cli_json_cstr(info->driver), "product",
		                       cli_json_cstr(info->product), "version",
		                       cli_json_cstr(info->version), "strategy",
		                       cli_json_cstr(info->strategy));
		json_t *set = json_pack(
		        "{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:I, "
		        "s:b}",
		        "prefix", b->prefix, "tasks", (json_int_t)b->tasks,
		        "workers", (json_int_t)b->workers, "threads",
		        (json_int_t)b->threads, "batch", (json_int_t)b->batch,
		        "latency_tasks", (json_int_t)b->lat_tasks,
		        "latency_threads", (json_int_t)b->lat_threads, "rate",
		        b->rate, "poll_ms", (json_int_t)b->poll_ms, "prefetch",
		        (json_int_t)b->prefetch, "fresh_prefix", b->fresh);
		json_object_set_new(set, "lanes", json_integer(b->lanes));
		json_t *enq = json_pack(
		        "{s:I, s:I, s:f, s:f}", "tasks", (json_int_t)b->tasks,
		        "batch", (json_int_t)b->batch, "seconds", b->enq_s,
		        "tasks_per_s", per_s(b->tasks, b->enq_s));
		json_t *thr = json_pack(
		        "{s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, "
		        "s:I, "
		        "s:I, s:I}",
		        "tasks", (json_int_t)b->tasks, "workers",
		        (json_int_t)b->workers, "threads",
		        (json_int_t)b->threads, "concurrency",
		        (json_int_t)(b->workers * b->threads), "seconds",
		        b->drain_s, "tasks_per_s", per_s(b->tasks, b->drain_s),
		        "workers_exited_s", b->exit_s, "worker_cpu_s",
		        b->worker_cpu_s, "machine_cpu_pct", b->machine_pct,
		        "worker_cpu_pct", b->worker_pct, "handler_calls",
		        (json_int_t)b->handled, "finished_rows_before",
		        (json_int_t)b->finished_before, "worker_max_rss_kb",
		        (json_int_t)b->worker_rss_kb);
		if (b->server_pct >= 0)
			json_object_set_new(thr, "server_cpu_pct",
			                    json_real(b->server_pct));
		json_t *lat = b->lat_tasks == 0
		                      ? json_null()
		                      : json_pack("{s:I, s:f, s:I, s:f, s:f, "
		                                  "s:f, s:f, s:f, s:I}",
		                                  "tasks", (json_int_t)b->lat_n,
		                                  "rate", b->rate, "threads",
		                                  (json_int_t)b->lat_threads,
		                                  "p50_ms", p50, "p95_ms", p95,
		                                  "p99_ms", p99, "min_ms", lmin,
		                                  "max_ms", lmax, "negative",
		                                  (json_int_t)b->lat_negative);
		return cli_json_print(json_pack(
		        "{s:s, s:o, s:o, s:o, s:o, s:o}", "sked_version",
		        SKED_VERSION, "database", db, "settings", set,
		        "enqueue", enq, "throughput", thr, "latency", lat));
	}
	printf("sked bench on %s %s (%s, %s), prefix %s%s\n", info->product,
	       info->version, info->driver, info->strategy, b->prefix,
	       b->finished_before ? "" : " (fresh)");
	printf("enqueue     %lld tasks in batches of %lld: %.3f s, %.0f "
	       "tasks/s\n",
	       b->tasks, b->batch, b->enq_s, per_s(b->tasks, b->enq_s));
	printf("throughput  %lld tasks, %lld worker(s) x %lld threads, %" PRId64
	       " finished rows before: %.3f s, %.0f tasks/s\n",
	       b->tasks, b->workers, b->threads, b->finished_before, b->drain_s,
	       per_s(b->tasks, b->drain_s));
	printf("            workers exited after %.3f s, used %.2f s CPU "
	       "(%.0f%% "
	       "of the machine; the machine was %.0f%% busy), at most %ld kB "
	       "resident each\n",
	       b->exit_s, b->worker_cpu_s, b->worker_pct, b->machine_pct,
	       b->worker_rss_kb);
	if (b->server_pct >= 0)
		printf("            the database server (pid %ld) used %.0f%% "
		       "of the machine during the drain\n",
		       b->server_pid, b->server_pct);
	if (b->lat_tasks > 0)
		printf("latency     %lld tasks at %.0f/s, %lld threads: p50 "
		       "%.2f ms, p95 %.2f ms, p99 %.2f ms (min %.2f, max "
		       "%.2f, %lld negative)\n",
		       b->lat_n, b->rate, b->lat_threads, p50, p95, p99, lmin,
		       lmax, b->lat_negative);
	return 0;
}

int
cmd_bench(struct cli *c, int argc, char **argv)
{
	enum {
		O_TASKS = 1,
		O_WORKERS,
		O_THREADS,
		O_BATCH,
		O_LTASKS,
		O_LTHREADS,
		O_RATE,
		O_POLL,
		O_PREFETCH,
		O_LANES,
		O_PREFIX,
		O_TIMEOUT
	};
	static const struct option opts[] = {
	        {"tasks", required_argument, NULL, O_TASKS},
	        {"workers", required_argument, NULL, O_WORKERS},
	        {"threads", required_argument, NULL, O_THREADS},
	        {"batch", required_argument, NULL, O_BATCH},
	        {"latency-tasks", required_argument, NULL, O_LTASKS},
	        {"latency-threads", required_argument, NULL, O_LTHREADS},
	        {"rate", required_argument, NULL, O_RATE},
	        {"poll", required_argument, NULL, O_POLL},
	        {"prefetch", required_argument, NULL, O_PREFETCH},
	        {"lanes", required_argument, NULL, O_LANES},
	        {"prefix", required_argument, NULL, O_PREFIX},
	        {"timeout", required_argument, NULL, O_TIMEOUT},
	        CLI_COMMON_OPTIONS,
	        {NULL, 0, NULL, 0},
	};
	struct bench b;
	sked_info info;
	int64_t st[6] = {0};
	long long v;
	int ch, ex = 0, rc;

	memset(&b, 0, sizeof b);
	b.c = c;
	{
		const char *sp = getenv("SKED_BENCH_SERVER_PID");
		b.server_pid = sp ? strtol(sp, NULL, 10) : 0;
	}
	b.tasks = 20000;
	b.workers = 1;
	b.threads = 10;
	b.batch = 1000;
	b.lat_tasks = 300;
	b.lat_threads = 10;
	b.rate = 100;
	b.timeout_ms = 300000;
	optind = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (ch) {
		case O_TASKS:
			ex = cli_parse_int("--tasks", optarg, 1, 100000000,
			                   &b.tasks);
			break;
		case O_WORKERS:
			ex = cli_parse_int("--workers", optarg, 1, 256,
			                   &b.workers);
			break;
		case O_THREADS:
			ex = cli_parse_int("--threads", optarg, 1, 1024,
			                   &b.threads);
			break;
		case O_BATCH:
			ex = cli_parse_int("--batch", optarg, 1, 1000000,
			                   &b.batch);
			break;
		case O_LTASKS:
			ex = cli_parse_int("--latency-tasks", optarg, 0,
			                   1000000, &b.lat_tasks);
			break;
		case O_LTHREADS:
			ex = cli_parse_int("--latency-threads", optarg, 1, 1024,
			                   &b.lat_threads);
			break;
		case O_RATE:
			ex = cli_parse_int("--rate", optarg, 1, 100000, &v);
			b.rate = (double)v;
			break;
		case O_POLL:
			ex = cli_parse_duration("--poll", optarg, &b.poll_ms);
			break;
		case O_PREFETCH:
			ex = cli_parse_int("--prefetch", optarg, 0, 10000,
			                   &b.prefetch);
			break;
		case O_LANES:
			ex = cli_parse_int("--lanes", optarg, 1, 64, &b.lanes);
			break;
		case O_PREFIX:
			if (strlen(optarg) >= sizeof b.prefix) {
				ex = cli_usage("bench", "--prefix: too long");
				break;
			}
			snprintf(b.prefix, sizeof b.prefix, "%s", optarg);
			break;
		case O_TIMEOUT:
			ex = cli_parse_duration("--timeout", optarg,
			                        &b.timeout_ms);
			break;
		case CLI_OPT_HELP:
			cli_help(stdout, "bench");
			return 0;
		case CLI_OPT_JSON:
			c->json = 1;
			break;
		default:
			return cli_opt_error("bench", ch, argv);
		}
		if (ex != 0)
			return ex;
	}
	if (optind < argc)
		return cli_usage("bench", "unexpected argument '%s'",
		                 argv[optind]);
	if (b.prefix[0] == '\0') {
		unsigned r = (unsigned)getpid() * 2654435761u ^
		             (unsigned)cli_mono_ns();
		snprintf(b.prefix, sizeof b.prefix, "skb%08x_", r);
		b.fresh = 1;
	}
	b.tty = isatty(2);
	c->prefix = b.prefix;
	if ((ex = cli_open(c)) != 0)
		return ex;
	if ((rc = sked_get_info(c->h, &info)) != SKED_OK)
		return cli_fail(c->h, rc, "bench: info");
	if ((ex = counts(&b, st, &b.rows_before)) != 0)
		return ex;
	if (unfinished(st) != 0)
		return cli_fail(c->h, SKED_ESTATE,
		                "bench: prefix %s already holds %" PRId64
		                " unfinished bench tasks; use a fresh prefix",
		                b.prefix, unfinished(st));
	b.finished_before = st[SKED_SUCCEEDED];
	if (cli_fleet_init(&b.fleet, "bench", (size_t)b.workers + 1) != 0) {
		cli_err("bench: out of memory");
		return EX_OSERR;
	}
	b.fleet.report = 1;
	if ((ex = setup(&b)) == 0 && (ex = phase_enqueue(&b)) == 0 &&
	    (ex = phase_drain(&b)) == 0 &&
	    (b.lat_tasks == 0 || (ex = phase_latency(&b)) == 0))
		ex = report(&b, &info);
	teardown(&b);
	return ex;
}
