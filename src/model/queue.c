/*
 * queue.c — tasks: enqueue, inspect, cancel, retry, runs, counts.
 *
 * Size: enqueue, inspect and steering share the row readers
 * below; enqueue would move to enqueue.c (issue 27).
 *
 * Folder src/model/ (floor 6, docs/design.md): what a task, a lease, a
 * limit, a schedule and a lock are, as statements of the registry:
 * queue.c, lease.c, limits.c, sched.c, lock.c, lock_run.c, admin.c,
 * retention.c, done.c, deps.c, schema.c. Calls claim/ and below.
 *
 * Layer: the model. Every value is a bound parameter; every name is
 * checked against the strict pattern before it reaches SQL. Writes that
 * belong together share one transaction (enqueue_many). What a worker does
 * with tasks (claim, finish, renew, take back) is in lease.c.
 *
 * Task states and who moves them (one transition per statement, each
 * conditional on the state it leaves, so two movers cannot both win):
 *
 *   pending   (0) --claim (any node)-----------------> running
 *   retry     (4) --claim (any node)-----------------> running
 *   running   (1) --finish ok (owner)----------------> succeeded
 *             (1) --finish failed, attempts left-----> retry
 *                                                      (run_at = now + backoff)
 *             (1) --finish failed, attempts spent----> dead
 *             (1) --release on shutdown (owner)------> pending
 *                                                      (the attempt given back)
 *             (1) --lease expired (any live node)----> retry
 *                                                      (or dead, when spent)
 *   pending, retry, running, blocked --cancel (user)-> cancelled
 *   dead, cancelled, pending, retry --retry (user)---> pending
 *   blocked   (6) --its last open parent ends--------> pending
 *             (6) --a parent ends dead or cancelled--> cancelled
 *                   (policy cancel; docs/workflows.md, model/deps.c)
 *
 * Where they are (schema 4): live tasks (pending, running, retry) in
 * {p}task, ended ones (succeeded, dead, cancelled) in {p}task_done, same
 * columns and id. A task that ends moves in the transaction that ends it
 * (a cancel here, through sked__move_done); a retry of an ended task
 * moves it back; reads of one task, of a unique key and of lists read
 * both tables; an enqueue with a unique key looks in both
 * (enqueue_unique says why that is race-free).
 */
#include "handle/internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/ident.h"
#include "util/pgarray.h"

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
	if (o && o->unique_key &&
	    (!*o->unique_key || strlen(o->unique_key) > SKED_MAX_NAME))
		return sked__fail(h, SKED_EINVAL,
		                  "unique key must be 1 to %d bytes",
		                  SKED_MAX_NAME);
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

/* Wake idle workers where the database can push (PostgreSQL NOTIFY).
 * Best effort: a worker polls anyway, so a failed notify only costs
 * latency. */
