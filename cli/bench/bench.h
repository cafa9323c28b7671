/*
 * bench.h — inside `sked bench`: the run's state (struct bench), the file
 * it shares with its workers, and what its three files call of each
 * other: bench.c (the machinery both kinds of run share), bench_deps.c
 * (--pattern) and cmd_bench.c (the command and the plain run).
 *
 * Layer: the command-line program, a client of <sked.h> only.
 */
#ifndef SKED_CLI_BENCH_H
#define SKED_CLI_BENCH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/cli.h"
#include "base/fleet.h"

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

static inline atomic_llong *
dep_slots(struct bench_shm *s, int which)
{
	return &s->lat_start_ns[s->nlat + (int64_t)which * s->ndep];
}

/* --pattern: the dependency graphs of the peers harness's deps test. */
enum { PAT_NONE, PAT_BASELINE, PAT_FANOUT, PAT_FANIN, PAT_CHAIN, PAT_LAYERED };
/* "baseline", …, by PAT_*; "" for PAT_NONE */
extern const char *const cli_bench_pat_names[];
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
	/* the timed drain's ends on the wall clock (ms since the epoch), for
	 * a sampler outside the bench to keep its samples of that window */
	long long drain_t0_ms, drain_t1_ms;
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

/* ---- bench.c ---- */

/* One progress line on a terminal, written over the last one. */
void cli_bench_progress(struct bench *b, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
void cli_bench_progress_end(struct bench *b);
/* The bench queue's tasks per status, and the rows of the whole task
 * table (rows may be NULL); 0 or a sysexits code after one line. */
int cli_bench_counts(struct bench *b, int64_t st[7], int64_t *rows);
/* Of those counts, the tasks not ended (blocked ones included). */
int64_t cli_bench_unfinished(const int64_t st[7]);
/* The private folder, the shared file and the workers' environment;
 * cli_bench_teardown undoes what was done. 0 or a sysexits code. */
int cli_bench_setup(struct bench *b);
void cli_bench_teardown(struct bench *b);
/* Start one `sked worker --builtin-noop` of threads threads; reap the
 * ones that exited (-1: one failed; else how many still run). */
int cli_bench_spawn_worker(struct bench *b, long long threads, int until_empty);
int cli_bench_reap(struct bench *b, int block);
/* qsort order of int64_t; the nearest-rank percentile p of n sorted
 * nanosecond samples, in ms. */
int cli_bench_cmp_i64(const void *a, const void *b);
double cli_bench_pct_ms(const int64_t *sorted, long long n, double p);
/* The timed drain of b->tasks tasks by b->workers workers, with the
 * CPU split; 0 or a sysexits code. */
int cli_bench_drain(struct bench *b);
/* n per second over s seconds (0 for no time); the drain's and the
 * database's --json objects. */
double cli_bench_per_s(long long n, double s);
json_t *cli_bench_thr_json(struct bench *b);
json_t *cli_bench_db_json(const sked_info *info);

/* ---- bench_deps.c ---- */

/* --pattern: enqueue the graph; check the handlers' stamps once it is
 * drained; print the report (EX_SOFTWARE when the check failed). */
int cli_bench_graph(struct bench *b);
int cli_bench_verify(struct bench *b);
int cli_bench_report_deps(struct bench *b, const sked_info *info);

int cmd_bench(struct cli *c, int argc, char **argv);

/* ---- bench.c, for the bench's workers (worker --builtin-noop) ---- */

/* The no-op C handler: counts its calls in the bench's shared file,
 * stamps the start of latency tasks and the start, end and runs of a
 * --pattern graph's tasks. userdata: cli_bench_attach(). */
int cli_bench_noop(sked_job *job, void *userdata);
/* Map the shared file named by SKED_BENCH_SHM; NULL when unset (then
 * the handler only returns 0). */
void *cli_bench_attach(void);

#endif /* SKED_CLI_BENCH_H */
