/*
 * worker/claims.c — the loop's claims of one round: one claim per queue
 * with free slots (fused with the outcomes waiting where the handle
 * fuses, and while a workflow is under way: w->loop.handing), and the
 * recovery after a claim whose reply was lost.
 *
 * Layer: the worker runtime (worker.h); called by the loop in worker.c
 * only, which is the one thread that runs them.
 */
#include "worker/worker.h"

#include <limits.h>
#include <stdlib.h>

#include "model/lease.h"
#include "model/limits.h"
#include "util/log.h"

/* Claim for every queue with free slots. Returns 1 when a claim came back
 * full (there is probably more to take at once). */
int
sked__wk_claim_some(sked_worker *w, int *db_failed)
{
	int full = 0;
	w->loop.claimed_last = 0;
	w->loop.sent_last = 0;
	w->loop.limited_last = 0;
	int nq = w->nqueues ? w->nqueues : 1;
	for (int qi = 0; qi < nq; qi++) {
		pthread_mutex_lock(&w->sh.mu);
		int free_slots = sked__wk_free_slots_locked(w);
		if (w->nqueues && w->queues[qi].max > 0) {
			int qfree = w->queues[qi].max - w->queues[qi].held;
			if (qfree < free_slots)
				free_slots = qfree;
		}
		if (free_slots <= 0) {
			pthread_mutex_unlock(&w->sh.mu);
			continue;
		}
		int backlog = w->sh.backlog;
		int waiting = w->sh.done_head != NULL; /* outcomes to carry */
		unsigned long long seq =
		        sked__wk_claim_begin_locked(w, free_slots);
		pthread_mutex_unlock(&w->sh.mu);
		sked_claim_req req = {
		        .node_id = w->node_id,
		        .queue = w->nqueues ? w->queues[qi].name : NULL,
		        .limit = free_slots,
		        .lease_ms = w->o.lease_ms,
		        .kinds = w->kinds,
		};
		sked_claimed *c = NULL;
		int n = 0;
		int64_t sent = sked__mono_ms();
		/* limited queues claim apart (sked__take picks limited.c's
		 * claim), never fused: sked__take_way says which claim the
		 * door would make, the one place it is chosen. Outcomes ride
		 * with claims while there is a backlog (the last claim came
		 * back full); when the queue is drained the finisher records
		 * them at once on its own connection, and the claim
		 * connection stays free for the next new task */
		w->loop.sent_last++;
		int way = sked__take_way(w->h, &req);
		int plain = way != SKED_TAKE_LIMITED;
		w->loop.limited_last |= !plain;
		int fuse = qi == 0 && (backlog || w->loop.handing) &&
		           way == SKED_TAKE_FUSED;
		int carries = fuse && waiting;
		if (qi == 0 && w->fused)
			/* tell the finisher whether outcomes ride with claims */
			atomic_store(&w->sh.fusing, fuse);
		int rc = fuse ? sked__wk_finish_and_claim(w, w->h, &req,
		                                          &free_slots, INT_MAX,
		                                          &c, &n)
		              : sked__take(w->h, w->node_id, NULL, 0, &req, &c,
		                           &n);
		sked__wk_note(w, rc == SKED_OK ? NULL : &w->sh.claim_errors,
		              rc == SKED_OK ? &w->sh.claim_hist : NULL,
		              sked__mono_ms() - sent);
		int got = n;
		if (qi == 0 && w->fused && rc == SKED_OK &&
		    (n > 0 || carries)) {
			int kids = 0;
			for (int i = 0; i < n; i++)
				kids |= c[i].has_parents;
			w->loop.handing = kids;
		}
		/* on a failure, what was claimed but read back runs */
		sked__wk_claim_end(w, w->h, seq, free_slots, c, n,
		                   w->nqueues ? qi : -1, sent);
		if (rc != SKED_OK) {
			/* found out before going on */
			sked__wk_claim_failed(w, w->h, rc, 0);
			*db_failed = 1;
			return 0;
		}
		pthread_mutex_lock(&w->sh.mu);
		sked__wk_adapt_prefetch(w, req.limit, got, sked__mono_ms());
		if (qi == 0)
			w->sh.backlog = got == req.limit && got > 0;
		/* a backlog on one plain queue: the lanes take over */
		if (qi == 0 && w->lane.n && nq == 1 && plain && w->sh.backlog &&
		    !(w->nqueues && w->queues[0].max > 0) &&
		    sked__mono_ms() >= w->sh.lanes_refused_until) {
			w->sh.lanes_go = 1;
			pthread_cond_broadcast(&w->sh.cv_lane);
		}
		pthread_mutex_unlock(&w->sh.mu);
		if (got == req.limit && got > 0)
			full = 1;
		w->loop.claimed_last += got;
	}
	return full;
}

/* After a claim that failed: tasks this node holds with no job here were
 * claimed by it all the same (the claim committed, its reply was lost).
 * No claim is under way (the loop is the only claimer), so every held
 * task without a job is one of those. */
int
sked__wk_resolve_unknown_claims(sked_worker *w)
{
	int64_t *ids = NULL;
	int *att = NULL;
	int n = 0;
	int rc = sked__held(w->h, w->node_id, &ids, &att, &n);
	if (rc == SKED_OK)
		rc = sked__wk_give_back_strays(w, w->h, ids, att, n);
	else if (rc == SKED_EUNAVAILABLE)
		sked__ignore(sked__wk_reconnect(w, w->h, SKED_CONN_CLAIMS));
	free(ids);
	free(att);
	return rc;
}
