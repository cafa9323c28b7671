/*
 * worker/lanes.c — several claims in flight: the lanes, and the rules
 * every claim of a worker follows (room, place in line, hand-over).
 *
 * Layer: the worker (worker.h), on the model (lease.h, limits.h). While
 * a worker has a backlog on one plain queue (its last claim came back
 * full), its claims are made by lane threads, each on a connection of
 * its own, so that several fused claim+finish statements are in flight
 * at once and the server's cores work in parallel (docs/design.md,
 * "Lanes"). Outside a backlog the loop claims alone, as before.
 *
 * Every claim, the loop's or a lane's:
 *   - reserves the room it may fill (w->sh.reserved), so that claims in
 *     flight together never hold more than the slots and the prefetch
 *     allow;
 *   - takes a number in line (w->sh.claims_begun) when it is sent, and
 *     hands its tasks to the pool only when every claim sent before it
 *     has (w->sh.turn): the pool starts tasks in the order the claims took
 *     them, which keeps priority order within the worker, and
 *     claims_dispatched only grows, which the heartbeat's stray check
 *     relies on (heartbeat.c).
 * A lane whose claim fails leaves w->sh.claim_unknown set: no lane claims
 * again until the loop has given back what such a claim may have taken,
 * which it does only once no claim is in flight.
 */
#include "worker/worker.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/lease.h"
#include "model/limits.h"
#include "util/log.h"

/* ---- room and order, for every claim ---- */

int
sked__wk_free_slots_locked(const sked_worker *w)
{
	int cap = w->o.concurrency + w->sh.ahead;
	int by_slots = cap - w->sh.nheld;
	int unrecorded = w->sh.nunrecorded;
	if (w->fused) /* the next claim records these itself */
		unrecorded -=
		        w->sh.ndone < FINISH_MAX ? w->sh.ndone : FINISH_MAX;
	/* outcomes not yet recorded hold room back, so that a worker whose
	 * records lag does not claim on; where lanes carry them with their
	 * claims, one batch of them may be on the wire with another lane's
	 * claim without holding back this one (the lanes would take turns
	 * instead of overlapping) */
	int on_wire = w->lane.n && w->fused ? FINISH_MAX : 0;
	int by_backlog =
	        cap + w->o.concurrency + on_wire - w->sh.nheld - unrecorded;
	int room = by_slots < by_backlog ? by_slots : by_backlog;
	return room - w->sh.reserved;
}

/* Jobs a pool thread has started: handlers running now. The others
 * taking a slot (w->sh.held) are held ahead of a free thread. */
int
sked__wk_busy_locked(const sked_worker *w)
{
	int n = 0;
	for (const sked_job *j = w->sh.held; j; j = j->hnext)
		n += atomic_load(&j->started) != 0;
	return n;
}

unsigned long long
sked__wk_claim_begin_locked(sked_worker *w, int reserve)
{
	w->sh.reserved += reserve;
	w->sh.claims_inflight++;
	if (w->sh.claims_inflight > w->sh.claims_inflight_max)
		w->sh.claims_inflight_max = w->sh.claims_inflight;
	return atomic_fetch_add(&w->sh.claims_begun, 1) + 1;
}

/* Prefetch (w->sh.mu held): how many tasks to hold ahead of free threads,
 * after a claim that asked for `asked` and got `got`. --prefetch N holds
 * N ahead, as told. Adaptive (auto, the default):
 *
 * A claim that came back short means the queue is drained: hold nothing
 * ahead, so that new work goes to idle workers instead of waiting here.
 * A full one means a backlog: double what is held ahead, up to the
 * least of
 *   - PREFETCH_AUTO_MAX;
 *   - what this worker starts in PREFETCH_HORIZON_MS at its measured
 *     start rate: an idle worker elsewhere never waits longer than that
 *     for work this one holds, and a worker whose handlers are slow holds
 *     next to nothing;
 *   - what it starts in a quarter of a lease: a prefetched task starts
 *     long before its lease (renewed meanwhile anyway) could matter;
 *   - until the rate is first measured, the concurrency. */
#define PREFETCH_AUTO_MAX   1000
#define PREFETCH_HORIZON_MS 100
/* the start rate's window, and the first one: shorter, so that a drain
 * of a second or less does not spend a quarter of it claiming no more
 * than the threads (on SQLite, with processes taking turns on the write
 * lock, that was three times the transactions per task) */
#define RATE_WINDOW_MS 250
#define RATE_FIRST_MS  25

