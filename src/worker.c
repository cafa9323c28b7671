/*
 * worker.c — the worker runtime: claim, run, finish, renew, take back.
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
 * w->mu guards the job queue, the done queue, the running list, slot
 * counts and counters. It is never held across SQL or a handler. Lock
 * order: w->mu only (the exec registry lock is never taken under it).
 *
 * Job states (w->mu): queued -> running -> done -> (finished in the db)
 * and the cancel reasons that may be set on a running job: shutdown (give
 * the task back), lost (no longer held: fail it, which the database then
 * records as late).
 */
#include "internal.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "exec.h"
#include "guard.h"
#include "lease.h"
#include "sched.h"
#include "util/ident.h"
#include "util/log.h"

enum { CANCEL_NONE = 0, CANCEL_SHUTDOWN, CANCEL_LOST, CANCEL_NOLEASE };

struct sked_job {
	sked_worker *w;
	sked_claimed t;
	int qi;         /* index in w->queues, or -1 */
	int64_t since;  /* monotonic ms when dispatched */
	int64_t leased; /* monotonic ms when its claim was sent: the lease the
	                   database granted runs from no earlier than this */
	int cancel_fd;  /* eventfd: readable = stop the handler */
	atomic_int cancel;
	atomic_int started; /* a pool thread began running its handler */
	int slot; /* w->mu: its pool thread's lease guard slot, or -1 */
	/* the result, set by the pool thread */
	int ok;
	int exit_code;
	char *error;
	char *output;
	struct sked_job *next;          /* in the job queue, done queue */
	struct sked_job *rnext, *rprev; /* in the running list */
	struct sked_job *anext, *aprev; /* in w->all, claim to record */
};

typedef struct handler {
	char kind[SKED_MAX_NAME + 1];
	sked_handler_fn fn;
	void *ud;
	char **argv;
	int64_t timeout_ms;
	sked_worker_kind_metrics m; /* w->mu: sked_worker_get_metrics */
} handler;

typedef struct wqueue {
	char name[SKED_MAX_NAME + 1];
	int max;     /* slots this queue may use */
	int running; /* w->mu */
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
	sked_job *running; /* list of jobs handed to the pool */
	sked_job *all;     /* every job from its claim until its outcome is
	                      recorded: what this node really holds */
	int nrunning;      /* jobs queued or running: slots in use */
	int nunrecorded;   /* jobs done whose outcome is not recorded */
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

	sked_guard *guard;     /* program handlers' deadlines; or NULL */
	atomic_int pool_slots; /* hands each pool thread its guard slot */
	/* operations (sked_worker_get_metrics): w->mu guards these */
	sked_hist claim_hist;
	int64_t claim_errors, renewals, renewal_errors, finish_errors;
	atomic_llong loop_ok_ms, fin_ok_ms; /* monotonic ms of progress */
	atomic_int run_started;
};

/* ---- small helpers ---- */

static int64_t
mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
ring(sked_worker *w)
{
	uint64_t one = 1;
	ssize_t r = write(w->wake_fd, &one, sizeof one);
	(void)r; /* a full counter already rings */
}

static void
drain_fd(int fd)
{
	uint64_t v;
	ssize_t r = read(fd, &v, sizeof v);
	(void)r;
}

static void
job_free(sked_job *j)
{
	if (!j)
		return;
	free(j->t.queue);
	free(j->t.kind);
	free(j->t.payload);
	free(j->error);
	free(j->output);
	if (j->cancel_fd >= 0)
		close(j->cancel_fd);
	free(j);
}

/* Out of w->all, once its outcome is recorded (w->mu held). */
static void
all_unlink_locked(sked_worker *w, sked_job *j)
{
	if (j->aprev)
		j->aprev->anext = j->anext;
	else if (w->all == j)
		w->all = j->anext;
	if (j->anext)
		j->anext->aprev = j->aprev;
	j->anext = j->aprev = NULL;
}

static void
job_cancel(sked_job *j, int why)
{
	int none = CANCEL_NONE;
	if (atomic_compare_exchange_strong(&j->cancel, &none, why)) {
		uint64_t one = 1;
		ssize_t r = write(j->cancel_fd, &one, sizeof one);
		(void)r;
	}
}

/* ---- the public job view ---- */

SKED_API int64_t
sked_job_id(const sked_job *j)
{
	return j->t.id;
}

SKED_API const char *
sked_job_kind(const sked_job *j)
{
	return j->t.kind;
}

SKED_API const char *
sked_job_queue(const sked_job *j)
{
	return j->t.queue;
}

SKED_API const char *
sked_job_payload(const sked_job *j, size_t *len)
{
	if (len)
		*len = j->t.payload_len;
	return j->t.payload ? j->t.payload : "";
}

SKED_API int
sked_job_attempt(const sked_job *j)
{
	return j->t.attempt;
}

SKED_API int
sked_job_max_attempts(const sked_job *j)
{
	return j->t.max_attempts;
}

SKED_API int
sked_job_cancelled(const sked_job *j)
{
	return atomic_load(&((sked_job *)j)->cancel) != CANCEL_NONE;
}

SKED_API void
sked_job_set_error(sked_job *j, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	free(j->error);
	j->error = strdup(buf);
}

/* ---- construction ---- */

static int
parse_queues(sked_worker *w, const char *spec)
{
	/* "Q[:N],…" */
	const char *s = spec;
	while (*s) {
		const char *end = strchr(s, ',');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		char item[SKED_MAX_NAME + 16];
		if (len == 0 || len >= SKED_MAX_NAME + 8)
			return sked__fail(w->h, SKED_EINVAL,
			                  "queues '%.100s': empty or too long "
			                  "entry",
			                  spec);
		memcpy(item, s, len);
		item[len] = '\0';
		int max = 0;
		char *colon = strchr(item, ':');
		if (colon) {
			*colon = '\0';
			char *e;
			long v = strtol(colon + 1, &e, 10);
			if (*e || v < 1 || v > 100000)
				return sked__fail(w->h, SKED_EINVAL,
				                  "queues: '%s' is not a slot "
				                  "count (want Q:N, N >= 1)",
				                  colon + 1);
			max = (int)v;
		}
		if (!sked__name_valid(item))
			return sked__fail(
			        w->h, SKED_EINVAL,
			        "queues: '%.64s' is not a valid queue "
			        "name",
			        item);
		wqueue *q = realloc(w->queues,
		                    sizeof *q * (size_t)(w->nqueues + 1));
		if (!q)
			return sked__fail(w->h, SKED_ENOMEM, "out of memory");
		w->queues = q;
		memset(&q[w->nqueues], 0, sizeof *q);
		memcpy(q[w->nqueues].name, item, strlen(item) + 1);
		q[w->nqueues].max = max;
		w->nqueues++;
		if (!end)
			break;
		s = end + 1;
	}
	return SKED_OK;
}

