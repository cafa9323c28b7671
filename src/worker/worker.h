/*
 * worker/worker.h — the worker runtime's own header: the thread map, the
 * state each thread role owns, what crosses between them, and the
 * functions its files share.
 *
 * Folder src/worker/ (floor 8, docs/design.md): the worker runtime:
 * worker.c (the loop), setup.c (construction, settings, numbers) and
 * its threads. Calls the public API (sked.h) and the floors below.
 *
 * Layer: the top of the library, on the model (lease.h, claim.h) and the
 * handler runner (exec.h, guard.h).
 *
 * ---- The thread map ----
 *
 * Every role has a struct of its own (below) holding what only it
 * touches; what two roles share is in struct wk_shared (w->sh), guarded
 * by w->sh.mu or atomic. The settings in struct sked_worker itself (the
 * options, node id, handlers, queues, kinds, retention ages, w->fused)
 * are written before sked_worker_run starts the threads and only read
 * while they run.
 *
 *   role       file      its state  its connection  what it does
 *   the loop   worker.c  w->loop    w->h (the       claims up to the free
 *   (the caller of                  caller's)       room in one call (while
 *   sked_worker_run)                                there is no backlog),
 *              hands jobs to the pool, runs the periodic chores (give
 *              back what is held too long; on the leader only: take back
 *              expired leases, forget dead nodes, fire due schedules:
 *              w->loop.chores, a table), records outcomes while the
 *              finisher has no connection (w->sh.fin_borrow),
 *              gives back what a failed claim may have taken, and sleeps
 *              on w->wake_fd (or the server's notification socket).
 *   the lanes  lanes.c   w->lane    one each        while there is a
 *              (lane.n threads,     (w->lane.v[i].h) backlog on one plain
 *              0 or 2+)                             queue (w->sh.lanes_go),
 *              claim in its place, several claims in flight at once.
 *   the pool   pool.c    w->pool    none: no SQL    runs handlers
 *              (concurrency threads), each with its own HTTP client and
 *              its slot in the lease guard; they share the pipe:
 *              processes (w->sh.pipes, pipe_mux.c).
 *   finisher   finish.c  w->fin     w->fin.h        records what the pool
 *              completed, as many outcomes as have piled up (FINISH_MAX)
 *              in one transaction. Where claims carry outcomes (w->fused,
 *              w->sh.fusing) the loop and lanes record them instead and
 *              the finisher takes what they leave for FUSED_FALLBACK_MS.
 *   heartbeat  heartbeat.c w->beat    w->beat.h       every lease/3 beats the
 *              node row, renews every lease the node holds, stops the
 *              handlers of tasks it no longer holds, gives back strays
 *              (tasks held with no job here), moves the guard's deadlines
 *              on; between beats asks who holds a lock a wait is on, and
 *              vacuums the hot table (PostgreSQL).
 *   watchdog   watchdog.c w->watch   none: no SQL    stops every handler
 *              whose lease could run out unrenewed (so it never waits on
 *              the database); tells lock waits where the database cannot
 *              name a holder (SQLite).
 *   pruner     pruner.c  w->prune   w->prune.h,     retention: a turn a
 *              (only with           opened per turn minute under the
 *              retention ages)                      cluster lock.
 *   the guard  proc/guard.c         none            not a thread: a
 *              process forked at the start when there are program
 *              handlers (w->guard); one shared page, a slot per pool
 *              thread (the program's process group and deadline). It
 *              kills a program at its lease deadline even while this
 *              process is frozen. The pool arms a slot, the heartbeat
 *              moves deadlines on; the page is its own lock (guard.h).
 *
 * The loop starts them (start_threads) and ends them (stop_threads) in
 * this order: lanes, pool, finisher, heartbeat and watchdog, pruner. The
 * extra connections are clones of w->h (sked__clone, handle.c: its
 * detection, rendered statements and schema check reused, only the
 * connection and its session new), opened by conns.c under the cap
 * (w->max_conns): the heartbeat's at the start, the finisher's and the
 * lanes' when work needs them (closed once unused for CONN_IDLE_MS), the
 * pruner's per turn; a refused one is done without (conns.c). The
 * heartbeat also keeps the leader lock (lead.c): the node that holds it
 * runs the cluster's chores.
 *
 * What crosses between roles, all in w->sh (struct wk_shared):
 *   - under w->sh.mu: the job lists and counts (a job moves between them
 *     only through sked__wk_move), per-queue slots in use
 *     (w->queues[i].held), the claims in flight (room reserved, turn,
 *     claim_unknown, lanes_go), the prefetch (ahead, the start rate,
 *     backlog), the exit flags of the pool, finisher and lanes, the
 *     counters and the numbers for /metrics, and w->handlers[i].m. It is
 *     never held across SQL or a handler. Lock order: w->sh.mu only (the
 *     exec registry lock and a wait slot's lock are never taken under
 *     it). Its conditions: cv_pool (a job or exit: the pool), cv_done
 *     (done jobs or exit: the finisher), cv_lane (room, a turn, exit:
 *     the lanes, and claims waiting for their turn).
 *   - atomic: stop (sked_worker_stop, signal-safe), side_exit (heartbeat,
 *     watchdog, pruner), the claim numbers the heartbeat's stray check
 *     reads (claims_begun, claims_dispatched), fusing, the counts of
 *     results recorded with claims and apart, and the progress times
 *     (lease_ok_ms, loop_ok_ms, fin_ok_ms, run_started).
 *   - w->sh.waits: the lock-wait slots of the loop's and the pruner's
 *     connections, each under its own lock (handle.h).
 *
 * Job states (w->sh.mu), changed only by sked__wk_move, which checks
 * each move against the table of legal ones (jobs.c):
 *
 *   new -> queued      claimed: in the pool's queue, takes a slot, held
 *   queued -> running  a pool thread took it
 *   queued -> done     given back while held ahead (never started)
 *   running -> done    its handler returned: the slot is free
 *   done -> recording  taken to be recorded (finisher, or a claim that
 *                      carries outcomes)
 *   recording -> done  not recorded: back to the head of the done queue
 *   recording -> recorded  in the database: the node holds it no more
 *
 * The cancel reasons that may be set on a job: shutdown (give the task
 * back), lost (no longer held: fail it, which the database then records
 * as late), nolease (renewals failed in time), held (held ahead too
 * long: given back unstarted).
 */
