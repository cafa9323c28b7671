/*
 * enqueue.c — making tasks: one (sked_enqueue), one with a unique key or
 * with parents, and many in one transaction (sked_enqueue_many: a row per
 * statement, one PostgreSQL array, or SQL Server's multi-row inserts).
 *
 * Layer: the model (src/model/, floor 6; handle/internal.h). Every value
 * is a bound parameter; every name is checked against the strict pattern
 * before it reaches SQL. A new task is pending in {p}task (blocked while
 * it has open parents: deps.c); queue.c draws the states and who moves
 * them. Writes that belong together share one transaction, and workers
 * that can be woken are told in it (PostgreSQL NOTIFY).
 */
#include "model/enqueue.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/deps.h"
#include "model/queue.h"
#include "model/wake.h"
#include "util/buf.h"
#include "util/ident.h"
#include "util/pgarray.h"
#include "util/text.h"

static int
check_enqueue(sked *h, const char *kind, const char *payload,
              size_t payload_len, const sked_enqueue_opts *o)
{
	int rc = sked__check_name(h, "kind", kind);
	if (rc == SKED_OK && o && o->queue)
		rc = sked__check_name(h, "queue", o->queue);
	if (rc != SKED_OK)
		return rc;
	if (payload_len > SKED_MAX_PAYLOAD)
		return sked__fail(h, SKED_ETOOBIG,
		                  "payload is %zu bytes; the limit is %d",
		                  payload_len, SKED_MAX_PAYLOAD);
	/* a payload is text on every database: PostgreSQL's text cannot
	 * hold a zero byte (it would be cut there, or refused in an array),
	 * so no product takes one and every product keeps what it is given */
	if (payload && memchr(payload, '\0', payload_len))
		return sked__fail(h, SKED_EINVAL,
		                  "payload holds a zero byte at offset %zu; "
		                  "payloads are text (encode binary data, e.g. "
		                  "as base64)",
		                  (size_t)((const char *)memchr(payload, '\0',
		                                                payload_len) -
		                           payload));
	/* and UTF-8 on every database: PostgreSQL refuses other bytes
	 * (once exit 70), SQLite kept them and no handler could be given
	 * them as JSON (issue 39) */
	if (payload && !sked__utf8_valid(payload, payload_len))
		return sked__fail(h, SKED_EINVAL,
		                  "payload is not UTF-8 text; payloads are "
		                  "text (encode binary data, e.g. as base64)");
	if (o && o->unique_key &&
	    (!*o->unique_key || strlen(o->unique_key) > SKED_MAX_NAME))
		return sked__fail(h, SKED_EINVAL,
		                  "unique key must be 1 to %d bytes",
		                  SKED_MAX_NAME);
	if (o && (o->unique_scope || o->unique_for_ms || o->unique_replace) &&
	    !o->unique_key)
		return sked__fail(h, SKED_EINVAL,
		                  "a unique scope, period or replace needs a "
		                  "unique key");
	if (o && (o->unique_scope < SKED_UNIQUE_LIVE ||
	          o->unique_scope > SKED_UNIQUE_PERIOD))
		return sked__fail(
		        h, SKED_EINVAL,
		        "unique scope %d is not live (0), pending (1) "
		        "or period (2)",
		        o->unique_scope);
	if (o &&
	    (o->unique_for_ms < 0 || o->unique_for_ms > SKED_DURATION_MAX_MS))
		return sked__fail(h, SKED_EINVAL,
		                  "unique period must be 1 ms to 100 years");
	if (o && o->unique_for_ms && o->unique_scope == SKED_UNIQUE_PENDING)
		return sked__fail(h, SKED_EINVAL,
		                  "a unique key is held either until its task "
		                  "starts or for a period, not both");
	if (o && o->unique_scope == SKED_UNIQUE_PERIOD && !o->unique_for_ms)
		return sked__fail(h, SKED_EINVAL,
		                  "the period scope needs its period "
		                  "(unique_for_ms, --unique-for D)");
	if (o && o->unique_replace && o->unique_for_ms)
		return sked__fail(h, SKED_EINVAL,
		                  "replace works with the live and pending "
		                  "scopes, not with a period");
	if (o && (o->timeout_ms < 0 || o->timeout_ms > SKED_DURATION_MAX_MS))
		return sked__fail(h, SKED_EINVAL,
		                  "timeout must be 1 ms to 100 years "
		                  "(SKED_DURATION_MAX_MS), or 0 for none");
	if (o && o->concurrency_key &&
	    (!*o->concurrency_key ||
	     strlen(o->concurrency_key) > SKED_MAX_NAME))
		return sked__fail(h, SKED_EINVAL,
		                  "concurrency key must be 1 to %d bytes",
		                  SKED_MAX_NAME);
	if (o && o->traceparent && !sked__traceparent_valid(o->traceparent))
		return sked__fail(h, SKED_EINVAL,
		                  "traceparent '%.80s' is not a W3C trace "
		                  "context (00-<32 hex>-<16 hex>-<2 hex>, "
		                  "lowercase, ids not all zero)",
		                  o->traceparent);
	if (o && (o->max_attempts < 0 || o->max_attempts > 1000))
		return sked__fail(h, SKED_EINVAL,
		                  "max attempts %d is out of range 1-1000",
		                  o->max_attempts);
	if (o && o->delay_ms < 0)
		return sked__fail(h, SKED_EINVAL, "delay must not be negative");
	if (o && o->delay_ms > SKED_DURATION_MAX_MS)
		return sked__fail(h, SKED_EINVAL,
		                  "delay %" PRId64 " ms is more than 100 years "
		                  "(SKED_DURATION_MAX_MS)",
		                  o->delay_ms);
	if (o && (o->run_at_ms < 0 || o->run_at_ms > SKED_TIME_MAX_MS))
		return sked__fail(h, SKED_EINVAL,
		                  "run time %" PRId64
		                  " ms is outside 1970-01-01 "
		                  "to 9999-12-31 (SKED_TIME_MAX_MS)",
		                  o->run_at_ms);
	return SKED_OK;
}

