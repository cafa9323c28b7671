/*
 * worker/jobs.c — what every worker thread shares: the doorbell, a
 * job's life between its lists (sked__wk_move and its table of legal
 * moves, unit/test_jobs), the handler table, the lease timing rules, and
 * the numbers kept for /metrics.
 *
 * Layer: the bottom of the worker (worker.h); the loop, the pool, the
 * renewal and the finisher all call down into it.
 */
#include "worker/worker.h"

#include <assert.h>
#include <errno.h>
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

#include "proc/exec.h"
#include "proc/guard.h"
#include "model/lease.h"
#include "util/log.h"

/* ---- small helpers ---- */

/* The loop's doorbell rings once until the loop has drained it: a
 * thread that finds it rung has nothing to add, because the loop drains
 * the eventfd, then clears w->rung, then looks at the shared state
 * (worker.c: wait_for_work), and every caller changed that state before
 * it rang. Before, every ended task wrote the eventfd. */
void
sked__wk_ring(sked_worker *w)
{
	if (!atomic_exchange(&w->rung, 1))
		sked__wk_ring_fd(w->wake_fd);
}
/* The fd is stored before cancel is read, and sked__wk_job_cancel sets
 * cancel before it reads the fd (both sequentially consistent): either
 * the canceller writes the new fd, or the caller, which looks at cancel
 * after this, sees the cancel and does not start the handler. */
int
sked__wk_job_arm(sked_job *j)
{
	if (atomic_load(&j->cancel_fd) >= 0)
		return SKED_OK;
	int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fd < 0)
		return SKED_EIO;
	atomic_store(&j->cancel_fd, fd);
	return SKED_OK;
}
void
sked__wk_ring_fd(int fd)
{
	uint64_t one = 1;
	ssize_t r = write(fd, &one, sizeof one);
	(void)r; /* a full counter already rings */
}
void
sked__wk_drain_fd(int fd)
{
	uint64_t v;
	ssize_t r = read(fd, &v, sizeof v);
	(void)r;
}
void
sked__wk_job_free(sked_job *j)
{
	if (!j)
		return;
	sked__claimed_clear(&j->t);
	free(j->error);
	free(j->output);
	free(j->result);
	free(atomic_load(&j->progress_new));
	free(j->progress_file);
	free(j->progress_read);
	sked__wk_parents_free(j->parents);
	int fd = atomic_load(&j->cancel_fd);
	if (fd >= 0)
		close(fd);
	free(j);
}
/* ---- the job lists ---- */

static const char *const state_names[JOB_NSTATES] = {
        "new", "queued", "running", "done", "recording", "recorded"};

/* The legal moves: legal[from] has the bit of every state it may move
 * to (worker.h, "Job states"). */
static const unsigned legal[JOB_NSTATES] = {
        [JOB_NEW] = 1u << JOB_QUEUED,
        [JOB_QUEUED] = 1u << JOB_RUNNING | 1u << JOB_DONE,
        [JOB_RUNNING] = 1u << JOB_DONE,
        [JOB_DONE] = 1u << JOB_RECORDING,
        [JOB_RECORDING] = 1u << JOB_DONE | 1u << JOB_RECORDED,
        [JOB_RECORDED] = 0,
};

int
sked__wk_move_legal(int from, int to)
{
	return from >= 0 && from < JOB_NSTATES && to >= 0 && to < JOB_NSTATES &&
	       (legal[from] >> to & 1u);
}

const char *
sked__wk_state_name(int state)
{
	return state >= 0 && state < JOB_NSTATES ? state_names[state] : "?";
}

/* Take j out of the singly linked queue head..tail (the pool's queue or
 * the done queue), wherever it is in it; 0 when it is not there. Jobs
 * leave from the head but for one given back while held ahead, which is
 * among the first. */