#ifndef SKED_WORKER_WORKER_H
#define SKED_WORKER_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "sked.h"
#include "handle/internal.h"
#include "model/lease.h"
#include "model/sched.h"
#include "model/take.h"
#include "proc/guard.h"
#include "util/clock.h"
#include "util/wake.h"

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
	int64_t renewed; /* w->sh.mu: when the last renewal that listed it as
	                    held began (0: none yet); its lease runs from the
	                    later of the two */
	/* eventfd: readable = stop the handler. Made only for handlers
	 * that wait on it (sked__wk_job_arm), -1 before: an eventfd made
	 * and closed per task was two of a no-op task's few system calls,
	 * and a callback reads cancel instead */
	_Atomic int cancel_fd;
	atomic_int cancel;
	atomic_int started; /* a pool thread began running its handler */
	int slot; /* w->sh.mu: its pool thread's lease guard slot, or -1 */
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
	struct sked_job *dnext;       /* a claimed batch (lanes.c: dispatch) */
	int state;                    /* w->sh.mu: JOB_* */
	int64_t retry_ms; /* the handler's own retry delay, or 0: backoff */
	int give_up;      /* the handler said its failure is final: no retry
	                     (docs/handlers.md, "No retry") */
	int64_t done_ms;  /* w->sh.mu: monotonic ms when its handler returned */
	int64_t ran_ms;   /* w->sh.mu: how long its handler ran (log lines) */
	struct sked_job *hnext,
	        *hprev; /* in w->sh.held while it takes a slot */
	struct sked_job *anext, *aprev; /* in w->sh.all, claim to record */
	/* progress (progress.c): the latest report not stored yet (swapped
	 * atomically: a report takes no lock), the program's report file
	 * (w->sh.mu), what that file said when last stored and whether a
	 * refused report was logged (w->sh.mu, the heartbeat's) */
	_Atomic(char *) progress_new;
	char *progress_file;
	char *progress_read;
	int progress_warned;
};