/* The bounds on a workflow's edges (issue 39): n tasks with n_after
 * parents each write n x n_after edges in one transaction; both capped
 * here, the one place every enqueue passes (CLI, API, C, Python). */
static int
check_edges(sked *h, size_t n, const sked_enqueue_opts *o)
{
	if (!o || o->n_after == 0)
		return SKED_OK;
	if (o->n_after > SKED_MAX_PARENTS)
		return sked__fail(h, SKED_EINVAL,
		                  "after: %zu parents; a task has at most %d "
		                  "(SKED_MAX_PARENTS)",
		                  o->n_after, SKED_MAX_PARENTS);
	if (n > SKED_MAX_EDGES / o->n_after)
		return sked__fail(h, SKED_EINVAL,
		                  "%zu tasks with %zu parents each are %llu "
		                  "edges; one enqueue writes at most %d "
		                  "(SKED_MAX_EDGES): enqueue them in smaller "
		                  "batches",
		                  n, o->n_after,
		                  (unsigned long long)n * o->n_after,
		                  SKED_MAX_EDGES);
	return SKED_OK;
}

/* Wake idle workers where the database can push (PostgreSQL NOTIFY;
 * model/wake.h): n tasks of kind in o's queue, the window placed by the
 * first id. Best effort where autocommit made the tasks already: a
 * worker polls anyway, so a failed notify only costs latency. */
static int
notify(sked *h, const sked_enqueue_opts *o, const char *kind, int64_t id,
       int64_t n)
{
	const char *q = o && o->queue ? o->queue : SKED_DEFAULT_QUEUE;
	return sked__wake(h, (uint32_t)id, n, q, kind);
}

