/*
 * worker/conns.c — the worker's extra connections: opened when a role
 * needs one, under the worker's cap (--max-connections), and a refusal
 * by the server taken in stride.
 *
 * Layer: the worker (worker.h), on the handle core (sked__clone). The
 * loop's connection (w->h) is the caller's and the first one: it alone
 * may stop the worker when it cannot be had. Every other connection (the
 * heartbeat's, the finisher's, the lanes', the pruner's) is opened here:
 *   - the cap: w->max_conns counts every connection of the worker, the
 *     loop's included; the heartbeat's always has its place (it keeps
 *     the leases), the others share what is left (w->sh.extra counts
 *     them);
 *   - a refusal (`too many clients`, a role's CONNECTION LIMIT, a
 *     pooler's limit, or any other failure to connect) returns NULL; the
 *     caller goes on without (docs/design.md, "Connections") and tries
 *     again after its back-off. It is logged once, at warning level, until
 *     a connection opens again.
 */
#include "worker/worker.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "util/log.h"

/* Room under the cap for one more connection; 1: reserved. */
static int
reserve(sked_worker *w, int heartbeat)
{
	if (heartbeat || w->max_conns <= 0) {
		if (!heartbeat)
			atomic_fetch_add(&w->sh.extra, 1);
		return 1;
	}
	int have = atomic_load(&w->sh.extra);
	for (;;) {
		/* the loop's and the heartbeat's come first */
		if (have + 2 >= w->max_conns)
			return 0;
		if (atomic_compare_exchange_weak(&w->sh.extra, &have, have + 1))
			return 1;
	}
}

static const char *const role_names[] = {"heartbeat", "finisher", "lane",
                                         "pruner"};

sked *
sked__wk_conn_open(sked_worker *w, int which)
{
	int heartbeat = which == WK_CONN_BEAT;
	const char *role = role_names[which];
	if (!reserve(w, heartbeat))
		return NULL; /* the cap: not a refusal, nothing to log */
	sked *c = NULL;
	int rc = sked__clone(w->h, &c);
	if (rc == SKED_OK) {
		atomic_fetch_add(&w->sh.conns_opened, 1);
		if (atomic_exchange(&w->sh.refused_told, 0))
			sked__log(SKED_LOG_INFO,
			          "worker %s: the database takes connections "
			          "again (the %s's)",
			          w->node_id, role);
		return c;
	}
	atomic_fetch_add(&w->sh.conns_refused, 1);
	if (!atomic_exchange(&w->sh.refused_told, 1))
		sked__log(SKED_LOG_WARN,
		          "worker %s: cannot open the %s's connection (%s); "
		          "going on with the connections it has, trying "
		          "again later",
		          w->node_id, role,
		          c ? sked_errmsg(c) : "out of memory");
	else
		sked__log(SKED_LOG_DEBUG, "cannot open the %s's connection: %s",
		          role, c ? sked_errmsg(c) : "out of memory");
	sked_close(c);
	if (!heartbeat)
		atomic_fetch_sub(&w->sh.extra, 1);
	return NULL;
}

void
sked__wk_conn_close(sked_worker *w, sked **h, int which)
{
	if (!*h)
		return;
	sked_close(*h);
	*h = NULL;
	if (which != WK_CONN_BEAT)
		atomic_fetch_sub(&w->sh.extra, 1);
}

int64_t
sked__wk_conn_backoff(int64_t *backoff)
{
	*backoff = *backoff ? *backoff * 2 : CONN_RETRY_MIN_MS;
	if (*backoff > CONN_RETRY_MAX_MS)
		*backoff = CONN_RETRY_MAX_MS;
	return sked__mono_ms() + *backoff;
}

SKED_API int
sked_worker_set_max_connections(sked_worker *w, int n)
{
	if (!w)
		return SKED_EINVAL;
	if (n != 0 && (n < 2 || n > 1000))
		return sked__fail(w->h, SKED_EINVAL,
		                  "max connections %d is out of range: 0 (no "
		                  "cap) or 2-1000 (the claim loop's and the "
		                  "heartbeat's at least)",
		                  n);
	w->max_conns = n;
	return SKED_OK;
}
