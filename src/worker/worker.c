/*
 * worker.c — the worker runtime's top: the loop (sked_worker_run), the
 * start and end of the threads, and shutdown. Construction, registration
 * and the snapshot of numbers are in setup.c.
 *
 * The loop's own state is w->loop (worker.h's thread map): its table of
 * periodic chores (chores_run) and what its claims and sleeps decide on;
 * sked_worker_run is the loop, the steps it takes are functions above it.
 *
 * Layer: the top of the library, on the model (lease.h, claim.h, sched.h)
 * and the rest of the runtime in src/worker/: the pool (pool.c), renewal
 * and the watchdog (heartbeat.c, watchdog.c), the finisher (finish.c), the lanes
 * (lanes.c), the pruner (pruner.c), and what they all share (jobs.c). worker/worker.h maps the threads and what each owns.
 *
 * Size: about 800 lines, one file on purpose: the loop and the small
 * decisions it takes each round (may_claim, wants_claim, poll_now,
 * poll_backoff, idle_ms) read together, and each was once wrong only in
 * how it met another (831f49d). Setup, chores' bodies, the threads and
 * the round's claims (claims.c) live apart.
 */
#include "worker/worker.h"

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

#include "proc/exec.h"
#include "proc/guard.h"
#include "model/lease.h"
#include "model/limits.h"
#include "model/sched.h"
#include "model/schema.h"
#include "util/ident.h"
#include "util/log.h"

/* ---- the loop ---- */

static int
free_slots_locked(const sked_worker *w)
{
	return sked__wk_free_slots_locked(w);
}

/* Tasks held ahead of the free threads for HOLD_MAX_MS without starting
 * go back (unstarted: no run, the attempt returned), so that a worker
 * with free threads can run them; the start rate was wrong, so nothing
 * is held ahead until it is measured again. They are recorded with the
 * other outcomes (the finisher, or the next fused claim). */
static void
give_back_held(sked_worker *w, int64_t now)
{
	int n = 0;
	pthread_mutex_lock(&w->sh.mu);
	for (sked_job *j = w->sh.jobs_head, *next; j; j = next) {
		next = j->next;
		/* the queue is in the order tasks came: the rest are newer */
		if (now - j->since < HOLD_MAX_MS)
			break;
		if (atomic_load(&j->cancel) != CANCEL_NONE)
			continue;
		sked__wk_job_cancel(j, CANCEL_HELD);
		j->exit_code = -1;
		sked__wk_move(w, j, JOB_DONE);
		n++;
	}
	if (n > 0) {
		w->sh.ahead = 0;
		w->sh.rate = 0;
		w->sh.rate_known = 1;
		w->sh.rate_at = now;
		w->sh.rate_started = w->sh.nstarted;
		pthread_cond_signal(&w->sh.cv_done);
	}
	pthread_mutex_unlock(&w->sh.mu);
	if (n > 0)
		sked__log(SKED_LOG_INFO,
		          "gave back %d task(s) held ahead for %ds without a "
		          "free thread",
		          n, HOLD_MAX_MS / 1000);
}

static int
outstanding(sked_worker *w, int64_t *count)
{
	*count = 0;
	int nq = w->nqueues ? w->nqueues : 1;
	for (int qi = 0; qi < nq; qi++) {
		int64_t c = 0;
		int rc = sked__outstanding(
		        w->h, w->nqueues ? w->queues[qi].name : NULL, w->kinds,
		        &c);
		if (rc != SKED_OK)
			return rc;
		*count += c;
	}
	return SKED_OK;
}

static void
cancel_held(sked_worker *w, int why)
{
	pthread_mutex_lock(&w->sh.mu);
	for (sked_job *j = w->sh.held; j; j = j->hnext)
		sked__wk_job_cancel(j, why);
	pthread_mutex_unlock(&w->sh.mu);
}

/* Jobs this worker still answers for: queued, running, or done but not
 * yet recorded. */