/* Insert one task; *dup = 1 when its unique key already existed. */
static int
insert_task(sked *h, const char *kind, const char *payload, size_t len,
            const sked_enqueue_opts *o, int64_t *id, int *dup)
{
	static const sked_enqueue_opts defaults = {0};
	if (!o)
		o = &defaults;
	int at = o->run_at_ms != 0;
	/* schema 10: NULL, the live scope, is what a plain INSERT gets */
	int scope = o->unique_for_ms ? SKED_UNIQUE_PERIOD : o->unique_scope;
	sked_val p[11] = {
	        SKED_TEXTV(o->queue ? o->queue : SKED_DEFAULT_QUEUE),
	        SKED_TEXTV(kind),
	        SKED_BLOBV(payload ? payload : "", payload ? len : 0),
	        SKED_INTV(o->priority),
	        SKED_INTV(at ? o->run_at_ms : o->delay_ms),
	        SKED_INTV(o->max_attempts ? o->max_attempts
	                                  : SKED_DEFAULT_MAX_ATTEMPTS),
	        SKED_TEXTV(o->unique_key),
	        /* limits.c: the per-key limit's key, or NULL */
	        SKED_TEXTV(o->concurrency_key),
	        /* the W3C trace context, or NULL */
	        SKED_TEXTV(o->traceparent),
	        o->unique_key && scope ? SKED_INTV(scope) : SKED_NULLV,
	        /* the task's own timeout (schema 10), or NULL */
	        o->timeout_ms ? SKED_INTV(o->timeout_ms) : SKED_NULLV,
	};
	sked_res r = {0};
	*dup = 0;
	int rc = sked__q(h, at ? SKED_SQL_ENQ_AT : SKED_SQL_ENQ_IN, p, 11, &r);
	if (rc == SKED_OK) {
		*id = r.nrows > 0 ? sked__res_int(&r, 0, 0) : sked__last_id(h);
		sked__res_clear(&r);
		if (*id == 0 && h->dialect->last_id) {
			/* the driver did not say (ODBC): the dialect asks */
			rc = sked__qdyn(h, h->dialect->last_id, NULL, 0, &r);
			*id = rc == SKED_OK && r.nrows == 1
			              ? sked__res_int(&r, 0, 0)
			              : 0;
			sked__res_clear(&r);
			if (rc != SKED_OK)
				return sked__fail_db(
				        h, rc, "cannot read the new task's id");
		}
		return SKED_OK;
	}
	if (sked__err_kind(h) != SKED_DBE_UNIQUE || !o->unique_key)
		return sked__fail_db(h, rc, "cannot enqueue");
	/* The unique index decided: a live task holds the key. The caller,
	 * whose transaction the error has spoilt, looks it up. */
	*dup = 1;
	*id = 0;
	return SKED_OK;
}

int
sked__enqueue_check(sked *h, const char *kind, const char *payload,
                    size_t payload_len, const sked_enqueue_opts *o)
{
	return check_enqueue(h, kind, payload, payload_len, o);
}

int
sked__enqueue_insert(sked *h, const char *kind, const char *payload,
                     size_t payload_len, const sked_enqueue_opts *o,
                     int64_t *id)
{
	int dup = 0;
	int rc = insert_task(h, kind, payload, payload_len, o, id, &dup);
	return rc == SKED_OK && dup ? SKED_EINVAL : rc;
}

/* ---- unique keys (docs/unique.md) ----
 *
 * The live and pending scopes are one unique index on {p}task whose
 * predicate is the scope (schema 10, {p}task_unique_held): the insert is
 * the probe, and its refusal names a holder that the next statement
 * finds by the same index. A holder that vanished in between (ended,
 * started, or an enqueue that rolled back) frees the key: try again.
 * The claim moves attempts, as it always did, and the index follows; it
 * runs no statement of its own. A period is a row of {p}unique_for,
 * upserted in the enqueue's transaction: the upsert decides, under the
 * row's lock. Nothing of the ended table is read. */
#define ENQ_TRIES 5

/* The task that holds o's key now (*held 0: none). */
static int
unique_holder(sked *h, const sked_enqueue_opts *o, int64_t *held)
{
	sked_val k = SKED_TEXTV(o->unique_key);
	*held = 0;
	int rc = sked__one_id(h, SKED_SQL_UNIQUE_HELD, &k, 1, held);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot look up the unique key");
	return SKED_OK;
}

/* Debounce: the holder takes o's payload and run-at if it still waits
 * and holds the key; *done 0 when it no longer does. */
