/*
 * worker/jobs.c — what every worker thread shares: the clock, the
 * doorbell, a job's life between its lists, the handler table, the
 * lease timing rules, and the numbers kept for /metrics.
 *
 * Layer: the bottom of the worker (worker.h); the loop, the pool, the
 * renewal and the finisher all call down into it.
 */
#include "worker/worker.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proc/exec.h"
#include "proc/guard.h"
#include "model/lease.h"
#include "util/log.h"

/* ---- small helpers ---- */

void
sked__wk_ring(sked_worker *w)
{
	uint64_t one = 1;
	ssize_t r = write(w->wake_fd, &one, sizeof one);
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
	sked__wk_parents_free(j->parents);
	if (j->cancel_fd >= 0)
		close(j->cancel_fd);
	free(j);
}
/* The one place a job changes lists and counts (w->sh.mu held). A job is
 * in w->sh.all from its claim until its outcome is recorded (what the node
 * really holds), in w->sh.held while it takes a slot (queued or running),
 * in the pool's queue until a thread takes it, then in the done queue
 * until the finisher records it. */
void
sked__wk_move(sked_worker *w, sked_job *j, int to)
{
	switch (to) {
	case JOB_QUEUED: /* claimed: takes a slot, waits for a thread */
		j->anext = w->sh.all;
		if (w->sh.all)
			w->sh.all->aprev = j;
		w->sh.all = j;
		j->hnext = w->sh.held;
		if (w->sh.held)
			w->sh.held->hprev = j;
		w->sh.held = j;
		w->sh.nheld++;
		if (j->qi >= 0)
			w->queues[j->qi].held++;
		w->sh.counters.claimed++;
		if (w->sh.jobs_tail)
			w->sh.jobs_tail->next = j;
		else
			w->sh.jobs_head = j;
		w->sh.jobs_tail = j;
		break;
	case JOB_RUNNING: /* a pool thread took the head of the queue */
		w->sh.nstarted++;
		w->sh.jobs_head = j->next;
		if (!w->sh.jobs_head)
			w->sh.jobs_tail = NULL;
		j->next = NULL;
		break;
	case JOB_DONE: /* its handler returned: the slot is free, the outcome
	                  is the finisher's */
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
		if (w->sh.done_tail)
			w->sh.done_tail->next = j;
		else
			w->sh.done_head = j;
		w->sh.done_tail = j;
		j->done_ms = sked__mono_ms();
		w->sh.nunrecorded++;
		w->sh.ndone++;
		break;
	case JOB_RECORDED: /* in the database: the node holds it no more */
		if (j->aprev)
			j->aprev->anext = j->anext;
		else if (w->sh.all == j)
			w->sh.all = j->anext;
		if (j->anext)
			j->anext->aprev = j->aprev;
		j->anext = j->aprev = NULL;
		w->sh.nunrecorded--;
		break;
	}
	j->state = to;
	/* a slot or a result's share of capacity came free: lanes may claim
	 * (while they do: outside a backlog they are not woken per task) */
	if (w->lane.n && w->sh.lanes_go &&
	    (to == JOB_DONE || to == JOB_RECORDED))
		pthread_cond_broadcast(&w->sh.cv_lane);
}
void
sked__wk_job_cancel(sked_job *j, int why)
{
	int none = CANCEL_NONE;
	if (atomic_compare_exchange_strong(&j->cancel, &none, why)) {
		uint64_t one = 1;
		ssize_t r = write(j->cancel_fd, &one, sizeof one);
		(void)r;
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
/* Whether this node has a job for (id, attempt) between its claim and the
 * record of its outcome (w->sh.mu held). */
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
