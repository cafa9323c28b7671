/*
 * lease.c — finishing, renewing, releasing and taking back leased tasks.
 *
 * Layer: the model (see lease.h). Row locks: sked__finish locks each
 * finished task row (in the order the worker hands them over) and inserts
 * one run row per outcome, all in one transaction; sked__renew locks the
 * rows this node holds; sked__reap locks one expired row at a time, in its
 * own transaction, so it never holds two task rows at once. A finish
 * rolled back as a deadlock or lock wait timeout is retried (bounded).
 */
#include "lease.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"
#include "util/pgarray.h"

static int
insert_run(sked *h, int64_t id, int attempt, const char *node,
           int64_t started_ms, const char *outcome, int exit_code,
           const char *error, const char *output)
{
	sked_val p[8] = {
	        SKED_INTV(id),
	        SKED_INTV(attempt),
	        SKED_TEXTV(node),
	        SKED_INTV(started_ms),
	        SKED_TEXTV(outcome),
	        exit_code >= 0 ? SKED_INTV(exit_code) : SKED_NULLV,
	        SKED_TEXTV(error),
	        SKED_TEXTV(output),
	};
	return sked__q(h, SKED_SQL_RUN_INSERT, p, 8, NULL);
}

static int
finish_one(sked *h, const char *node, sked_outcome *o)
{
	sked_val p[5] = {SKED_INTV(o->id), SKED_TEXTV(node),
	                 SKED_INTV(o->attempt), SKED_NULLV, SKED_NULLV};
	sked_sql q;
	int np = 3;
	const char *outcome;
	o->dead = 0;
	switch (o->what) {
	case SKED_FIN_OK:
		q = SKED_SQL_FINISH_OK;
		outcome = SKED_OUTCOME_SUCCEEDED;
		break;
	case SKED_FIN_UNSTARTED: /* sked__finish gives these back apart */
	case SKED_FIN_RELEASE:
		q = SKED_SQL_RELEASE;
		outcome = SKED_OUTCOME_RELEASED;
		break;
	default:
		outcome = SKED_OUTCOME_FAILED;
		if (o->attempt >= o->max_attempts) {
			q = SKED_SQL_FINISH_DEAD;
			p[3] = SKED_TEXTV(o->error);
			np = 4;
			o->dead = 1;
		} else {
			q = SKED_SQL_FINISH_RETRY;
			p[3] = SKED_INTV(o->retry_delay_ms);
			p[4] = SKED_TEXTV(o->error);
			np = 5;
		}
	}
	int rc = sked__q(h, q, p, np, NULL);
	if (rc != SKED_OK)
		return rc;
	o->applied = sked__affected(h) == 1;
	if (!o->applied) {
		/* Someone else owns this attempt now (lease expired and taken
		 * back, or the task was cancelled): keep the result as a
		 * record, change nothing else. */
		o->dead = 0;
		char err[600];
		snprintf(err, sizeof err,
		         "late %s result, not applied (lease lost)%s%s",
		         outcome, o->error ? ": " : "",
		         o->error ? o->error : "");
		return insert_run(h, o->id, o->attempt, node, o->started_ms,
		                  SKED_OUTCOME_LATE, o->exit_code, err,
		                  o->output);
	}
	return insert_run(h, o->id, o->attempt, node, o->started_ms, outcome,
	                  o->exit_code, o->error, o->output);
}

/* Where the dialect has SKED_CAP_ARRAYS (PostgreSQL): the n outcomes in
 * one statement, autocommit, with the same contract as the loop below
 * (each update guarded by id, owner, attempt and running; a rejected one
 * recorded as late). SKED_SQL_FINISH_ARRAYS takes ?1 ids, ?2 attempts,
 * ?3 new status, ?4 started ms, ?5 retry delay ms, ?6 exit codes, ?7
 * errors, ?8 output tails, ?9 outcome names, ?10 node, and answers one
 * (input position, applied) row per outcome. */
static int
finish_arrays(sked *h, const char *node_id, sked_outcome *o, int n)
{
	enum { IDS, ATT, ST, STARTED, DELAY, EXIT, ERR, OUT, OUTCOME, NA };
	sked_buf a[NA];
	memset(a, 0, sizeof a);
	for (int i = 0; i < n; i++) {
		size_t k = (size_t)i;
		int st;
		const char *outcome;
		switch (o[i].what) {
		case SKED_FIN_OK:
			st = SKED_SUCCEEDED;
			outcome = SKED_OUTCOME_SUCCEEDED;
			break;
		case SKED_FIN_RELEASE:
			st = SKED_PENDING;
			outcome = SKED_OUTCOME_RELEASED;
			break;
		default:
			st = o[i].attempt >= o[i].max_attempts ? SKED_DEAD
			                                       : SKED_RETRY;
			outcome = SKED_OUTCOME_FAILED;
		}
		sked__pgarray_int(&a[IDS], k, o[i].id, 0);
		sked__pgarray_int(&a[ATT], k, o[i].attempt, 0);
		sked__pgarray_int(&a[ST], k, st, 0);
		sked__pgarray_int(&a[STARTED], k, o[i].started_ms, 0);
		sked__pgarray_int(&a[DELAY], k, o[i].retry_delay_ms, 0);
		sked__pgarray_int(&a[EXIT], k, o[i].exit_code,
		                  o[i].exit_code < 0);
		sked__pgarray_text(&a[ERR], k, o[i].error,
		                   o[i].error ? strlen(o[i].error) : 0);
		sked__pgarray_text(&a[OUT], k, o[i].output,
		                   o[i].output ? strlen(o[i].output) : 0);
		sked__pgarray_text(&a[OUTCOME], k, outcome, strlen(outcome));
	}
	int oom = 0;
	for (int j = 0; j < NA; j++) {
		sked__pgarray_end(&a[j], (size_t)n);
		oom |= a[j].oom;
	}
	int rc = SKED_OK;
	sked_res r = {0};
	if (oom) {
		rc = sked__fail(h, SKED_ENOMEM, "out of memory");
		goto out;
	}
	sked_val p[10];
	for (int j = 0; j < NA; j++)
		p[j] = SKED_TEXTV(a[j].p);
	p[9] = SKED_TEXTV(node_id);
	rc = sked__q(h, SKED_SQL_FINISH_ARRAYS, p, 10, &r);
	if (rc != SKED_OK) {
		sked__fail_db(h, rc, "cannot finish tasks");
		goto out;
	}
	if (r.nrows != n) {
		rc = sked__fail(h, SKED_EDB,
		                "finishing %d task(s) answered %d row(s)", n,
		                r.nrows);
		goto out;
	}
	for (int i = 0; i < r.nrows; i++) {
		int64_t ord = sked__res_int(&r, i, 0);
		if (ord < 1 || ord > n)
			continue;
		sked_outcome *x = &o[ord - 1];
		x->applied = sked__res_int(&r, i, 1) == 1;
		x->dead = x->applied && x->what == SKED_FIN_FAIL &&
		          x->attempt >= x->max_attempts;
	}
out:
	sked__res_clear(&r);
	for (int j = 0; j < NA; j++)
		sked__buf_free(&a[j]);
	return rc;
}