static int
unsettled(sked_worker *w)
{
	pthread_mutex_lock(&w->sh.mu);
	int n = w->sh.nheld + w->sh.nunrecorded + w->sh.claims_inflight;
	pthread_mutex_unlock(&w->sh.mu);
	return n;
}

static int
nheld(sked_worker *w)
{
	pthread_mutex_lock(&w->sh.mu);
	int n = w->sh.nheld;
	pthread_mutex_unlock(&w->sh.mu);
	return n;
}

/* The listening loop's notifications (wakes.c): 1 when one is for this
 * worker, or (readable) when a readable socket held none, which is the
 * loop's to look into (a connection lost); the others' wake-ups it was
 * first for are passed on. */
static int
heard_mine(sked_worker *w, int readable)
{
	pthread_mutex_lock(&w->sh.mu);
	int room = free_slots_locked(w);
	pthread_mutex_unlock(&w->sh.mu);
	wk_heard heard;
	sked__wk_hear(w, room, &heard);
	sked__wk_pass_on(w, &heard);
	int mine = heard.mine || (readable && heard.heard == 0);
	if (mine || heard.missed)
		w->loop.want = 1;
	return mine;
}

/* Sleep until rung, told of work, or timeout. A listening worker sleeps
 * on through the wake-ups that are for others (docs/design.md,
 * "Wake-ups"), and first reads those that came with a statement's
 * reply. */
static void
wait_for_work(sked_worker *w, int64_t timeout_ms)
{
	sked_db *db = w->h->db;
	int listens = w->h->listening;
	if (listens && heard_mine(w, 0))
		return;
	int64_t end = sked__mono_ms() + timeout_ms;
	for (;;) {
		struct pollfd fds[2] = {{.fd = w->wake_fd, .events = POLLIN}};
		int nfds = 1;
		/* LISTEN's socket, or SQLite's WAL watch */
		int sock = sked__db_socket(db);
		if (sock >= 0 && !w->h->listen_sql) {
			/* the WAL watch fires on any commit: wait on it only
			 * with room */
			pthread_mutex_lock(&w->sh.mu);
			sock = free_slots_locked(w) > 0 ? sock : -1;
			pthread_mutex_unlock(&w->sh.mu);
		}
		if (sock >= 0) {
			fds[1] = (struct pollfd){.fd = sock, .events = POLLIN};
			nfds = 2;
		}
		int64_t left = end - sked__mono_ms();
		int r = poll(fds, (nfds_t)nfds, left > 0 ? (int)left : 0);
		if (r <= 0) {
			w->loop.want = 1; /* the poll's turn */
			return;
		}
		if (fds[0].revents & POLLIN) {
			/* drained, then cleared: a ring after the drain
			 * writes again (jobs.c: sked__wk_ring) */
			sked__wk_drain_fd(w->wake_fd);
			atomic_store(&w->rung, 0);
			return;
		}
		if (nfds == 2 && fds[1].revents) {
			if (listens) {
				if (heard_mine(w, 1) ||
				    fds[1].revents & ~POLLIN)
					return;
				continue; /* for others: sleep on */
			}
			sked__db_drain_notify(db, NULL, NULL);
			w->loop.want = 1;
			/* SQLite writes a commit's WAL frames (which the watch
			 * sees) before it publishes the commit in the WAL
			 * index (which it does not): a claim made at once may
			 * miss the commit that woke it, so an empty one looks
			 * again a moment later */
			w->loop.wal_woke = !w->h->listen_sql;
			return;
		}
		return;
	}
}

