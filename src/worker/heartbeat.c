/*
 * worker/heartbeat.c — the heartbeat thread: the node's beat, lease
 * renewal, the check of what the node holds, and the hot table's vacuum.
 *
 * Layer: the worker (worker.h), on the model (lease.h). The heartbeat
 * thread owns the lease connection w->beat.h: it beats the node row,
 * renews every lease of the node, stops handlers of tasks the node no
 * longer holds, gives back tasks it holds with no job here (strays),
 * moves the lease guard's deadlines on, stores the handlers' progress
 * reports (progress.c) and, between beats, asks who
 * holds a lock a wait is on (waits.c) and keeps the leader's lock
 * (lead.c). The watchdog (watchdog.c) is what stops handlers when this
 * thread cannot renew in time.
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

/* After a renewal that began at began: a job the database lists as held
 * (its lease extended) counts its lease from began; one it does not list
 * is stopped (cancelled, taken over, or its lease ran out before the
 * renewal). Only jobs dispatched before the renewal began are judged: a
 * task claimed since may be missing from a list read before its claim
 * committed, and a renewal may have run before the claim did, so such a
 * job keeps the lease of its claim until the next renewal. */
static void
check_held(sked_worker *w, const int64_t *ids, const int *att, int n,
           int64_t began)
{
	pthread_mutex_lock(&w->sh.mu);
	for (sked_job *j = w->sh.held; j; j = j->hnext) {
		if (j->since >= began)
			continue;
		int held = 0;
		for (int i = 0; i < n && !held; i++)
			held = ids[i] == j->t.id && att[i] == j->t.attempt;
		if (held)
			j->renewed = began;
		if (!held && atomic_load(&j->cancel) == CANCEL_NONE) {
			sked__log_facts f = {
			        .task_id = (long long)j->t.id,
			        .attempt = j->t.attempt,
			        .kind = j->t.kind,
			        .queue = j->t.queue,
			        .outcome = "lost",
			        .duration_ms = -1,
			};
			sked__log_task(
			        SKED_LOG_WARN, &f,
			        "task %lld attempt %d is no longer held "
			        "by this node (cancelled or taken over): "
			        "stopping its handler",
			        f.task_id, f.attempt);
			sked__wk_job_cancel(j, CANCEL_LOST);
			w->sh.counters.lost++;
		}
	}
	pthread_mutex_unlock(&w->sh.mu);
}
/* A renewal that began at began succeeded: the lease guard may let the
 * programs under way whose leases it extended (check_held) run on until
 * the new deadline. */
static void
extend_guard(sked_worker *w, int64_t began)
{
	if (!w->guard)
		return;
	pthread_mutex_lock(&w->sh.mu);
	for (sked_job *j = w->sh.held; j; j = j->hnext)
		if (j->slot >= 0 && j->renewed == began)
			sked__guard_deadline(w->guard, j->slot,
			                     sked__wk_guard_deadline(w, began),
			                     1);
	pthread_mutex_unlock(&w->sh.mu);
}
/* The heartbeat's check for strays: tasks held by this node with no job
 * here. A claim under way may have committed tasks that are not in w->sh.all
 * yet, so a task is given back only when it was stray in the previous
 * round too and every claim begun before that round's list has been
 * dispatched since. */
