/*
 * retry.c — the one rule for trying a statement or transaction again.
 *
 * Layer: the handle core, beside api.c's querying and transactions. A
 * claim, a finish or a lease renewal that the database rolled back as a
 * deadlock (MySQL 1213, a Galera certification failure), a lock wait
 * timeout (1205) or a busy SQLite database is tried again whole, a few
 * times, after a short random pause so that the two sides of a deadlock
 * do not meet again. Never on a borrowed connection: its transaction is
 * the application's to retry.
 */
#include "internal.h"

#include <stdlib.h>
#include <time.h>

#include "util/log.h"

int
sked__retry_pause(sked *h, int rc, int attempt, int tries, const char *what)
{
	if (rc != SKED_EBUSY || h->db->err.kind != SKED_DBE_RETRY ||
	    h->borrowed || attempt >= tries)
		return 0;
	sked__rollback(h);
	h->retries++;
	sked__log(SKED_LOG_DEBUG,
	          "%s: try %d of %d failed (%s); trying again (%lu retries "
	          "on this handle)",
	          what, attempt, tries, h->errmsg, h->retries);
	/* 2..12 ms, then 4..24 ms: short next to a claim's own lock waits */
	long ms = (2 + random() % 11) * attempt;
	struct timespec ts = {0, ms * 1000000L};
	nanosleep(&ts, NULL);
	return 1;
}