void
sked__wk_adapt_prefetch(sked_worker *w, int asked, int got, int64_t now)
{
	if (w->o.prefetch < 0) /* SKED_PREFETCH_OFF */
		return;
	if (w->o.prefetch > 0) {
		w->sh.ahead = w->o.prefetch;
		return;
	}
	/* tasks a pool thread took per second (started, not claimed, or
	 * prefetching would feed its own bound) */
	if (!w->sh.rate_at) {
		w->sh.rate_at = now;
		w->sh.rate_started = w->sh.nstarted;
	} else if (now - w->sh.rate_at >=
	           (w->sh.rate_known ? RATE_WINDOW_MS : RATE_FIRST_MS)) {
		w->sh.rate = (double)(w->sh.nstarted - w->sh.rate_started) *
		             1000.0 / (double)(now - w->sh.rate_at);
		w->sh.rate_known = 1;
		w->sh.rate_at = now;
		w->sh.rate_started = w->sh.nstarted;
	}
	if (got < asked) {
		w->sh.ahead = 0;
		return;
	}
	int64_t horizon = w->o.lease_ms / 4 < PREFETCH_HORIZON_MS
	                          ? w->o.lease_ms / 4
	                          : PREFETCH_HORIZON_MS;
	int want = w->sh.ahead > 0 ? w->sh.ahead * 2 : w->o.concurrency;
	if (!w->sh.rate_known) {
		/* no rate yet: hold ahead only as many as the threads have
		 * shown they take after their first tasks (none while those
		 * run on: slow handlers hold nothing back from others) */
		int64_t shown = w->sh.nstarted - w->o.concurrency;
		if (want > w->o.concurrency)
			want = w->o.concurrency;
		if (want > shown)
			want = shown > 0 ? (int)shown : 0;
	} else if (want > w->sh.rate * (double)horizon / 1000.0) {
		want = (int)(w->sh.rate * (double)horizon / 1000.0);
	}
	if (want > PREFETCH_AUTO_MAX)
		want = PREFETCH_AUTO_MAX;
	w->sh.ahead = want;
}

/* Hand claimed tasks to the pool; a task that cannot get a job goes
 * back at once on h (the claiming connection). */
static int
dispatch(sked_worker *w, sked *h, sked_claimed *c, int n, int qi,
         int64_t leased)
{
	int rc = SKED_OK;
	/* the parents of those that had some, before any of them runs */
	sked_parents **par = NULL;
	sked__wk_parents_read(h, c, n, &par);
	sked_job *first = NULL, **tail = &first;
	int njobs = 0;
	for (int i = 0; i < n; i++) {
		sked_job *j = calloc(1, sizeof *j);
		if (!j) {
			/* cannot run it: give the attempt back at once */
			free(j);
			sked_outcome o = {.id = c[i].id,
			                  .attempt = c[i].attempt,
			                  .max_attempts = c[i].max_attempts,
			                  .started_ms = c[i].started_ms,
			                  .what = SKED_FIN_UNSTARTED,
			                  .exit_code = -1,
			                  .error = "worker out of resources"};
			sked__ignore(sked__finish(h, w->node_id, &o, 1));
			rc = SKED_ENOMEM;
			sked__claimed_clear(&c[i]);
			if (par)
				sked__wk_parents_free(par[i]);
			continue;
		}
		j->w = w;
		j->parents = par ? par[i] : NULL;
		j->t = c[i];
		j->qi = qi;
		atomic_init(&j->cancel_fd, -1);
		j->since = sked__mono_ms();
		j->leased = leased;
		j->slot = -1;
		*tail = j;
		tail = &j->dnext;
		njobs++;
	}
	/* to the pool in one hold of the lock, in claim order */
	if (first) {
		pthread_mutex_lock(&w->sh.mu);
		for (sked_job *j = first, *nx; j; j = nx) {
			nx = j->dnext;
			j->dnext = NULL;
			sked__wk_move(w, j, JOB_QUEUED);
		}
		/* one thread a job: a signal with no thread waiting
		 * costs no system call */
		for (int k = 0; k < njobs; k++)
			pthread_cond_signal(&w->sh.cv_pool);
		pthread_mutex_unlock(&w->sh.mu);
	}
	free(par);
	free(c);
	return rc;
}

/* A claim on h failed with rc: said, counted, and marked unknown, since
 * it may have committed all the same (a reply lost with the connection;
 * sked__wk_resolve_unknown_claims finds out); a lost connection is
 * opened again. A lane's failure also stops the lanes. */