static int
unqueue(sked_job **head, sked_job **tail, sked_job *j)
{
	sked_job *prev = NULL;
	for (sked_job *q = *head; q != j; q = q->next) {
		if (!q)
			return 0;
		prev = q;
	}
	if (prev)
		prev->next = j->next;
	else
		*head = j->next;
	if (*tail == j)
		*tail = prev;
	j->next = NULL;
	return 1;
}

static void
unhold(sked_worker *w, sked_job *j)
{
	if (j->hprev)
		j->hprev->hnext = j->hnext;
	else
		w->sh.held = j->hnext;
	if (j->hnext)
		j->hnext->hprev = j->hprev;
	j->hnext = j->hprev = NULL;
	w->sh.nheld--;
	if (j->qi >= 0)
		w->queues[j->qi].held--;
}

/* The one place a job changes lists and counts (w->sh.mu held). A job is
 * in w->sh.all from its claim until its outcome is recorded (what the
 * node really holds), in w->sh.held while it takes a slot (queued or
 * running), in the pool's queue until a thread takes it, then in the
 * done queue until whoever records it (the finisher, or a claim that
 * carries outcomes) takes it. */
int
sked__wk_move_try(sked_worker *w, sked_job *j, int to)
{
	wk_shared *s = &w->sh;
	int from = j->state;
	if (!sked__wk_move_legal(from, to))
		return -1;
	/* where it must be to leave: checked before anything changes */
	if (from == JOB_QUEUED && !unqueue(&s->jobs_head, &s->jobs_tail, j))
		return -1;
	if (from == JOB_DONE && !unqueue(&s->done_head, &s->done_tail, j))
		return -1;
	switch (to) {
	case JOB_QUEUED: /* claimed: takes a slot, waits for a thread */
		j->anext = s->all;
		j->aprev = NULL;
		if (s->all)
			s->all->aprev = j;
		s->all = j;
		j->hnext = s->held;
		j->hprev = NULL;
		if (s->held)
			s->held->hprev = j;
		s->held = j;
		s->nheld++;
		if (j->qi >= 0)
			w->queues[j->qi].held++;
		s->counters.claimed++;
		j->next = NULL;
		if (s->jobs_tail)
			s->jobs_tail->next = j;
		else
			s->jobs_head = j;
		s->jobs_tail = j;
		break;
	case JOB_RUNNING: /* a pool thread took it from the queue */
		s->nstarted++;
		break;
	case JOB_DONE:
		if (from == JOB_RECORDING) {
			/* not recorded: back to the head of the done queue
			 * (the caller puts a list back last job first) */
			j->next = s->done_head;
			s->done_head = j;
			if (!s->done_tail)
				s->done_tail = j;
			s->ndone++;
			break;
		}
		/* its handler returned, or it never started (given back
		 * while held ahead): the slot is free, the outcome is for
		 * the finisher */
		unhold(w, j);
		if (s->done_tail)
			s->done_tail->next = j;
		else
			s->done_head = j;
		s->done_tail = j;
		j->done_ms = sked__mono_ms();
		s->nunrecorded++;
		s->ndone++;
		break;
	case JOB_RECORDING: /* taken from the done queue to be recorded */
		s->ndone--;
		break;
	case JOB_RECORDED: /* in the database: the node holds it no more */
		if (j->aprev)
			j->aprev->anext = j->anext;
		else
			s->all = j->anext;
		if (j->anext)
			j->anext->aprev = j->aprev;
		j->anext = j->aprev = NULL;
		s->nunrecorded--;
		break;
	}
	j->state = to;
	/* a slot or a result's share of capacity came free: lanes may claim
	 * (while they do: outside a backlog they are not woken per task) */
	if (w->lane.n && s->lanes_go &&
	    ((to == JOB_DONE && from != JOB_RECORDING) || to == JOB_RECORDED))
		pthread_cond_broadcast(&s->cv_lane);
	return 0;
}

void
sked__wk_move(sked_worker *w, sked_job *j, int to)
{
	if (sked__wk_move_try(w, j, to) == 0)
		return;
	/* a bug: the lists are left as they were */
	sked__log(SKED_LOG_ERROR,
	          "bug: task %lld attempt %d cannot move from %s to %s",
	          (long long)j->t.id, j->t.attempt,
	          sked__wk_state_name(j->state), sked__wk_state_name(to));
	assert(!"illegal move of a job between the worker's lists");
}

