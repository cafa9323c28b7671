/*
 * worker/worker.h — the worker runtime's own header: its state, its jobs,
 * and the functions its files share.
 *
 * Folder src/worker/ (floor 8, docs/design.md): the worker runtime:
 * worker.c (the claim loop) and its threads. Calls api/ and below.
 *
 * Layer: the top of the library, on the model (lease.h, claim.h) and the
 * handler runner (exec.h). Threads and what each owns:
 *
 *   the loop     (the caller of sked_worker_run) owns the caller's handle
 *                w->h: it claims up to the number of free slots in one
 *                call, hands jobs to the pool, takes back expired leases,
 *                fires due schedules,
 *                and sleeps on w->wake_fd (or the server's notification
 *                socket) when there is nothing to do.
 *   the pool     (concurrency threads) runs handlers; no SQL.
 *   finisher     owns a third connection w->hf: it records what the pool
 *                completed, as many outcomes as have piled up in one
 *                transaction, while the loop goes on claiming. Claims and
 *                finishes overlap instead of taking turns.
 *   heartbeat    owns a second connection w->hb: every lease/3 it beats
 *                the node row, renews every lease this node holds and
 *                compares what the database says it holds with what runs.
 *                A job the node no longer holds (cancelled, or taken
 *                over) is stopped.
 *   watchdog     no SQL, so it never waits on the database: when no renewal
 *                has succeeded for so long that a lease could run out
 *                (renewals failing, or one stuck on a lock or a silent
 *                server), it stops every handler before the lease can
 *                expire: an expired lease never means two copies of a task
 *                running at once.
 *
 * w->mu guards the job lists (w->all, w->held, the pool's queue, the
 * done queue), slot counts and counters. It is never held across SQL or a
 * handler. Lock order: w->mu only (the exec registry lock is never taken
 * under it).
 *
 * Job states (w->mu), changed only by sked__wk_move: queued -> running ->
 * done -> recorded; and the cancel reasons that may be set on a job:
 * shutdown (give the task back), lost (no longer held: fail it, which the
 * database then records as late), nolease (renewals failed in time).
 */
#ifndef SKED_WORKER_WORKER_H
#define SKED_WORKER_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "api/api.h"
#include "handle/internal.h"
#include "model/lease.h"
#include "proc/guard.h"
#include "util/clock.h"

enum {
	CANCEL_NONE = 0,
	CANCEL_SHUTDOWN,
	CANCEL_LOST,
	CANCEL_NOLEASE,
	CANCEL_HELD /* held ahead too long: given back unstarted */
};

struct sked_job {
	sked_worker *w;
	sked_claimed t;
	int qi;          /* index in w->queues, or -1 */
	int64_t since;   /* monotonic ms when dispatched */
	int64_t ran_at;  /* monotonic ms when its handler started (0: not) */
	int64_t leased;  /* monotonic ms when its claim was sent: the lease the
	                   database granted runs from no earlier than this */
	int64_t renewed; /* w->mu: when the last renewal that listed it as
	                    held began (0: none yet); its lease runs from the
	                    later of the two */
	int cancel_fd;   /* eventfd: readable = stop the handler */
	atomic_int cancel;
	atomic_int started; /* a pool thread began running its handler */
	int slot; /* w->mu: its pool thread's lease guard slot, or -1 */
	/* the outcome, set by the pool thread */
	int ok;
	int exit_code;
	char *error;
	char *output;
	char *result;       /* what the handler left (result_len bytes), */
	size_t result_len;  /* or NULL */
	size_t result_over; /* > 0: it left this many bytes, past
	                       SKED_RESULT_MAX (the attempt fails) */
	struct sked_parents *parents; /* a task that had parents: theirs,
	                                 read at its claim (parents.c) */
	struct sked_job *next;        /* in the job queue, done queue */
	int state;                    /* w->mu: JOB_* */
	int64_t retry_ms; /* the handler's own retry delay, or 0: backoff */
	int give_up;      /* the handler said its failure is final: no retry
	                     (docs/handlers.md, "No retry") */
	int64_t done_ms;  /* w->mu: monotonic ms when its handler returned */
	int64_t ran_ms;   /* w->mu: how long its handler ran (log lines) */
	struct sked_job *hnext, *hprev; /* in w->held while it takes a slot */
	struct sked_job *anext, *aprev; /* in w->all, claim to record */
};

/* What runs a kind's tasks. */
enum { H_CALLBACK, H_PROGRAM, H_PIPE, H_HTTP };

typedef struct handler {
	char kind[SKED_MAX_NAME + 1];
	int type; /* H_* */
	sked_handler_fn fn;
	void *ud;
	char **argv; /* H_PROGRAM, H_PIPE */
	char *url;   /* H_HTTP */
	int64_t timeout_ms;
	sked_worker_kind_metrics m; /* w->mu: sked_worker_get_metrics */
} handler;