/* What runs a kind's tasks. */
enum { H_CALLBACK, H_PROGRAM, H_PIPE, H_HTTP };

typedef struct handler {
	char kind[SKED_MAX_NAME + 1];
	int type; /* H_* */
	sked_handler_fn fn;
	void *ud;
	char **argv; /* H_PROGRAM, H_PIPE */
	char *url;   /* H_HTTP (NULL for the webhooks' deliveries: hook) */
	int hook;    /* H_HTTP: delivers sked.hook tasks (hooks.c) */
	int64_t timeout_ms;
	sked_worker_kind_metrics m; /* w->sh.mu: sked_worker_get_metrics */
} handler;

typedef struct wqueue {
	char name[SKED_MAX_NAME + 1];
	int max;  /* slots this queue may use */
	int held; /* w->sh.mu: slots in use */
} wqueue;

/* What crosses between the roles (the thread map above): the lock, and
 * what it guards; then what is atomic. */
typedef struct wk_shared {
	pthread_mutex_t mu;
	pthread_cond_t cv_pool; /* the pool: a job or exit */
	pthread_cond_t cv_done; /* the finisher: done jobs or exit */
	pthread_cond_t cv_lane; /* lanes and claims: room, a turn, exit */

	/* the job lists (sked__wk_move) */
	sked_job *jobs_head, *jobs_tail; /* the pool's queue: queued */
	sked_job *done_head, *done_tail; /* done, to be recorded */
	sked_job *held;   /* jobs that take a slot: queued or running */
	sked_job *all;    /* every job from its claim until its outcome is
	                    recorded: what this node really holds */
	int nheld;        /* slots in use: jobs queued or running */
	int nunrecorded;  /* jobs done whose outcome is not recorded */
	int ndone;        /* of those, in the done queue (not being recorded) */
	int64_t nstarted; /* jobs a pool thread has taken */

	/* the threads' exit flags */
	int pool_exit, fin_exit, lane_exit;

	/* claims, the loop's and the lanes' (lanes.c) */
	int claim_unknown; /* a claim failed: it may have committed all the
	                      same; the loop gives back what it took once
	                      no claim is in flight */
	int lanes_go;      /* a backlog on one plain queue: the lanes
	                      claim, the loop does not */
	int backlog;       /* the last claim came back full */
	int reserved;      /* room that claims in flight fill */
	int claims_inflight, claims_inflight_max;
	/* how long the last claim that went through took (ms) */
	int64_t claim_last_ms;
	unsigned long long turn; /* the last claim handed to the pool
	                            (claims hand over in the order sent) */

	/* adaptive prefetch (lanes.c): tasks held ahead of free threads
	 * now, and the start rate it is bounded by */
	int ahead;
	double rate;
	int64_t rate_at, rate_started;
	int rate_known;

	/* numbers (sked_worker_get_counters, sked_worker_get_metrics) */
	sked_worker_counters counters;
	sked_hist claim_hist;
	int64_t claim_errors, renewals, renewal_errors, finish_errors;
	int64_t reconnects[4], reconnect_failures[4]; /* SKED_CONN_* */
	int64_t lock_waits[3];                        /* told, by SKED_WAIT_* */

	/* atomic */
	atomic_int stop;      /* 0, 1 graceful, 2 immediate */
	atomic_int side_exit; /* heartbeat, watchdog and pruner: end */
	/* the side threads sleep on side_cv (sked__wk_side_sleep): an idle
	 * worker's heartbeat, watchdog and pruner wake about once a second,
	 * not 10 to 20 times; a stop or a claim that took tasks kicks them
	 * (side_gen grows) */
	pthread_mutex_t side_mu;
	pthread_cond_t side_cv;
	unsigned long side_gen;
	atomic_int fusing; /* the last claims carried outcomes (a backlog,
	                         and not a limited queue's: those claim
	                         apart, limited.c) */
	/* Claims whose reply never arrived may have committed: the tasks
	 * would be held by this node with no job here (strays). The
	 * heartbeat judges only tasks it saw stray twice with every claim
	 * under way the first time since handed over. */
	atomic_ullong claims_begun;      /* claims sent */
	atomic_ullong claims_dispatched; /* claims done, their jobs in all */
	atomic_ullong claim_failures;    /* claims that failed (their reply
	                                    may have been lost) */
	atomic_llong lease_ok_ms; /* monotonic ms the last renewal began */
	atomic_llong loop_ok_ms, fin_ok_ms; /* monotonic ms of progress */
	atomic_int run_started;

	/* pipe_mux.c: the pipe: processes the pool threads share (under
	 * mu: made on first use, freed by the last user) */
	struct sked_pipes *pipes;

	/* the lock-wait slots (waits.c) of the loop's and the pruner's
	 * connections (WAIT_SLOT_*), each under its own lock */
	sked_wait_slot waits[2];

	/* connections (conns.c): the extra ones open now (the finisher's,
	 * lanes', pruner's: not the loop's or the heartbeat's), opened and
	 * refused so far, and whether a refusal has been told */
	atomic_int extra;
	atomic_llong conns_opened, conns_refused;
	/* results recorded with a claim (the loop's or a lane's) and apart
	 * (the finisher's own statements): said when the worker stops */
	atomic_llong rec_with_claims, rec_apart;
	atomic_int refused_told;
	/* the finisher has no connection: the loop records outcomes on its
	 * own (finish.c) */
	atomic_int fin_borrow;
	/* w->sh.mu: no lane claims before this (monotonic ms): a lane's
	 * connection was refused */
	int64_t lanes_refused_until;
	int64_t lanes_backoff;

	/* the leader (lead.c): this node runs the cluster's chores while
	 * the monotonic clock is before lead_until_ms (set by the heartbeat,
	 * which holds the leader lock) */
	atomic_llong lead_until_ms;
	atomic_llong lead_token;

	/* the wake-ups (wakes.c): this node's rank among the live nodes
	 * that serve what it serves, and their number, as the last
	 * heartbeat read them (0 of 0: not known, every wake-up is for it);
	 * how many the leader last called for help with a backlog (the
	 * loop's alone) */
	atomic_int rank, ranked_of;
	int64_t help_n;
} wk_shared;

