/*
 * worker/watchdog.c — the watchdog thread: it never touches the
 * database; it stops handlers before a lease that could not be renewed
 * can run out, and says so truthfully after the worker was frozen. Where
 * the database cannot name a lock's holder (SQLite) it also tells long
 * lock waits (waits.c).
 *
 * Layer: the worker (worker.h); no SQL.
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

/* Stop every handler whose lease may be about to run out: its lease was
 * last known good at the later of its claim and the last renewal that
 * listed it as held (both as sent, so the database's own expiry is later
 * still).
 * stalled_ms is how long the watchdog itself could not run: when the
 * whole worker was frozen, leases may have run out before this turn, and
 * the log says so rather than claim a stop in time. */
static void
stop_unleased(sked_worker *w, int64_t now, int64_t stalled_ms)
{
	pthread_mutex_lock(&w->sh.mu);
	int n = 0, late = 0, guarded = 0;
	for (sked_job *j = w->sh.held; j; j = j->hnext) {
		int64_t basis = sked__wk_lease_basis(j);
		if (now <= sked__wk_stop_at(w, basis))
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
	pthread_mutex_unlock(&w->sh.mu);
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
	/* a database that cannot name a holder: told from here, no SQL */
	int tells = !(w->h->dialect->caps & SKED_CAP_WAIT_HOLDER);
	unsigned long seen = 0;
	int64_t planned = 0; /* the sleep meant before this turn */
	while (!atomic_load(&w->sh.side_exit)) {
		int64_t now = sked__mono_ms();
		stop_unleased(w, now, now - last - planned);
		if (tells)
			sked__wk_check_waits(w, NULL);
		last = now;
		/* idle (nothing held, no wait to tell): a second at most,
		 * a claim that takes tasks kicks it */
		pthread_mutex_lock(&w->sh.mu);
		int idle = w->sh.nheld == 0 && !tells;
		pthread_mutex_unlock(&w->sh.mu);
		planned = idle ? SIDE_IDLE_MS : 50;
		sked__wk_side_sleep(w, planned, &seen);
	}
	return NULL;
}