static int
unique_replace(sked *h, int64_t held, const char *payload, size_t len,
               const sked_enqueue_opts *o, int *done)
{
	int at = o->run_at_ms != 0;
	sked_val p[3] = {
	        SKED_INTV(held),
	        SKED_BLOBV(payload ? payload : "", payload ? len : 0),
	        SKED_INTV(at ? o->run_at_ms : o->delay_ms),
	};
	int rc = sked__q(
	        h, at ? SKED_SQL_UNIQUE_REPLACE_AT : SKED_SQL_UNIQUE_REPLACE_IN,
	        p, 3, NULL);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot replace the waiting task");
	*done = sked__affected(h) > 0;
	if (*done)
		sked__ignore(sked__wake(h, (uint32_t)held, 1, NULL,
		                        NULL)); /* its run-at may be sooner */
	return SKED_OK;
}

/* The key is held by *held: answer with it, or replace it. *settled 0:
 * the holder no longer held the key, ask again. */
static int
unique_answer(sked *h, const char *payload, size_t len,
              const sked_enqueue_opts *o, int64_t held, int64_t *id, int *dup,
              int *settled)
{
	*settled = 1;
	*id = held;
	*dup = SKED_ENQ_EXISTED;
	if (!o->unique_replace)
		return SKED_OK;
	int done = 0;
	int rc = unique_replace(h, held, payload, len, o, &done);
	if (rc != SKED_OK || done) {
		*dup = rc == SKED_OK ? SKED_ENQ_REPLACED : 0;
		return rc;
	}
	/* it started: in the live scope a running task still holds the
	 * key (returned as it is); in the pending scope it does not */
	int64_t now_held = 0;
	if ((rc = unique_holder(h, o, &now_held)) != SKED_OK)
		return rc;
	if (now_held != held)
		*settled = 0;
	return SKED_OK;
}

static int
enqueue_scoped(sked *h, const char *kind, const char *payload, size_t len,
               const sked_enqueue_opts *o, int64_t *id, int *dup)
{
	for (int attempt = 1; attempt <= ENQ_TRIES; attempt++) {
		int64_t held = 0;
		int settled = 1, rc;
		*dup = 0;
		/* a replace expects a holder, and the application's own
		 * transaction must not meet the index's refusal (PostgreSQL
		 * would abort it): ask first. Elsewhere the insert asks. */
		if (o->unique_replace || h->borrowed) {
			if ((rc = unique_holder(h, o, &held)) != SKED_OK)
				return rc;
			if (held) {
				rc = unique_answer(h, payload, len, o, held, id,
				                   dup, &settled);
				if (rc != SKED_OK || settled)
					return rc;
				continue;
			}
		}
		rc = insert_task(h, kind, payload, len, o, id, dup);
		if (rc != SKED_OK) {
			if (sked__retry_pause(h, rc, attempt, ENQ_TRIES,
			                      "enqueue"))
				continue;
			return rc;
		}
		if (!*dup) {
			sked__ignore(
			        notify(h, o, kind, *id, 1)); /* autocommit */
			return SKED_OK;
		}
		if ((rc = unique_holder(h, o, &held)) != SKED_OK)
			return rc;
		if (!held) /* it ended or started meanwhile */
			continue;
		rc = unique_answer(h, payload, len, o, held, id, dup, &settled);
		if (rc != SKED_OK || settled)
			return rc;
	}
	*dup = 0;
	return sked__fail(h, SKED_EBUSY,
	                  "unique key '%s' is being taken and freed by "
	                  "others; try again",
	                  o->unique_key);
}

/* The period scope: the task inserted, then its key row upserted and
 * read back, in one transaction; a key row held by another task rolls
 * the insert back and names that task. */