typedef struct wqueue {
	char name[SKED_MAX_NAME + 1];
	int max;  /* slots this queue may use */
	int held; /* w->mu: slots in use */
} wqueue;

struct sked_worker {
	sked *h;  /* borrowed: the loop's connection */
	sked *hb; /* owned: the heartbeat's connection */
	sked_worker_options o;
	char node_id[SKED_MAX_NAME + 1];
	handler *handlers;
	int nhandlers;
	wqueue *queues;
	int nqueues;

	pthread_mutex_t mu;
	pthread_cond_t cv; /* pool: a job or exit */
	sked_job *jobs_head, *jobs_tail;
	sked_job *done_head, *done_tail;
	sked_job *held;  /* jobs that take a slot: queued or running */
	sked_job *all;   /* every job from its claim until its outcome is
	                    recorded: what this node really holds */
	int nheld;       /* slots in use: jobs queued or running */
	int nunrecorded; /* jobs done whose outcome is not recorded */
	int ndone;       /* of those, in the done queue (not being recorded) */
	int pool_exit;
	sked_worker_counters counters;

	pthread_t *threads;
	int nthreads;
	pthread_t hb_thread;
	int hb_started;
	pthread_t wd_thread;
	int wd_started;
	sked *hf; /* owned: the finisher's connection */
	pthread_t fin_thread;
	int fin_started;
	pthread_cond_t cv_done; /* finisher: done jobs or exit */
	int fin_exit;           /* w->mu */
	atomic_int hb_exit;

	int wake_fd;              /* eventfd: the loop's doorbell */
	atomic_int stop;          /* 0, 1 graceful, 2 immediate */
	atomic_llong lease_ok_ms; /* monotonic time the last renewal began */
	unsigned rng;

	/* Claims whose reply never arrived may have committed: the tasks
	 * would be held by this node with no job here (strays). The loop
	 * looks for them after a failed claim (claim_unknown); the heartbeat
	 * checks every round, judging only tasks it saw stray twice with
	 * every claim that was under way the first time since finished. */
	int claim_unknown;               /* the loop's */
	atomic_ullong claims_begun;      /* claims sent */
	atomic_ullong claims_dispatched; /* claims done, their jobs in w->all */
	int64_t *stray_ids;              /* the heartbeat's */
	int *stray_att;
	int nstray;
	unsigned long long stray_seq;

	/* adaptive prefetch (the loop's; read under w->mu): tasks held
	 * ahead of free threads now, and the start rate it is bounded by */
	int ahead;
	double rate;
	int64_t rate_at, rate_started;
	int rate_known;
	int64_t nstarted;  /* w->mu: jobs a pool thread has taken */
	int fused;         /* the loop records outcomes with its claims in one
	              statement (SKED_CAP_FUSED); the finisher takes what it
	              leaves */
	atomic_int fusing; /* and the last claims did so (a backlog, and
	                      not a limited queue's: those claim apart,
	                      limits.c) */
	int backlog;       /* the loop's: its last claim came back full */
	int claimed_last;  /* the loop's: tasks its last round claimed */
	int wal_woke;      /* the loop's: SQLite's WAL watch woke it */
	/* the heartbeat's: ended tasks and monotonic ms at its last vacuum
	 * of the hot table (renew.c) */
	int64_t vacuumed_at, vacuumed_ms;
	char *kinds; /* what claims ask for: ",a,b,", or NULL with a catch-all */
	/* retention (retention.c): ages of succeeded, dead, cancelled; 0 keeps */
	int64_t keep_ms[3];
	sked *hp; /* owned: the pruner's connection, when it runs */
	pthread_t prune_thread;
	int prune_started;
	sked_guard *guard;        /* program handlers' deadlines; or NULL */
	struct sked_pipes *pipes; /* pipe_mux.c: the pipe: processes the
	                             pool threads share (w->mu: made on
	                             first use, freed by the last user) */
	atomic_int pool_slots;    /* hands each pool thread its guard slot */
	/* operations (sked_worker_get_metrics): w->mu guards these */
	sked_hist claim_hist;
	int64_t claim_errors, renewals, renewal_errors, finish_errors;
	int64_t reconnects[4], reconnect_failures[4]; /* SKED_CONN_* */
	atomic_llong loop_ok_ms, fin_ok_ms; /* monotonic ms of progress */
	atomic_int run_started;
	/* the lock-wait watchdog (renew.c): a slot for the loop's handle
	 * and one for the pruner's (WAIT_SLOT_*), the last wait of each
	 * already told (read by one thread: the heartbeat, or the watchdog
	 * where the database cannot name a holder), waits told by row
	 * (SKED_WAIT_*, w->mu) */
	sked_wait_slot waits[2];
	unsigned long waits_told[2];
	int64_t lock_waits[3];
	/* lanes (lanes.c): claims in flight at once, each on a connection
	 * of its own, while there is a backlog */
	int lanes_max;           /* sked_worker_set_lanes; 0: the default */
	struct sked_lane *lanes; /* the lane threads (lanes_alloc of them) */
	int lanes_alloc, nlanes;
	pthread_cond_t cv_lane; /* lanes: room, a turn, exit (w->mu) */
	int lane_exit;          /* w->mu */
	int lanes_go;           /* w->mu: a backlog on one plain queue: the
	                           lanes claim, the loop does not */
	int reserved;           /* w->mu: room that claims in flight fill */
	int claims_inflight, claims_inflight_max; /* w->mu */
	unsigned long long turn; /* w->mu: the last claim handed to the pool
	                            (claims hand over in the order sent) */
};

