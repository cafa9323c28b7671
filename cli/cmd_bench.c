/*
 * cmd_bench.c — `sked bench`: enqueue rate, drain throughput and pick-up
 * latency of no-op tasks on the configured database.
 *
 * Size: the plain drain and the dependency patterns share the
 * worker fleet, the shared stamp file and the CPU split; the patterns
 * would move to bench_deps.c once that sharing has a header (issue 27).
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
 * --pattern P replaces the three phases with one dependency graph of the
 * peers harness's deps test (baseline, fanout, fanin, chain, layered):
 * enqueued with sked_enqueue_opts.after and timed apart, drained as in
 * "throughput" (blocked tasks count as live), then checked from the
 * handlers' own stamps in the shared file (each job's first start, last
 * end and number of runs): each ran once, none before its parents ended.
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
	int64_t ndep;                /* jobs of a --pattern graph */
	atomic_llong lat_start_ns[]; /* CLOCK_MONOTONIC ns; 0: not yet;
	                                then the graph's three arrays of
	                                ndep slots (dep_slots) */
};

/* A graph job's stamps, after the latency slots: the first start and the
 * last end of its handler (CLOCK_MONOTONIC ns) and how often it ran. */
enum { DEP_START, DEP_END, DEP_CALLS };

static atomic_llong *
dep_slots(struct bench_shm *s, int which)
{
	return &s->lat_start_ns[s->nlat + (int64_t)which * s->ndep];
}

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

/* --pattern: the dependency graphs of the peers harness's deps test. */
enum { PAT_NONE, PAT_BASELINE, PAT_FANOUT, PAT_FANIN, PAT_CHAIN, PAT_LAYERED };
static const char *const pat_names[] = {"",      "baseline", "fanout",
                                        "fanin", "chain",    "layered"};
#define LAYERS 20 /* layered: the number of layers */

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
	/* --pattern: the graph and its check (DEPS below) */
	int pattern;          /* PAT_NONE: the plain bench */
	long long chain_len;  /* --chain-length */
	long long width;      /* layered: jobs per layer */
	long long enq_calls;  /* library enqueue calls that built the graph */
	long long edges;      /* dependency edges of the graph */
	double graph_s;       /* the graph's enqueue, seconds */
	long long completed;  /* jobs whose handler ran at least once */
	long long missing;    /* ... never */
	long long duplicates; /* ... more than once */
	long long violations; /* edges whose child started too early */
	int64_t *waits;       /* dep_wait of each job with parents, sorted */
	long long nwaits;
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
counts(struct bench *b, int64_t st[7], int64_t *rows)
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

static int64_t
unfinished(const int64_t st[7])
{
	return st[SKED_PENDING] + st[SKED_RUNNING] + st[SKED_RETRY] +
	       st[SKED_BLOCKED];
}

/* The bench queue's live tasks (pending, waiting to retry, running or
 * blocked),
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
			      g.queues[i].running + g.queues[i].blocked;
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
	free(b->waits);
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

/* ---- --pattern: a dependency graph of b->tasks jobs ----
 *
 * Job i's payload is "D<i>"; its parents are jobs, by index:
 *   baseline  none
 *   fanout    job 0, for every other job
 *   fanin     every other job, for the last one
 *   chain     job i-1
 *   layered   LAYERS layers of width w; job x of layer l > 0 waits for
 *             jobs x, x+1 and x+2 (mod w) of layer l-1 */

static long long
dep_nparents(const struct bench *b, long long i)
{
	switch (b->pattern) {
	case PAT_FANOUT:
	case PAT_CHAIN:
		return i > 0;
	case PAT_FANIN:
		return i == b->tasks - 1 ? b->tasks - 1 : 0;
	case PAT_LAYERED:
		return i >= b->width ? 3 : 0;
	default:
		return 0;
	}
}

