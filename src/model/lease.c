/*
 * lease.c — the leases a node holds: renewing them, listing them, taking
 * back those that ran out, and the node rows themselves.
 *
 * Layer: the model (see lease.h). Finishing a held task is outcome.c's;
 * claiming one is take.c's. Row locks: sked__renew locks the rows this
 * node holds (on PostgreSQL skipping rows another transaction holds, and
 * trying again for those); sked__reap locks one expired row at a time, in
 * its own transaction, so it never holds two task rows at once. A renewal
 * rolled back as a deadlock or lock wait timeout is retried (bounded).
 */
#include "model/lease.h"

#include "model/ending.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"

/* tries of a renewal over deadlocks and busy databases */
#define TRIES 3
/* rounds of a renewal while rows it skipped (held by another
 * transaction) are left: 10, 20, 30 and 40 ms apart */
#define SKIPPED_ROUNDS 5

static int
list_held(sked *h, const char *node_id, int64_t **ids, int **attempts, int *n)
{
	sked_val p = SKED_TEXTV(node_id);
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_HELD, &p, 1, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot list held tasks");
	if (r.nrows > 0) {
		*ids = malloc(sizeof **ids * (size_t)r.nrows);
		*attempts = malloc(sizeof **attempts * (size_t)r.nrows);
		if (!*ids || !*attempts) {
			free(*ids);
			free(*attempts);
			*ids = NULL;
			*attempts = NULL;
			sked__res_clear(&r);
			return sked__fail(h, SKED_ENOMEM, "out of memory");
		}
		for (int i = 0; i < r.nrows; i++) {
			(*ids)[i] = sked__res_int(&r, i, 0);
			(*attempts)[i] = (int)sked__res_int(&r, i, 1);
		}
		*n = r.nrows;
	}
	sked__res_clear(&r);
	return SKED_OK;
}

int
sked__held(sked *h, const char *node_id, int64_t **ids, int **attempts, int *n)
{
	*ids = NULL;
	*attempts = NULL;
	*n = 0;
	return list_held(h, node_id, ids, attempts, n);
}

/* One renewal statement, tried again over deadlocks and busy databases;
 * *skipped: the rows it left because another transaction held them, where
 * the dialect says (0 elsewhere). */
static int
renew_once(sked *h, const sked_val p[2], int64_t *skipped)
{
	int rc;
	for (int attempt = 1;; attempt++) {
		sked_res r = {0};
		rc = sked__q(h, SKED_SQL_RENEW, p, 2, &r);
		if (rc == SKED_OK && r.nrows == 1)
			*skipped = sked__res_int(&r, 0, 0);
		sked__res_clear(&r);
		if (!sked__retry_pause(h, rc, attempt, TRIES,
		                       "renewing leases"))
			return rc;
	}
}

int
sked__renew(sked *h, const char *node_id, int64_t lease_ms, int64_t **ids,
            int **attempts, int *n)
{
	*ids = NULL;
	*attempts = NULL;
	*n = 0;
	sked_val p[2] = {SKED_TEXTV(node_id), SKED_INTV(lease_ms)};
	int rc;
	for (int round = 1;; round++) {
		int64_t skipped = 0;
		rc = renew_once(h, p, &skipped);
		if (rc != SKED_OK)
			return sked__fail_db(h, rc, "cannot renew leases");
		if (skipped <= 0)
			break;
		/* rows another transaction holds were left (a dialect that
		 * skips them says how many): almost always this node's own
		 * finish, done in a few ms. A lock held longer fails the
		 * renewal, as a renewal that waited on it did: the worker must
		 * not count on leases this one did not extend, so its watchdog
		 * stops their handlers before the leases can run out. */
		if (round == SKIPPED_ROUNDS)
			return sked__fail(h, SKED_EBUSY,
			                  "cannot renew leases: %lld running "
			                  "task(s) of this node are locked by "
			                  "another transaction",
			                  (long long)skipped);
		struct timespec ts = {0, 10000000L * round};
		nanosleep(&ts, NULL);
	}
	return list_held(h, node_id, ids, attempts, n);
}