static int
finish_once(sked *h, const char *node_id, sked_outcome *o, int n)
{
	if (h->dialect->caps & SKED_CAP_ARRAYS)
		return finish_arrays(h, node_id, o, n);
	int rc = sked__begin(h, 1);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot begin finishing tasks");
	for (int i = 0; i < n; i++) {
		rc = finish_one(h, node_id, &o[i]);
		if (rc != SKED_OK) {
			sked__fail_db(h, rc, "cannot finish tasks");
			sked__rollback(h);
			return rc;
		}
	}
	rc = sked__commit(h);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot commit finished tasks");
	return SKED_OK;
}

/* A finish or renewal the database rolled back as a deadlock, a lock wait
 * timeout or a busy SQLite database is tried again whole, up to TRIES
 * times (sked__retry_pause); each outcome's applied/dead flags are set
 * again by the try that commits. */
#define TRIES 3

/* Give back attempts that never reached a handler: the attempt number is
 * returned and no run row is written, since nothing ran. Each is one
 * conditional update of its own; a task no longer held is left alone. */
static int
give_back_unstarted(sked *h, const char *node, sked_outcome *o, int n)
{
	for (int i = 0; i < n; i++) {
		if (o[i].what != SKED_FIN_UNSTARTED)
			continue;
		sked_val p[3] = {SKED_INTV(o[i].id), SKED_TEXTV(node),
		                 SKED_INTV(o[i].attempt)};
		int rc = sked__q(h, SKED_SQL_GIVE_BACK, p, 3, NULL);
		if (rc != SKED_OK)
			return sked__fail_db(h, rc, "cannot give tasks back");
		o[i].applied = sked__affected(h) == 1;
		o[i].dead = 0;
	}
	return SKED_OK;
}

int
sked__finish(sked *h, const char *node_id, sked_outcome *o, int n)
{
	if (n == 0)
		return SKED_OK;
	/* the attempts that ran go through the batch; the rest apart */
	int nrun = 0, rc;
	for (int i = 0; i < n; i++)
		nrun += o[i].what != SKED_FIN_UNSTARTED;
	if (nrun < n) {
		for (int attempt = 1;; attempt++) {
			rc = give_back_unstarted(h, node_id, o, n);
			if (!sked__retry_pause(h, rc, attempt, TRIES,
			                       "giving tasks back"))
				break;
		}
		if (rc != SKED_OK || nrun == 0)
			return rc;
	}
	sked_outcome *ran = o;
	if (nrun < n) {
		ran = malloc(sizeof *ran * (size_t)nrun);
		if (!ran)
			return sked__fail(h, SKED_ENOMEM, "out of memory");
		for (int i = 0, k = 0; i < n; i++)
			if (o[i].what != SKED_FIN_UNSTARTED)
				ran[k++] = o[i];
	}
	for (int attempt = 1;; attempt++) {
		rc = finish_once(h, node_id, ran, nrun);
		if (!sked__retry_pause(h, rc, attempt, TRIES,
		                       "finishing tasks"))
			break;
	}
	if (ran != o) {
		for (int i = 0, k = 0; i < n; i++)
			if (o[i].what != SKED_FIN_UNSTARTED)
				o[i] = ran[k++];
		free(ran);
	}
	return rc;
}

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

int
sked__renew(sked *h, const char *node_id, int64_t lease_ms, int64_t **ids,
            int **attempts, int *n)
{
	*ids = NULL;
	*attempts = NULL;
	*n = 0;
	sked_val p[2] = {SKED_TEXTV(node_id), SKED_INTV(lease_ms)};
	int rc;
	for (int attempt = 1;; attempt++) {
		rc = sked__q(h, SKED_SQL_RENEW, p, 2, NULL);
		if (!sked__retry_pause(h, rc, attempt, TRIES,
		                       "renewing leases"))
			break;
	}
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot renew leases");
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
			rc = insert_run(h, id, attempt, node, started,
			                SKED_OUTCOME_LEASE_EXPIRED, -1, err,
			                NULL);
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
sked__node_beat(sked *h, const char *node_id)
{
	sked_val p = SKED_TEXTV(node_id);
	int rc = sked__q(h, SKED_SQL_NODE_BEAT, &p, 1, NULL);
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