static int
start_threads(sked_worker *w)
{
	sked__wk_waits_start(w);
	/* the heartbeat's connection now (it keeps the leases); refused,
	 * the heartbeat tries again (heartbeat.c). The finisher's and the
	 * lanes' open when work needs them (conns.c). */
	w->beat.h = sked__wk_conn_open(w, WK_CONN_BEAT);
	w->beat.retry_at = 0;
	w->beat.backoff = 0;
	w->fin.h = NULL;
	w->fin.retry_at = 0;
	w->fin.backoff = 0;
	atomic_store(&w->sh.fin_borrow, 0);
	atomic_store(&w->sh.lead_until_ms, 0);
	int rc;
	if (pthread_create(&w->fin.th, NULL, sked__wk_finisher_main, w) != 0)
		return sked__fail(w->h, SKED_ENOMEM,
		                  "cannot start the finisher thread");
	w->fin.started = 1;
	if ((rc = sked__wk_lanes_start(w)) != SKED_OK)
		return rc;
	w->pool.threads =
	        calloc((size_t)w->o.concurrency, sizeof *w->pool.threads);
	if (!w->pool.threads)
		return sked__fail(w->h, SKED_ENOMEM, "out of memory");
	for (int i = 0; i < w->o.concurrency; i++) {
		if (pthread_create(&w->pool.threads[i], NULL,
		                   sked__wk_pool_main, w) != 0)
			return sked__fail(w->h, SKED_ENOMEM,
			                  "cannot start pool thread: %s",
			                  strerror(errno));
		w->pool.n++;
	}
	atomic_store(&w->sh.lease_ok_ms, sked__mono_ms());
	if (pthread_create(&w->beat.th, NULL, sked__wk_heartbeat_main, w) != 0)
		return sked__fail(w->h, SKED_ENOMEM,
		                  "cannot start heartbeat thread");
	w->beat.started = 1;
	if (pthread_create(&w->watch.th, NULL, sked__wk_watchdog_main, w) != 0)
		return sked__fail(w->h, SKED_ENOMEM,
		                  "cannot start watchdog thread");
	w->watch.started = 1;
	if (w->keep_ms[0] > 0 || w->keep_ms[1] > 0 || w->keep_ms[2] > 0) {
		/* retention: a thread and, per turn, a connection of its own,
		 * so claims never wait for it */
		if (pthread_create(&w->prune.th, NULL, sked__wk_pruner_main,
		                   w) != 0)
			return sked__fail(w->h, SKED_ENOMEM,
			                  "cannot start the pruner thread");
		w->prune.started = 1;
	}
	return SKED_OK;
}

static void
stop_threads(sked_worker *w)
{
	/* no claim in flight hands tasks to a pool that has gone */
	sked__wk_lanes_stop(w);
	pthread_mutex_lock(&w->sh.mu);
	w->sh.pool_exit = 1;
	pthread_cond_broadcast(&w->sh.cv_pool);
	pthread_mutex_unlock(&w->sh.mu);
	for (int i = 0; i < w->pool.n; i++)
		pthread_join(w->pool.threads[i], NULL);
	free(w->pool.threads);
	w->pool.threads = NULL;
	w->pool.n = 0;
	/* the pool is gone: the finisher records what is left, then ends */
	pthread_mutex_lock(&w->sh.mu);
	w->sh.fin_exit = 1;
	pthread_cond_signal(&w->sh.cv_done);
	pthread_mutex_unlock(&w->sh.mu);
	if (w->fin.started) {
		pthread_join(w->fin.th, NULL);
		w->fin.started = 0;
	}
	sked__wk_conn_close(w, &w->fin.h, WK_CONN_FIN);
	atomic_store(&w->sh.side_exit, 1);
	sked__wk_side_kick(w);
	if (w->watch.started) {
		pthread_join(w->watch.th, NULL);
		w->watch.started = 0;
	}
	if (w->beat.started) {
		pthread_join(w->beat.th, NULL);
		w->beat.started = 0;
	}
	if (w->prune.started) {
		pthread_join(w->prune.th, NULL);
		w->prune.started = 0;
	}
	sked__wk_conn_close(w, &w->prune.h, WK_CONN_PRUNER);
	sked__wk_conn_close(w, &w->beat.h, WK_CONN_BEAT);
	sked__wk_waits_stop(w);
}

