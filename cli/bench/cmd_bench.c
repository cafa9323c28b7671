/*
 * cmd_bench.c — `sked bench`: enqueue rate, drain throughput and pick-up
 * latency of no-op tasks on the configured database.
 *
 * Layer: the command-line program, a client of <sked.h> only. This file
 * is the command (its options, the plain run's enqueue and latency
 * phases, the report); the machinery both kinds of run share is
 * bench.c's (bench.h), --pattern is bench_deps.c's. The bench
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
			cli_bench_progress_end(b);
			ex = cli_fail(b->c->h, rc, "bench: enqueue");
			goto out;
		}
		done += n;
		if (cli_mono_ns() - last > 200000000) {
			last = cli_mono_ns();
			cli_bench_progress(b, "enqueued %lld/%lld", done,
			                   b->tasks);
		}
	}
	b->enq_s = (double)(cli_mono_ns() - t0) / 1e9;
	cli_bench_progress_end(b);
out:
	free(buf);
	free(pl);
	free(lens);
	free(ids);
	return ex;
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
	if ((ex = cli_bench_spawn_worker(b, b->lat_threads, 0)) != 0)
		goto out;
	/* Give the worker a second to start and fall idle, as the peers
	 * harness does. */
	cli_bench_progress(b, "latency: worker starting");
	cli_sleep_ns(1000000000);
	if (cli_bench_reap(b, 0) <= 0) {
		cli_bench_progress_end(b);
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
			cli_bench_progress_end(b);
			ex = cli_fail(b->c->h, rc, "bench: enqueue");
			goto out;
		}
		if (i % 20 == 0)
			cli_bench_progress(
			        b, "latency: %lld/%lld enqueued, %lld started",
			        i + 1, b->lat_tasks,
			        atomic_load(&b->shm->lat_handled));
	}
	wait_end = cli_mono_ns() + 30000000000LL;
	while (atomic_load(&b->shm->lat_handled) < b->lat_tasks &&
	       cli_mono_ns() < wait_end)
		cli_sleep_ns(2000000);
	cli_bench_progress_end(b);
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
	qsort(b->lat_ns, (size_t)b->lat_n, sizeof *b->lat_ns,
	      cli_bench_cmp_i64);
out:
	cli_fleet_signal(&b->fleet, SIGTERM);
	if (cli_bench_reap(b, 1) < 0 && ex == 0)
		ex = EX_SOFTWARE;
	b->fleet.n = 0;
	free(ret);
	return ex;
}

static int
report(struct bench *b, const sked_info *info)
{
	double p50 = 0, p95 = 0, p99 = 0, lmin = 0, lmax = 0;

	if (b->lat_n > 0) {
		p50 = cli_bench_pct_ms(b->lat_ns, b->lat_n, 50);
		p95 = cli_bench_pct_ms(b->lat_ns, b->lat_n, 95);
		p99 = cli_bench_pct_ms(b->lat_ns, b->lat_n, 99);
		lmin = (double)b->lat_ns[0] / 1e6;
		lmax = (double)b->lat_ns[b->lat_n - 1] / 1e6;
	}
	if (b->c->json) {
		json_t *db = cli_bench_db_json(info);
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
		        "tasks_per_s", cli_bench_per_s(b->tasks, b->enq_s));
		json_t *thr = cli_bench_thr_json(b);
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
	       b->tasks, b->batch, b->enq_s,
	       cli_bench_per_s(b->tasks, b->enq_s));
	printf("throughput  %lld tasks, %lld worker(s) x %lld threads, %" PRId64
	       " finished rows before: %.3f s, %.0f tasks/s\n",
	       b->tasks, b->workers, b->threads, b->finished_before, b->drain_s,
	       cli_bench_per_s(b->tasks, b->drain_s));
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
				if (strcmp(optarg,
				           cli_bench_pat_names[b.pattern]) == 0)
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
			                 cli_bench_pat_names[b.pattern]);
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
	if ((ex = cli_bench_counts(&b, st, &b.rows_before)) != 0)
		return ex;
	if (cli_bench_unfinished(st) != 0)
		return cli_fail(c->h, SKED_ESTATE,
		                "bench: prefix %s already holds %" PRId64
		                " unfinished bench tasks; use a fresh prefix",
		                b.prefix, cli_bench_unfinished(st));
	b.finished_before = st[SKED_SUCCEEDED];
	if (cli_fleet_init(&b.fleet, "bench", (size_t)b.workers + 1) != 0) {
		cli_err("bench: out of memory");
		return EX_OSERR;
	}
	b.fleet.report = 1;
	if (b.pattern != PAT_NONE) {
		if ((ex = cli_bench_setup(&b)) == 0 &&
		    (ex = cli_bench_graph(&b)) == 0 &&
		    (ex = cli_bench_drain(&b)) == 0 &&
		    (ex = cli_bench_verify(&b)) == 0)
			ex = cli_bench_report_deps(&b, &info);
	} else if ((ex = cli_bench_setup(&b)) == 0 &&
	           (ex = phase_enqueue(&b)) == 0 &&
	           (ex = cli_bench_drain(&b)) == 0 &&
	           (b.lat_tasks == 0 || (ex = phase_latency(&b)) == 0))
		ex = report(&b, &info);
	cli_bench_teardown(&b);
	return ex;
}