static int
notify(sked *h)
{
	if (!h->notify_sql)
		return SKED_OK;
	return sked__qdyn(h, h->notify_sql, NULL, 0, NULL);
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
	sked_val p[9] = {
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
	};
	sked_res r = {0};
	*dup = 0;
	int rc = sked__q(h, at ? SKED_SQL_ENQ_AT : SKED_SQL_ENQ_IN, p, 9, &r);
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

/* The first id that statement stmt (parameters p) answers; *id 0 when
 * it answers no row. */
static int
one_id(sked *h, sked_sql stmt, const sked_val *p, int np, int64_t *id)
{
	sked_res r = {0};
	int rc = sked__q(h, stmt, p, np, &r);
	*id = rc == SKED_OK && r.nrows > 0 ? sked__res_int(&r, 0, 0) : 0;
	sked__res_clear(&r);
	return rc;
}

/* Enqueue with a unique key: the key is taken while a task holding it is
 * in either table, live ({p}task, whose unique index decides) or ended
 * ({p}task_done, until retention removes it). One transaction: the insert
 * into {p}task, then, in a new statement, a look for the key among ended
 * tasks; found, the insert is rolled back and that task's id returned.
 * Race-free across the move (docs/design.md, "Ended tasks"): a move that
 * committed before the insert returned is seen by the next statement
 * (READ COMMITTED: every statement reads what has committed; SQLite:
 * writers take turns), and a move still in flight holds the key's entry
 * in {p}task's unique index, so the insert waits for it to end. */
#define ENQ_TRIES 5

static int
enqueue_unique(sked *h, const char *kind, const char *payload, size_t len,
               const sked_enqueue_opts *o, int64_t *id, int *dup)
{
	sked_val k = SKED_TEXTV(o->unique_key);
	int64_t ended = 0;
	/* The common repeat of an ended task's key, answered without an
	 * insert (whose rollback would make the enqueuers waiting on it
	 * deadlock on MySQL's unique index); the look-up after the insert
	 * is the one that closes the race. */
	int rc = one_id(h, SKED_SQL_DONE_UNIQUE, &k, 1, &ended);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot look up the unique key");
	if (ended) {
		*id = ended;
		*dup = 1;
		return SKED_OK;
	}
	/* a holder that vanished between the insert and the look-up (pruned,
	 * or an enqueue that rolled back) frees the key, and a deadlock
	 * between enqueuers of one key is rolled back: try again */
	for (int attempt = 1; attempt <= ENQ_TRIES; attempt++) {
		*dup = 0;
		if ((rc = sked__begin(h, 0)) != SKED_OK)
			return sked__fail_db(h, rc, "cannot begin the enqueue");
		rc = insert_task(h, kind, payload, len, o, id, dup);
		if (rc == SKED_OK && !*dup) {
			rc = one_id(h, SKED_SQL_DONE_UNIQUE, &k, 1, &ended);
			if (rc != SKED_OK)
				sked__fail_db(h, rc,
				              "cannot look up the unique key");
		}
		if (rc != SKED_OK &&
		    sked__retry_pause(h, rc, attempt, ENQ_TRIES, "enqueue"))
			continue;
		if (rc == SKED_OK && ended && h->borrowed) {
			/* the application's transaction: no rollback of
			 * ours, so the new row goes by hand */
			sked_val u = SKED_INTV(*id);
			rc = sked__q(h, SKED_SQL_ENQ_UNDO, &u, 1, NULL);
			if (rc != SKED_OK)
				return sked__fail_db(h, rc, "cannot enqueue");
		}
		if (rc != SKED_OK || *dup || ended) {
			sked__rollback(h);
			if (rc != SKED_OK)
				return rc;
			if (ended) { /* an ended task holds the key */
				*id = ended;
				*dup = 1;
				return SKED_OK;
			}
			rc = one_id(h, SKED_SQL_UNIQUE_GET, &k, 1, id);
			if (rc != SKED_OK)
				return sked__fail_db(
				        h, rc, "cannot look up the unique key");
			if (*id)
				return SKED_OK;
			continue;
		}
		/* delivered at commit, like enqueue_many's */
		if ((rc = notify(h)) == SKED_OK)
			rc = sked__commit(h);
		else
			sked__rollback(h);
		if (rc != SKED_OK)
			return sked__fail_db(h, rc,
			                     "cannot commit the enqueue");
		return SKED_OK;
	}
	*dup = 0;
	return sked__fail(h, SKED_EBUSY,
	                  "unique key '%s' is being enqueued and removed by "
	                  "others; try again",
	                  o->unique_key);
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
	if (rc == SKED_OK && any && (rc = notify(h)) != SKED_OK)
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
	if ((rc = sked__deps_check(h, opts)) != SKED_OK)
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
		sked__ignore(notify(h)); /* autocommit: cannot undo the task */
	return rc;
}

/* ---- enqueueing many in fewer round trips ---- */

/* SKED_CAP_ARRAYS (PostgreSQL): the n payloads as one text[] literal in
 * one statement, autocommit; ids come back in input order. Binds ?1
 * queue, ?2 kind, ?3 payloads, ?4 priority, ?5 run-at ms (or NULL), ?6
 * delay ms, ?7 max attempts. The statement notifies workers itself. */
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
	sked_val p[7] = {
	        SKED_TEXTV(o->queue ? o->queue : SKED_DEFAULT_QUEUE),
	        SKED_TEXTV(kind),
	        SKED_TEXTV(a.p),
	        SKED_INTV(o->priority),
	        o->run_at_ms ? SKED_INTV(o->run_at_ms) : SKED_NULLV,
	        SKED_INTV(o->delay_ms),
	        SKED_INTV(o->max_attempts ? o->max_attempts
	                                  : SKED_DEFAULT_MAX_ATTEMPTS),
	};
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_ENQ_ARRAYS, p, 7, &r);
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
	int rc0 = sked__deps_check(h, opts);
	if (rc0 != SKED_OK)
		return rc0;
	if (opts && opts->n_after)
		return enqueue_after(h, kind, n, payloads, lens, opts, ids_out);
	/* a concurrency key (limits.c) or a trace context takes the
	 * one-row insert below */
	int keyed = opts && (opts->concurrency_key || opts->traceparent);
	if ((h->dialect->caps & SKED_CAP_ARRAYS) && !keyed)
		return enqueue_arrays(h, kind, n, payloads, lens, opts,
		                      ids_out);
	if ((h->dialect->caps & SKED_CAP_INSERT_ROWS) && !keyed)
		return enqueue_rows(h, kind, n, payloads, lens, opts, ids_out);
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
	if ((rc = notify(h)) != SKED_OK) {
		sked__fail_db(h, rc, "cannot notify workers");
		sked__rollback(h);
		return rc;
	}
	rc = sked__commit(h);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot commit the enqueue");
	return SKED_OK;
}