/* What this worker's claims ask for: the kinds it has handlers for, as
 * ",a,b," (names hold no comma), or any kind when a catch-all ("*") is
 * among them. A task no handler here can run is never claimed, so it
 * spends no attempt waiting for a worker that can. */
static int
claimable_kinds(sked_worker *w)
{
	free(w->kinds);
	w->kinds = NULL;
	size_t len = 2;
	for (int i = 0; i < w->nhandlers; i++) {
		if (strcmp(w->handlers[i].kind, "*") == 0)
			return SKED_OK;
		len += strlen(w->handlers[i].kind) + 1;
	}
	if (w->nhandlers == 0)
		return sked__fail(w->h, SKED_EINVAL,
		                  "the worker has no handler: it would claim "
		                  "nothing");
	if (!(w->kinds = malloc(len)))
		return sked__fail(w->h, SKED_ENOMEM, "out of memory");
	char *p = w->kinds;
	*p++ = ',';
	for (int i = 0; i < w->nhandlers; i++) {
		size_t n = strlen(w->handlers[i].kind);
		memcpy(p, w->handlers[i].kind, n);
		p += n;
		*p++ = ',';
	}
	*p = '\0';
	return SKED_OK;
}

/* ---- the loop's periodic chores ---- */

static int
chore_give_back_held(sked_worker *w, int64_t now)
{
	give_back_held(w, now);
	return SKED_OK;
}

static int
chore_reap(sked_worker *w, int64_t now)
{
	(void)now;
	int taken = 0;
	return sked__reap(w->h, &taken);
}

static int
chore_forget_nodes(sked_worker *w, int64_t now)
{
	(void)now;
	sked__ignore(sked_nodes_prune(w->h, SKED_NODE_PRUNE_MS, NULL));
	return SKED_OK;
}

static int
chore_schedules(sked_worker *w, int64_t now)
{
	w->loop.sched_in = sked__sched_poll(w->h, &w->loop.sched, now);
	return SKED_OK;
}

/* a chore's period: the poll's, at least a second */
#define EVERY_POLL (-1)

/* What the loop does besides claiming, in this order, each when its
 * period has passed (0: every turn); one that runs after_failure runs
 * even when one before it failed in the same turn. The cluster's chores
 * (leader_only) run on the elected leader alone (lead.c); each is
 * exactly once by its own conditional statement all the same, so two
 * nodes that both believe they lead for a moment do no harm
 * (docs/design.md, "The leader"). */
static const wk_chore chores[WK_CHORES] = {
        /* tasks held ahead too long go back: a look every quarter of
         * the bound, not on every wake (the queue may hold a thousand) */
        {"give back held", 0, 1, chore_give_back_held, HOLD_MAX_MS / 4, 0, 0},
        /* expired leases: every poll, at most once a second */
        {"take back expired leases", 1, 1, chore_reap, EVERY_POLL, 0, 0},
        /* forget nodes dead for a day (docs/operations.md) */
        {"forget dead nodes", 1, 0, chore_forget_nodes, 60000, 0, 0},
        /* fire due schedules (exactly once across the cluster) */
        {"fire schedules", 1, 0, chore_schedules, 0, 0, 0},
        /* a backlog no notification told the others of (wakes.c) */
        {"call for help", 1, 0, sked__wk_help, EVERY_POLL, 0, 0},
        /* task ends into webhook deliveries (hooks.c; nothing without
         * on_end) */
        {"enqueue webhooks", 1, 0, sked__wk_hooks, EVERY_POLL, 0, 0},
};