void
sked__wk_claim_failed(sked_worker *w, sked *h, int rc, int lane)
{
	sked__log(SKED_LOG_WARN, "claim failed: %s", sked_errmsg(h));
	pthread_mutex_lock(&w->sh.mu);
	w->sh.claim_unknown = 1;
	atomic_fetch_add(&w->sh.claim_failures, 1);
	if (lane)
		w->sh.lanes_go = 0;
	pthread_mutex_unlock(&w->sh.mu);
	if (rc == SKED_EUNAVAILABLE)
		sked__ignore(sked__wk_reconnect(w, h, SKED_CONN_CLAIMS));
}

void
sked__wk_claim_end(sked_worker *w, sked *h, unsigned long long seq,
                   int reserved, sked_claimed *c, int n, int qi, int64_t leased)
{
	pthread_mutex_lock(&w->sh.mu);
	while (w->sh.turn != seq - 1)
		pthread_cond_wait(&w->sh.cv_lane, &w->sh.mu);
	pthread_mutex_unlock(&w->sh.mu);
	if (n > 0 || c)
		(void)dispatch(w, h, c, n, qi, leased);
	pthread_mutex_lock(&w->sh.mu);
	w->sh.reserved -= reserved;
	w->sh.claims_inflight--;
	w->sh.turn = seq;
	atomic_store(&w->sh.claims_dispatched, seq);
	pthread_cond_broadcast(&w->sh.cv_lane);
	pthread_mutex_unlock(&w->sh.mu);
	if (n > 0) /* an idle heartbeat and watchdog: to work */
		sked__wk_side_kick(w);
}

int
sked__wk_finish_and_claim(sked_worker *w, sked *h, sked_claim_req *req,
                          int *reserved, int most, sked_claimed **c, int *n)
{
	int nd = 0;
	sked_job *done = sked__wk_take_done(w, FINISH_MAX, 0, &nd);
	sked_outcome *o = done ? sked__wk_outcomes(w, done, nd) : NULL;
	if (done && !o) {
		sked__wk_requeue_done(w, done);
		done = NULL;
		nd = 0;
	}
	if (done) {
		/* recording them frees their share of the backlog; this
		 * claim's own reservation is its to fill, and what it takes
		 * beyond it is reserved too, so that no other claim in
		 * flight counts on the same room */
		pthread_mutex_lock(&w->sh.mu);
		int room = sked__wk_free_slots_locked(w) + *reserved;
		int by_slots = w->o.concurrency + w->sh.ahead - w->sh.nheld -
		               (w->sh.reserved - *reserved);
		req->limit = room < by_slots ? room : by_slots;
		if (req->limit > most)
			req->limit = most > *reserved ? most : *reserved;
		if (req->limit < 0)
			req->limit = 0;
		if (req->limit > *reserved) {
			w->sh.reserved += req->limit - *reserved;
			*reserved = req->limit;
		}
		pthread_mutex_unlock(&w->sh.mu);
	}
	/* with nothing to record sked__take makes the plain claim, a
	 * lighter statement */
	int rc = sked__take(h, w->node_id, o, nd, req, c, n);
	if (done) {
		if (rc == SKED_OK) {
			atomic_fetch_add(&w->sh.rec_with_claims, nd);
			sked__wk_recorded(w, done, o, nd);
		} else {
			sked__log(SKED_LOG_WARN,
			          "cannot record %d result(s) yet: %s", nd,
			          sked_errmsg(h));
			sked__wk_unrecorded(w, done, o, nd);
			sked__wk_note(w, &w->sh.finish_errors, NULL, 0);
		}
	}
	free(o);
	return rc;
}

/* ---- the lane threads ---- */

typedef struct sked_lane {
	sked_worker *w;
	sked *h; /* owned: this lane's connection, open while it claims */
	pthread_t th;
	int started;
	int64_t used_ms; /* monotonic ms of its last claim */
} sked_lane;

/* A lane about to claim has a connection (w->sh.mu held, released
 * meanwhile): opened now if it had none. 0: none to be had (the cap, or
 * refused): the lanes stop until the back-off has passed, and the loop
 * claims alone meanwhile. */
static int
lane_connection(sked_lane *l)
{
	sked_worker *w = l->w;
	if (l->h)
		return 1;
	pthread_mutex_unlock(&w->sh.mu);
	l->h = sked__wk_conn_open(w, WK_CONN_LANE);
	pthread_mutex_lock(&w->sh.mu);
	if (l->h) {
		w->sh.lanes_backoff = 0;
		l->used_ms = sked__mono_ms();
		return 1;
	}
	w->sh.lanes_refused_until = sked__wk_conn_backoff(&w->sh.lanes_backoff);
	w->sh.lanes_go = 0;
	sked__wk_ring(w); /* the loop claims */
	return 0;
}

