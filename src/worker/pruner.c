/*
 * worker/pruner.c — the worker's pruner: retention while workers run.
 *
 * Layer: the worker (worker.h), on the model (sked_prune, the cluster
 * locks). A thread started only when some status has an age
 * (sked_worker_set_retention), with a connection of its own (w->prune.h) for
 * the length of a turn, so that between turns a worker holds its usual
 * two. Retention is the cluster's chore: only the leader (lead.c) prunes,
 * about once a minute, and it still tries the cluster lock "sked-prune"
 * without waiting, so that one node at a time does the deleting even
 * while two believe they lead (or an older sked prunes too). A turn that
 * cannot have a connection (the cap, or refused) comes back 10 s later. A turn removes at most PRUNE_TURN tasks per status and
 * comes back a second later while it has not caught up. It never touches
 * the claim loop's connection, so claims do not wait for it.
 */
#include "worker/worker.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "util/log.h"

#define PRUNE_LOCK  "sked-prune"
#define PRUNE_TURN  20000  /* tasks per status and turn */
#define PRUNE_EVERY 60000  /* ms between turns once caught up */
#define PRUNE_TTL   300000 /* the lock's lease: longer than a turn */

static const int ended[3] = {SKED_SUCCEEDED, SKED_DEAD, SKED_CANCELLED};

/* One turn; returns when the next one is due (monotonic ms). */
static int64_t
turn(sked_worker *w)
{
	int64_t now = sked__mono_ms(), token = 0;
	int rc = sked_lock_acquire(w->prune.h, PRUNE_LOCK, w->node_id,
	                           PRUNE_TTL, NULL, &token);
	if (rc == SKED_OK)
		sked__log(SKED_LOG_DEBUG, "pruner: this node prunes");
	if (rc == SKED_ELOCKED)
		return now + PRUNE_EVERY; /* another node prunes */
	if (rc != SKED_OK) {
		sked__log(SKED_LOG_DEBUG, "pruner: %s",
		          sked_errmsg(w->prune.h));
		if (rc == SKED_EUNAVAILABLE)
			sked__ignore(sked__wk_reconnect(w, w->prune.h,
			                                SKED_CONN_PRUNER));
		return now + 10000;
	}
	int64_t total = 0;
	int behind = 0;
	for (int i = 0; i < 3 && !atomic_load(&w->sh.side_exit); i++) {
		if (w->keep_ms[i] <= 0)
			continue;
		int64_t n = 0;
		rc = sked_prune(w->prune.h, ended[i], w->keep_ms[i], PRUNE_TURN,
		                &n);
		total += n;
		if (rc != SKED_OK) {
			sked__log(SKED_LOG_WARN, "pruner: %s",
			          sked_errmsg(w->prune.h));
			break;
		}
		behind |= n >= PRUNE_TURN;
	}
	if (sked_lock_release(w->prune.h, PRUNE_LOCK, w->node_id, token,
	                      NULL) != SKED_OK)
		sked__log(SKED_LOG_DEBUG, "pruner: %s",
		          sked_errmsg(w->prune.h));
	if (total)
		sked__log(SKED_LOG_INFO,
		          "pruner: removed %lld ended task(s) past their "
		          "retention",
		          (long long)total);
	return sked__mono_ms() + (behind ? 1000 : PRUNE_EVERY);
}

void *
sked__wk_pruner_main(void *arg)
{
	sked_worker *w = arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	int64_t next = sked__mono_ms() + 2000; /* soon after the start */
	unsigned long seen = 0;
	while (!atomic_load(&w->sh.side_exit)) {
		if (sked__mono_ms() >= next && !sked__wk_leads(w)) {
			/* retention is the leader's (lead.c): look again
			 * soon after this node comes to lead */
			next = sked__mono_ms() + 1000;
		} else if (sked__mono_ms() >= next) {
			/* a connection for the turn only: between turns a
			 * worker keeps its two */
			w->prune.h = sked__wk_conn_open(w, WK_CONN_PRUNER);
			if (w->prune.h) {
				sked__wk_waits_conn(w, w->prune.h,
				                    WAIT_SLOT_PRUNER);
				next = turn(w);
			} else {
				next = sked__mono_ms() + 10000;
			}
			sked__wk_conn_close(w, &w->prune.h, WK_CONN_PRUNER);
		}
		sked__wk_side_sleep(w, SIDE_IDLE_MS, &seen);
	}
	return NULL;
}