static void
chores_start(sked_worker *w)
{
	memcpy(w->loop.chores, chores, sizeof chores);
	for (int i = 0; i < WK_CHORES; i++)
		if (w->loop.chores[i].period_ms == EVERY_POLL)
			w->loop.chores[i].period_ms =
			        w->o.poll_ms < 1000 ? 1000 : w->o.poll_ms;
	w->loop.first_free = 0;
	w->loop.idle_poll_ms = w->o.poll_ms;
	memset(&w->loop.sched, 0, sizeof w->loop.sched);
	w->loop.sched_in = 0;
}

/* Run the chores that are due; 1 when one failed on the database. */
static int
chores_run(sked_worker *w, int64_t now)
{
	int failed = 0;
	/* a drain (until_empty) does the chores itself, as every worker
	 * did before the leader: it may exit before an election settles,
	 * and what it must see done (missed fires, expired leases) is what
	 * it drains. Each chore stays exactly once through its own
	 * conditional statement (docs/design.md, "The leader"). */
	int leads = sked__wk_leads(w) || w->o.until_empty;
	if (!leads)
		w->loop.sched_in = 0; /* the leader fires schedules */
	for (int i = 0; i < WK_CHORES; i++) {
		wk_chore *c = &w->loop.chores[i];
		if ((failed && !c->after_failure) || now < c->next ||
		    (c->leader_only && !leads))
			continue;
		int rc = c->run(w, now);
		if (rc != SKED_OK) {
			sked__log(SKED_LOG_DEBUG, "%s: %s", c->name,
			          sked_errmsg(w->h));
			failed = 1;
		}
		c->last = now;
		c->next = now + c->period_ms;
	}
	return failed;
}

/* A claim that failed (the loop's or a lane's): once none is in flight,
 * give back what it may have taken. */
static void
resolve_unknown(sked_worker *w)
{
	pthread_mutex_lock(&w->sh.mu);
	int unknown = w->sh.claim_unknown && w->sh.claims_inflight == 0;
	pthread_mutex_unlock(&w->sh.mu);
	if (unknown && sked__wk_resolve_unknown_claims(w) == SKED_OK) {
		pthread_mutex_lock(&w->sh.mu);
		w->sh.claim_unknown = 0;
		pthread_mutex_unlock(&w->sh.mu);
	}
}

/* A stop was asked for (stop: 1 graceful, 2 immediate). Prefetched tasks
 * not yet started go back at once; the grace period is for tasks under
 * way. 1: the loop ends now. */
static int
stopping(sked_worker *w, int stop, int64_t *grace_end)
{
	int64_t now = sked__mono_ms();
	if (!*grace_end) {
		*grace_end = now + (stop == 2 ? 0 : w->o.grace_ms);
		/* the lanes' claims in flight are in first */
		pthread_mutex_lock(&w->sh.mu);
		w->sh.lanes_go = 0;
		while (w->sh.claims_inflight > 0)
			pthread_cond_wait(&w->sh.cv_lane, &w->sh.mu);
		for (sked_job *j = w->sh.jobs_head; j; j = j->next)
			sked__wk_job_cancel(j, CANCEL_SHUTDOWN);
		pthread_mutex_unlock(&w->sh.mu);
		/* said once that is done: none of them starts */
		sked__log(SKED_LOG_INFO, "stopping: %d task(s) running",
		          nheld(w));
	}
	if (stop == 2 || now >= *grace_end)
		cancel_held(w, CANCEL_SHUTDOWN);
	if (atomic_load(&w->sh.fin_borrow)) {
		int failed = 0;
		sked__wk_finish_on(w, w->h, &failed);
	}
	if (unsettled(w) == 0)
		return 1;
	if (now > *grace_end + 10000)
		return 1; /* the finisher says what it could not record */
	wait_for_work(w, 100);
	return 0;
}

/* Whether the loop claims now: at once when half the slots or more are
 * free (or all are idle); a lone free slot waits a moment for company,
 * and with tasks held ahead it waits for half of them to be taken
 * (*linger: it waits); never while the lanes claim. */