/* A lane's connection unused for CONN_IDLE_MS is closed (w->sh.mu held,
 * released meanwhile). */
static void
lane_idle(sked_lane *l)
{
	sked_worker *w = l->w;
	if (!l->h || sked__mono_ms() - l->used_ms < CONN_IDLE_MS)
		return;
	pthread_mutex_unlock(&w->sh.mu);
	sked__wk_conn_close(w, &l->h, WK_CONN_LANE);
	pthread_mutex_lock(&w->sh.mu);
}

static void
wait_ms(sked_worker *w, int64_t ms)
{
	struct timespec until;
	sked__wk_deadline(&until, ms);
	pthread_cond_timedwait(&w->sh.cv_lane, &w->sh.mu, &until);
}

/* How much room a lane waits for before it claims (w->sh.mu held): a
 * share of the slots and the prefetch, so that the lanes' claims
 * overlap instead of taking turns; less after PREFETCH_LINGER_MS. */
static int
lane_chunk(const sked_worker *w)
{
	int chunk = (w->o.concurrency + w->sh.ahead) / (2 * w->lane.n);
	return chunk < 1 ? 1 : chunk;
}

/* The most a lane claims at once (w->sh.mu held): the slots and the
 * prefetch shared among the lanes. */
static int
lane_share(const sked_worker *w)
{
	int share = (w->o.concurrency + w->sh.ahead) / w->lane.n;
	return share < 1 ? 1 : share;
}

static void *
lane_main(void *arg)
{
	sked_lane *l = arg;
	sked_worker *w = l->w;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	int64_t first_short = 0, backoff = 0;
	pthread_mutex_lock(&w->sh.mu);
	while (!w->sh.lane_exit) {
		int room = sked__wk_free_slots_locked(w);
		int go = w->sh.lanes_go && !atomic_load(&w->sh.stop) &&
		         !w->sh.claim_unknown && room > 0;
		if (!go) {
			first_short = 0;
			lane_idle(l);
			wait_ms(w, 100);
			continue;
		}
		if (!lane_connection(l))
			continue;
		if (room < lane_chunk(w)) {
			int64_t now = sked__mono_ms();
			if (!first_short)
				first_short = now;
			if (now - first_short < PREFETCH_LINGER_MS) {
				wait_ms(w, PREFETCH_LINGER_MS -
				                   (now - first_short));
				continue;
			}
		}
		first_short = 0;
		/* a share of the room, so that the other lanes find some
		 * while this claim is on the wire (a claim of all of it
		 * would leave them waiting, and the lanes take turns) */
		int share = lane_share(w);
		if (room > share)
			room = share;
		int qi = w->nqueues ? 0 : -1;
		sked_claim_req req = {
		        .node_id = w->node_id,
		        .queue = w->nqueues ? w->queues[0].name : NULL,
		        .limit = room,
		        .lease_ms = w->o.lease_ms,
		        .kinds = w->kinds,
		};
		unsigned long long seq = sked__wk_claim_begin_locked(w, room);
		pthread_mutex_unlock(&w->sh.mu);

		sked_claimed *c = NULL;
		int n = 0, rc = SKED_OK;
		int64_t sent = sked__mono_ms();
		/* a queue limited since the backlog began claims through
		 * limited.c, which the loop does; sked__take_way says which
		 * claim the door would make (the one place it is chosen) */
		int way = sked__take_way(l->h, &req);
		int plain = way != SKED_TAKE_LIMITED;
		/* lanes run only during a backlog: outcomes ride with their
		 * claims, and the finisher leaves them to the lanes (the loop,
		 * which tells it otherwise, does not claim meanwhile) */
		if (w->fused && way == SKED_TAKE_FUSED)
			atomic_store(&w->sh.fusing, 1);
		if (plain)
			rc = way == SKED_TAKE_FUSED
			             ? sked__wk_finish_and_claim(w, l->h, &req,
			                                         &room, share,
			                                         &c, &n)
			             : sked__take(l->h, w->node_id, NULL, 0,
			                          &req, &c, &n);
		sked__wk_note(w, rc == SKED_OK ? NULL : &w->sh.claim_errors,
		              rc == SKED_OK ? &w->sh.claim_hist : NULL,
		              sked__mono_ms() - sent);
		/* the loop finds out, once no claim is in flight */
		if (rc != SKED_OK)
			sked__wk_claim_failed(w, l->h, rc, 1);
		int got = n;
		sked__wk_claim_end(w, l->h, seq, room, c, n, qi, sent);
		l->used_ms = sked__mono_ms();
		pthread_mutex_lock(&w->sh.mu);
		if (rc == SKED_OK && plain && req.limit == 0) {
			/* only recorded outcomes (no room was left once they
			 * were taken): says nothing of the backlog */
			backoff = 0;
		} else if (rc == SKED_OK && plain) {
			sked__wk_adapt_prefetch(w, req.limit, got,
			                        sked__mono_ms());
			w->sh.backlog = got == req.limit && got > 0;
			if (!w->sh.backlog) {
				/* drained: the finisher records at once again
				 * until the loop's next claim says otherwise */
				w->sh.lanes_go = 0;
				atomic_store(&w->sh.fusing, 0);
			}
			backoff = 0;
		} else {
			w->sh.lanes_go = 0;
		}
		sked__wk_ring(w); /* the loop claims when the lanes stop */
		if (rc != SKED_OK) {
			backoff = backoff ? backoff * 2 : 50;
			if (backoff > 2000)
				backoff = 2000;
			wait_ms(w, backoff);
		}
	}
	pthread_mutex_unlock(&w->sh.mu);
	return NULL;
}