/* ---- reading tasks ---- */

/* An id that is in neither table: never given, or the task ended and
 * retention removed it (ids are never reused: docs/design.md) */
#define NO_TASK                                                                \
	"no task %lld (none was enqueued with that id, or it ended and was "   \
	"pruned)"

static int
task_from_row(const sked_res *r, int i, sked_task *t)
{
	int oom = 0;
	memset(t, 0, sizeof *t);
	t->id = sked__res_int(r, i, 0);
	t->queue = sked__res_dup(r, i, 1, &oom);
	t->kind = sked__res_dup(r, i, 2, &oom);
	t->payload = sked__res_dup(r, i, 3, &oom);
	t->payload_len = t->payload ? sked__res_len(r, i, 3) : 0;
	t->status = (int)sked__res_int(r, i, 4);
	t->priority = (int)sked__res_int(r, i, 5);
	t->run_at_ms = sked__res_int(r, i, 6);
	t->attempts = (int)sked__res_int(r, i, 7);
	t->max_attempts = (int)sked__res_int(r, i, 8);
	t->node_id = sked__res_dup(r, i, 9, &oom);
	t->lease_until_ms = sked__res_int(r, i, 10);
	t->unique_key = sked__res_dup(r, i, 11, &oom);
	t->schedule_name = sked__res_dup(r, i, 12, &oom);
	t->fire_time_ms = sked__res_int(r, i, 13);
	t->last_error = sked__res_dup(r, i, 14, &oom);
	t->created_ms = sked__res_int(r, i, 15);
	t->updated_ms = sked__res_int(r, i, 16);
	t->finished_ms = sked__res_int(r, i, 17);
	t->traceparent = sked__res_dup(r, i, 18, &oom);
	if (r->ncols > 19) /* SKED_SQL_TASK_GET's */
		t->result = sked__res_dup(r, i, 19, &oom);
	return oom ? SKED_ENOMEM : SKED_OK;
}

static int
tasks_from_rows(sked *h, const sked_res *r, sked_task **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (r->nrows == 0)
		return SKED_OK;
	sked_task *t = calloc((size_t)r->nrows, sizeof *t);
	if (!t)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	for (int i = 0; i < r->nrows; i++) {
		if (task_from_row(r, i, &t[i]) != SKED_OK) {
			sked_tasks_free(t, (size_t)i + 1);
			return sked__fail(h, SKED_ENOMEM, "out of memory");
		}
	}
	*out = t;
	*n = (size_t)r->nrows;
	return SKED_OK;
}