static int
may_claim(sked_worker *w, int64_t now, int *linger)
{
	pthread_mutex_lock(&w->sh.mu);
	int busy_slots = w->sh.nheld;
	int free_now = free_slots_locked(w);
	int ahead = w->sh.ahead;
	int lanes = w->sh.lanes_go;
	pthread_mutex_unlock(&w->sh.mu);
	int64_t wait = 0;
	if (ahead > 0 && free_now > 0 && free_now < (ahead + 1) / 2)
		/* tasks wait here (at least ahead/2 of them, as every
		 * thread is busy): claim again once half the prefetch is
		 * used up, in one larger batch, or after a while */
		wait = PREFETCH_LINGER_MS;
	else if (free_now > 0 && busy_slots > 0 &&
	         free_now < (w->o.concurrency + 1) / 2)
		wait = LINGER_MS;
	*linger = 0;
	if (wait) {
		if (!w->loop.first_free)
			w->loop.first_free = now;
		*linger = now - w->loop.first_free < wait;
	}
	return !*linger && !lanes;
}

/* Whether the loop has a reason to claim (w->loop.want): always, but on
 * a listening node that does not lead and does not drain, where a slot
 * that frees is no reason (docs/design.md, "Wake-ups") unless a
 * workflow is under way (w->loop.handing). */
static int
wants_claim(sked_worker *w)
{
	if (!w->h->listening || w->o.until_empty || sked__wk_leads(w))
		return 1;
	return w->loop.want || w->loop.handing;
}

/* The idle claim poll (docs/design.md, "Quiet when idle"):
 *   - a node that listens for new tasks (PostgreSQL LISTEN) and does not
 *     lead claims when told, and otherwise once a LISTEN_SAFETY_MS (a
 *     notification lost, or a task that became due with no one told);
 *   - the leader polls at the poll interval: it picks up tasks that
 *     became due (delays, retries) for the cluster;
 *   - a drain (until_empty) polls at the poll interval: it looks
 *     whether the work is done;
 *   - without notifications the poll doubles after each empty claim from
 *     poll_ms up to IDLE_POLL_MAX_MS (or poll_ms when that is longer),
 *     and is back at poll_ms as soon as a claim finds work. */
static int64_t
poll_now(sked_worker *w)
{
	if (w->o.until_empty)
		return w->o.poll_ms; /* a drain looks whether it is done */
	if (w->h->listening && !sked__wk_leads(w))
		return w->o.poll_ms > LISTEN_SAFETY_MS ? w->o.poll_ms
		                                       : LISTEN_SAFETY_MS;
	if (w->h->listening || w->loop.idle_poll_ms < w->o.poll_ms)
		return w->o.poll_ms;
	return w->loop.idle_poll_ms;
}

/* After a round of claims: the next idle poll (no notifications). */
static void
poll_backoff(sked_worker *w)
{
	if (w->loop.claimed_last > 0 || w->loop.idle_poll_ms < w->o.poll_ms) {
		w->loop.idle_poll_ms = w->o.poll_ms;
		return;
	}
	int64_t top = w->o.poll_ms > IDLE_POLL_MAX_MS ? w->o.poll_ms
	                                              : IDLE_POLL_MAX_MS;
	w->loop.idle_poll_ms *= 2;
	if (w->loop.idle_poll_ms > top)
		w->loop.idle_poll_ms = top;
}

/* How long the loop sleeps with nothing to do: the poll, less when a
 * schedule is due sooner, and tasks held ahead are looked at again
 * before their bound. */
static int64_t
idle_ms(sked_worker *w)
{
	int64_t sched_in = w->loop.sched_in;
	int64_t poll = poll_now(w);
	int64_t idle = sched_in > 0 && sched_in < poll ? sched_in : poll;
	pthread_mutex_lock(&w->sh.mu);
	if (w->sh.jobs_head && idle > HOLD_MAX_MS / 4)
		idle = HOLD_MAX_MS / 4;
	pthread_mutex_unlock(&w->sh.mu);
	return idle;
}