static int
enqueue_period(sked *h, const char *kind, const char *payload, size_t len,
               const sked_enqueue_opts *o, int64_t *id, int *dup)
{
	sked_val k = SKED_TEXTV(o->unique_key);
	for (int attempt = 1; attempt <= ENQ_TRIES; attempt++) {
		int64_t holder = 0;
		*dup = 0;
		int rc = sked__begin(h, 0);
		if (rc != SKED_OK)
			return sked__fail_db(h, rc, "cannot begin the enqueue");
		rc = insert_task(h, kind, payload, len, o, id, dup);
		if (rc == SKED_OK) {
			sked_val p[3] = {k, SKED_INTV(*id),
			                 SKED_INTV(o->unique_for_ms)};
			rc = sked__q(h, SKED_SQL_UNIQUE_FOR_PUT, p, 3, NULL);
			if (rc == SKED_OK)
				rc = sked__one_id(h, SKED_SQL_UNIQUE_FOR_GET,
				                  &k, 1, &holder);
			if (rc != SKED_OK)
				sked__fail_db(h, rc,
				              "cannot take the unique key");
		}
		if (rc != SKED_OK) {
			sked__rollback(h);
			if (sked__retry_pause(h, rc, attempt, ENQ_TRIES,
			                      "enqueue"))
				continue;
			return rc;
		}
		if (holder != *id) {
			if (h->borrowed) {
				/* the application's transaction: the new row
				 * goes by hand */
				sked_val u = SKED_INTV(*id);
				rc = sked__q(h, SKED_SQL_ENQ_UNDO, &u, 1, NULL);
				if (rc != SKED_OK)
					return sked__fail_db(h, rc,
					                     "cannot enqueue");
			}
			sked__rollback(h);
			*id = holder;
			*dup = SKED_ENQ_EXISTED;
			return SKED_OK;
		}
		/* delivered at commit, like enqueue_many's */
		if ((rc = notify(h, o, kind, *id, 1)) == SKED_OK)
			rc = sked__commit(h);
		else
			sked__rollback(h);
		if (rc != SKED_OK) {
			if (sked__retry_pause(h, rc, attempt, ENQ_TRIES,
			                      "enqueue"))
				continue;
			return sked__fail_db(h, rc,
			                     "cannot commit the enqueue");
		}
		return SKED_OK;
	}
	*dup = 0;
	return sked__fail(h, SKED_EBUSY,
	                  "unique key '%s' is being taken by others; try "
	                  "again",
	                  o->unique_key);
}

static int
enqueue_unique(sked *h, const char *kind, const char *payload, size_t len,
               const sked_enqueue_opts *o, int64_t *id, int *dup)
{
	if (o->unique_for_ms)
		return enqueue_period(h, kind, payload, len, o, id, dup);
	return enqueue_scoped(h, kind, payload, len, o, id, dup);
}

/* Tasks with parents (deps.c, docs/workflows.md): the parents counted
 * and locked, then each child inserted and linked, all in one
 * transaction; a parent that does not exist writes nothing. */
static int
enqueue_after(sked *h, const char *kind, size_t n, const char *const *payloads,
              const size_t *lens, const sked_enqueue_opts *opts,
              int64_t *ids_out)
{
	int64_t *par = NULL, bad = 0;
	int npar = 0, open = 0, bad_st = 0, any = 0;
	int rc = sked__begin(h, 0);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot begin the enqueue");
	rc = sked__deps_parents(h, opts, n, &par, &npar, &open, &bad, &bad_st);
	for (size_t i = 0; i < n && rc == SKED_OK; i++) {
		size_t len = lens ? lens[i]
		                  : (payloads[i] ? strlen(payloads[i]) : 0);
		int dup, pending = 0;
		rc = insert_task(h, kind, payloads[i], len, opts, &ids_out[i],
		                 &dup);
		if (rc == SKED_OK)
			rc = sked__deps_link(h, ids_out[i], par, npar, open,
			                     opts->on_parent_failure, bad,
			                     bad_st, &pending);
		any |= pending;
	}
	free(par);
	if (rc == SKED_OK && any &&
	    (rc = notify(h, opts, kind, ids_out[0], (int64_t)n)) != SKED_OK)
		sked__fail_db(h, rc, "cannot notify workers");
	if (rc != SKED_OK) {
		sked__rollback(h);
		return rc;
	}
	rc = sked__commit(h);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot commit the enqueue");
	return SKED_OK;
}