static void
check_strays(sked_worker *w, const int64_t *ids, const int *att, int n)
{
	unsigned long long dispatched = atomic_load(&w->sh.claims_dispatched);
	unsigned long long begun = atomic_load(&w->sh.claims_begun);
	int64_t *cid = n ? malloc(sizeof *cid * (size_t)n) : NULL;
	int *catt = n ? malloc(sizeof *catt * (size_t)n) : NULL;
	int nc = 0;
	if (n && (!cid || !catt)) {
		free(cid);
		free(catt);
		return; /* next round */
	}
	pthread_mutex_lock(&w->sh.mu);
	for (int i = 0; i < n; i++) {
		if (sked__wk_holds_locked(w, ids[i], att[i]))
			continue;
		cid[nc] = ids[i];
		catt[nc++] = att[i];
	}
	pthread_mutex_unlock(&w->sh.mu);
	int nconf = 0;
	if (w->beat.nstray && dispatched >= w->beat.stray_seq) {
		/* confirmed ones move to the front of the candidates */
		for (int i = 0; i < nc; i++) {
			int seen = 0;
			for (int k = 0; k < w->beat.nstray && !seen; k++)
				seen = w->beat.stray_ids[k] == cid[i] &&
				       w->beat.stray_att[k] == catt[i];
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
		sked__ignore(sked__wk_give_back_strays(w, w->beat.h, cid, catt,
		                                       nconf));
	/* the rest are the candidates of the next round */
	free(w->beat.stray_ids);
	free(w->beat.stray_att);
	w->beat.nstray = nc - nconf;
	w->beat.stray_ids = cid;
	w->beat.stray_att = catt;
	if (nconf) {
		memmove(cid, cid + nconf, sizeof *cid * (size_t)w->beat.nstray);
		memmove(catt, catt + nconf,
		        sizeof *catt * (size_t)w->beat.nstray);
	}
	w->beat.stray_seq = begun;
}
/* PostgreSQL: the hot table is inserted into and deleted from by the
 * thousand a second; autovacuum looks at it at most once a naptime (a
 * minute by default, a server-wide setting), and until then every claim
 * steps over the dead rows and index entries. So a worker that has ended
 * VACUUM_CHURN tasks since it last did vacuums the hot table itself,
 * between beats on the heartbeat's connection: a table of live work
 * only, a fraction of a second even when bloated, SKIP_LOCKED so that
 * workers (and autovacuum) never queue behind each other, at most once
 * per VACUUM_EVERY_MS.
 *
 * A table of live work only, unless tasks wait there for later: a
 * backlog of a million delayed tasks is read again, heap and indexes, by
 * every vacuum (about 0.2 s each here), which then cost a drain of due
 * tasks more than the dead rows they remove. So the next vacuum waits
 * VACUUM_PACE times as long as the last one took: the server spends at
 * most 1/VACUUM_PACE of its time on this worker's vacuums, whatever the
 * table holds, and the heartbeat's connection is free for beats the
 * rest of the time.
 *
 * Paced so, a one-shot drain (--until-empty) that ends leaves its last
 * dead rows behind for the next one: after a million tasks through one
 * table, 989,125 dead row versions, and the next drain of 20,000 ran at
 * 16,926 tasks/s against 30,095 on a fresh table. So a drain vacuums as
 * it ends, once it has ended VACUUM_END_CHURN tasks since its last
 * vacuum (sked__wk_vacuum_drained); the next one then ran at 29,863. A
 * worker that stays up vacuums again within the pace anyway. */
#define VACUUM_CHURN     5000
#define VACUUM_END_CHURN 500
#define VACUUM_EVERY_MS  1000
#define VACUUM_PACE      20

/* Tasks this worker has ended (succeeded or dead). */
static int64_t
ended_count(sked_worker *w)
{
	pthread_mutex_lock(&w->sh.mu);
	int64_t ended = w->sh.counters.succeeded + w->sh.counters.dead;
	pthread_mutex_unlock(&w->sh.mu);
	return ended;
}

/* Vacuum the hot table on h now, when the worker has ended `churn`
 * tasks since its last vacuum. */
static void
vacuum_on(sked_worker *w, sked *h, int64_t churn)
{
	if (!h || !(h->dialect->caps & SKED_CAP_VACUUM))
		return;
	int64_t ended = ended_count(w);
	if (ended - w->beat.vacuumed_at < churn)
		return;
	w->beat.vacuumed_at = ended;
	int64_t t0 = sked__mono_ms();
	if (sked__q(h, SKED_SQL_HOT_VACUUM, NULL, 0, NULL) != SKED_OK)
		sked__log(SKED_LOG_DEBUG, "vacuum of the task table: %s",
		          sked_errmsg(h));
	w->beat.vacuumed_ms = sked__mono_ms();
	w->beat.vacuum_took_ms = w->beat.vacuumed_ms - t0;
}

static void
vacuum_hot_table(sked_worker *w, int64_t now)
{
	int64_t wait = w->beat.vacuum_took_ms * VACUUM_PACE;
	if (wait < VACUUM_EVERY_MS)
		wait = VACUUM_EVERY_MS;
	if (now - w->beat.vacuumed_ms >= wait)
		vacuum_on(w, w->beat.h, VACUUM_CHURN);
}

void
sked__wk_vacuum_drained(sked_worker *w)
{
	vacuum_on(w, w->h, VACUUM_END_CHURN);
}

/* Handlers running now, written on the node row by each heartbeat
 * (`sked nodes` tells them from tasks held ahead). */
static int
busy_now(sked_worker *w)
{
	pthread_mutex_lock(&w->sh.mu);
	int n = sked__wk_busy_locked(w);
	pthread_mutex_unlock(&w->sh.mu);
	return n;
}

/* Whether this beat may leave the leases alone (an idle node): it holds
 * no job and no claim is in flight, no claim has failed since a list of
 * held tasks came back empty, and no stray is waiting for its second
 * look. A claim whose reply came back put its tasks in w->sh.all (and
 * those recorded since are held no more); only a failed one may have
 * left tasks held with no job here. Then there is nothing to renew and
 * nothing to find: the beat is the node row's alone. */
static int
idle_beat(sked_worker *w)
{
	if (!w->beat.listed_none || w->beat.nstray ||
	    atomic_load(&w->sh.claim_failures) != w->beat.listed_seq)
		return 0;
	pthread_mutex_lock(&w->sh.mu);
	int idle = !w->sh.all && w->sh.claims_inflight == 0;
	pthread_mutex_unlock(&w->sh.mu);
	return idle;
}

/* The next beat after one that began at began: every lease/3 while the
 * node holds leases, every lease/2 when idle (the node row only says it
 * is alive: a node is dead after a lease without a beat). */
static int64_t
next_beat(sked_worker *w, int64_t began, int idle)
{
	return began + (idle ? w->o.lease_ms / 2 : sked__wk_beat_interval(w));
}

/* No connection yet (refused at the start, or since): try again when
 * the back-off says. 1: there is one now. */
static int
beat_connection(sked_worker *w, int64_t now)
{
	if (w->beat.h)
		return 1;
	if (now < w->beat.retry_at)
		return 0;
	w->beat.h = sked__wk_conn_open(w, WK_CONN_BEAT);
	if (!w->beat.h) {
		w->beat.retry_at = sked__wk_conn_backoff(&w->beat.backoff);
		return 0;
	}
	w->beat.backoff = 0;
	return 1;
}

void *
sked__wk_heartbeat_main(void *arg)
{
	sked_worker *w = arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	/* the first beat at once: its list of held tasks (empty) lets the
	 * beats after it be idle ones */
	int64_t next = sked__mono_ms();
	int64_t last = 0; /* when the last beat began */
	int failing = 0, was_idle = 0;
	w->beat.listed_none = 0;
	w->beat.leads = 0;
	w->beat.lead_next = 0;
	/* the lock-wait watchdog asks on this connection, between beats */
	int asks = (w->h->dialect->caps & SKED_CAP_WAIT_HOLDER) != 0;
	unsigned long seen = 0;
	while (!atomic_load(&w->sh.side_exit)) {
		int64_t now = sked__mono_ms();
		if (!beat_connection(w, now)) {
			struct timespec ts = {0, 100 * 1000000};
			nanosleep(&ts, NULL);
			continue;
		}
		sked__wk_lead_turn(w, now);
		if (asks)
			sked__wk_check_waits(w, w->beat.h);
		vacuum_hot_table(w, now);
		/* a node that was idle at its last beat and holds leases now
		 * renews them on the busy schedule */
		if (was_idle && last && !idle_beat(w) &&
		    next > last + sked__wk_beat_interval(w))
			next = last + sked__wk_beat_interval(w);
		if (now < next) {
			/* to the next beat, a lease-wait look at most 100 ms
			 * away while tasks are held; idle, up to a second
			 * (a claim that takes tasks kicks it) */
			int64_t d = next - now;
			int64_t most = idle_beat(w) ? SIDE_IDLE_MS : 100;
			/* and never past the leader lock's next turn (its
			 * extension is due every lease/9) */
			int64_t lead = w->beat.lead_next - now;
			if (lead < most)
				most = lead > 1 ? lead : 1;
			sked__wk_side_sleep(w, d < most ? d : most, &seen);
			continue;
		}
		int64_t began = sked__mono_ms();
		int64_t *ids = NULL;
		int *att = NULL;
		int n = 0;
		int idle = idle_beat(w);
		unsigned long long seq = atomic_load(&w->sh.claim_failures);
		int none_in_flight = atomic_load(&w->sh.claims_dispatched) ==
		                     atomic_load(&w->sh.claims_begun);
		int rank = 0, of = 0;
		int rc = sked__node_beat(w->beat.h, w->node_id, busy_now(w),
		                         &rank, &of);
		if (rc == SKED_OK) {
			/* the wake-ups' window (wakes.c) */
			atomic_store(&w->sh.rank, rank);
			atomic_store(&w->sh.ranked_of, of);
		}
		if (rc == SKED_OK && !idle)
			rc = sked__renew(w->beat.h, w->node_id, w->o.lease_ms,
			                 &ids, &att, &n);
		last = began;
		was_idle = idle;
		if (rc == SKED_OK && !idle) {
			w->beat.listed_seq = seq;
			w->beat.listed_none = n == 0 && none_in_flight;
		}
		sked__wk_note(w,
		              rc == SKED_OK ? &w->sh.renewals
		                            : &w->sh.renewal_errors,
		              NULL, 0);
		if (rc == SKED_OK) {
			/* which leases this renewal extended, before anything
			 * counts on it */
			check_held(w, ids, att, n, began);
			extend_guard(w, began);
			atomic_store(&w->sh.lease_ok_ms, began);
			check_strays(w, ids, att, n);
			/* the handlers' reports since the last renewal */
			if (!idle)
				sked__wk_progress_store(w, w->beat.h);
			if (failing)
				sked__log(SKED_LOG_INFO, "lease renewal works "
				                         "again");
			failing = 0;
			next = next_beat(w, began, idle);
		} else {
			if (!failing)
				sked__log(SKED_LOG_WARN,
				          "cannot renew leases: %s",
				          sked_errmsg(w->beat.h));
			failing = 1;
			if (rc == SKED_EUNAVAILABLE)
				sked__ignore(sked__wk_reconnect(
				        w, w->beat.h, SKED_CONN_LEASES));
			/* try again soon, but not in a tight loop */
			next = sked__mono_ms() +
			       (sked__wk_beat_interval(w) < 1000
			                ? sked__wk_beat_interval(w)
			                : 1000);
		}
		free(ids);
		free(att);
	}
	sked__wk_lead_end(w);
	return NULL;
}