SKED_API int
sked_worker_new(sked *h, const sked_worker_options *opts, sked_worker **out)
{
	if (!h || !out)
		return SKED_EINVAL;
	*out = NULL;
	if (h->borrowed)
		return sked__fail(h, SKED_EINVAL,
		                  "a worker needs a connection of its own, not "
		                  "the application's");
	sked_worker *w = calloc(1, sizeof *w);
	if (!w)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	w->h = h;
	w->wake_fd = -1;
	if (opts)
		w->o = *opts;
	w->o.node_id = NULL;
	w->o.queues = NULL;
	if (w->o.concurrency <= 0)
		w->o.concurrency = 4;
	if (w->o.lease_ms <= 0)
		w->o.lease_ms = 30000;
	if (w->o.poll_ms <= 0)
		w->o.poll_ms = 1000;
	if (w->o.grace_ms <= 0)
		w->o.grace_ms = 30000;
	if (w->o.retry_base_ms <= 0)
		w->o.retry_base_ms = 1000;
	if (w->o.retry_max_ms <= 0)
		w->o.retry_max_ms = 3600 * 1000;
	int rc = SKED_OK;
	if (w->o.prefetch < 0 || w->o.prefetch > 10000)
		rc = sked__fail(h, SKED_EINVAL,
		                "prefetch %d is out of range "
		                "0-10000",
		                w->o.prefetch);
	else if (w->o.concurrency > 1024)
		rc = sked__fail(h, SKED_EINVAL,
		                "concurrency %d is out of range 1-1024",
		                w->o.concurrency);
	else if (w->o.lease_ms < 1000)
		rc = sked__fail(h, SKED_EINVAL,
		                "a lease shorter than 1s cannot be renewed "
		                "safely");
	if (rc == SKED_OK && opts && opts->node_id) {
		if (!sked__name_valid(opts->node_id))
			rc = sked__fail(h, SKED_EINVAL,
			                "node id '%.64s' is not a valid name",
			                opts->node_id);
		else
			snprintf(w->node_id, sizeof w->node_id, "%s",
			         opts->node_id);
	} else if (rc == SKED_OK) {
		char host[64] = "host";
		gethostname(host, sizeof host - 1);
		for (char *c = host; *c; c++) /* keep it a valid name */
			if (!strchr("abcdefghijklmnopqrstuvwxyz"
			            "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-",
			            *c))
				*c = '-';
		unsigned r = (unsigned)getpid() ^ (unsigned)mono_ms();
		snprintf(w->node_id, sizeof w->node_id, "%s-%d-%04x", host,
		         (int)getpid(), r & 0xffff);
	}
	if (rc == SKED_OK && opts && opts->queues && *opts->queues)
		rc = parse_queues(w, opts->queues);
	if (rc == SKED_OK) {
		w->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (w->wake_fd < 0)
			rc = sked__fail(h, SKED_EIO, "eventfd: %s",
			                strerror(errno));
	}
	if (rc != SKED_OK) {
		sked_worker_free(w);
		return rc;
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	pthread_cond_init(&w->cv_done, NULL);
	w->rng = (unsigned)getpid() * 2654435761u ^ (unsigned)mono_ms();
	*out = w;
	return SKED_OK;
}

SKED_API void
sked_worker_free(sked_worker *w)
{
	if (!w)
		return;
	for (int i = 0; i < w->nhandlers; i++) {
		if (w->handlers[i].argv) {
			for (char **a = w->handlers[i].argv; *a; a++)
				free(*a);
			free(w->handlers[i].argv);
		}
	}
	free(w->handlers);
	free(w->queues);
	free(w->stray_ids);
	free(w->stray_att);
	sked__guard_stop(w->guard);
	if (w->wake_fd >= 0) {
		close(w->wake_fd);
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->cv);
		pthread_cond_destroy(&w->cv_done);
	}
	free(w);
}

static handler *
add_handler(sked_worker *w, const char *kind)
{
	if (!kind || !sked__name_valid(kind)) {
		sked__fail(w->h, SKED_EINVAL,
		           "kind '%.64s' is not a valid name",
		           kind ? kind : "");
		return NULL;
	}
	for (int i = 0; i < w->nhandlers; i++)
		if (strcmp(w->handlers[i].kind, kind) == 0) {
			sked__fail(w->h, SKED_EINVAL,
			           "kind '%s' has two handlers", kind);
			return NULL;
		}
	handler *v =
	        realloc(w->handlers, sizeof *v * (size_t)(w->nhandlers + 1));
	if (!v) {
		sked__fail(w->h, SKED_ENOMEM, "out of memory");
		return NULL;
	}
	w->handlers = v;
	handler *x = &v[w->nhandlers++];
	memset(x, 0, sizeof *x);
	snprintf(x->kind, sizeof x->kind, "%s", kind);
	return x;
}

SKED_API int
sked_worker_handle(sked_worker *w, const char *kind, sked_handler_fn fn,
                   void *userdata)
{
	if (!w || !fn)
		return SKED_EINVAL;
	handler *x = add_handler(w, kind);
	if (!x)
		return SKED_EINVAL;
	x->fn = fn;
	x->ud = userdata;
	return SKED_OK;
}