/* Parent k (0 ≤ k < dep_nparents) of job i. */
static long long
dep_parent(const struct bench *b, long long i, long long k)
{
	switch (b->pattern) {
	case PAT_FANOUT:
		return 0;
	case PAT_FANIN:
		return k;
	case PAT_CHAIN:
		return i - 1;
	default:
		return (i / b->width - 1) * b->width +
		       (i % b->width + k) % b->width;
	}
}

/* The graph's depth in jobs: how many handlers run one after another. */
static long long
dep_depth(const struct bench *b)
{
	switch (b->pattern) {
	case PAT_FANOUT:
	case PAT_FANIN:
		return 2;
	case PAT_CHAIN:
		return b->tasks;
	case PAT_LAYERED:
		return LAYERS;
	default:
		return 1;
	}
}

/* Enqueue jobs from .. from+n-1, all with the same parents (the task ids
 * after[0..n_after)), in sked_enqueue_many calls of at most --batch. */
static int
graph_add(struct bench *b, long long from, long long n, const int64_t *after,
          size_t n_after, int64_t *ids)
{
	long long m = n < b->batch ? n : b->batch, done = 0, i;
	sked_enqueue_opts o;
	char *buf = malloc((size_t)m * 24);
	const char **pl = malloc((size_t)m * sizeof *pl);
	size_t *lens = malloc((size_t)m * sizeof *lens);
	int rc, ex = 0;

	memset(&o, 0, sizeof o);
	o.queue = BENCH_QUEUE;
	o.after = after;
	o.n_after = n_after;
	if (!buf || !pl || !lens) {
		cli_err("bench: out of memory");
		ex = EX_OSERR;
		goto out;
	}
	while (done < n) {
		long long k = n - done < m ? n - done : m;
		for (i = 0; i < k; i++) {
			pl[i] = buf + i * 24;
			lens[i] = (size_t)snprintf(buf + i * 24, 24, "D%lld",
			                           from + done + i);
		}
		rc = sked_enqueue_many(b->c->h, BENCH_KIND, (size_t)k, pl, lens,
		                       &o, ids + done);
		if (rc != SKED_OK) {
			progress_end(b);
			ex = cli_fail(b->c->h, rc, "bench: enqueue");
			goto out;
		}
		b->enq_calls++;
		done += k;
	}
out:
	free(buf);
	free(pl);
	free(lens);
	return ex;
}

/* The whole graph, in as few library calls as sked_enqueue_many allows:
 * one call per run of jobs that share their parents (and per --batch).
 * A chain and the layers after the first are one call per job. */
static int
phase_graph(struct bench *b)
{
	long long n = b->tasks, i, k;
	int64_t *ids = calloc((size_t)n, sizeof *ids), t0, last = 0, par[3];
	int ex = 0;

	if (ids == NULL) {
		cli_err("bench: out of memory");
		return EX_OSERR;
	}
	for (i = 0; i < n; i++)
		b->edges += dep_nparents(b, i);
	t0 = cli_mono_ns();
	switch (b->pattern) {
	case PAT_BASELINE:
		ex = graph_add(b, 0, n, NULL, 0, ids);
		break;
	case PAT_FANOUT:
		if ((ex = graph_add(b, 0, 1, NULL, 0, ids)) == 0)
			ex = graph_add(b, 1, n - 1, ids, 1, ids + 1);
		break;
	case PAT_FANIN:
		if ((ex = graph_add(b, 0, n - 1, NULL, 0, ids)) == 0)
			ex = graph_add(b, n - 1, 1, ids, (size_t)(n - 1),
			               ids + n - 1);
		break;
	default: /* chain, layered: the first job or layer, then each job */
		i = b->pattern == PAT_CHAIN ? 1 : b->width;
		ex = graph_add(b, 0, i, NULL, 0, ids);
		for (; ex == 0 && i < n; i++) {
			for (k = 0; k < dep_nparents(b, i); k++)
				par[k] = ids[dep_parent(b, i, k)];
			ex = graph_add(b, i, 1, par, (size_t)k, ids + i);
			if (cli_mono_ns() - last > 200000000) {
				last = cli_mono_ns();
				progress(b, "graph: enqueued %lld/%lld", i + 1,
				         n);
			}
		}
		progress_end(b);
	}
	b->graph_s = (double)(cli_mono_ns() - t0) / 1e9;
	free(ids);
	return ex;
}

