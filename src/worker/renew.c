/*
 * worker/renew.c — lease renewal, the check of what the node holds, and
 * the watchdog.
 *
 * Layer: the worker (worker.h), on the model (lease.h). The heartbeat
 * thread owns the lease connection w->hb: every lease/3 it beats the node
 * row, renews every lease of the node, stops handlers of tasks the node no
 * longer holds, gives back tasks it holds with no job here (strays), and
 * moves the lease guard's deadlines on. The watchdog never touches the
 * database: it stops handlers before a lease that could not be renewed can
 * run out, and says so truthfully after the worker was frozen.
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

#include "exec.h"
#include "guard.h"
#include "lease.h"
#include "util/log.h"

/* Stop jobs the database says this node no longer holds. Only jobs
 * dispatched before the renewal began are judged: a task claimed since
 * may be missing from a list read before its claim committed. */
static void
check_held(sked_worker *w, const int64_t *ids, const int *att, int n,
           int64_t began)
{
	pthread_mutex_lock(&w->mu);
	for (sked_job *j = w->held; j; j = j->hnext) {
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
			sked__wk_job_cancel(j, CANCEL_LOST);
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
	for (sked_job *j = w->held; j; j = j->hnext)
		if (j->slot >= 0 && j->leased <= began)
			sked__guard_deadline(w->guard, j->slot,
			                     sked__wk_guard_deadline(w, began),
			                     1);
	pthread_mutex_unlock(&w->mu);
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
		if (sked__wk_holds_locked(w, ids[i], att[i]))
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
		sked__ignore(
		        sked__wk_give_back_strays(w, w->hb, cid, catt, nconf));
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
	int64_t margin = w->o.lease_ms - sked__wk_safety_ms(w);
	pthread_mutex_lock(&w->mu);
	int n = 0, late = 0, guarded = 0;
	for (sked_job *j = w->held; j; j = j->hnext) {
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
		sked__wk_job_cancel(j, CANCEL_NOLEASE);
	}
	pthread_mutex_unlock(&w->mu);
	if (stalled_ms > sked__wk_safety_ms(w))
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
void *
sked__wk_heartbeat_main(void *arg)
{
	sked_worker *w = arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	int64_t next = sked__mono_ms() + sked__wk_beat_interval(w);
	int failing = 0;
	while (!atomic_load(&w->hb_exit)) {
		int64_t now = sked__mono_ms();
		if (now < next) {
			int64_t d = next - now;
			struct timespec ts = {d / 1000, (d % 1000) * 1000000};
			if (d > 100)
				ts = (struct timespec){0, 100 * 1000000};
			nanosleep(&ts, NULL);
			continue;
		}
		int64_t began = sked__mono_ms();
		int64_t *ids = NULL;
		int *att = NULL;
		int n = 0;
		int rc = sked__node_beat(w->hb, w->node_id);
		if (rc == SKED_OK)
			rc = sked__renew(w->hb, w->node_id, w->o.lease_ms, &ids,
			                 &att, &n);
		sked__wk_note(w,
		              rc == SKED_OK ? &w->renewals : &w->renewal_errors,
		              NULL, 0);
		if (rc == SKED_OK) {
			atomic_store(&w->lease_ok_ms, began);
			extend_guard(w, began);
			check_held(w, ids, att, n, began);
			check_strays(w, ids, att, n);
			if (failing)
				sked__log(SKED_LOG_INFO, "lease renewal works "
				                         "again");
			failing = 0;
			next = began + sked__wk_beat_interval(w);
		} else {
			if (!failing)
				sked__log(SKED_LOG_WARN,
				          "cannot renew leases: %s",
				          sked_errmsg(w->hb));
			failing = 1;
			if (rc == SKED_EUNAVAILABLE)
				sked__ignore(sked__wk_reconnect(
				        w, w->hb, SKED_CONN_LEASES));
			/* try again soon, but not in a tight loop */
			next = sked__mono_ms() +
			       (sked__wk_beat_interval(w) < 1000
			                ? sked__wk_beat_interval(w)
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
void *
sked__wk_watchdog_main(void *arg)
{
	sked_worker *w = arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	int64_t last = sked__mono_ms();
	while (!atomic_load(&w->hb_exit)) {
		int64_t now = sked__mono_ms();
		stop_unleased(w, now, now - last);
		last = now;
		struct timespec ts = {0, 50 * 1000000};
		nanosleep(&ts, NULL);
	}
	return NULL;
}