/* One entry of the loop's table of periodic chores (worker.c). */
typedef struct wk_chore {
	const char *name;
	/* the cluster's, not this node's: only the leader runs it */
	int leader_only;
	/* runs even when a chore before it failed in the same turn */
	int after_failure;
	/* SKED_OK, or an error: the turn counts as a database failure */
	int (*run)(sked_worker *w, int64_t now);
	int64_t period_ms; /* 0: every turn */
	int64_t next;      /* monotonic ms it is due next */
	int64_t last;      /* when it last ran (0: not yet) */
} wk_chore;

#define WK_CHORES 6

/* The loop's own (worker.c): the caller's thread, on w->h. */
typedef struct wk_loop {
	wk_chore chores[WK_CHORES]; /* what it does besides claiming */
	sked_sched_clock sched;     /* schedules: sched.c */
	int64_t sched_in;           /* ms to the next fire (0: none known) */
	int64_t first_free;         /* when a lone free slot began to wait */
	int claimed_last;           /* tasks its last round claimed */
	int sent_last;              /* claims it sent (0: no slot free) */
	int64_t idle_poll_ms;       /* the idle claim poll now: poll_ms,
	                               doubled after each empty claim up to
	                               IDLE_POLL_MAX_MS (no notifications) */
	int wal_woke;               /* SQLite's WAL watch woke it */
	/* a listening node that does not lead claims only when it has a
	 * reason (docs/design.md, "Wake-ups"): a wake-up for it (or one it
	 * heard without room), its safety poll, its start, a claim that came
	 * back full, went through a limited queue or failed. A slot that
	 * frees is not one by itself: whatever became due since was told;
	 * but a round that sent no claim (every slot busy) keeps the reason
	 * it had, so a worker in a backlog goes on draining it. */
	int want;
	int limited_last; /* its last round claimed through a limited queue */
	/* a workflow is under way here: the last claim that carried
	 * outcomes, or took tasks, took a child (a task that waited for
	 * parents). Outcomes then ride with claims even without a backlog,
	 * and a slot that frees is a reason to claim: the statement that
	 * records a parent's end hands its released children to the free
	 * slots (dialect/postgresql.c, FINISH_CLAIM), so a chain link costs
	 * one round trip instead of a finish, a wake-up and a claim. */
	int handing;
} wk_loop;