/* The check, from the handlers' own stamps only: each job ran once, and
 * none started before each of its parents' handlers had ended (or
 * although a parent never ran). dep_wait: a job's start − the latest
 * end among its parents. */
static int
verify(struct bench *b)
{
	atomic_llong *st = dep_slots(b->shm, DEP_START),
	             *en = dep_slots(b->shm, DEP_END),
	             *calls = dep_slots(b->shm, DEP_CALLS);
	long long i, k;

	b->waits = malloc((size_t)b->tasks * sizeof *b->waits);
	if (b->waits == NULL) {
		cli_err("bench: out of memory");
		return EX_OSERR;
	}
	for (i = 0; i < b->tasks; i++) {
		long long ran = atomic_load(&calls[i]), np = dep_nparents(b, i);
		int64_t start = atomic_load(&st[i]), latest = INT64_MIN;
		int broken = 0;
		if (ran == 0) {
			b->missing++;
			continue;
		}
		b->completed++;
		if (ran > 1)
			b->duplicates++;
		for (k = 0; k < np; k++) {
			long long p = dep_parent(b, i, k);
			int64_t end = atomic_load(&en[p]);
			if (atomic_load(&calls[p]) == 0 || start < end) {
				b->violations++;
				broken = 1;
			} else if (end > latest)
				latest = end;
		}
		if (np > 0 && !broken)
			b->waits[b->nwaits++] = start - latest;
	}
	qsort(b->waits, (size_t)b->nwaits, sizeof *b->waits, cmp_i64);
	return 0;
}

static int
phase_drain(struct bench *b)
{
	int64_t st[7] = {0}, t0, t1 = 0, deadline, last = 0, stop_at, left = 0;
	struct rusage ru;
	long long i, busy0, total0, busy1, total1;
	int ex, alive;

	if ((ex = counts(b, st, NULL)) != 0)
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

/* The drain's figures, as --json gives them with or without --pattern. */
static json_t *
thr_json(struct bench *b)
{
	json_t *thr;

	thr = json_pack(
	        "{s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, "
	        "s:I, "
	        "s:I, s:I}",
	        "tasks", (json_int_t)b->tasks, "workers",
	        (json_int_t)b->workers, "threads", (json_int_t)b->threads,
	        "concurrency", (json_int_t)(b->workers * b->threads), "seconds",
	        b->drain_s, "tasks_per_s", per_s(b->tasks, b->drain_s),
	        "workers_exited_s", b->exit_s, "worker_cpu_s", b->worker_cpu_s,
	        "machine_cpu_pct", b->machine_pct, "worker_cpu_pct",
	        b->worker_pct, "handler_calls", (json_int_t)b->handled,
	        "finished_rows_before", (json_int_t)b->finished_before,
	        "worker_max_rss_kb", (json_int_t)b->worker_rss_kb);
	if (b->server_pct >= 0)
		json_object_set_new(thr, "server_cpu_pct",
		                    json_real(b->server_pct));
	return thr;
}

static json_t *
db_json(const sked_info *info)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:o}", "url",
	                 cli_json_cstr(info->url), "driver",
	                 cli_json_cstr(info->driver), "product",
	                 cli_json_cstr(info->product), "version",
	                 cli_json_cstr(info->version), "strategy",
	                 cli_json_cstr(info->strategy));
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
		json_t *db = db_json(info);
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
		json_t *thr = thr_json(b);
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

/* --pattern's report: the graph, the drain timed as the peers harness
 * times it, dep_wait, the check and the CPU split. A failed check is one
 * line on stderr and EX_SOFTWARE, after the figures. */
