/*
 * bench_deps.c — `sked bench --pattern P`: one dependency graph of the
 * peers harness's deps test (baseline, fanout, fanin, chain, layered),
 * enqueued with sked_enqueue_opts.after in as few calls as
 * sked_enqueue_many allows, checked from the handlers' own stamps (each
 * job ran once, none before its parents ended) and reported.
 *
 * Layer: the command-line program, a client of <sked.h> only. The drain
 * it times is bench.c's, as for the plain run.
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

/* ---- --pattern: a dependency graph of b->tasks jobs ----
 *
 * Job i's payload is "D<i>"; its parents are jobs, by index:
 *   baseline  none
 *   fanout    job 0, for every other job
 *   fanin     every other job, for the last one; a task has at most
 *             SKED_MAX_PARENTS parents, so past SKED_MAX_PARENTS + 1
 *             jobs the last J = ceil(n / (SKED_MAX_PARENTS + 1)) are
 *             joins, join j after the jobs k < n - J with k mod J = j
 *   chain     job i-1
 *   layered   LAYERS layers of width w; job x of layer l > 0 waits for
 *             jobs x, x+1 and x+2 (mod w) of layer l-1 */

/* fanin's joins: the last this many jobs */
static long long
fanin_joins(const struct bench *b)
{
	return (b->tasks + SKED_MAX_PARENTS) / (SKED_MAX_PARENTS + 1);
}

static long long
dep_nparents(const struct bench *b, long long i)
{
	long long joins = b->pattern == PAT_FANIN ? fanin_joins(b) : 0,
	          first = b->tasks - joins;
	switch (b->pattern) {
	case PAT_FANOUT:
	case PAT_CHAIN:
		return i > 0;
	case PAT_FANIN:
		return i < first ? 0
		                 : (first - (i - first) + joins - 1) / joins;
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
		return i - (b->tasks - fanin_joins(b)) + k * fanin_joins(b);
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
	/* one call writes at most SKED_MAX_EDGES edges */
	if (n_after && m > (long long)(SKED_MAX_EDGES / n_after))
		m = (long long)(SKED_MAX_EDGES / n_after);
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
			cli_bench_progress_end(b);
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
int
cli_bench_graph(struct bench *b)
{
	long long n = b->tasks, i, k;
	int64_t *ids = calloc((size_t)n, sizeof *ids), t0, last = 0,
	        par[SKED_MAX_PARENTS];
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
		i = n - fanin_joins(b);
		ex = graph_add(b, 0, i, NULL, 0, ids);
		for (; ex == 0 && i < n; i++) {
			for (k = 0; k < dep_nparents(b, i); k++)
				par[k] = ids[dep_parent(b, i, k)];
			ex = graph_add(b, i, 1, par, (size_t)k, ids + i);
		}
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
				cli_bench_progress(b,
				                   "graph: enqueued %lld/%lld",
				                   i + 1, n);
			}
		}
		cli_bench_progress_end(b);
	}
	b->graph_s = (double)(cli_mono_ns() - t0) / 1e9;
	free(ids);
	return ex;
}

/* The check, from the handlers' own stamps only: each job ran once, and
 * none started before each of its parents' handlers had ended (or
 * although a parent never ran). dep_wait: a job's start − the latest
 * end among its parents. */
int
cli_bench_verify(struct bench *b)
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
	qsort(b->waits, (size_t)b->nwaits, sizeof *b->waits, cli_bench_cmp_i64);
	return 0;
}

/* --pattern's report: the graph, the drain timed as the peers harness
 * times it, dep_wait, the check and the CPU split. A failed check is one
 * line on stderr and EX_SOFTWARE, after the figures. */
int
cli_bench_report_deps(struct bench *b, const sked_info *info)
{
	const char *pat = cli_bench_pat_names[b->pattern];
	double jps = cli_bench_per_s(b->tasks, b->drain_s),
	       mpl = b->drain_s * 1000.0 / (double)dep_depth(b),
	       p50 = b->nwaits ? cli_bench_pct_ms(b->waits, b->nwaits, 50) : 0,
	       p99 = b->nwaits ? cli_bench_pct_ms(b->waits, b->nwaits, 99) : 0,
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
		            SKED_VERSION, "database", cli_bench_db_json(info),
		            "settings", set, "deps", d, "throughput",
		            cli_bench_thr_json(b))) != 0)
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