/* The pool's (pool.c). */
typedef struct wk_pool {
	pthread_t *threads;
	int n;
	atomic_int slots; /* hands each pool thread its guard slot */
} wk_pool;

/* The finisher's (finish.c). */
typedef struct wk_finisher {
	sked *h; /* owned: its connection, open while outcomes come */
	pthread_t th;
	int started;
	int64_t used_ms;  /* monotonic ms it last recorded */
	int64_t retry_at; /* no connection: when to try to open one */
	int64_t backoff;
} wk_finisher;

/* The heartbeat's (heartbeat.c). */
typedef struct wk_beat {
	sked *h; /* owned: its connection */
	pthread_t th;
	int started;
	/* strays seen in the last round, and the claims begun then */
	int64_t *stray_ids;
	int *stray_att;
	int nstray;
	unsigned long long stray_seq;
	/* ended tasks and monotonic ms at the end of its last vacuum of the
	 * hot table, and how long that vacuum took */
	int64_t vacuumed_at, vacuumed_ms, vacuum_took_ms;
	/* the last wait of each slot already told: the heartbeat's, or the
	 * watchdog's where the database cannot name a holder (never both) */
	unsigned long waits_told[2];
	/* no connection (refused): when to try again */
	int64_t retry_at, backoff;
	/* the idle beat (no lease held, no claim since the last list):
	 * the claims begun at the last list of held tasks, and whether it
	 * listed none */
	unsigned long long listed_seq;
	int listed_none;
	/* the leader lock (lead.c) */
	int leads;
	int64_t lead_token;
	int64_t lead_next; /* monotonic ms of the next extend or look */
} wk_beat;

/* The watchdog's (watchdog.c). */
typedef struct wk_watchdog {
	pthread_t th;
	int started;
} wk_watchdog;

/* The lanes' (lanes.c): several claims in flight, each on a connection
 * of its own, while there is a backlog. Written before the lanes start,
 * read by the loop and the lanes while they run. */
typedef struct wk_lanes {
	struct sked_lane *v; /* the lane threads (alloc of them) */
	int alloc, n;        /* n: started */
} wk_lanes;

/* The pruner's (pruner.c). */
typedef struct wk_pruner {
	sked *h; /* owned: its connection, for the length of a turn */
	pthread_t th;
	int started;
} wk_pruner;

struct sked_worker {
	/* settings: written before the threads start, read while they run */
	sked *h; /* borrowed: the loop's connection, and where the API's
	            errors are told */
	sked_worker_options o;
	char node_id[SKED_MAX_NAME + 1];
	handler *handlers;
	int nhandlers;
	wqueue *queues;
	int nqueues;
	char *kinds; /* what claims ask for: ",a,b,", or NULL with a catch-all */
	struct sked_hook_rule *hooks; /* on_end rules (sked_worker_hook) */
	size_t nhooks;
	uint64_t hook_turns;  /* the loop's: names each webhooks turn */
	int64_t hook_warned;  /* the loop's: when a failed turn last warned */
	int64_t keep_ms[3];   /* retention: ages of succeeded, dead, cancelled;
	                       0 keeps */
	int lanes_max;        /* sked_worker_set_lanes; 0: the default */
	int max_conns;        /* sked_worker_set_max_connections; 0: none */
	int fused;            /* claims may carry outcomes (SKED_CAP_FUSED, or
	                       SQLite's one write transaction) */
	int wake_fd;          /* eventfd: the loop's doorbell */
	_Atomic int rung;     /* 1: wake_fd was written since the loop last
	                         drained it (jobs.c: sked__wk_ring) */
	sked_guard *guard;    /* program handlers' deadlines; or NULL */
	_Atomic uint64_t rng; /* retry jitter (finish.c: jitter) */

	wk_shared sh; /* what crosses between the roles */