static int
report_deps(struct bench *b, const sked_info *info)
{
	const char *pat = pat_names[b->pattern];
	double jps = per_s(b->tasks, b->drain_s),
	       mpl = b->drain_s * 1000.0 / (double)dep_depth(b),
	       p50 = b->nwaits ? pct_ms(b->waits, b->nwaits, 50) : 0,
	       p99 = b->nwaits ? pct_ms(b->waits, b->nwaits, 99) : 0,
	       wmax = b->nwaits ? (double)b->waits[b->nwaits - 1] / 1e6 : 0,
	       own = b->worker_pct + (b->server_pct >= 0 ? b->server_pct : 0);
	int ok = b->missing == 0 && b->duplicates == 0 && b->violations == 0 &&
	         b->completed == b->tasks;

	if (b->c->json) {
		json_t *set = json_pack(
		        "{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "prefix",
		        b->prefix, "pattern", pat, "tasks",
		        (json_int_t)b->tasks, "chain_length",
		        (json_int_t)b->chain_len, "workers",
		        (json_int_t)b->workers, "threads",
		        (json_int_t)b->threads, "batch", (json_int_t)b->batch,
		        "poll_ms", (json_int_t)b->poll_ms);
		json_t *d = json_pack(
		        "{s:s, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:I, s:I, "
		        "s:I, s:I, s:b}",
		        "pattern", pat, "n", (json_int_t)b->tasks, "edges",
		        (json_int_t)b->edges, "depth", (json_int_t)dep_depth(b),
		        "enqueue_calls", (json_int_t)b->enq_calls,
		        "graph_enqueue_ms", b->graph_s * 1000.0, "jobs_per_s",
		        jps, "ms_per_level", mpl, "completed",
		        (json_int_t)b->completed, "missing",
		        (json_int_t)b->missing, "duplicates",
		        (json_int_t)b->duplicates, "violations",
		        (json_int_t)b->violations, "verified", ok);
		json_object_set_new(d, "dep_wait_p50_ms",
		                    b->nwaits ? json_real(p50) : json_null());
		json_object_set_new(d, "dep_wait_p99_ms",
		                    b->nwaits ? json_real(p99) : json_null());
		json_object_set_new(d, "dep_wait_max_ms",
		                    b->nwaits ? json_real(wmax) : json_null());
		if (cli_json_print(json_pack(
		            "{s:s, s:o, s:o, s:o, s:o}", "sked_version",
		            SKED_VERSION, "database", db_json(info), "settings",
		            set, "deps", d, "throughput", thr_json(b))) != 0)
			return EX_IOERR;
	} else {
		printf("sked bench --pattern %s on %s %s (%s, %s), prefix %s\n",
		       pat, info->product, info->version, info->driver,
		       info->strategy, b->prefix);
		printf("graph       %lld tasks, %lld edges, depth %lld: "
		       "enqueued in %.1f ms (%lld calls)\n",
		       b->tasks, b->edges, dep_depth(b), b->graph_s * 1000.0,
		       b->enq_calls);
		printf("drain       %lld worker(s) x %lld threads: %.3f s, "
		       "%.0f jobs/s, %.1f ms per level\n",
		       b->workers, b->threads, b->drain_s, jps, mpl);
		if (b->nwaits)
			printf("dep_wait    p50 %.2f ms, p99 %.2f ms, max %.2f "
			       "ms (handler start - latest parent end)\n",
			       p50, p99, wmax);
		if (b->server_pct >= 0)
			printf("cpu         machine %.0f%% busy: own %.0f%% "
			       "(workers %.0f%%, database server %.0f%%), "
			       "other %.0f%%\n",
			       b->machine_pct, own, b->worker_pct,
			       b->server_pct, b->machine_pct - own);
		else if (strcmp(info->driver, "sqlite") == 0)
			printf("cpu         machine %.0f%% busy: own %.0f%% "
			       "(the "
			       "workers, SQLite inside them), other %.0f%%\n",
			       b->machine_pct, b->worker_pct,
			       b->machine_pct - b->worker_pct);
		else
			printf("cpu         machine %.0f%% busy: workers "
			       "%.0f%% "
			       "(the database server's share is not measured: "
			       "SKED_BENCH_SERVER_PID)\n",
			       b->machine_pct, b->worker_pct);
		printf("result pattern=%s n=%lld completed=%lld missing=%lld "
		       "duplicates=%lld violations=%lld jobs_per_s=%.0f "
		       "ms_per_level=%.1f graph_enqueue_ms=%.0f",
		       pat, b->tasks, b->completed, b->missing, b->duplicates,
		       b->violations, jps, mpl, b->graph_s * 1000.0);
		if (b->nwaits)
			printf(" dep_wait_p50_ms=%.2f dep_wait_p99_ms=%.2f",
			       p50, p99);
		putchar('\n');
	}
	if (!ok) {
		cli_err("bench: pattern %s failed its check: %lld of %lld "
		        "completed, %lld missing, %lld run more than once, "
		        "%lld "
		        "ordering violations",
		        pat, b->completed, b->tasks, b->missing, b->duplicates,
		        b->violations);
		return EX_SOFTWARE;
	}
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
		O_TIMEOUT,
		O_PATTERN,
		O_CHAIN
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
	        {"pattern", required_argument, NULL, O_PATTERN},
	        {"chain-length", required_argument, NULL, O_CHAIN},
	        CLI_COMMON_OPTIONS,
	        {NULL, 0, NULL, 0},
	};
	struct bench b;
	sked_info info;
	int64_t st[7] = {0};
	long long v;
	int ch, ex = 0, rc, tasks_given = 0, lat_given = 0;

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
	b.chain_len = 1000;
	optind = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (ch) {
		case O_TASKS:
			ex = cli_parse_int("--tasks", optarg, 1, 100000000,
			                   &b.tasks);
			tasks_given = 1;
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
			lat_given = b.lat_tasks > 0;
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
		case O_PATTERN:
			for (b.pattern = PAT_LAYERED; b.pattern > PAT_NONE;
			     b.pattern--)
				if (strcmp(optarg, pat_names[b.pattern]) == 0)
					break;
			if (b.pattern == PAT_NONE)
				ex = cli_usage(
				        "bench",
				        "--pattern: give baseline, "
				        "fanout, fanin, chain or layered");
			break;
		case O_CHAIN:
			ex = cli_parse_int("--chain-length", optarg, 2,
			                   10000000, &b.chain_len);
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
	if (b.pattern != PAT_NONE) {
		/* the graph is the whole run: no latency phase */
		if (lat_given)
			return cli_usage("bench", "--latency-tasks does not go "
			                          "with --pattern");
		b.lat_tasks = 0;
		if (!tasks_given)
			b.tasks = 10000;
		if (b.pattern == PAT_CHAIN)
			b.tasks = b.chain_len;
		if (b.pattern == PAT_LAYERED) {
			if (b.tasks < LAYERS)
				return cli_usage("bench",
				                 "--pattern layered needs "
				                 "--tasks %d or more",
				                 LAYERS);
			b.width = b.tasks / LAYERS;
			b.tasks = b.width * LAYERS;
		}
		if ((b.pattern == PAT_FANOUT || b.pattern == PAT_FANIN) &&
		    b.tasks < 2)
			return cli_usage("bench",
			                 "--pattern %s needs --tasks 2 "
			                 "or more",
			                 pat_names[b.pattern]);
	}
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
	if (b.pattern != PAT_NONE) {
		if ((ex = setup(&b)) == 0 && (ex = phase_graph(&b)) == 0 &&
		    (ex = phase_drain(&b)) == 0 && (ex = verify(&b)) == 0)
			ex = report_deps(&b, &info);
	} else if ((ex = setup(&b)) == 0 && (ex = phase_enqueue(&b)) == 0 &&
	           (ex = phase_drain(&b)) == 0 &&
	           (b.lat_tasks == 0 || (ex = phase_latency(&b)) == 0))
		ex = report(&b, &info);
	teardown(&b);
	return ex;
}