/* Lanes by default where the database has more than one writer. */
#define SKED_LANES_DEFAULT 2

/* How long a claim may wait for half the prefetch to be used up (the
 * loop), or for its share of room (a lane). */
#define PREFETCH_LINGER_MS 20

enum { WAIT_SLOT_LOOP, WAIT_SLOT_PRUNER };

/* How long --until-empty keeps trying a database that does not answer. */
#define UNTIL_EMPTY_GIVE_UP_MS 60000

/* Outcomes recorded in one transaction at most. */
#define FINISH_MAX 500

/* A task held ahead of the free threads this long without starting is
 * given back (unstarted: its attempt returned), so that an idle worker
 * elsewhere can run it (docs/design.md, "Prefetch"). */
#define HOLD_MAX_MS 2000

/* How long a partial batch may wait to grow (loop and finisher). */
#define LINGER_MS 2

/* Where the loop records outcomes with its claims (w->fused), how old an
 * outcome gets before the finisher records it instead. */
#define FUSED_FALLBACK_MS 25

/* After SQLite's WAL watch woke the loop and its claim found nothing, how
 * soon it looks again (the commit may not have been published yet). */
#define WAL_RECHECK_MS 3

/* ---- worker/jobs.c ---- */
void sked__wk_ring(sked_worker *w); /* wake the loop */
void sked__wk_drain_fd(int fd);
void sked__wk_job_free(sked_job *j);
void sked__wk_job_cancel(sked_job *j, int why); /* first reason wins */
/* job states, and the one function that moves a job between them */
enum { JOB_QUEUED = 1, JOB_RUNNING, JOB_DONE, JOB_RECORDED };
void sked__wk_move(sked_worker *w, sked_job *j, int to); /* w->mu held */
const handler *sked__wk_find_handler(const sked_worker *w, const char *kind);
void sked__wk_hist_add(sked_hist *hg, int64_t ms);
void sked__wk_note_handler(sked_worker *w, const sked_job *j, int64_t ms);
void sked__wk_note_outcome(sked_worker *w, const sked_job *j,
                           const sked_outcome *o);
void sked__wk_note(sked_worker *w, int64_t *count, sked_hist *hg, int64_t ms);
/* how long before a lease ends the watchdog stops handlers; heartbeat
 * period; when the lease guard kills a program leased at basis */
int64_t sked__wk_safety_ms(const sked_worker *w);
int64_t sked__wk_beat_interval(const sked_worker *w);
int64_t sked__wk_guard_deadline(const sked_worker *w, int64_t basis);
/* When j's lease was last known good: the later of its claim and the last
 * renewal that listed it (w->mu held). */
int64_t sked__wk_lease_basis(const sked_job *j);
/* When the watchdog stops a handler whose lease was last known good at
 * basis (and a pool thread no longer starts one). */
int64_t sked__wk_stop_at(const sked_worker *w, int64_t basis);
int sked__wk_holds_locked(const sked_worker *w, int64_t id, int attempt);
/* A new connection for h after a lost one, counted by which (SKED_CONN_*);
 * logs a failure at debug level. */
int sked__wk_reconnect(sked_worker *w, sked *h, int which);
int sked__wk_give_back_strays(sked_worker *w, sked *h, const int64_t *ids,
                              const int *att, int n);

/* ---- worker/renew.c: the lock-wait watchdog's side of the connections
 * ---- */
/* Before the threads start (and before the worker's other connections
 * are opened from w->h, which inherit its name): the loop's handle gets
 * its slot and the node id as its name on the server. */
void sked__wk_waits_start(sked_worker *w);
/* After the threads ended: the loop's handle lets go of its slot. */
void sked__wk_waits_stop(sked_worker *w);
/* A connection opened later (the pruner's): its slot (WAIT_SLOT_*, or
 * -1 for none). */