	/* each role's own */
	wk_loop loop;
	wk_pool pool;
	wk_finisher fin;
	wk_beat beat;
	wk_watchdog watch;
	wk_lanes lane;
	wk_pruner prune;
};

/* Lanes by default where the database has more than one writer. */
#define SKED_LANES_DEFAULT 2

/* How long a claim may wait for half the prefetch to be used up (the
 * loop), or for its share of room (a lane). */
#define PREFETCH_LINGER_MS 20

enum { WAIT_SLOT_LOOP, WAIT_SLOT_PRUNER };

/* The idle claim poll (worker.c, poll_now): a listening node that does
 * not lead claims at least this often; without notifications the poll
 * backs off up to IDLE_POLL_MAX_MS. */
#define LISTEN_SAFETY_MS 60000
#define IDLE_POLL_MAX_MS 2000

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
 * outcome gets before the finisher records it instead: FUSED_FALLBACK_MS,
 * or, when claims take longer, what a lane waits for room plus two
 * claims (the one on the wire, and the next, which carries it), at most
 * FUSED_FALLBACK_MAX_MS (finish.c: fallback_ms). */
#define FUSED_FALLBACK_MS     25
#define FUSED_FALLBACK_MAX_MS 500

/* After SQLite's WAL watch woke the loop and its claim found nothing, how
 * soon it looks again (the commit may not have been published yet). */
#define WAL_RECHECK_MS 3

/* ---- worker/conns.c: the extra connections ---- */
enum { WK_CONN_BEAT, WK_CONN_FIN, WK_CONN_LANE, WK_CONN_PRUNER };
/* An extra connection, a clone of w->h; NULL when the cap leaves no room
 * or the database refused it (logged once until one opens again). */
sked *sked__wk_conn_open(sked_worker *w, int which);
/* Close *h (opened by sked__wk_conn_open for which); *h = NULL. */
void sked__wk_conn_close(sked_worker *w, sked **h, int which);
/* After a refusal: the next try, monotonic ms (back-off doubled from
 * CONN_RETRY_MIN_MS to CONN_RETRY_MAX_MS). */
int64_t sked__wk_conn_backoff(int64_t *backoff);
#define CONN_RETRY_MIN_MS 1000
#define CONN_RETRY_MAX_MS 60000
/* An extra connection unused this long is closed (finisher, lanes). */
#define CONN_IDLE_MS 10000

/* ---- worker/lead.c: the leader of the cluster's chores ---- */
#define LEADER_LOCK SKED_LEADER_LOCK
/* the heartbeat's turn: extend the leader lock, or look whether it is
 * free and take it */
void sked__wk_lead_turn(sked_worker *w, int64_t now);
/* this node leads now */
int sked__wk_leads(sked_worker *w);
/* the heartbeat ends: give the lock up so another node leads at once */
void sked__wk_lead_end(sked_worker *w);

/* ---- worker/jobs.c: deadlines and the side threads' sleep ---- */
/* now + ms on CLOCK_REALTIME, the clock pthread_cond_timedwait reads */
void sked__wk_deadline(struct timespec *until, int64_t ms);
/* Sleep up to ms, or until kicked since *seen (a stop, a claim that took
 * tasks); *seen is brought up to date. */
void sked__wk_side_sleep(sked_worker *w, int64_t ms, unsigned long *seen);
void sked__wk_side_kick(sked_worker *w);
/* how long an idle side thread sleeps at most */
#define SIDE_IDLE_MS 1000

/* ---- worker/wakes.c: which wake-ups are for this worker ---- */
#define WK_PASS_MAX 4
#define WK_HELP_MAX SKED_WAKE_ALL
typedef struct wk_heard {
	int heard;  /* notifications read */
	int mine;   /* one of them is for this worker: claim */
	int missed; /* one was for it while it had no room */
	int npass;  /* to pass on: it was first of their window, without room */
	sked_wake pass[WK_PASS_MAX];
} wk_heard;
/* Read the notifications that arrived (and those kept from a statement's
 * reply) and decide; room is the free slots now. */