/* The node's row, the worker's first write. A database that stops
 * answering between the open and this write (a server restarting, a
 * Galera node that has left the primary component) or that stays busy
 * past the driver's wait (an SQLite file whose write lock a frozen
 * process holds, a deadlock victim) is waited for as the running loop
 * waits for it: with backoff up to 5 s, until a stop is asked for, and
 * for at most a minute with until_empty. Any other error is the caller's
 * at once. */
static int
register_node(sked_worker *w)
{
	sked *h = w->h;
	int64_t since = 0, backoff = 100;
	for (;;) {
		int rc = sked__node_register(h, w->node_id, w->o.lease_ms,
		                             w->o.concurrency);
		if ((rc != SKED_EUNAVAILABLE && rc != SKED_EBUSY) ||
		    atomic_load(&w->sh.stop))
			return rc;
		int64_t now = sked__mono_ms();
		if (!since) {
			since = now;
			sked__log(SKED_LOG_WARN,
			          "worker %s: %s; waiting for the database",
			          w->node_id, sked_errmsg(h));
		} else if (w->o.until_empty &&
		           now - since > UNTIL_EMPTY_GIVE_UP_MS) {
			return rc;
		}
		wait_for_work(w, backoff);
		backoff = backoff * 2 > 5000 ? 5000 : backoff * 2;
		if (rc == SKED_EUNAVAILABLE)
			sked__ignore(
			        sked__wk_reconnect(w, h, SKED_CONN_CLAIMS));
	}
}

/* Behind a transaction pooler LISTEN is accepted and never heard (the
 * server session it ran on serves the next client): the worker polls as
 * on an engine without notifications, not once a LISTEN_SAFETY_MS. The
 * pooler is known at connect, or found by a later statement (db.c). */
static void
deaf_behind_pooler(sked_worker *w)
{
	if (!w->h->listening || !sked__db_pooled(w->h->db))
		return;
	w->h->listening = 0;
	w->loop.idle_poll_ms = w->o.poll_ms;
	sked__log(SKED_LOG_INFO,
	          "worker %s: behind a connection pooler, notifications "
	          "cannot reach it: polling for new tasks",
	          w->node_id);
}