int
sked__reap(sked *h, int *taken)
{
	*taken = 0;
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_REAP_SELECT, NULL, 0, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot look for expired leases");
	for (int i = 0; rc == SKED_OK && i < r.nrows; i++) {
		int64_t id = sked__res_int(&r, i, 0);
		int attempt = (int)sked__res_int(&r, i, 1);
		const char *node = sked__res_text(&r, i, 2);
		int64_t started = sked__res_int(&r, i, 3);
		char err[256];
		snprintf(err, sizeof err,
		         "lease expired on node %.128s (node died or stalled)",
		         node ? node : "?");
		sked_val p[3] = {SKED_INTV(id), SKED_INTV(attempt),
		                 SKED_TEXTV(err)};
		if ((rc = sked__begin(h, 1)) != SKED_OK)
			break;
		rc = sked__q(h, SKED_SQL_REAP, p, 3, NULL);
		if (rc == SKED_OK && sked__affected(h) == 1) {
			rc = sked__run_insert(h, id, attempt, node, started,
			                      SKED_OUTCOME_LEASE_EXPIRED, -1,
			                      err, NULL);
			/* attempts spent: dead, and out of the hot table */
			if (rc == SKED_OK)
				rc = sked__move_done(h, &id, 1);
			if (rc == SKED_OK)
				(*taken)++;
		}
		if (rc == SKED_OK)
			rc = sked__commit(h);
		else
			sked__rollback(h);
		if (rc == SKED_OK && sked__affected(h) >= 0)
			sked__log(SKED_LOG_DEBUG, "took back task %lld",
			          (long long)id);
	}
	sked__res_clear(&r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot take back expired leases");
	if (*taken)
		sked__log(SKED_LOG_INFO,
		          "took back %d task(s) whose lease had expired",
		          *taken);
	return SKED_OK;
}

int
sked__outstanding(sked *h, const char *queue, const char *kinds, int64_t *count)
{
	sked_val p[2] = {SKED_TEXTV(queue), SKED_TEXTV(kinds)};
	sked_res r = {0};
	int rc = sked__q(h, queue ? SKED_SQL_EMPTY_Q : SKED_SQL_EMPTY_ANY, p, 2,
	                 &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot count outstanding tasks");
	*count = r.nrows ? sked__res_int(&r, 0, 0) : 0;
	sked__res_clear(&r);
	return SKED_OK;
}

/* ---- nodes ---- */

/* A node that starts under the id of a dead one must not renew the
 * leases that one held: they would never end. Expire them now, so that
 * the reaper takes them back and records the lost attempts. */
static int
expire_previous(sked *h, const char *node_id)
{
	sked_val p[2] = {SKED_TEXTV(node_id), SKED_INTV(-1)};
	int rc = sked__q(h, SKED_SQL_NODE_EXPIRE, p, 2, NULL);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc,
		                     "cannot end the leases of a "
		                     "previous node of this id");
	if (sked__affected(h) > 0)
		sked__log(SKED_LOG_INFO,
		          "node %s restarted: %lld lease(s) of its previous "
		          "run will be taken back",
		          node_id, (long long)sked__affected(h));
	return SKED_OK;
}

int
sked__node_register(sked *h, const char *node_id, int64_t lease_ms, int slots)
{
	char host[256] = "";
	if (gethostname(host, sizeof host - 1) != 0)
		snprintf(host, sizeof host, "unknown");
	sked_val p[7] = {SKED_TEXTV(node_id),
	                 SKED_TEXTV(host),
	                 SKED_INTV(getpid()),
	                 SKED_INTV(lease_ms),
	                 SKED_TEXTV(h->strategy->name),
	                 SKED_TEXTV(SKED_VERSION),
	                 SKED_INTV(slots)};
	int rc = sked__q(h, SKED_SQL_NODE_INSERT, p, 7, NULL);
	if (rc == SKED_OK)
		return expire_previous(h, node_id);
	if (sked__err_kind(h) != SKED_DBE_UNIQUE)
		return sked__fail_db(h, rc, "cannot register the node");
	/* A node of this id exists: a restart after a crash is fine, a
	 * second live process with the same id is not. */
	sked_res r = {0};
	rc = sked__q(h, SKED_SQL_NODE_GET, p, 1, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot read the node");
	if (r.nrows == 1) {
		int64_t age = sked__res_int(&r, 0, 2);
		int64_t lease = sked__res_int(&r, 0, 3);
		if (age < lease) {
			rc = sked__fail(
			        h, SKED_ESTATE,
			        "node id '%s' is in use by a live node "
			        "(pid %lld on %s, heartbeat %lld ms ago)",
			        node_id, (long long)sked__res_int(&r, 0, 1),
			        sked__res_text(&r, 0, 0), (long long)age);
			sked__res_clear(&r);
			return rc;
		}
	}
	sked__res_clear(&r);
	if ((rc = sked__begin(h, 0)) != SKED_OK)
		return sked__fail_db(h, rc, "cannot register the node");
	rc = sked__q(h, SKED_SQL_NODE_DELETE, p, 1, NULL);
	if (rc == SKED_OK)
		rc = sked__q(h, SKED_SQL_NODE_INSERT, p, 7, NULL);
	if (rc == SKED_OK)
		rc = sked__commit(h);
	else
		sked__rollback(h);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot register the node");
	return expire_previous(h, node_id);
}

int
sked__node_beat(sked *h, const char *node_id, int busy, int *rank, int *of)
{
	sked_val p[2] = {SKED_TEXTV(node_id), SKED_INTV(busy)};
	int ranked = h->sql[SKED_SQL_NODE_BEAT_RANK] != NULL;
	sked_res r = {0};
	int rc = sked__q(h,
	                 ranked ? SKED_SQL_NODE_BEAT_RANK : SKED_SQL_NODE_BEAT,
	                 p, 2, ranked ? &r : NULL);
	*rank = *of = 0;
	if (rc == SKED_OK && ranked && r.nrows == 1) {
		*rank = (int)sked__res_int(&r, 0, 0);
		*of = (int)sked__res_int(&r, 0, 1);
	}
	sked__res_clear(&r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot heartbeat");
	return SKED_OK;
}

int
sked__node_unregister(sked *h, const char *node_id)
{
	sked_val p = SKED_TEXTV(node_id);
	int rc = sked__q(h, SKED_SQL_NODE_DELETE, &p, 1, NULL);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot unregister the node");
	return SKED_OK;
}

SKED_API int
sked_nodes(sked *h, sked_node **out, size_t *n)
{
	if (!h || !h->db || !out || !n)
		return SKED_EINVAL;
	*out = NULL;
	*n = 0;
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_NODES, NULL, 0, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot list nodes");
	if (r.nrows == 0) {
		sked__res_clear(&r);
		return SKED_OK;
	}
	sked_node *v = calloc((size_t)r.nrows, sizeof *v);
	if (!v) {
		sked__res_clear(&r);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	int oom = 0;
	for (int i = 0; i < r.nrows; i++) {
		v[i].id = sked__res_dup(&r, i, 0, &oom);
		v[i].host = sked__res_dup(&r, i, 1, &oom);
		v[i].pid = (int)sked__res_int(&r, i, 2);
		v[i].started_ms = sked__res_int(&r, i, 3);
		v[i].heartbeat_ms = sked__res_int(&r, i, 4);
		int64_t lease = sked__res_int(&r, i, 5);
		v[i].strategy = sked__res_dup(&r, i, 6, &oom);
		v[i].version = sked__res_dup(&r, i, 7, &oom);
		int64_t now = sked__res_int(&r, i, 8);
		v[i].alive = now - v[i].heartbeat_ms < lease;
		v[i].running = sked__res_int(&r, i, 9);
		v[i].slots = (int)sked__res_int(&r, i, 10);
		/* written a heartbeat ago: never more than it holds now */
		v[i].busy = sked__res_int(&r, i, 11);
		if (v[i].busy > v[i].running)
			v[i].busy = v[i].running;
	}
	*n = (size_t)r.nrows;
	sked__res_clear(&r);
	*out = v;
	if (oom) {
		sked_nodes_free(v, *n);
		*out = NULL;
		*n = 0;
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	return SKED_OK;
}

SKED_API void
sked_nodes_free(sked_node *nodes, size_t n)
{
	if (!nodes)
		return;
	for (size_t i = 0; i < n; i++) {
		free(nodes[i].id);
		free(nodes[i].host);
		free(nodes[i].strategy);
		free(nodes[i].version);
	}
	free(nodes);
}