void sked__wk_hear(sked_worker *w, int room, wk_heard *out);
void sked__wk_pass_on(sked_worker *w, const wk_heard *heard);
/* the leader's chore: call for help with a backlog (every poll) */
int sked__wk_help(sked_worker *w, int64_t now);
/* webhooks (hooks.c): the leader's chore that enqueues deliveries; the
 * rules' memory; whether a delivery's URL is one of the rules'; the
 * hex HMAC-SHA256 of "T." and body with SKED_HOOK_SECRET */
int sked__wk_hooks(sked_worker *w, int64_t now);
void sked__wk_hooks_free(sked_worker *w);
int sked__wk_hook_url_ok(const sked_worker *w, const char *url);
int sked__wk_hook_sign(const char *body, size_t len, long long t, char *out,
                       size_t out_sz);

/* ---- worker/jobs.c ---- */
void sked__wk_ring(sked_worker *w); /* wake the loop */
void sked__wk_ring_fd(int fd);      /* an eventfd: wake its reader */
/* Give j its cancel eventfd before a handler that waits on it (a
 * program, a pipe) takes it; SKED_OK, or SKED_EIO with errno. */
int sked__wk_job_arm(sked_job *j);
void sked__wk_serves(sked_worker *w); /* serves.c: once, registered */
void sked__wk_drain_fd(int fd);
void sked__wk_job_free(sked_job *j);
void sked__wk_job_cancel(sked_job *j, int why); /* first reason wins */
/* Job states, and the one function that moves a job between them (the
 * thread map above): it checks the move against the table of legal
 * ones; an illegal move is a bug, logged (and an abort in a debug
 * build), the lists left as they were. w->sh.mu held. */
enum {
	JOB_NEW = 0, /* calloc'd, not yet in any list */
	JOB_QUEUED,
	JOB_RUNNING,
	JOB_DONE,
	JOB_RECORDING,
	JOB_RECORDED,
	JOB_NSTATES
};
void sked__wk_move(sked_worker *w, sked_job *j, int to);
/* The same, without the log and the abort: 0, or -1 when the move is
 * not legal or the job is not where its state says (nothing changed). */
int sked__wk_move_try(sked_worker *w, sked_job *j, int to);
int sked__wk_move_legal(int from, int to);
const char *sked__wk_state_name(int state);
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
/* A drain (--until-empty) that has ended: vacuum the hot table if it
 * churned since the heartbeat's last vacuum (heartbeat.c). The side
 * threads have stopped. */
void sked__wk_vacuum_drained(sked_worker *w);
int64_t sked__wk_guard_deadline(const sked_worker *w, int64_t basis);
/* When j's lease was last known good: the later of its claim and the last
 * renewal that listed it (w->sh.mu held). */
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

/* ---- worker/waits.c: the lock-wait watchdog's side of the connections
 * ---- */
/* Before the threads start (and before the worker's other connections
 * are cloned from w->h, which inherit its name): the loop's handle gets
 * its slot and the node id as its name on the server. */
void sked__wk_waits_start(sked_worker *w);
/* After the threads ended: the loop's handle lets go of its slot. */
void sked__wk_waits_stop(sked_worker *w);
/* A connection opened later (the pruner's): its slot (WAIT_SLOT_*, or
 * -1 for none). */
void sked__wk_waits_conn(sked_worker *w, sked *h, int slot);
/* Tell each wait of the slots older than the threshold, once: conn asks
 * the server who holds the row (the heartbeat's), or NULL where the
 * database cannot name a holder (the watchdog's, no SQL). */
void sked__wk_check_waits(sked_worker *w, sked *conn);

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
/* Room a claim may fill now (w->sh.mu held): the threads plus the prefetch
 * queue, less what results waiting to be recorded and claims in flight
 * hold. */
int sked__wk_free_slots_locked(const sked_worker *w);
int sked__wk_busy_locked(const sked_worker *w);
/* Prefetch after a claim that asked for asked and got got (w->sh.mu held). */
void sked__wk_adapt_prefetch(sked_worker *w, int asked, int got, int64_t now);
/* A claim of up to reserve tasks is about to be sent (w->sh.mu held): its
 * room is reserved; returns its number in line. */
unsigned long long sked__wk_claim_begin_locked(sked_worker *w, int reserve);
/* Its reply: once every claim sent before it has handed its tasks over,
 * hand over c (n tasks; freed), give back the reservation. */