SKED_API int
sked_worker_run(sked_worker *w)
{
	if (!w)
		return SKED_EINVAL;
	sked *h = w->h;
	/* a user without a right the worker needs would fail round after
	 * round: say which, once, and stop before anything starts */
	int rc = sked__schema_rights(h);
	if (rc != SKED_OK)
		return rc;
	if ((rc = register_node(w)) != SKED_OK)
		return rc;
	if (h->listen_sql && !sked__db_pooled(h->db)) {
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
	if (programs)
		sked__wk_sweep_temp();
	if (programs && !w->guard &&
	    sked__guard_start(w->o.concurrency, &w->guard) != SKED_OK)
		sked__log(SKED_LOG_WARN,
		          "cannot start the lease guard process: a handler of "
		          "a frozen worker could outlive its lease");
	atomic_store(&w->pool.slots, 0);
	/* outcomes ride with claims: one round trip where the dialect can
	 * say it and the claims are skip-locked ones anyway (PostgreSQL),
	 * one write transaction on SQLite */
	w->fused = sked__finish_fuses(h);
	atomic_store(&w->sh.fusing, w->fused);
	w->sh.ahead = 0;
	if ((rc = claimable_kinds(w)) != SKED_OK)
		return rc;
	sked__wk_serves(w); /* what it serves, once (serves.c) */
	rc = start_threads(w);
	if (rc != SKED_OK) {
		stop_threads(w);
		(void)sked__node_unregister(h, w->node_id);
		return rc;
	}
	atomic_store(&w->sh.loop_ok_ms, sked__mono_ms());
	atomic_store(&w->sh.fin_ok_ms, sked__mono_ms());
	atomic_store(&w->sh.run_started, 1);
	sked__log(SKED_LOG_INFO,
	          "worker %s started: %d slot(s), lease %llds, strategy %s",
	          w->node_id, w->o.concurrency,
	          (long long)(w->o.lease_ms / 1000), h->strategy->name);

	int64_t grace_end = 0, failing_since = 0, db_backoff = 0;
	int gave_up = 0;
	chores_start(w);
	w->loop.want = 1; /* the first claim */
	for (;;) {
		int stop = atomic_load(&w->sh.stop);
		resolve_unknown(w);
		if (stop) {
			if (stopping(w, stop, &grace_end))
				break;
			continue;
		}

		int64_t now = sked__mono_ms();
		int db_failed = chores_run(w, now);
		int linger = 0, full = 0;
		int go = may_claim(w, now, &linger) && wants_claim(w);
		if (!db_failed && atomic_load(&w->sh.fin_borrow))
			/* the finisher has no connection: record here */
			sked__wk_finish_on(w, w->h, &db_failed);
		if (!db_failed && go) {
			full = sked__wk_claim_some(w, &db_failed);
			w->loop.first_free = 0;
			/* a round with every slot busy sent nothing and
			 * learnt nothing: the reason to claim, and the poll,
			 * stay as they were */
			if (w->loop.sent_last || db_failed)
				w->loop.want = full || db_failed ||
				               w->loop.limited_last;
			if (!db_failed && w->loop.sent_last)
				poll_backoff(w);
		}
		deaf_behind_pooler(w);

		if (w->o.until_empty && !db_failed && unsettled(w) == 0) {
			int64_t left = 0;
			if (outstanding(w, &left) == SKED_OK && left == 0)
				break;
		}
		if (db_failed) {
			/* a worker keeps trying (it may hold running tasks);
			 * a one-shot drain gives up after a minute */
			if (!failing_since)
				failing_since = sked__mono_ms();
			if (w->o.until_empty && unsettled(w) == 0 &&
			    sked__mono_ms() - failing_since >
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
		atomic_store(&w->sh.loop_ok_ms, sked__mono_ms());
		pthread_mutex_lock(&w->sh.mu);
		int more = free_slots_locked(w) > 0;
		pthread_mutex_unlock(&w->sh.mu);
		if (full && more)
			continue;
		if (linger) {
			wait_for_work(w, LINGER_MS);
			continue;
		}
		if (w->loop.wal_woke) {
			w->loop.wal_woke = 0;
			if (!w->loop.claimed_last) {
				wait_for_work(w, WAL_RECHECK_MS);
				continue;
			}
		}
		wait_for_work(w, idle_ms(w));
	}

	atomic_store(&w->sh.run_started, 0);
	stop_threads(w);
	if (w->o.until_empty && !gave_up)
		sked__wk_vacuum_drained(w);
	sked__exec_kill_all(SIGKILL);
	sked__exec_sweep_orphans(); /* what handlers left behind */
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
	pthread_mutex_lock(&w->sh.mu);
	int most = w->sh.claims_inflight_max;
	pthread_mutex_unlock(&w->sh.mu);
	long long with = atomic_load(&w->sh.rec_with_claims);
	long long apart = atomic_load(&w->sh.rec_apart);
	sked__log(SKED_LOG_INFO,
	          "worker %s stopped: %lld claimed, %lld succeeded, %lld "
	          "failed, %lld dead, %lld given back, %lld late; at most "
	          "%d claim(s) in flight at once; %lld result(s) recorded "
	          "with claims, %lld apart",
	          w->node_id, (long long)c.claimed, (long long)c.succeeded,
	          (long long)c.failed, (long long)c.dead, (long long)c.released,
	          (long long)c.late, most, with, apart);
	return SKED_OK;
}