SKED_API int
sked_enqueue(sked *h, const char *kind, const char *payload, size_t payload_len,
             const sked_enqueue_opts *opts, int64_t *id_out, int *existed_out)
{
	if (!h || !h->db || !id_out)
		return SKED_EINVAL;
	int rc = check_enqueue(h, kind, payload, payload ? payload_len : 0,
	                       opts);
	if (rc != SKED_OK)
		return rc;
	if ((rc = sked__deps_check(h, opts)) != SKED_OK ||
	    (rc = check_edges(h, 1, opts)) != SKED_OK)
		return rc;
	int dup = 0;
	if (opts && opts->n_after) {
		if (existed_out)
			*existed_out = 0;
		return enqueue_after(h, kind, 1, &payload, &payload_len, opts,
		                     id_out);
	}
	if (opts && opts->unique_key) {
		rc = enqueue_unique(h, kind, payload, payload_len, opts, id_out,
		                    &dup);
		if (existed_out)
			*existed_out = dup;
		return rc;
	}
	rc = insert_task(h, kind, payload, payload_len, opts, id_out, &dup);
	if (existed_out)
		*existed_out = dup;
	if (rc == SKED_OK && !dup)
		sked__ignore(notify(h, opts, kind, *id_out,
		                    1)); /* autocommit: cannot undo the task */
	return rc;
}

/* ---- enqueueing many in fewer round trips ---- */

/* SKED_CAP_ARRAYS (PostgreSQL): the n payloads as one text[] literal in
 * one statement, autocommit; ids come back in input order. Binds ?1
 * queue, ?2 kind, ?3 payloads, ?4 priority, ?5 run-at ms (or NULL), ?6
 * delay ms, ?7 max attempts, ?8 the wake-up. The statement notifies
 * workers itself. */
static int
enqueue_arrays(sked *h, const char *kind, size_t n, const char *const *payloads,
               const size_t *lens, const sked_enqueue_opts *opts,
               int64_t *ids_out)
{
	static const sked_enqueue_opts defaults = {0};
	const sked_enqueue_opts *o = opts ? opts : &defaults;
	sked_buf a = {0};
	for (size_t i = 0; i < n; i++) {
		const char *s = payloads[i] ? payloads[i] : "";
		size_t len = payloads[i] ? (lens ? lens[i] : strlen(s)) : 0;
		sked__pgarray_text(&a, i, s, len);
	}
	sked__pgarray_end(&a, n);
	if (a.oom) {
		sked__buf_free(&a);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	const char *q = o->queue ? o->queue : SKED_DEFAULT_QUEUE;
	sked_wake w = {.r = sked__wake_r(), .n = (int64_t)n};
	snprintf(w.queue, sizeof w.queue, "%s", q);
	snprintf(w.kind, sizeof w.kind, "%s", kind);
	char wake[SKED_WAKE_MAX + 1];
	if (sked__wake_format(wake, sizeof wake, &w) < 0)
		wake[0] = '\0';
	sked_val p[8] = {
	        SKED_TEXTV(q),
	        SKED_TEXTV(kind),
	        SKED_TEXTV(a.p),
	        SKED_INTV(o->priority),
	        o->run_at_ms ? SKED_INTV(o->run_at_ms) : SKED_NULLV,
	        SKED_INTV(o->delay_ms),
	        SKED_INTV(o->max_attempts ? o->max_attempts
	                                  : SKED_DEFAULT_MAX_ATTEMPTS),
	        SKED_TEXTV(wake),
	};
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_ENQ_ARRAYS, p, 8, &r);
	sked__buf_free(&a);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot enqueue");
	if ((size_t)r.nrows != n) {
		sked__res_clear(&r);
		return sked__fail(h, SKED_EDB,
		                  "enqueueing %zu task(s) answered %d row(s)",
		                  n, r.nrows);
	}
	for (size_t i = 0; i < n; i++)
		ids_out[i] = sked__res_int(&r, (int)i, 0);
	sked__res_clear(&r);
	return SKED_OK;
}

/* How many rows one statement may carry when its shared part costs
 * shared parameters and each row per_row: strictly below max_params,
 * since a driver's own call (SQL Server's sp_prepexec) takes some too.
 * And how many statements n rows take. Pure; tests/unit/test_sqlserver.c
 * checks them. */
int sked__rows_per_stmt(int shared, int per_row, int max_params);
size_t sked__rows_chunks(size_t n, int rows_per_stmt);