SKED_API int
sked_worker_handle_program(sked_worker *w, const char *kind,
                           const char *const *argv, int64_t timeout_ms)
{
	if (!w || !argv || !argv[0] || !*argv[0])
		return SKED_EINVAL;
	size_t n = 0;
	while (argv[n])
		n++;
	char **copy = calloc(n + 1, sizeof *copy);
	if (!copy)
		return sked__fail(w->h, SKED_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		if (!(copy[i] = strdup(argv[i]))) {
			for (size_t k = 0; k < i; k++)
				free(copy[k]);
			free(copy);
			return sked__fail(w->h, SKED_ENOMEM, "out of memory");
		}
	handler *x = add_handler(w, kind);
	if (!x) {
		for (size_t i = 0; i < n; i++)
			free(copy[i]);
		free(copy);
		return SKED_EINVAL;
	}
	x->argv = copy;
	x->timeout_ms = timeout_ms;
	return SKED_OK;
}

SKED_API void
sked_worker_stop(sked_worker *w, int immediate)
{
	/* async-signal-safe: an atomic and a write(2) */
	int want = immediate ? 2 : 1;
	int cur = atomic_load(&w->stop);
	while (cur < want &&
	       !atomic_compare_exchange_weak(&w->stop, &cur, want))
		;
	ring(w);
}

SKED_API void
sked_worker_get_counters(sked_worker *w, sked_worker_counters *out)
{
	pthread_mutex_lock(&w->mu);
	*out = w->counters;
	pthread_mutex_unlock(&w->mu);
}

SKED_API const char *
sked_worker_node_id(const sked_worker *w)
{
	return w->node_id;
}

/* ---- the pool ---- */

static const handler *
find_handler(const sked_worker *w, const char *kind)
{
	for (int i = 0; i < w->nhandlers; i++)
		if (strcmp(w->handlers[i].kind, kind) == 0)
			return &w->handlers[i];
	return NULL;
}

/* ---- operations: numbers for sked_worker_get_metrics ---- */

static void
hist_add(sked_hist *hg, int64_t ms)
{
	double s = (double)ms / 1000.0;
	int i = 0;
	while (i < SKED_HIST_BUCKETS && s > sked_hist_bound(i))
		i++;
	hg->bucket[i]++;
	hg->count++;
	hg->sum_s += s;
}

static void
note_handler(sked_worker *w, const sked_job *j, int64_t ms)
{
	handler *x = (handler *)find_handler(w, j->t.kind);
	if (x) /* w->mu held */
		hist_add(&x->m.handler, ms);
}

static void
note_outcome(sked_worker *w, const sked_job *j, const sked_outcome *o)
{
	handler *x = (handler *)find_handler(w, j->t.kind);
	if (!x) /* w->mu held */
		return;
	if (!o->applied)
		x->m.late++;
	else if (o->what == SKED_FIN_OK)
		x->m.succeeded++;
	else if (o->what == SKED_FIN_RELEASE)
		x->m.released++;
	else if (o->dead)
		x->m.dead++;
	else
		x->m.failed++;
}

/* count (may be NULL) one more; observe ms in hg (may be NULL) */
static void
note(sked_worker *w, int64_t *count, sked_hist *hg, int64_t ms)
{
	pthread_mutex_lock(&w->mu);
	if (count)
		(*count)++;
	if (hg)
		hist_add(hg, ms);
	pthread_mutex_unlock(&w->mu);
}

static int64_t safety_ms(const sked_worker *w);

/* When the lease guard kills a program whose lease was last known good at
 * basis: after the watchdog's own stop (lease - safety, then SIGKILL
 * within safety / 2), before the lease itself can end. */
static int64_t
guard_deadline(const sked_worker *w, int64_t basis)
{
	return basis + w->o.lease_ms - safety_ms(w) / 4;
}

static void
run_program(sked_job *j, const handler *x)
{
	sked_worker *w = j->w;
	char id[48], attempt[32], kind[SKED_MAX_NAME + 32],
	        queue[SKED_MAX_NAME + 32], node[SKED_MAX_NAME + 32];
	snprintf(id, sizeof id, "SKED_TASK_ID=%lld", (long long)j->t.id);
	snprintf(attempt, sizeof attempt, "SKED_TASK_ATTEMPT=%d", j->t.attempt);
	snprintf(kind, sizeof kind, "SKED_TASK_KIND=%s", j->t.kind);
	snprintf(queue, sizeof queue, "SKED_TASK_QUEUE=%s", j->t.queue);
	snprintf(node, sizeof node, "SKED_NODE_ID=%s", w->node_id);
	const char *env[] = {id, attempt, kind, queue, node, NULL};
	sked_exec_spec spec = {
	        .argv = (const char *const *)x->argv,
	        .env_extra = env,
	        .input = j->t.payload,
	        .input_len = j->t.payload_len,
	        .timeout_ms = x->timeout_ms ? x->timeout_ms : w->o.timeout_ms,
	        /* SIGTERM to SIGKILL: 2 s, but short enough that a handler
	         * ignoring SIGTERM is dead before a lease the watchdog gave
	         * up on can expire (short leases) */
	        .kill_grace_ms =
	                safety_ms(w) / 2 < 2000 ? safety_ms(w) / 2 : 2000,
	        .tail_max = 4096,
	        .cancel_fd = j->cancel_fd,
	        .guard = j->slot >= 0 ? w->guard : NULL,
	        .guard_slot = j->slot,
	};
	sked_exec_result res;
	int rc = sked__exec_run(&spec, &res);
	j->exit_code = res.exited ? res.exit_code : -1;
	j->ok = rc == SKED_OK && res.exited && res.exit_code == 0 &&
	        !res.timed_out && !res.cancelled;
	if (spec.guard && sked__guard_fired(spec.guard, spec.guard_slot)) {
		sked__log(SKED_LOG_ERROR,
		          "task %lld attempt %d: the lease guard killed its "
		          "handler at the lease deadline (this worker did not "
		          "renew the lease in time)",
		          (long long)j->t.id, j->t.attempt);
		j->ok = 0;
		j->error =
		        strdup("killed at its lease deadline by the lease "
		               "guard: the worker did not renew the lease in "
		               "time (frozen or stalled)");
	} else if (!j->ok)
		j->error = strdup(res.error[0] ? res.error : "failed");
	j->output = res.output;
	res.output = NULL;
	sked__exec_result_free(&res);
}

static void
run_job(sked_job *j)
{
	const handler *x = find_handler(j->w, j->t.kind);
	j->exit_code = -1;
	if (!x) {
		char buf[SKED_MAX_NAME * 2 + 64];
		snprintf(buf, sizeof buf, "no handler for kind '%s' on node %s",
		         j->t.kind, j->w->node_id);
		j->ok = 0;
		j->error = strdup(buf);
		return;
	}
	if (x->argv) {
		run_program(j, x);
		return;
	}
	int rc = x->fn(j, x->ud);
	j->ok = rc == 0;
	if (!j->ok && !j->error) {
		char buf[64];
		snprintf(buf, sizeof buf, "handler returned %d", rc);
		j->error = strdup(buf);
	}
}

static void *
pool_main(void *arg)
{
	sked_worker *w = arg;
	sigset_t all;
	sigfillset(&all); /* signals belong to the caller's thread */
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	int slot = atomic_fetch_add(&w->pool_slots, 1);
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->jobs_head && !w->pool_exit)
			pthread_cond_wait(&w->cv, &w->mu);
		if (!w->jobs_head)
			break;
		sked_job *j = w->jobs_head;
		w->jobs_head = j->next;
		if (!w->jobs_head)
			w->jobs_tail = NULL;
		j->next = NULL;
		if (w->guard) {
			/* the guard kills its program at the lease's deadline
			 * unless renewals move that on (heartbeat_main) */
			int64_t ok = atomic_load(&w->lease_ok_ms);
			j->slot = slot;
			sked__guard_deadline(
			        w->guard, slot,
			        guard_deadline(w,
			                       j->leased > ok ? j->leased : ok),
			        0);
		}
		pthread_mutex_unlock(&w->mu);

		int64_t ran = mono_ms();
		if (atomic_load(&j->cancel) == CANCEL_NONE) {
			atomic_store(&j->started, 1);
			run_job(j);
		} else {
			j->exit_code = -1; /* nothing ran */
			j->error = strdup("cancelled before it started");
		}

		pthread_mutex_lock(&w->mu);
		if (j->slot >= 0) {
			j->slot = -1;
			sked__guard_deadline(w->guard, slot, 0, 0);
		}
		note_handler(w, j, mono_ms() - ran);
		/* out of the running list, onto the done queue */
		if (j->rprev)
			j->rprev->rnext = j->rnext;
		else
			w->running = j->rnext;
		if (j->rnext)
			j->rnext->rprev = j->rprev;
		j->rnext = j->rprev = NULL;
		if (w->done_tail)
			w->done_tail->next = j;
		else
			w->done_head = j;
		w->done_tail = j;
		/* the slot is free now; the outcome is the finisher's */
		w->nrunning--;
		w->nunrecorded++;
		if (j->qi >= 0)
			w->queues[j->qi].running--;
		pthread_cond_signal(&w->cv_done);
		ring(w);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* ---- the heartbeat ---- */

static int64_t
beat_interval(const sked_worker *w)
{
	return w->o.lease_ms / 3;
}

/* How long before the lease runs out a worker stops its handlers when it
 * could not renew: a fifth of the lease, at least half a second. */
static int64_t
safety_ms(const sked_worker *w)
{
	int64_t s = w->o.lease_ms / 5;
	return s < 500 ? 500 : s;
}

/* Stop jobs the database says this node no longer holds. Only jobs
 * dispatched before the renewal began are judged: a task claimed since
 * may be missing from a list read before its claim committed. */
static void
check_held(sked_worker *w, const int64_t *ids, const int *att, int n,
           int64_t began)
{
	pthread_mutex_lock(&w->mu);
	for (sked_job *j = w->running; j; j = j->rnext) {
		if (j->since >= began)
			continue;
		int held = 0;
		for (int i = 0; i < n && !held; i++)
			held = ids[i] == j->t.id && att[i] == j->t.attempt;
		if (!held && atomic_load(&j->cancel) == CANCEL_NONE) {
			sked__log(SKED_LOG_WARN,
			          "task %lld attempt %d is no longer held by "
			          "this node (cancelled or taken over): "
			          "stopping its handler",
			          (long long)j->t.id, j->t.attempt);
			job_cancel(j, CANCEL_LOST);
			w->counters.lost++;
		}
	}
	pthread_mutex_unlock(&w->mu);
}

/* A renewal that began at began succeeded: the lease guard may let the
 * programs under way run on until the new leases' deadline. */
static void
extend_guard(sked_worker *w, int64_t began)
{
	if (!w->guard)
		return;
	pthread_mutex_lock(&w->mu);
	for (sked_job *j = w->running; j; j = j->rnext)
		if (j->slot >= 0 && j->leased <= began)
			sked__guard_deadline(w->guard, j->slot,
			                     guard_deadline(w, began), 1);
	pthread_mutex_unlock(&w->mu);
}

/* Whether this node has a job for (id, attempt) between its claim and the
 * record of its outcome (w->mu held). */
static int
holds_locked(const sked_worker *w, int64_t id, int attempt)
{
	for (const sked_job *j = w->all; j; j = j->anext)
		if (j->t.id == id && j->t.attempt == attempt)
			return 1;
	return 0;
}

/* Give back, on connection h, the tasks of (ids, att) that the database
 * says this node holds but that no job here runs: claims that committed
 * while their reply was lost. They never reached a handler, so their
 * attempt is returned and no run is recorded. The caller knows that no
 * claim whose tasks could be among them is still under way. */
static int
give_back_strays(sked_worker *w, sked *h, const int64_t *ids, const int *att,
                 int n)
{
	sked_outcome *o = n ? calloc((size_t)n, sizeof *o) : NULL;
	if (n && !o)
		return SKED_ENOMEM;
	int k = 0;
	pthread_mutex_lock(&w->mu);
	for (int i = 0; i < n; i++) {
		if (holds_locked(w, ids[i], att[i]))
			continue;
		o[k++] = (sked_outcome){.id = ids[i],
		                        .attempt = att[i],
		                        .what = SKED_FIN_UNSTARTED,
		                        .exit_code = -1};
	}
	pthread_mutex_unlock(&w->mu);
	int rc = k ? sked__finish(h, w->node_id, o, k) : SKED_OK;
	for (int i = 0; rc == SKED_OK && i < k; i++) {
		if (!o[i].applied)
			continue;
		sked__log(SKED_LOG_WARN,
		          "task %lld attempt %d was claimed for this node but "
		          "never reached it (the claim's reply was lost): "
		          "given back",
		          (long long)o[i].id, o[i].attempt);
		pthread_mutex_lock(&w->mu);
		w->counters.released++;
		pthread_mutex_unlock(&w->mu);
	}
	if (rc != SKED_OK)
		sked__log(SKED_LOG_WARN,
		          "cannot give back %d stray task(s) yet: %s", k,
		          sked_errmsg(h));
	free(o);
	return rc;
}

/* The heartbeat's check for strays: tasks held by this node with no job
 * here. A claim under way may have committed tasks that are not in w->all
 * yet, so a task is given back only when it was stray in the previous
 * round too and every claim begun before that round's list has been
 * dispatched since. */
static void
check_strays(sked_worker *w, const int64_t *ids, const int *att, int n)
{
	unsigned long long dispatched = atomic_load(&w->claims_dispatched);
	unsigned long long begun = atomic_load(&w->claims_begun);
	int64_t *cid = n ? malloc(sizeof *cid * (size_t)n) : NULL;
	int *catt = n ? malloc(sizeof *catt * (size_t)n) : NULL;
	int nc = 0;
	if (n && (!cid || !catt)) {
		free(cid);
		free(catt);
		return; /* next round */
	}
	pthread_mutex_lock(&w->mu);
	for (int i = 0; i < n; i++) {
		if (holds_locked(w, ids[i], att[i]))
			continue;
		cid[nc] = ids[i];
		catt[nc++] = att[i];
	}
	pthread_mutex_unlock(&w->mu);
	int nconf = 0;
	if (w->nstray && dispatched >= w->stray_seq) {
		/* confirmed ones move to the front of the candidates */
		for (int i = 0; i < nc; i++) {
			int seen = 0;
			for (int k = 0; k < w->nstray && !seen; k++)
				seen = w->stray_ids[k] == cid[i] &&
				       w->stray_att[k] == catt[i];
			if (!seen)
				continue;
			int64_t ti = cid[nconf];
			int ta = catt[nconf];
			cid[nconf] = cid[i];
			catt[nconf] = catt[i];
			cid[i] = ti;
			catt[i] = ta;
			nconf++;
		}
	}
	if (nconf)
		sked__ignore(give_back_strays(w, w->hb, cid, catt, nconf));
	/* the rest are the candidates of the next round */
	free(w->stray_ids);
	free(w->stray_att);
	w->nstray = nc - nconf;
	w->stray_ids = cid;
	w->stray_att = catt;
	if (nconf) {
		memmove(cid, cid + nconf, sizeof *cid * (size_t)w->nstray);
		memmove(catt, catt + nconf, sizeof *catt * (size_t)w->nstray);
	}
	w->stray_seq = begun;
}

/* Stop every handler whose lease may be about to run out: its lease was
 * last known good at the later of its claim and the last renewal that
 * succeeded (both as sent, so the database's own expiry is later still).
 * stalled_ms is how long the watchdog itself could not run: when the
 * whole worker was frozen, leases may have run out before this turn, and
 * the log says so rather than claim a stop in time. */
static void
stop_unleased(sked_worker *w, int64_t now, int64_t stalled_ms)
{
	int64_t renewed = atomic_load(&w->lease_ok_ms);
	int64_t margin = w->o.lease_ms - safety_ms(w);
	pthread_mutex_lock(&w->mu);
	int n = 0, late = 0, guarded = 0;
	for (sked_job *j = w->running; j; j = j->rnext) {
		int64_t basis = j->leased > renewed ? j->leased : renewed;
		if (now <= basis + margin)
			continue;
		if (atomic_load(&j->cancel) == CANCEL_NONE) {
			n++;
			if (now >= basis + w->o.lease_ms) {
				late++;
				guarded += j->slot >= 0 &&
				           sked__guard_fired(w->guard, j->slot);
			}
		}
		job_cancel(j, CANCEL_NOLEASE);
	}
	pthread_mutex_unlock(&w->mu);
	if (stalled_ms > safety_ms(w))
		sked__log(SKED_LOG_WARN,
		          "the worker process could not run for %lld ms "
		          "(stopped, frozen or starved)",
		          (long long)stalled_ms);
	if (n > late)
		sked__log(SKED_LOG_ERROR,
		          "leases could not be renewed in time: stopped %d "
		          "handler(s) before their leases could expire",
		          n - late);
	if (late)
		sked__log(
		        SKED_LOG_ERROR,
		        "the leases of %d task(s) may have run out while this "
		        "worker could not run: %d program handler(s) among "
		        "them had been killed at their lease deadline by the "
		        "lease guard; stopping the rest now",
		        late, guarded);
}

static void *
heartbeat_main(void *arg)
{
	sked_worker *w = arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	int64_t next = mono_ms() + beat_interval(w);
	int failing = 0;
	while (!atomic_load(&w->hb_exit)) {
		int64_t now = mono_ms();
		if (now < next) {
			int64_t d = next - now;
			struct timespec ts = {d / 1000, (d % 1000) * 1000000};
			if (d > 100)
				ts = (struct timespec){0, 100 * 1000000};
			nanosleep(&ts, NULL);
			continue;
		}
		int64_t began = mono_ms();
		int64_t *ids = NULL;
		int *att = NULL;
		int n = 0;
		int rc = sked__node_beat(w->hb, w->node_id);
		if (rc == SKED_OK)
			rc = sked__renew(w->hb, w->node_id, w->o.lease_ms, &ids,
			                 &att, &n);
		note(w, rc == SKED_OK ? &w->renewals : &w->renewal_errors, NULL,
		     0);
		if (rc == SKED_OK) {
			atomic_store(&w->lease_ok_ms, began);
			extend_guard(w, began);
			check_held(w, ids, att, n, began);
			check_strays(w, ids, att, n);
			if (failing)
				sked__log(SKED_LOG_INFO, "lease renewal works "
				                         "again");
			failing = 0;
			next = began + beat_interval(w);
		} else {
			if (!failing)
				sked__log(SKED_LOG_WARN,
				          "cannot renew leases: %s",
				          sked_errmsg(w->hb));
			failing = 1;
			if (rc == SKED_EUNAVAILABLE &&
			    sked__reconnect(w->hb) != SKED_OK)
				sked__log(SKED_LOG_DEBUG,
				          "reconnect failed: %s",
				          sked_errmsg(w->hb));
			/* try again soon, but not in a tight loop */
			next = mono_ms() + (beat_interval(w) < 1000
			                            ? beat_interval(w)
			                            : 1000);
		}
		free(ids);
		free(att);
	}
	return NULL;
}

/* The watchdog: never let a lease expire under a handler. It runs apart
 * from the heartbeat because a renewal can block (a held lock, a server
 * that stopped answering) for longer than the lease. */
static void *
watchdog_main(void *arg)
{
	sked_worker *w = arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	int64_t last = mono_ms();
	while (!atomic_load(&w->hb_exit)) {
		int64_t now = mono_ms();
		stop_unleased(w, now, now - last);
		last = now;
		struct timespec ts = {0, 50 * 1000000};
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* ---- the loop ---- */

/* How long --until-empty keeps trying a database that does not answer. */
#define UNTIL_EMPTY_GIVE_UP_MS 60000

/* Outcomes recorded in one transaction at most. */
#define FINISH_MAX 500

static int64_t
backoff_ms(sked_worker *w, int attempt)
{
	int64_t d = w->o.retry_base_ms;
	for (int i = 1; i < attempt && d < w->o.retry_max_ms; i++)
		d *= 2;
	if (d > w->o.retry_max_ms)
		d = w->o.retry_max_ms;
	/* equal jitter: half fixed, half random, so retries of tasks that
	 * failed together spread out */
	int64_t half = d / 2;
	return half + (half > 0 ? (int64_t)(rand_r(&w->rng) % (half + 1)) : 0);
}

/* Put outcomes that could not be recorded back at the head of the done
 * queue, in order, to be tried again. */
static void
requeue_done(sked_worker *w, sked_job *list)
{
	pthread_mutex_lock(&w->mu);
	sked_job *t = list;
	while (t->next)
		t = t->next;
	t->next = w->done_head;
	w->done_head = list;
	if (!w->done_tail)
		w->done_tail = t;
	pthread_mutex_unlock(&w->mu);
}

/* Finish what the pool completed: one transaction for the batch, on the
 * finisher's connection. Returns how many jobs were finished (slots
 * freed); on a database failure puts them back and sets *db_failed. */
static int
finish_done(sked_worker *w, int *db_failed)
{
	/* take at most FINISH_MAX outcomes: one transaction stays short */
	pthread_mutex_lock(&w->mu);
	sked_job *list = w->done_head, *last = NULL;
	int taken = 0;
	for (sked_job *j = list; j && taken < FINISH_MAX; j = j->next) {
		last = j;
		taken++;
	}
	if (last) {
		w->done_head = last->next;
		if (!w->done_head)
			w->done_tail = NULL;
		last->next = NULL;
	}
	pthread_mutex_unlock(&w->mu);
	if (!list)
		return 0;
	int n = 0;
	for (sked_job *j = list; j; j = j->next)
		n++;
	sked_outcome *o = calloc((size_t)n, sizeof *o);
	if (!o) {
		/* put them back; try again next turn */
		requeue_done(w, list);
		*db_failed = 1;
		return 0;
	}
	int i = 0;
	for (sked_job *j = list; j; j = j->next, i++) {
		int why = atomic_load(&j->cancel);
		o[i].id = j->t.id;
		o[i].attempt = j->t.attempt;
		o[i].max_attempts = j->t.max_attempts;
		o[i].started_ms = j->t.started_ms;
		o[i].exit_code = j->exit_code;
		o[i].output = j->output;
		if (why == CANCEL_SHUTDOWN) {
			/* stopped under way: a released attempt; never
			 * started: the attempt goes back unrecorded */
			o[i].what = atomic_load(&j->started)
			                    ? SKED_FIN_RELEASE
			                    : SKED_FIN_UNSTARTED;
			o[i].error = "worker shutting down: task given back";
		} else if (j->ok && why == CANCEL_NONE) {
			o[i].what = SKED_FIN_OK;
		} else {
			o[i].what = SKED_FIN_FAIL;
			o[i].retry_delay_ms = backoff_ms(w, j->t.attempt);
			o[i].error =
			        why == CANCEL_NOLEASE
			                ? "stopped: lease could not be "
			                  "renewed"
			        : why == CANCEL_LOST
			                ? "stopped: task no longer held by "
			                  "this node"
			                : j->error;
		}
	}
	int rc = sked__finish(w->hf, w->node_id, o, n);
	if (rc != SKED_OK) {
		sked__log(SKED_LOG_WARN, "cannot record %d result(s) yet: %s",
		          n, sked_errmsg(w->hf));
		if (rc == SKED_EUNAVAILABLE &&
		    sked__reconnect(w->hf) != SKED_OK)
			sked__log(SKED_LOG_DEBUG, "reconnect failed: %s",
			          sked_errmsg(w->hf));
		requeue_done(w, list);
		free(o);
		*db_failed = 1;
		note(w, &w->finish_errors, NULL, 0);
		return 0;
	}
	atomic_store(&w->fin_ok_ms, mono_ms());
	pthread_mutex_lock(&w->mu);
	i = 0;
	for (sked_job *j = list; j; j = j->next, i++) {
		note_outcome(w, j, &o[i]);
		if (!o[i].applied)
			w->counters.late++;
		else if (o[i].what == SKED_FIN_OK)
			w->counters.succeeded++;
		else if (o[i].what == SKED_FIN_RELEASE ||
		         o[i].what == SKED_FIN_UNSTARTED)
			w->counters.released++;
		else if (o[i].dead)
			w->counters.dead++;
		else
			w->counters.failed++;
		w->nunrecorded--;
		all_unlink_locked(w, j);
	}
	pthread_mutex_unlock(&w->mu);
	ring(w); /* recorded results free capacity: the loop may claim */
	for (int k = 0; k < n; k++) {
		if (o[k].applied && o[k].what == SKED_FIN_FAIL)
			sked__log(o[k].dead ? SKED_LOG_WARN : SKED_LOG_INFO,
			          "task %lld attempt %d/%d failed%s: %s",
			          (long long)o[k].id, o[k].attempt,
			          o[k].max_attempts, o[k].dead ? " (dead)" : "",
			          o[k].error ? o[k].error : "");
	}
	free(o);
	while (list) {
		sked_job *next = list->next;
		job_free(list);
		list = next;
	}
	return n;
}

/* Hand claimed tasks to the pool. */
static int
dispatch(sked_worker *w, sked_claimed *c, int n, int qi, int64_t leased)
{
	int rc = SKED_OK;
	for (int i = 0; i < n; i++) {
		sked_job *j = calloc(1, sizeof *j);
		int fd = j ? eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK) : -1;
		if (!j || fd < 0) {
			/* cannot run it: give the attempt back at once */
			free(j);
			sked_outcome o = {.id = c[i].id,
			                  .attempt = c[i].attempt,
			                  .max_attempts = c[i].max_attempts,
			                  .started_ms = c[i].started_ms,
			                  .what = SKED_FIN_UNSTARTED,
			                  .exit_code = -1,
			                  .error = "worker out of resources"};
			sked__ignore(sked__finish(w->h, w->node_id, &o, 1));
			rc = SKED_ENOMEM;
			free(c[i].queue);
			free(c[i].kind);
			free(c[i].payload);
			continue;
		}
		j->w = w;
		j->t = c[i];
		j->qi = qi;
		j->cancel_fd = fd;
		j->since = mono_ms();
		j->leased = leased;
		j->slot = -1;
		pthread_mutex_lock(&w->mu);
		j->anext = w->all;
		if (w->all)
			w->all->aprev = j;
		w->all = j;
		w->counters.claimed++;
		w->nrunning++;
		if (qi >= 0)
			w->queues[qi].running++;
		j->rnext = w->running;
		if (w->running)
			w->running->rprev = j;
		w->running = j;
		if (w->jobs_tail)
			w->jobs_tail->next = j;
		else
			w->jobs_head = j;
		w->jobs_tail = j;
		pthread_cond_signal(&w->cv);
		pthread_mutex_unlock(&w->mu);
	}
	free(c);
	return rc;
}

/* Slots the loop may fill now (w->mu held): the threads plus the
 * prefetch queue. Results waiting to be recorded hold capacity too: at
 * most one slot's worth of them per thread, so a finisher that falls
 * behind slows claiming instead of letting a backlog (and huge finish
 * batches) build up. */
static int
free_slots_locked(const sked_worker *w)
{
	int cap = w->o.concurrency + w->o.prefetch;
	int by_slots = cap - w->nrunning;
	int by_backlog = cap + w->o.concurrency - w->nrunning - w->nunrecorded;
	return by_slots < by_backlog ? by_slots : by_backlog;
}

/* Claim for every queue with free slots. Returns 1 when a claim came back
 * full (there is probably more to take at once). */
static int
claim_some(sked_worker *w, int *db_failed)
{
	int full = 0;
	int nq = w->nqueues ? w->nqueues : 1;
	for (int qi = 0; qi < nq; qi++) {
		pthread_mutex_lock(&w->mu);
		int free_slots = free_slots_locked(w);
		if (w->nqueues && w->queues[qi].max > 0) {
			int qfree = w->queues[qi].max - w->queues[qi].running;
			if (qfree < free_slots)
				free_slots = qfree;
		}
		pthread_mutex_unlock(&w->mu);
		if (free_slots <= 0)
			continue;
		sked_claim_req req = {
		        .node_id = w->node_id,
		        .queue = w->nqueues ? w->queues[qi].name : NULL,
		        .limit = free_slots,
		        .lease_ms = w->o.lease_ms,
		};
		sked_claimed *c = NULL;
		int n = 0;
		int64_t sent = mono_ms();
		unsigned long long seq =
		        atomic_fetch_add(&w->claims_begun, 1) + 1;
		int rc = sked__claim(w->h, &req, &c, &n);
		note(w, rc == SKED_OK ? NULL : &w->claim_errors,
		     rc == SKED_OK ? &w->claim_hist : NULL, mono_ms() - sent);
		if (rc != SKED_OK) {
			sked__log(SKED_LOG_WARN, "claim failed: %s",
			          sked_errmsg(w->h));
			/* it may have committed all the same (a reply lost
			 * with the connection): find out before going on */
			w->claim_unknown = 1;
			atomic_store(&w->claims_dispatched, seq);
			if (rc == SKED_EUNAVAILABLE &&
			    sked__reconnect(w->h) != SKED_OK)
				sked__log(SKED_LOG_DEBUG,
				          "reconnect failed: %s",
				          sked_errmsg(w->h));
			*db_failed = 1;
			return 0;
		}
		if (n == free_slots)
			full = 1;
		(void)dispatch(w, c, n, w->nqueues ? qi : -1, sent);
		atomic_store(&w->claims_dispatched, seq);
	}
	return full;
}

/* After a claim that failed: tasks this node holds with no job here were
 * claimed by it all the same (the claim committed, its reply was lost).
 * No claim is under way (the loop is the only claimer), so every held
 * task without a job is one of those. */
static int
resolve_unknown_claims(sked_worker *w)
{
	int64_t *ids = NULL;
	int *att = NULL;
	int n = 0;
	int rc = sked__held(w->h, w->node_id, &ids, &att, &n);
	if (rc == SKED_OK)
		rc = give_back_strays(w, w->h, ids, att, n);
	else if (rc == SKED_EUNAVAILABLE)
		sked__ignore(sked__reconnect(w->h));
	free(ids);
	free(att);
	return rc;
}

static int
outstanding(sked_worker *w, int64_t *count)
{
	*count = 0;
	int nq = w->nqueues ? w->nqueues : 1;
	for (int qi = 0; qi < nq; qi++) {
		int64_t c = 0;
		int rc = sked__outstanding(
		        w->h, w->nqueues ? w->queues[qi].name : NULL, &c);
		if (rc != SKED_OK)
			return rc;
		*count += c;
	}
	return SKED_OK;
}

static void
cancel_running(sked_worker *w, int why)
{
	pthread_mutex_lock(&w->mu);
	for (sked_job *j = w->running; j; j = j->rnext)
		job_cancel(j, why);
	pthread_mutex_unlock(&w->mu);
}

/* Jobs this worker still answers for: queued, running, or done but not
 * yet recorded. */
static int
unsettled(sked_worker *w)
{
	pthread_mutex_lock(&w->mu);
	int n = w->nrunning + w->nunrecorded;
	pthread_mutex_unlock(&w->mu);
	return n;
}

static int
nrunning(sked_worker *w)
{
	pthread_mutex_lock(&w->mu);
	int n = w->nrunning;
	pthread_mutex_unlock(&w->mu);
	return n;
}

/* Sleep until rung, notified, or timeout. */
static void
wait_for_work(sked_worker *w, int64_t timeout_ms)
{
	struct pollfd fds[2] = {{.fd = w->wake_fd, .events = POLLIN}};
	int nfds = 1;
	sked_db *db = w->h->db;
	int sock = sked__db_socket(db);
	if (sock >= 0 && w->h->listen_sql) {
		fds[1] = (struct pollfd){.fd = sock, .events = POLLIN};
		nfds = 2;
	}
	int r = poll(fds, (nfds_t)nfds, (int)timeout_ms);
	if (r > 0 && (fds[0].revents & POLLIN))
		drain_fd(w->wake_fd);
	if (r > 0 && nfds == 2 && fds[1].revents)
		sked__db_drain_notify(db);
}

/* How long a partial batch may wait to grow. On a server every
 * statement costs a round trip and per-statement work, so one claim of
 * twenty beats twenty claims of one; a couple of milliseconds of waiting
 * (only while the worker is busy) buys that. */
#define LINGER_MS 2

static void
add_ms(struct timespec *ts, int64_t ms)
{
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

static void *
finisher_main(void *arg)
{
	sked_worker *w = arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	int64_t backoff = 0, give_up = 0;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->done_head && !w->fin_exit)
			pthread_cond_wait(&w->cv_done, &w->mu);
		if (!w->done_head)
			break;
		/* let a small batch grow for a moment while handlers run */
		if (!w->fin_exit && w->nrunning > 0 &&
		    w->nunrecorded < (w->o.concurrency + 1) / 2) {
			struct timespec until;
			clock_gettime(CLOCK_REALTIME, &until);
			add_ms(&until, LINGER_MS);
			while (!w->fin_exit && w->nrunning > 0 &&
			       w->nunrecorded < (w->o.concurrency + 1) / 2 &&
			       pthread_cond_timedwait(&w->cv_done, &w->mu,
			                              &until) == 0)
				;
		}
		if (w->fin_exit && !give_up)
			give_up = mono_ms() + 10000;
		pthread_mutex_unlock(&w->mu);
		int failed = 0;
		finish_done(w, &failed);
		if (failed) {
			if (give_up && mono_ms() > give_up) {
				sked__log(
				        SKED_LOG_ERROR,
				        "giving up recording results: their "
				        "leases will expire and the tasks will "
				        "run again");
				pthread_mutex_lock(&w->mu);
				break;
			}
			backoff = backoff ? backoff * 2 : 50;
			if (backoff > 2000)
				backoff = 2000;
			struct timespec ts = {backoff / 1000,
			                      (backoff % 1000) * 1000000};
			nanosleep(&ts, NULL);
		} else {
			backoff = 0;
		}
		pthread_mutex_lock(&w->mu);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static int
start_threads(sked_worker *w)
{
	int rc = sked__reopen(w->h, &w->hb);
	if (rc != SKED_OK) {
		sked__fail(w->h, rc, "cannot open the heartbeat connection: %s",
		           sked_errmsg(w->hb));
		return rc;
	}
	rc = sked__reopen(w->h, &w->hf);
	if (rc != SKED_OK) {
		sked__fail(w->h, rc,
		           "cannot open the finisher's connection: %s",
		           sked_errmsg(w->hf));
		return rc;
	}
	if (pthread_create(&w->fin_thread, NULL, finisher_main, w) != 0)
		return sked__fail(w->h, SKED_ENOMEM,
		                  "cannot start the finisher thread");
	w->fin_started = 1;
	w->threads = calloc((size_t)w->o.concurrency, sizeof *w->threads);
	if (!w->threads)
		return sked__fail(w->h, SKED_ENOMEM, "out of memory");
	for (int i = 0; i < w->o.concurrency; i++) {
		if (pthread_create(&w->threads[i], NULL, pool_main, w) != 0)
			return sked__fail(w->h, SKED_ENOMEM,
			                  "cannot start pool thread: %s",
			                  strerror(errno));
		w->nthreads++;
	}
	atomic_store(&w->lease_ok_ms, mono_ms());
	if (pthread_create(&w->hb_thread, NULL, heartbeat_main, w) != 0)
		return sked__fail(w->h, SKED_ENOMEM,
		                  "cannot start heartbeat thread");
	w->hb_started = 1;
	if (pthread_create(&w->wd_thread, NULL, watchdog_main, w) != 0)
		return sked__fail(w->h, SKED_ENOMEM,
		                  "cannot start watchdog thread");
	w->wd_started = 1;
	return SKED_OK;
}

static void
stop_threads(sked_worker *w)
{
	pthread_mutex_lock(&w->mu);
	w->pool_exit = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	for (int i = 0; i < w->nthreads; i++)
		pthread_join(w->threads[i], NULL);
	free(w->threads);
	w->threads = NULL;
	w->nthreads = 0;
	/* the pool is gone: the finisher records what is left, then ends */
	pthread_mutex_lock(&w->mu);
	w->fin_exit = 1;
	pthread_cond_signal(&w->cv_done);
	pthread_mutex_unlock(&w->mu);
	if (w->fin_started) {
		pthread_join(w->fin_thread, NULL);
		w->fin_started = 0;
	}
	sked_close(w->hf);
	w->hf = NULL;
	atomic_store(&w->hb_exit, 1);
	if (w->wd_started) {
		pthread_join(w->wd_thread, NULL);
		w->wd_started = 0;
	}
	if (w->hb_started) {
		pthread_join(w->hb_thread, NULL);
		w->hb_started = 0;
	}
	sked_close(w->hb);
	w->hb = NULL;
}

SKED_API int
sked_worker_run(sked_worker *w)
{
	if (!w)
		return SKED_EINVAL;
	sked *h = w->h;
	int rc = sked__node_register(h, w->node_id, w->o.lease_ms);
	if (rc != SKED_OK)
		return rc;
	if (h->listen_sql) {
		if (sked__qdyn(h, h->listen_sql, NULL, 0, NULL) == SKED_OK)
			h->listening = 1;
		else
			sked__log(SKED_LOG_WARN,
			          "cannot listen for new tasks (%s); polling "
			          "only",
			          sked__db_err(h->db)->msg);
	}
	/* program handlers get a deadline that holds while this process
	 * cannot run (guard.h); callbacks freeze with the worker anyway */
	int programs = 0;
	for (int i = 0; i < w->nhandlers; i++)
		programs |= w->handlers[i].argv != NULL;
	if (programs && !w->guard &&
	    sked__guard_start(w->o.concurrency, &w->guard) != SKED_OK)
		sked__log(SKED_LOG_WARN,
		          "cannot start the lease guard process: a handler of "
		          "a frozen worker could outlive its lease");
	atomic_store(&w->pool_slots, 0);
	rc = start_threads(w);
	if (rc != SKED_OK) {
		stop_threads(w);
		(void)sked__node_unregister(h, w->node_id);
		return rc;
	}
	atomic_store(&w->loop_ok_ms, mono_ms());
	atomic_store(&w->fin_ok_ms, mono_ms());
	atomic_store(&w->run_started, 1);
	sked__log(SKED_LOG_INFO,
	          "worker %s started: %d slot(s), lease %llds, strategy %s",
	          w->node_id, w->o.concurrency,
	          (long long)(w->o.lease_ms / 1000), h->strategy->name);

	int64_t next_reap = 0, grace_end = 0, first_free = 0, next_prune = 0;
	int64_t failing_since = 0;
	int gave_up = 0;
	int64_t db_backoff = 0;
	sked_sched_clock sched = {0}; /* schedules: sched.c */
	int64_t sched_in = 0;
	for (;;) {
		int db_failed = 0;
		int stop = atomic_load(&w->stop);

		if (w->claim_unknown && resolve_unknown_claims(w) == SKED_OK)
			w->claim_unknown = 0;

		if (stop) {
			int64_t now = mono_ms();
			if (!grace_end) {
				grace_end =
				        now + (stop == 2 ? 0 : w->o.grace_ms);
				sked__log(SKED_LOG_INFO,
				          "stopping: %d task(s) running",
				          nrunning(w));
				/* prefetched tasks not yet started go back now:
				 * the grace period is for tasks under way */
				pthread_mutex_lock(&w->mu);
				for (sked_job *j = w->jobs_head; j; j = j->next)
					job_cancel(j, CANCEL_SHUTDOWN);
				pthread_mutex_unlock(&w->mu);
			}
			if (stop == 2 || now >= grace_end)
				cancel_running(w, CANCEL_SHUTDOWN);
			if (unsettled(w) == 0)
				break;
			if (now > grace_end + 10000)
				break; /* the finisher says what it could not
				          record */
			wait_for_work(w, 100);
			continue;
		}

		int64_t now = mono_ms();
		if (now >= next_reap) {
			int taken = 0;
			if (sked__reap(h, &taken) != SKED_OK)
				db_failed = 1;
			int64_t every =
			        w->o.poll_ms < 1000 ? 1000 : w->o.poll_ms;
			next_reap = now + every;
		}
		/* forget nodes dead for a day (docs/operations.md) */
		if (!db_failed && now >= next_prune) {
			sked__ignore(
			        sked_nodes_prune(h, SKED_NODE_PRUNE_MS, NULL));
			next_prune = now + 60000;
		}
		/* fire due schedules (exactly once across the cluster) */
		if (!db_failed)
			sched_in = sked__sched_poll(h, &sched, now);

		/* claim at once when half the slots or more are free (or all
		 * are idle); a lone free slot waits a moment for company */
		int full = 0, linger = 0;
		pthread_mutex_lock(&w->mu);
		int busy_slots = w->nrunning;
		int free_now = free_slots_locked(w);
		pthread_mutex_unlock(&w->mu);
		if (free_now > 0 && busy_slots > 0 &&
		    free_now < (w->o.concurrency + 1) / 2) {
			if (!first_free)
				first_free = now;
			linger = now - first_free < LINGER_MS;
		}
		if (!db_failed && !linger) {
			full = claim_some(w, &db_failed);
			first_free = 0;
		}

		if (w->o.until_empty && !db_failed && unsettled(w) == 0) {
			int64_t left = 0;
			if (outstanding(w, &left) == SKED_OK && left == 0)
				break;
		}
		if (db_failed) {
			/* a worker keeps trying (it may hold running tasks);
			 * a one-shot drain gives up after a minute */
			if (!failing_since)
				failing_since = mono_ms();
			if (w->o.until_empty && unsettled(w) == 0 &&
			    mono_ms() - failing_since >
			            UNTIL_EMPTY_GIVE_UP_MS) {
				gave_up = 1;
				break;
			}
			db_backoff = db_backoff ? db_backoff * 2 : 100;
			if (db_backoff > 5000)
				db_backoff = 5000;
			wait_for_work(w, db_backoff);
			continue;
		}
		db_backoff = 0;
		failing_since = 0;
		atomic_store(&w->loop_ok_ms, mono_ms());
		pthread_mutex_lock(&w->mu);
		int more = free_slots_locked(w) > 0;
		pthread_mutex_unlock(&w->mu);
		if (full && more)
			continue;
		if (linger) {
			wait_for_work(w, LINGER_MS);
			continue;
		}
		wait_for_work(w, sched_in > 0 && sched_in < w->o.poll_ms
		                         ? sched_in
		                         : w->o.poll_ms);
	}

	atomic_store(&w->run_started, 0);
	stop_threads(w);
	sked__exec_kill_all(SIGKILL);
	sked__guard_stop(w->guard);
	w->guard = NULL;
	if (sked__node_unregister(h, w->node_id) != SKED_OK)
		sked__log(SKED_LOG_WARN, "%s", sked_errmsg(h));
	sked_worker_counters c;
	sked_worker_get_counters(w, &c);
	h->listening = 0;
	if (gave_up)
		return sked__fail(h, SKED_EUNAVAILABLE,
		                  "the database stayed unreachable for %ds; "
		                  "giving up (--until-empty)",
		                  UNTIL_EMPTY_GIVE_UP_MS / 1000);
	sked__log(SKED_LOG_INFO,
	          "worker %s stopped: %lld claimed, %lld succeeded, %lld "
	          "failed, %lld dead, %lld given back, %lld late",
	          w->node_id, (long long)c.claimed, (long long)c.succeeded,
	          (long long)c.failed, (long long)c.dead, (long long)c.released,
	          (long long)c.late);
	return SKED_OK;
}

/* ---- operations: the snapshot ---- */

static int64_t
age_of(const sked_worker *w, int64_t then, int64_t now)
{
	if (!atomic_load(&w->run_started))
		return -1;
	return now > then ? now - then : 0;
}

SKED_API int
sked_worker_get_metrics(sked_worker *w, sked_worker_metrics *out)
{
	if (!w || !out)
		return SKED_EINVAL;
	memset(out, 0, sizeof *out);
	out->kinds = w->nhandlers
	                     ? calloc((size_t)w->nhandlers, sizeof *out->kinds)
	                     : NULL;
	if (w->nhandlers && !out->kinds)
		return SKED_ENOMEM;
	int64_t now = mono_ms();
	pthread_mutex_lock(&w->mu);
	out->c = w->counters;
	out->slots = w->o.concurrency;
	out->busy = w->nrunning;
	out->unrecorded = w->nunrecorded;
	out->claim = w->claim_hist;
	out->claim_errors = w->claim_errors;
	out->renewals = w->renewals;
	out->renewal_errors = w->renewal_errors;
	out->finish_errors = w->finish_errors;
	/* the finisher is stuck only while something waits for it */
	int64_t fin = w->done_head ? atomic_load(&w->fin_ok_ms) : now;
	for (int i = 0; i < w->nhandlers; i++) {
		out->kinds[i] = w->handlers[i].m;
		snprintf(out->kinds[i].kind, sizeof out->kinds[i].kind, "%s",
		         w->handlers[i].kind);
	}
	out->nkinds = (size_t)w->nhandlers;
	pthread_mutex_unlock(&w->mu);
	out->running = atomic_load(&w->run_started);
	out->loop_age_ms = age_of(w, atomic_load(&w->loop_ok_ms), now);
	out->beat_age_ms = age_of(w, atomic_load(&w->lease_ok_ms), now);
	out->finish_age_ms = age_of(w, fin, now);
	out->lease_ms = w->o.lease_ms;
	out->poll_ms = w->o.poll_ms;
	return SKED_OK;
}

SKED_API void
sked_worker_metrics_free(sked_worker_metrics *m)
{
	if (!m)
		return;
	free(m->kinds);
	m->kinds = NULL;
	m->nkinds = 0;
}