SKED_API int
sked_task_get(sked *h, int64_t id, sked_task **out)
{
	if (!h || !h->db || !out)
		return SKED_EINVAL;
	*out = NULL;
	sked_val p = SKED_INTV(id);
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_TASK_GET, &p, 1, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot read the task");
	/* live or ended: one row (the first, should a reader that is not
	 * given one snapshot see both sides of a move) */
	if (r.nrows == 0) {
		sked__res_clear(&r);
		return sked__fail(h, SKED_ENOTFOUND, NO_TASK, (long long)id);
	}
	sked_task *t = calloc(1, sizeof *t);
	rc = t ? task_from_row(&r, 0, t) : SKED_ENOMEM;
	sked__res_clear(&r);
	if (rc != SKED_OK) {
		sked_tasks_free(t, t ? 1 : 0);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	*out = t;
	return SKED_OK;
}

/* Append the filters a list and a bulk change share (queue, kind, node,
 * creation window) to sql, their values bound after p[*np]: registry
 * fragments only, every value a parameter. p needs room for five more. */
void
sked__filter_fill(sked *h, const sked_list_filter *f, sked_buf *sqlp,
                  sked_val *p, int *npp)
{
	sked_buf sql = *sqlp;
	int np = *npp;
	if (f->queue) {
		p[np++] = SKED_TEXTV(f->queue);
		sked__sql_fill(&sql, h->sql[SKED_SQL_AND_QUEUE], np, 1);
	}
	if (f->kind) {
		p[np++] = SKED_TEXTV(f->kind);
		sked__sql_fill(&sql, h->sql[SKED_SQL_AND_KIND], np, 1);
	}
	if (f->node_id) {
		p[np++] = SKED_TEXTV(f->node_id);
		sked__sql_fill(&sql, h->sql[SKED_SQL_AND_NODE], np, 1);
	}
	if (f->created_after_ms > 0) {
		p[np++] = SKED_INTV(f->created_after_ms);
		sked__sql_fill(&sql, h->sql[SKED_SQL_AND_CREATED_FROM], np, 1);
	}
	if (f->created_before_ms > 0) {
		p[np++] = SKED_INTV(f->created_before_ms);
		sked__sql_fill(&sql, h->sql[SKED_SQL_AND_CREATED_BEFORE], np,
		               1);
	}
	*sqlp = sql;
	*npp = np;
}

SKED_API int
sked_task_list(sked *h, const sked_list_filter *f, sked_task **out, size_t *n)
{
	if (!h || !h->db || !out || !n)
		return SKED_EINVAL;
	*out = NULL;
	*n = 0;
	static const sked_list_filter all = {.status = -1};
	if (!f)
		f = &all;
	if (f->queue && sked__check_name(h, "queue", f->queue) != SKED_OK)
		return SKED_EINVAL;
	if (f->kind && sked__check_name(h, "kind", f->kind) != SKED_OK)
		return SKED_EINVAL;
	/* The statement is assembled from registry fragments only; every
	 * value is bound. */
	/* Live tasks are in {p}task, ended ones in {p}task_done: a status
	 * names one table; without one, each table's newest rows are merged
	 * (the filters bound once, their markers used in both halves). */
	sked_val p[9];
	int np = 0;
	sked_buf sql = {0};
	int ended = f->status == SKED_SUCCEEDED || f->status == SKED_DEAD ||
	            f->status == SKED_CANCELLED;
	int both = f->status < 0;
	sked__sql_fill(&sql,
	               h->sql[both    ? SKED_SQL_LIST_BOTH_HEAD
	                      : ended ? SKED_SQL_LIST_DONE_HEAD
	                              : SKED_SQL_LIST_HEAD],
	               0, 0);
	if (f->status >= 0) {
		p[np++] = SKED_INTV(f->status);
		sked__sql_fill(&sql, h->sql[SKED_SQL_AND_STATUS], np, 1);
	}
	if (f->before_id > 0) {
		p[np++] = SKED_INTV(f->before_id);
		sked__sql_fill(&sql, h->sql[SKED_SQL_AND_BEFORE_ID], np, 1);
	}
	int nfilter = np;
	sked__filter_fill(h, f, &sql, p, &np);
	p[np++] = SKED_INTV(f->limit > 0 ? f->limit : 100);
	if (both) {
		/* the same fragments again, on the same markers */
		int again = 0;
		sked_val scratch[9];
		sked__sql_fill(&sql, h->sql[SKED_SQL_LIST_BOTH_MID], np, 1);
		if (f->before_id > 0)
			sked__sql_fill(&sql, h->sql[SKED_SQL_AND_BEFORE_ID],
			               ++again, 1);
		again = nfilter;
		sked__filter_fill(h, f, &sql, scratch, &again);
		sked__sql_fill(&sql, h->sql[SKED_SQL_LIST_BOTH_TAIL], np, 1);
	} else
		sked__sql_fill(&sql, h->sql[SKED_SQL_LIST_TAIL], np, 1);
	if (sql.oom) {
		sked__buf_free(&sql);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	sked_res r = {0};
	int rc = sked__qdyn(h, sql.p, p, np, &r);
	sked__buf_free(&sql);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot list tasks");
	rc = tasks_from_rows(h, &r, out, n);
	sked__res_clear(&r);
	return rc;
}

SKED_API void
sked_tasks_free(sked_task *tasks, size_t n)
{
	if (!tasks)
		return;
	for (size_t i = 0; i < n; i++) {
		sked_task *t = &tasks[i];
		free(t->queue);
		free(t->kind);
		free(t->payload);
		free(t->node_id);
		free(t->unique_key);
		free(t->schedule_name);
		free(t->last_error);
		free(t->result);
		free(t->traceparent);
	}
	free(tasks);
}

/* ---- steering ---- */

static int
task_status(sked *h, int64_t id, int *status)
{
	sked_val p = SKED_INTV(id);
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_TASK_STATUS, &p, 1, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot read the task");
	if (r.nrows == 0)
		rc = sked__fail(h, SKED_ENOTFOUND, NO_TASK, (long long)id);
	else
		*status = (int)sked__res_int(&r, 0, 0);
	sked__res_clear(&r);
	return rc;
}

/* Run a {ids} statement over n ids, their markers from ?first: p holds
 * the first - 1 parameters before them, and room for the ids after. */
static int
run_ids(sked *h, sked_sql stmt, sked_val *p, int first, const int64_t *ids,
        int n, int64_t *affected)
{
	sked_buf sql = {0};
	sked__sql_fill(&sql, h->sql[stmt], first, n);
	if (sql.oom) {
		sked__buf_free(&sql);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	for (int i = 0; i < n; i++)
		p[first - 1 + i] = SKED_INTV(ids[i]);
	int rc = sked__qdyn(h, sql.p, p, first - 1 + n, NULL);
	sked__buf_free(&sql);
	if (affected)
		*affected = rc == SKED_OK && sked__affected(h) > 0
		                    ? sked__affected(h)
		                    : 0;
	return rc;
}

/* Cancel one live task inside the caller's transaction, moving it to
 * {p}task_done; *changed 1 when it was live. */
int
sked__cancel_in_tx(sked *h, int64_t id, int64_t *changed)
{
	sked_val p = SKED_INTV(id);
	*changed = 0;
	int rc = sked__q(h, SKED_SQL_CANCEL, &p, 1, NULL);
	if (rc != SKED_OK || sked__affected(h) != 1)
		return rc;
	*changed = 1;
	return sked__move_done(h, &id, 1);
}

SKED_API int
sked_cancel(sked *h, int64_t id)
{
	if (!h || !h->db)
		return SKED_EINVAL;
	int64_t changed = 0;
	int rc = sked__begin(h, 0);
	if (rc == SKED_OK)
		rc = sked__cancel_in_tx(h, id, &changed);
	if (rc == SKED_OK && changed)
		rc = sked__commit(h);
	else
		sked__rollback(h);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot cancel the task");
	if (changed)
		return SKED_OK;
	int st;
	if ((rc = task_status(h, id, &st)) != SKED_OK)
		return rc;
	return sked__fail(h, SKED_ESTATE, "task %lld has already %s",
	                  (long long)id,
	                  st == SKED_SUCCEEDED   ? "succeeded"
	                  : st == SKED_DEAD      ? "died"
	                  : st == SKED_CANCELLED ? "been cancelled"
	                                         : "changed");
}

/* Retry the ended tasks ids (dead or cancelled, in {p}task_done) inside
 * the caller's transaction: their rows there are locked first (so two
 * retries of one task take turns, and the second finds it gone), copied
 * back into {p}task as pending with the same ids, and dropped. *changed:
 * how many went back. A unique key or schedule fire that a live task has
 * taken meanwhile makes the copy fail (SKED_DBE_UNIQUE); the caller rolls
 * back and says so (retry_refused). */
int
sked__retry_back(sked *h, const int64_t *ids, int n, int64_t *changed)
{
	*changed = 0;
	sked_val *p = calloc((size_t)n, sizeof *p);
	if (!p)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	int64_t locked = 0, dropped = 0;
	int rc = run_ids(h, SKED_SQL_RETRY_LOCK, p, 1, ids, n, &locked);
	if (rc == SKED_OK && locked > 0)
		rc = run_ids(h, SKED_SQL_RETRY_RUNS, p, 1, ids, n, NULL);
	if (rc == SKED_OK && locked > 0)
		rc = run_ids(h, SKED_SQL_RETRY_BACK, p, 1, ids, n, NULL);
	if (rc == SKED_OK && locked > 0)
		rc = run_ids(h, SKED_SQL_RETRY_DROP, p, 1, ids, n, &dropped);
	free(p);
	if (rc == SKED_OK)
		*changed = dropped;
	return rc;
}

/* After a retry of ended task id was refused by a unique index: one line
 * that says which live task holds what it needs. */
int
sked__retry_refused(sked *h, int64_t id)
{
	sked_task *t = NULL;
	if (sked_task_get(h, id, &t) != SKED_OK)
		return sked__fail(h, SKED_ESTATE,
		                  "cannot retry task %lld: a live task holds "
		                  "its unique key or schedule fire",
		                  (long long)id);
	int64_t holder = 0;
	if (t->unique_key) {
		sked_val k = SKED_TEXTV(t->unique_key);
		sked__ignore(one_id(h, SKED_SQL_LIVE_UNIQUE, &k, 1, &holder));
	}
	int rc;
	if (t->unique_key && holder)
		rc = sked__fail(h, SKED_ESTATE,
		                "cannot retry task %lld: its unique key '%s' "
		                "is now held by task %lld",
		                (long long)id, t->unique_key,
		                (long long)holder);
	else if (t->unique_key)
		rc = sked__fail(h, SKED_ESTATE,
		                "cannot retry task %lld: a live task holds its "
		                "unique key '%s'",
		                (long long)id, t->unique_key);
	else
		rc = sked__fail(h, SKED_ESTATE,
		                "cannot retry task %lld: a live task holds its "
		                "schedule fire (%s)",
		                (long long)id,
		                t->schedule_name ? t->schedule_name : "?");
	sked_tasks_free(t, 1);
	return rc;
}

/* Retry one task inside the caller's transaction: a live one waiting
 * (or pending) in place, an ended one back from {p}task_done. */
int
sked__retry_in_tx(sked *h, int64_t id, int64_t *changed)
{
	sked_val p = SKED_INTV(id);
	*changed = 0;
	int rc = sked__q(h, SKED_SQL_RETRY, &p, 1, NULL);
	if (rc != SKED_OK)
		return rc;
	if (sked__affected(h) == 1) {
		*changed = 1;
		return SKED_OK;
	}
	return sked__retry_back(h, &id, 1, changed);
}

SKED_API int
sked_retry(sked *h, int64_t id)
{
	if (!h || !h->db)
		return SKED_EINVAL;
	int64_t changed = 0;
	int rc = sked__begin(h, 0);
	if (rc == SKED_OK)
		rc = sked__retry_in_tx(h, id, &changed);
	if (rc == SKED_OK && changed)
		rc = sked__commit(h);
	else if (rc == SKED_OK)
		sked__rollback(h);
	if (rc != SKED_OK) {
		int unique = sked__err_kind(h) == SKED_DBE_UNIQUE;
		int frc = sked__fail_db(h, rc, "cannot retry the task");
		sked__rollback(h);
		return unique ? sked__retry_refused(h, id) : frc;
	}
	if (changed)
		return SKED_OK;
	int st;
	if ((rc = task_status(h, id, &st)) != SKED_OK)
		return rc;
	return sked__fail(h, SKED_ESTATE,
	                  "task %lld is %s; only dead, "
	                  "cancelled or waiting tasks can be retried",
	                  (long long)id, sked_status_name(st));
}

/* ---- runs and counts ---- */

SKED_API int
sked_runs_get(sked *h, int64_t task_id, sked_run **out, size_t *n)
{
	if (!h || !h->db || !out || !n)
		return SKED_EINVAL;
	*out = NULL;
	*n = 0;
	sked_val p = SKED_INTV(task_id);
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_RUNS_GET, &p, 1, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot read the runs");
	if (r.nrows == 0) {
		sked__res_clear(&r);
		return SKED_OK;
	}
	sked_run *runs = calloc((size_t)r.nrows, sizeof *runs);
	if (!runs) {
		sked__res_clear(&r);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	int oom = 0;
	for (int i = 0; i < r.nrows; i++) {
		sked_run *x = &runs[i];
		x->id = sked__res_int(&r, i, 0);
		x->task_id = sked__res_int(&r, i, 1);
		x->attempt = (int)sked__res_int(&r, i, 2);
		x->node_id = sked__res_dup(&r, i, 3, &oom);
		x->started_ms = sked__res_int(&r, i, 4);
		x->finished_ms = sked__res_int(&r, i, 5);
		x->outcome = sked__res_dup(&r, i, 6, &oom);
		x->exit_code = sked__res_null(&r, i, 7)
		                       ? -1
		                       : (int)sked__res_int(&r, i, 7);
		x->error = sked__res_dup(&r, i, 8, &oom);
		x->output = sked__res_dup(&r, i, 9, &oom);
	}
	/* the attempt an ended row records (run id 0) ended the task: it
	 * comes after every run row */
	if (r.nrows > 1 && runs[0].id == 0) {
		sked_run last = runs[0];
		memmove(runs, runs + 1, sizeof *runs * (size_t)(r.nrows - 1));
		runs[r.nrows - 1] = last;
	}
	*n = (size_t)r.nrows;
	sked__res_clear(&r);
	*out = runs;
	if (oom) {
		sked_runs_free(runs, *n);
		*out = NULL;
		*n = 0;
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	return SKED_OK;
}

SKED_API void
sked_runs_free(sked_run *runs, size_t n)
{
	if (!runs)
		return;
	for (size_t i = 0; i < n; i++) {
		free(runs[i].node_id);
		free(runs[i].outcome);
		free(runs[i].error);
		free(runs[i].output);
	}
	free(runs);
}

SKED_API int
sked_stats(sked *h, sked_queue_stats **out, size_t *n)
{
	if (!h || !h->db || !out || !n)
		return SKED_EINVAL;
	*out = NULL;
	*n = 0;
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_STATS, NULL, 0, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot count tasks");
	/* one entry per queue, live and ended tasks alike; a queue's rows
	 * from both tables come one after another (ORDER BY 1) */
	sked_queue_stats *s = calloc((size_t)r.nrows + 1, sizeof *s);
	if (!s) {
		sked__res_clear(&r);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	size_t k = 0;
	for (int i = 0; i < r.nrows; i++) {
		int st = (int)sked__res_int(&r, i, 1);
		int64_t cnt = sked__res_int(&r, i, 2);
		if (st < 0 || st > SKED_BLOCKED)
			continue;
		const char *q = sked__res_text(&r, i, 0);
		if (k == 0 || strcmp(s[k - 1].queue, q) != 0)
			snprintf(s[k++].queue, sizeof s->queue, "%s", q);
		s[k - 1].count[st] += cnt;
		s[k - 1].due += sked__res_int(&r, i, 3);
	}
	sked__res_clear(&r);
	if (k == 0) {
		free(s);
		s = NULL;
	}
	*out = s;
	*n = k;
	return SKED_OK;
}