int
sked__rows_per_stmt(int shared, int per_row, int max_params)
{
	if (per_row <= 0 || max_params - 1 - shared < per_row)
		return 0;
	return (max_params - 1 - shared) / per_row;
}

size_t
sked__rows_chunks(size_t n, int rows_per_stmt)
{
	if (rows_per_stmt <= 0)
		return 0;
	return (n + (size_t)rows_per_stmt - 1) / (size_t)rows_per_stmt;
}

static int
cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* One statement for rows [off, off + m): the payloads bind from ?6. The
 * ids OUTPUT returns, sorted, are the input order (dialect/sqlserver.c
 * says why). */
static int
insert_rows(sked *h, sked_sql stmt, size_t off, size_t m,
            const char *const *payloads, const size_t *lens, sked_val *p,
            int64_t *ids)
{
	sked_buf sql = {0};
	sked__sql_fill(&sql, h->sql[stmt], 6, (int)m);
	if (sql.oom) {
		sked__buf_free(&sql);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < m; i++) {
		const char *s = payloads[off + i] ? payloads[off + i] : "";
		size_t n = lens ? lens[off + i] : strlen(s);
		p[5 + i] = SKED_BLOBV(s, payloads[off + i] ? n : 0);
	}
	sked_res r = {0};
	int rc = sked__qdyn(h, sql.p, p, (int)(5 + m), &r);
	sked__buf_free(&sql);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot enqueue");
	if ((size_t)r.nrows != m) {
		sked__res_clear(&r);
		return sked__fail(h, SKED_EDB,
		                  "the server returned %d ids for %zu tasks",
		                  r.nrows, m);
	}
	for (size_t i = 0; i < m; i++)
		ids[off + i] = sked__res_int(&r, (int)i, 0);
	sked__res_clear(&r);
	qsort(ids + off, m, sizeof *ids, cmp_id);
	return SKED_OK;
}

/* SKED_CAP_INSERT_ROWS (SQL Server): multi-row inserts in chunks that
 * keep each statement under the dialect's parameter limit, all in one
 * transaction. Binds ?1 queue, ?2 kind, ?3 priority, ?4 run-at or delay
 * ms, ?5 max attempts, then one payload a row. */
static int
enqueue_rows(sked *h, const char *kind, size_t n, const char *const *payloads,
             const size_t *lens, const sked_enqueue_opts *opts,
             int64_t *ids_out)
{
	static const sked_enqueue_opts defaults = {0};
	const sked_enqueue_opts *o = opts ? opts : &defaults;
	int per = sked__rows_per_stmt(h->dialect->rows_shared_params, 1,
	                              h->dialect->max_params);
	if (per <= 0)
		return sked__fail(h, SKED_EUNSUPPORTED,
		                  "the %s dialect's row insert binds more "
		                  "parameters than it allows",
		                  h->dialect->name);
	int at = o->run_at_ms != 0;
	sked_sql stmt = at ? SKED_SQL_ENQ_ROWS_AT : SKED_SQL_ENQ_ROWS_IN;
	size_t rows = n < (size_t)per ? n : (size_t)per;
	sked_val *p = malloc((5 + rows) * sizeof *p);
	if (!p)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	p[0] = SKED_TEXTV(o->queue ? o->queue : SKED_DEFAULT_QUEUE);
	p[1] = SKED_TEXTV(kind);
	p[2] = SKED_INTV(o->priority);
	p[3] = SKED_INTV(at ? o->run_at_ms : o->delay_ms);
	p[4] = SKED_INTV(o->max_attempts ? o->max_attempts
	                                 : SKED_DEFAULT_MAX_ATTEMPTS);
	int rc = sked__begin(h, 0);
	if (rc != SKED_OK) {
		free(p);
		return sked__fail_db(h, rc, "cannot begin the enqueue");
	}
	for (size_t off = 0; off < n && rc == SKED_OK; off += (size_t)per) {
		size_t m = n - off < (size_t)per ? n - off : (size_t)per;
		rc = insert_rows(h, stmt, off, m, payloads, lens, p, ids_out);
	}
	free(p);
	if (rc != SKED_OK) {
		sked__rollback(h);
		return rc;
	}
	rc = sked__commit(h);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot commit the enqueue");
	return SKED_OK;
}