void sked__wk_claim_end(sked_worker *w, sked *h, unsigned long long seq,
                        int reserved, sked_claimed *c, int n, int qi,
                        int64_t leased);
/* A claim on h failed with rc: said, counted, marked unknown (it may
 * have committed), the connection opened again if lost; lane: a lane's,
 * which also stops the lanes. */
void sked__wk_claim_failed(sked_worker *w, sked *h, int rc, int lane);
/* The outcomes the pool completed and the next claim, on h, in one
 * statement (fused); *reserved grows by what the claim may take beyond
 * the room reserved for it (its outcomes free room), up to most tasks
 * in all (a lane's share; the loop: INT_MAX). */
int sked__wk_finish_and_claim(sked_worker *w, sked *h, sked_claim_req *req,
                              int *reserved, int most, sked_claimed **c,
                              int *n);
/* ---- worker/claims.c: the loop's claims of a round ---- */
/* Claim for every queue with free slots; 1 when a claim came back full
 * (there is probably more to take at once). *db_failed on a failure. */
int sked__wk_claim_some(sked_worker *w, int *db_failed);
/* After a failed claim: the tasks this node holds without a job here
 * (claimed all the same, the reply lost) are given back. */
int sked__wk_resolve_unknown_claims(sked_worker *w);
int sked__wk_lanes_start(sked_worker *w);
void sked__wk_lanes_stop(sked_worker *w);

/* ---- worker/parents.c: a claimed task's parents ---- */
/* The parents of a claimed task and their results (parents.c): read
 * by the claiming thread, eight children a statement over the tasks of
 * a claim batch that had parents only, before the pool sees the jobs. */
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

/* ---- worker/progress.c: what handlers report (docs/handlers.md,
 * "Progress"), kept in memory and stored with the lease renewal ---- */
/* j's latest report: n bytes (1 to SKED_PROGRESS_MAX of UTF-8 without
 * NUL) copied; SKED_EINVAL with why (may be NULL) when refused, the
 * previous report standing. */
int sked__wk_progress_report(sked_job *j, const char *s, size_t n, char *why,
                             size_t whylen);
/* After a renewal: store the reports made since the last one, and what
 * the report files of the programs running say, on h (the heartbeat's
 * connection): one statement per task whose report changed, none when
 * nothing did. */
void sked__wk_progress_store(sked_worker *w, sked *h);

/* ---- worker/pipe_mux.c: pipe: handlers, their processes shared by the
 * pool threads (w->sh.pipes); *mine is the calling thread's own client
 * state, freed with sked__wk_pipes_free when the thread ends ---- */
typedef struct sked_pipe sked_pipe;
void sked__wk_run_pipe(sked_job *j, const handler *x, sked_pipe **pipes);
void sked__wk_pipes_free(sked_pipe *pipes);

/* ---- worker/curl.c: a pool thread's HTTP client ---- */
typedef struct sked_http sked_http;
void sked__wk_run_http(sked_job *j, const handler *x, sked_http **http);
void sked__wk_http_free(sked_http *http);
int sked__wk_http_init(void); /* SKED_EUNSUPPORTED: built without libcurl */

/* ---- the threads (pool.c, heartbeat.c, watchdog.c, finish.c) ---- */
/* pool.c: remove the attempt files ($TMPDIR/sked-parents-PID-*,
 * sked-result-PID-*, sked-progress-PID-*) this user's workers left when they died (kill -9):
 * those of a PID that no longer runs. Once, at the start of a run with
 * program handlers. */
void sked__wk_sweep_temp(void);
void *sked__wk_pool_main(void *arg);
void *sked__wk_heartbeat_main(void *arg);
void *sked__wk_watchdog_main(void *arg);
void *sked__wk_finisher_main(void *arg);
void *sked__wk_pruner_main(void *arg);
/* The loop records outcomes on h (the finisher has no connection): up
 * to FINISH_MAX in one transaction; how many. */
int sked__wk_finish_on(sked_worker *w, sked *h, int *db_failed);

#endif /* SKED_WORKER_WORKER_H */