void sked__wk_waits_conn(sked_worker *w, sked *h, int slot);

/* ---- worker/finish.c: outcomes, for the finisher and the loop ---- */
/* Take up to max done jobs, oldest first (only those done before
 * done_before, monotonic ms, unless it is 0); *n of them. */
sked_job *sked__wk_take_done(sked_worker *w, int max, int64_t done_before,
                             int *n);
/* The outcomes of a taken list (n jobs); NULL when out of memory. */
sked_outcome *sked__wk_outcomes(sked_worker *w, sked_job *list, int n);
/* The database has them: count, log, free the jobs (not o). */
void sked__wk_recorded(sked_worker *w, sked_job *list, sked_outcome *o, int n);
/* They could not be recorded: back to the head of the done queue. */
void sked__wk_requeue_done(sked_worker *w, sked_job *list);
/* After a failed finish of list (o its outcomes, n of them): those the
 * database has all the same (o[i].recorded) are recorded as usual, the
 * others go back to the done queue to be tried again. */
void sked__wk_unrecorded(sked_worker *w, sked_job *list, sked_outcome *o,
                         int n);

/* ---- worker/lanes.c: claims, the loop's and the lanes' ---- */
/* Room a claim may fill now (w->mu held): the threads plus the prefetch
 * queue, less what results waiting to be recorded and claims in flight
 * hold. */
int sked__wk_free_slots_locked(const sked_worker *w);
int sked__wk_busy_locked(const sked_worker *w);
/* Prefetch after a claim that asked for asked and got got (w->mu held). */
void sked__wk_adapt_prefetch(sked_worker *w, int asked, int got, int64_t now);
/* A claim of up to reserve tasks is about to be sent (w->mu held): its
 * room is reserved; returns its number in line. */
unsigned long long sked__wk_claim_begin_locked(sked_worker *w, int reserve);
/* Its reply: once every claim sent before it has handed its tasks over,
 * hand over c (n tasks; freed), give back the reservation. */
void sked__wk_claim_end(sked_worker *w, sked *h, unsigned long long seq,
                        int reserved, sked_claimed *c, int n, int qi,
                        int64_t leased);
/* The outcomes the pool completed and the next claim, on h, in one
 * statement (fused); *reserved grows by what the claim may take beyond
 * the room reserved for it (its outcomes free room). */
int sked__wk_finish_and_claim(sked_worker *w, sked *h, sked_claim_req *req,
                              int *reserved, sked_claimed **c, int *n);
int sked__wk_lanes_start(sked_worker *w);
void sked__wk_lanes_stop(sked_worker *w);

/* ---- worker/pipe.c: a pool thread's pipe: processes ---- */
/* The parents of a claimed task and their results (parents.c): read
 * by the claiming thread, in one statement per claim batch over the
 * tasks that had parents only, before the pool sees the jobs. */
typedef struct sked_parents {
	size_t n;
	int64_t *id;
	char **kind, **result; /* NULL: unknown kind (pruned), no result */
	char *json;            /* [{"id","kind","result"},…] */
	char *ids;             /* "1,2" */
	char *error;           /* they could not be read: the attempt fails */
} sked_parents;
/* For each of the n claimed tasks, its parents (NULL for a task without:
 * no statement at all when none of them had parents). *out is an array
 * of n pointers, or NULL. A failed read marks those that had parents
 * with an error instead. */
void sked__wk_parents_read(sked *h, const sked_claimed *c, int n,
                           sked_parents ***out);
void sked__wk_parents_free(sked_parents *p);
/* j's result: len bytes copied, or over the bound (result_over). */
int sked__wk_set_result(sked_job *j, const char *s, size_t len);

typedef struct sked_pipe sked_pipe;
void sked__wk_run_pipe(sked_job *j, const handler *x, sked_pipe **pipes);
void sked__wk_pipes_free(sked_pipe *pipes);

/* ---- worker/curl.c: a pool thread's HTTP client ---- */
typedef struct sked_http sked_http;
void sked__wk_run_http(sked_job *j, const handler *x, sked_http **http);
void sked__wk_http_free(sked_http *http);
int sked__wk_http_init(void); /* SKED_EUNSUPPORTED: built without libcurl */

/* ---- the threads (pool.c, renew.c, finish.c) ---- */
void *sked__wk_pool_main(void *arg);
void *sked__wk_heartbeat_main(void *arg);
void *sked__wk_watchdog_main(void *arg);
void *sked__wk_finisher_main(void *arg);
void *sked__wk_pruner_main(void *arg);

#endif /* SKED_WORKER_WORKER_H */