/* One row per statement in one transaction: what every dialect can do,
 * and the only way for rows that carry a concurrency key or a trace
 * context. */
static int
enqueue_each(sked *h, const char *kind, size_t n, const char *const *payloads,
             const size_t *lens, const sked_enqueue_opts *opts,
             int64_t *ids_out)
{
	int rc = sked__begin(h, 0);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot begin the enqueue");
	for (size_t i = 0; i < n; i++) {
		size_t len = lens ? lens[i]
		                  : (payloads[i] ? strlen(payloads[i]) : 0);
		int dup;
		rc = insert_task(h, kind, payloads[i], len, opts, &ids_out[i],
		                 &dup);
		if (rc != SKED_OK) {
			sked__rollback(h);
			return rc;
		}
	}
	/* one wake-up for the whole batch, delivered at commit; inside the
	 * transaction a failure must not pass silently (PostgreSQL would turn
	 * the COMMIT into a rollback) */
	if ((rc = notify(h, opts, kind, ids_out[0], (int64_t)n)) != SKED_OK) {
		sked__fail_db(h, rc, "cannot notify workers");
		sked__rollback(h);
		return rc;
	}
	rc = sked__commit(h);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot commit the enqueue");
	return SKED_OK;
}

/* ---- ways: how many tasks reach the database ----
 *
 * The first way whose needs h's dialect has and whose options it takes
 * is the one (as outcome.c's ways[] for finishing): "after" (parents:
 * deps.c, every dialect), "arrays" (one PostgreSQL statement), "rows"
 * (SQL Server's multi-row inserts), "each" (a row per statement). */
typedef int (*enqueue_fn)(sked *, const char *, size_t, const char *const *,
                          const size_t *, const sked_enqueue_opts *, int64_t *);

typedef struct enqueue_way {
	const char *name;
	unsigned caps; /* the dialect capabilities it needs (0: none) */
	int after;     /* 1: for tasks with parents only */
	int plain;     /* 1: not for a concurrency key, trace context or
	                  timeout */
	enqueue_fn run;
} enqueue_way;

static const enqueue_way ways[] = {
        {"after", 0, 1, 0, enqueue_after},
        {"arrays", SKED_CAP_ARRAYS, 0, 1, enqueue_arrays},
        {"rows", SKED_CAP_INSERT_ROWS, 0, 1, enqueue_rows},
        {"each", 0, 0, 0, enqueue_each},
};

static const enqueue_way *
way_for(const sked *h, const sked_enqueue_opts *o)
{
	int after = o && o->n_after;
	int keyed =
	        o && (o->concurrency_key || o->traceparent || o->timeout_ms);
	size_t n = sizeof ways / sizeof ways[0];
	for (size_t i = 0; i < n; i++) {
		const enqueue_way *w = &ways[i];
		if (w->after != after || (w->plain && keyed) ||
		    (h->dialect->caps & w->caps) != w->caps)
			continue;
		return w;
	}
	return &ways[n - 1];
}

SKED_API int
sked_enqueue_many(sked *h, const char *kind, size_t n,
                  const char *const *payloads, const size_t *lens,
                  const sked_enqueue_opts *opts, int64_t *ids_out)
{
	if (!h || !h->db || (n && (!payloads || !ids_out)))
		return SKED_EINVAL;
	if (opts && opts->unique_key)
		return sked__fail(h, SKED_EINVAL,
		                  "a unique key cannot be shared by several "
		                  "tasks");
	for (size_t i = 0; i < n; i++) {
		size_t len = lens ? lens[i]
		                  : (payloads[i] ? strlen(payloads[i]) : 0);
		int rc = check_enqueue(h, kind, payloads[i], len, opts);
		if (rc != SKED_OK)
			return rc;
	}
	if (n == 0)
		return SKED_OK;
	int rc = sked__deps_check(h, opts);
	if (rc == SKED_OK)
		rc = check_edges(h, n, opts);
	if (rc != SKED_OK)
		return rc;
	return way_for(h, opts)->run(h, kind, n, payloads, lens, opts, ids_out);
}