void
sked__wk_job_cancel(sked_job *j, int why)
{
	int none = CANCEL_NONE;
	if (atomic_compare_exchange_strong(&j->cancel, &none, why)) {
		int fd = atomic_load(&j->cancel_fd);
		if (fd >= 0) { /* none: the handler reads cancel */
			uint64_t one = 1;
			ssize_t r = write(fd, &one, sizeof one);
			(void)r;
		}
	}
}
/* ---- the pool ---- */

const handler *
sked__wk_find_handler(const sked_worker *w, const char *kind)
{
	const handler *any = NULL;
	for (int i = 0; i < w->nhandlers; i++) {
		if (strcmp(w->handlers[i].kind, kind) == 0)
			return &w->handlers[i];
		if (strcmp(w->handlers[i].kind, "*") == 0)
			any = &w->handlers[i];
	}
	/* a webhook delivery is never run by the catch-all: it would end
	 * as delivered without a request (hooks.c) */
	if (strcmp(kind, "sked.hook") == 0)
		return NULL;
	return any;
}
/* ---- operations: numbers for sked_worker_get_metrics ---- */

void
sked__wk_hist_add(sked_hist *hg, int64_t ms)
{
	double s = (double)ms / 1000.0;
	int i = 0;
	while (i < SKED_HIST_BUCKETS && s > sked_hist_bound(i))
		i++;
	hg->bucket[i]++;
	hg->count++;
	hg->sum_s += s;
}
void
sked__wk_note_handler(sked_worker *w, const sked_job *j, int64_t ms)
{
	handler *x = (handler *)sked__wk_find_handler(w, j->t.kind);
	if (x) /* w->sh.mu held */
		sked__wk_hist_add(&x->m.handler, ms);
}
void
sked__wk_note_outcome(sked_worker *w, const sked_job *j, const sked_outcome *o)
{
	handler *x = (handler *)sked__wk_find_handler(w, j->t.kind);
	if (!x) /* w->sh.mu held */
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
void
sked__wk_note(sked_worker *w, int64_t *count, sked_hist *hg, int64_t ms)
{
	pthread_mutex_lock(&w->sh.mu);
	if (count)
		(*count)++;
	if (hg)
		sked__wk_hist_add(hg, ms);
	if (hg == &w->sh.claim_hist) /* the finisher's patience (finish.c) */
		w->sh.claim_last_ms = ms;
	pthread_mutex_unlock(&w->sh.mu);
}
/* How long before the lease runs out a worker stops its handlers when it
 * could not renew: a fifth of the lease, at least half a second. */
int64_t
sked__wk_safety_ms(const sked_worker *w)
{
	int64_t s = w->o.lease_ms / 5;
	return s < 500 ? 500 : s;
}
/* ---- the heartbeat ---- */

int64_t
sked__wk_beat_interval(const sked_worker *w)
{
	return w->o.lease_ms / 3;
}
/* When the lease guard kills a program whose lease was last known good at
 * basis: after the watchdog's own stop (lease - safety, then SIGKILL
 * within safety / 2), before the lease itself can end. */
int64_t
sked__wk_guard_deadline(const sked_worker *w, int64_t basis)
{
	return basis + w->o.lease_ms - sked__wk_safety_ms(w) / 4;
}
/* When the watchdog stops a handler whose lease was last known good at
 * basis: a safety margin before the lease can end. */
int64_t
sked__wk_stop_at(const sked_worker *w, int64_t basis)
{
	return basis + w->o.lease_ms - sked__wk_safety_ms(w);
}
int64_t
sked__wk_lease_basis(const sked_job *j)
{
	return j->leased > j->renewed ? j->leased : j->renewed;
}
/* Open h's connection again, counted per connection kind for `sked
 * nodes` and the metrics. */
int
sked__wk_reconnect(sked_worker *w, sked *h, int which)
{
	int rc = sked__reconnect(h);
	if (rc != SKED_OK)
		sked__log(SKED_LOG_DEBUG, "reconnect failed: %s",
		          sked_errmsg(h));
	pthread_mutex_lock(&w->sh.mu);
	if (rc == SKED_OK)
		w->sh.reconnects[which]++;
	else
		w->sh.reconnect_failures[which]++;
	pthread_mutex_unlock(&w->sh.mu);
	return rc;
}

/* Whether this node has a job for (id, attempt) between its claim and the
 * record of its outcome (w->sh.mu held). */
int
sked__wk_holds_locked(const sked_worker *w, int64_t id, int attempt)
{
	for (const sked_job *j = w->sh.all; j; j = j->anext)
		if (j->t.id == id && j->t.attempt == attempt)
			return 1;
	return 0;
}
/* Give back, on connection h, the tasks of (ids, att) that the database
 * says this node holds but that no job here runs: claims that committed
 * while their reply was lost. They never reached a handler, so their
 * attempt is returned and no run is recorded. The caller knows that no
 * claim whose tasks could be among them is still under way. */
int
sked__wk_give_back_strays(sked_worker *w, sked *h, const int64_t *ids,
                          const int *att, int n)
{
	sked_outcome *o = n ? calloc((size_t)n, sizeof *o) : NULL;
	if (n && !o)
		return SKED_ENOMEM;
	int k = 0;
	pthread_mutex_lock(&w->sh.mu);
	for (int i = 0; i < n; i++) {
		if (sked__wk_holds_locked(w, ids[i], att[i]))
			continue;
		o[k++] = (sked_outcome){.id = ids[i],
		                        .attempt = att[i],
		                        .what = SKED_FIN_UNSTARTED,
		                        .exit_code = -1};
	}
	pthread_mutex_unlock(&w->sh.mu);
	int rc = k ? sked__finish(h, w->node_id, o, k) : SKED_OK;
	for (int i = 0; rc == SKED_OK && i < k; i++) {
		if (!o[i].applied)
			continue;
		sked__log(SKED_LOG_WARN,
		          "task %lld attempt %d was claimed for this node but "
		          "never reached it (the claim's reply was lost): "
		          "given back",
		          (long long)o[i].id, o[i].attempt);
		pthread_mutex_lock(&w->sh.mu);
		w->sh.counters.released++;
		pthread_mutex_unlock(&w->sh.mu);
	}
	if (rc != SKED_OK)
		sked__log(SKED_LOG_WARN,
		          "cannot give back %d stray task(s) yet: %s", k,
		          sked_errmsg(h));
	free(o);
	return rc;
}

void
sked__wk_deadline(struct timespec *until, int64_t ms)
{
	clock_gettime(CLOCK_REALTIME, until);
	until->tv_sec += ms / 1000;
	until->tv_nsec += (ms % 1000) * 1000000;
	if (until->tv_nsec >= 1000000000) {
		until->tv_sec++;
		until->tv_nsec -= 1000000000;
	}
}

void
sked__wk_side_sleep(sked_worker *w, int64_t ms, unsigned long *seen)
{
	struct timespec until;
	sked__wk_deadline(&until, ms);
	pthread_mutex_lock(&w->sh.side_mu);
	while (w->sh.side_gen == *seen && !atomic_load(&w->sh.side_exit) &&
	       pthread_cond_timedwait(&w->sh.side_cv, &w->sh.side_mu, &until) ==
	               0)
		;
	*seen = w->sh.side_gen;
	pthread_mutex_unlock(&w->sh.side_mu);
}

void
sked__wk_side_kick(sked_worker *w)
{
	pthread_mutex_lock(&w->sh.side_mu);
	w->sh.side_gen++;
	pthread_cond_broadcast(&w->sh.side_cv);
	pthread_mutex_unlock(&w->sh.side_mu);
}