/* How many lanes (claim connections in flight) this worker uses: one
 * on SQLite, whose single write lock the lanes would only fight over;
 * else the worker's setting (sked_worker_set_lanes), SKED_LANES_DEFAULT
 * when unset; never more than the concurrency. */
static int
lanes_wanted(const sked_worker *w)
{
	if (w->h->strategy->id == SKED_STRAT_SQLITE ||
	    strcmp(w->h->dialect->name, "sqlite") == 0)
		return 1; /* whatever the strategy: one write lock */
	int n = w->lanes_max > 0 ? w->lanes_max : SKED_LANES_DEFAULT;
	if (w->nqueues > 1)
		return 1; /* lanes claim one queue; several take turns */
	return n > w->o.concurrency ? w->o.concurrency : n;
}

int
sked__wk_lanes_start(sked_worker *w)
{
	int want = lanes_wanted(w);
	w->lane.n = 0;
	w->sh.lane_exit = 0;
	if (want < 2)
		return SKED_OK;
	w->lane.v = calloc((size_t)want, sizeof *w->lane.v);
	if (!w->lane.v)
		return sked__fail(w->h, SKED_ENOMEM, "out of memory");
	w->lane.alloc = want;
	w->sh.lanes_refused_until = 0;
	w->sh.lanes_backoff = 0;
	/* each lane opens its connection when a backlog begins, and closes
	 * it once unused for CONN_IDLE_MS (lane_connection, lane_idle).
	 * The lanes started read w->lane.n (their share, the room) under
	 * w->sh.mu: it is counted under the lock, which they wait for */
	int rc = SKED_OK;
	pthread_mutex_lock(&w->sh.mu);
	for (int i = 0; i < want; i++) {
		sked_lane *l = &w->lane.v[i];
		l->w = w;
		l->h = NULL;
		if (pthread_create(&l->th, NULL, lane_main, l) != 0) {
			rc = SKED_ENOMEM;
			break;
		}
		l->started = 1;
		w->lane.n++;
	}
	pthread_mutex_unlock(&w->sh.mu);
	if (rc != SKED_OK)
		return sked__fail(w->h, rc, "cannot start a lane thread");
	return SKED_OK;
}

void
sked__wk_lanes_stop(sked_worker *w)
{
	if (!w->lane.v)
		return;
	pthread_mutex_lock(&w->sh.mu);
	w->sh.lane_exit = 1;
	w->sh.lanes_go = 0;
	pthread_cond_broadcast(&w->sh.cv_lane);
	pthread_mutex_unlock(&w->sh.mu);
	for (int i = 0; i < w->lane.alloc; i++) {
		sked_lane *l = &w->lane.v[i];
		if (l->started)
			pthread_join(l->th, NULL);
		sked__wk_conn_close(w, &l->h, WK_CONN_LANE);
	}
	free(w->lane.v);
	w->lane.v = NULL;
	w->lane.alloc = 0;
	w->lane.n = 0;
}

SKED_API int
sked_worker_set_lanes(sked_worker *w, int lanes)
{
	if (!w)
		return SKED_EINVAL;
	if (lanes < 0 || lanes > 64)
		return sked__fail(w->h, SKED_EINVAL,
		                  "lanes %d is out of range: 0 (the default) "
		                  "or 1-64",
		                  lanes);
	w->lanes_max = lanes;
	return SKED_OK;
}
