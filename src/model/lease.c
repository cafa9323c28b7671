/*
 * lease.c — finishing, renewing, releasing and taking back leased tasks.
 *
 * Size: the six finish variants are still functions, not data
 * (issue 27, "one finish with the variants as data"); renew and take-back
 * would then fit a file of their own.
 *
 * Layer: the model (see lease.h). Row locks: sked__finish locks each
 * finished task row (in the order the worker hands them over) and inserts
 * one run row per outcome, all in one transaction; sked__renew locks the
 * rows this node holds; sked__reap locks one expired row at a time, in its
 * own transaction, so it never holds two task rows at once. A finish
 * rolled back as a deadlock or lock wait timeout is retried (bounded).
 */
#include "model/lease.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"
#include "util/pgarray.h"

/* tries of a finish over deadlocks and busy databases (below) */
#define TRIES 3

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
	/* an attempt that ended the task is recorded on its ended row by
	 * the move (sked__move_done_runs), not in a run row */
	if (o->what == SKED_FIN_OK || o->dead)
		return SKED_OK;
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
/* the arrays, in parameter order (?1 … ?9), then (after the node, ?10)
 * the successes' 'id:attempt' keys (?11) and the others' ids (?12) */
enum {
	IDS,
	ATT,
	ST,
	STARTED,
	DELAY,
	EXIT,
	ERR,
	OUT,
	OUTCOME,
	KEYS,
	OTHER,
	RES,
	NA
};

static int
build_arrays(sked *h, const sked_outcome *o, int n, sked_buf a[NA])
{
	size_t nkeys = 0, nother = 0, nres = 0;
	memset(a, 0, sizeof *a * NA);
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
		if (o[i].result)
			nres++;
		if (o[i].what == SKED_FIN_OK) {
			char key[48];
			int kl = snprintf(key, sizeof key, "%lld:%d",
			                  (long long)o[i].id, o[i].attempt);
			sked__pgarray_text(&a[KEYS], nkeys++, key, (size_t)kl);
		} else {
			sked__pgarray_int(&a[OTHER], nother++, o[i].id, 0);
		}
	}
	/* the results only when one of them has one: a batch without
	 * passes NULL (sked pays nothing for them) */
	for (int i = 0; nres > 0 && i < n; i++)
		sked__pgarray_text(&a[RES], (size_t)i, o[i].result,
		                   o[i].result ? strlen(o[i].result) : 0);
	int oom = 0;
	for (int j = 0; j < NA; j++) {
		if (j == RES && nres == 0)
			continue;
		sked__pgarray_end(&a[j], j == KEYS    ? nkeys
		                         : j == OTHER ? nother
		                                      : (size_t)n);
		oom |= a[j].oom;
	}
	return oom ? sked__fail(h, SKED_ENOMEM, "out of memory") : SKED_OK;
}

/* ?1-?9 the arrays, ?10 the node, ?11 and ?12 the split by outcome,
 * ?13 the results (NULL: none) */
static void
set_array_params(sked_val p[13], sked_buf a[NA], const char *node_id)
{
	for (int j = 0; j < OUTCOME + 1; j++)
		p[j] = SKED_TEXTV(a[j].p);
	p[9] = SKED_TEXTV(node_id);
	p[10] = SKED_TEXTV(a[KEYS].p);
	p[11] = SKED_TEXTV(a[OTHER].p);
	p[12] = SKED_TEXTV(a[RES].p);
}

static void
free_arrays(sked_buf a[NA])
{
	for (int j = 0; j < NA; j++)
		sked__buf_free(&a[j]);
}

/* What the database said of outcome ord (1-based). */
static void
set_applied(sked_outcome *o, int n, int64_t ord, int64_t applied)
{
	if (ord < 1 || ord > n)
		return;
	sked_outcome *x = &o[ord - 1];
	x->applied = applied == 1;
	x->deferred = applied == 2;
	x->dead = x->applied && x->what == SKED_FIN_FAIL &&
	          x->attempt >= x->max_attempts;
}

static int
finish_arrays(sked *h, const char *node_id, sked_outcome *o, int n)
{
	sked_buf a[NA];
	sked_res r = {0};
	int rc = build_arrays(h, o, n, a);
	if (rc != SKED_OK)
		goto out;
	sked_val p[13];
	set_array_params(p, a, node_id);
	rc = sked__q(h, SKED_SQL_FINISH_ARRAYS, p, 13, &r);
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
	for (int i = 0; i < r.nrows; i++)
		set_applied(o, n, sked__res_int(&r, i, 0),
		            sked__res_int(&r, i, 1));
out:
	sked__res_clear(&r);
	free_arrays(a);
	return rc;
}

/* SKED_CAP_FUSED: finish n outcomes (n may be 0) and claim up to
 * req->limit tasks (which may be 0) in one statement. */
static int
finish_claim_once(sked *h, const char *node_id, sked_outcome *o, int n,
                  const sked_claim_req *req, sked_claimed **out, int *nout)
{
	sked_buf a[NA];
	sked_res r = {0};
	*out = NULL;
	*nout = 0;
	int rc = build_arrays(h, o, n, a);
	if (rc != SKED_OK)
		goto out;
	sked_val p[17];
	set_array_params(p, a, node_id);
	p[13] = SKED_INTV(req->lease_ms);
	p[14] = SKED_INTV(req->limit);
	p[15] = SKED_TEXTV(req->kinds);
	p[16] = SKED_TEXTV(req->queue);
	rc = sked__q(h,
	             req->queue ? SKED_SQL_FINISH_CLAIM_Q
	                        : SKED_SQL_FINISH_CLAIM_ANY,
	             p, req->queue ? 17 : 16, &r);
	if (rc != SKED_OK) {
		sked__fail_db(h, rc, "cannot finish and claim tasks");
		goto out;
	}
	int nclaimed = 0, nfinished = 0;
	for (int i = 0; i < r.nrows; i++)
		if (sked__res_int(&r, i, 7) == 1)
			nclaimed++;
		else
			nfinished++;
	if (nfinished != n || nclaimed > req->limit) {
		rc = sked__fail(h, SKED_EDB,
		                "finishing %d and claiming up to %d task(s) "
		                "answered %d and %d row(s)",
		                n, req->limit, nfinished, nclaimed);
		goto out;
	}
	if (nclaimed > 0 && !(*out = calloc((size_t)nclaimed, sizeof **out))) {
		rc = sked__fail(h, SKED_ENOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < r.nrows; i++) {
		if (sked__res_int(&r, i, 7) != 1) {
			set_applied(o, n, sked__res_int(&r, i, 0),
			            sked__res_int(&r, i, 4));
			continue;
		}
		/* claimed: committed already, so keep going on a failed
		 * copy and hand over what we have */
		if (sked__claimed_from_row(&r, i, 11, &(*out)[*nout]) !=
		    SKED_OK) {
			(*nout)++;
			rc = sked__fail(h, SKED_ENOMEM, "out of memory");
			break;
		}
		(*nout)++;
	}
out:
	sked__res_clear(&r);
	free_arrays(a);
	return rc;
}

/* One {rows7} row of an outcome: id, attempt, started ms, outcome,
 * exit code, error, output. */
static void
run_vals(sked_val v[7], const sked_outcome *x, const char *outcome,
         const char *error)
{
	v[0] = SKED_INTV(x->id);
	v[1] = SKED_INTV(x->attempt);
	v[2] = SKED_INTV(x->started_ms);
	v[3] = SKED_TEXTV(outcome);
	v[4] = x->exit_code >= 0 ? SKED_INTV(x->exit_code) : SKED_NULLV;
	v[5] = SKED_TEXTV(error);
	v[6] = SKED_TEXTV(x->output);
}

/* SKED_CAP_BATCH_FINISH (MySQL): the successes among o in a fixed
 * number of statements, inside the caller's transaction: lock the rows
 * this node still runs, mark those succeeded, write every success's run
 * row (late where the row was not held) in one insert. *done[i] is set
 * for the outcomes handled here; the applied ids are appended to ended. */
static int
finish_successes(sked *h, const char *node_id, sked_outcome *o, int n,
                 char *done, const sked_outcome **ended, int *nended)
{
	int k = 0;
	for (int i = 0; i < n; i++)
		k += o[i].what == SKED_FIN_OK;
	if (k < 2)
		return SKED_OK; /* one at a time is as cheap */
	int rc = SKED_OK;
	sked_val *p = calloc((size_t)(7 * k + 1), sizeof *p);
	int *ok = malloc(sizeof *ok * (size_t)k);
	char(*late)[600] = malloc(sizeof *late * (size_t)k);
	sked_buf sql = {0};
	sked_res r = {0};
	if (!p || !ok || !late) {
		rc = sked__fail(h, SKED_ENOMEM, "out of memory");
		goto out;
	}
	k = 0;
	for (int i = 0; i < n; i++)
		if (o[i].what == SKED_FIN_OK) {
			ok[k++] = i;
			o[i].applied = 0;
			o[i].dead = 0;
		}
	/* 1: which of them this node still holds, locked */
	p[0] = SKED_TEXTV(node_id);
	for (int j = 0; j < k; j++)
		p[1 + j] = SKED_INTV(o[ok[j]].id);
	sked__sql_fill(&sql, h->sql[SKED_SQL_FIN_LOCK], 2, k);
	if (sql.oom) {
		rc = sked__fail(h, SKED_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = sked__qdyn(h, sql.p, p, k + 1, &r)) != SKED_OK)
		goto out;
	int held = 0;
	for (int i = 0; i < r.nrows; i++) {
		int64_t id = sked__res_int(&r, i, 0);
		int att = (int)sked__res_int(&r, i, 1);
		for (int j = 0; j < k; j++)
			if (o[ok[j]].id == id && o[ok[j]].attempt == att &&
			    !o[ok[j]].applied) {
				o[ok[j]].applied = 1;
				held++;
			}
	}
	sked__res_clear(&r);
	/* 2: mark those succeeded */
	if (held > 0) {
		int m = 0;
		for (int j = 0; j < k; j++)
			if (o[ok[j]].applied) {
				p[m++] = SKED_INTV(o[ok[j]].id);
				ended[(*nended)++] = &o[ok[j]];
			}
		sql.n = 0;
		sked__sql_fill(&sql, h->sql[SKED_SQL_FIN_OK_IDS], 1, m);
		if (sql.oom) {
			rc = sked__fail(h, SKED_ENOMEM, "out of memory");
			goto out;
		}
		if ((rc = sked__qdyn(h, sql.p, p, m, NULL)) != SKED_OK)
			goto out;
	}
	/* 3: a run row for each late one (the others are recorded on their
	 * ended rows by the move) */
	p[0] = SKED_TEXTV(node_id);
	int nlate = 0;
	for (int j = 0; j < k; j++) {
		const sked_outcome *x = &o[ok[j]];
		if (x->applied)
			continue;
		snprintf(late[nlate], sizeof late[nlate],
		         "late %s result, not applied (lease lost)%s%s",
		         SKED_OUTCOME_SUCCEEDED, x->error ? ": " : "",
		         x->error ? x->error : "");
		run_vals(&p[1 + 7 * nlate], x, SKED_OUTCOME_LATE, late[nlate]);
		nlate++;
	}
	if (nlate > 0) {
		sql.n = 0;
		sked__sql_fill(&sql, h->sql[SKED_SQL_RUN_ROWS], 2, nlate);
		if (sql.oom) {
			rc = sked__fail(h, SKED_ENOMEM, "out of memory");
			goto out;
		}
		if ((rc = sked__qdyn(h, sql.p, p, 7 * nlate + 1, NULL)) !=
		    SKED_OK)
			goto out;
	}
	for (int j = 0; j < k; j++)
		done[ok[j]] = 1;
out:
	sked__res_clear(&r);
	free(sql.p);
	free(late);
	free(ok);
	free(p);
	return rc;
}

/* The tasks that outcomes x ended leave the hot table inside the
 * caller's transaction, each ended row carrying the attempt that ended
 * it (schema 5) and its result: SKED_SQL_DONE_COPY_RUN then
 * SKED_SQL_DONE_DROP, in
 * chunks under the product's parameter limit and SQLite's 500 terms of
 * a compound SELECT. */
static int
move_done_runs(sked *h, const sked_outcome **x, int n)
{
	int per = h->dialect->max_params / 8;
	if (per > 400)
		per = 400;
	sked_val *p = calloc((size_t)(8 * (n < per ? n : per)), sizeof *p);
	sked_buf copy = {0};
	int rc = p ? SKED_OK : sked__fail(h, SKED_ENOMEM, "out of memory");
	for (int at = 0; at < n && rc == SKED_OK; at += per) {
		int k = n - at < per ? n - at : per;
		for (int i = 0; i < k; i++) {
			const sked_outcome *o = x[at + i];
			run_vals(&p[8 * i], o,
			         o->what == SKED_FIN_OK ? SKED_OUTCOME_SUCCEEDED
			                                : SKED_OUTCOME_FAILED,
			         o->error);
			p[8 * i + 7] = SKED_TEXTV(o->result);
		}
		copy.n = 0;
		sked__sql_fill(&copy, h->sql[SKED_SQL_DONE_COPY_RUN], 1, k);
		if (copy.oom) {
			rc = sked__fail(h, SKED_ENOMEM, "out of memory");
			break;
		}
		rc = sked__qdyn(h, copy.p, p, 8 * k, NULL);
		if (rc != SKED_OK)
			break;
		int64_t *ids = malloc(sizeof *ids * (size_t)k);
		if (!ids) {
			rc = sked__fail(h, SKED_ENOMEM, "out of memory");
			break;
		}
		for (int i = 0; i < k; i++)
			ids[i] = x[at + i]->id;
		for (int i = 0; i < k; i++)
			p[i] = SKED_INTV(x[at + i]->id);
		/* the rows leave, their dependents told (done.c) */
		rc = sked__drop_ended(h, ids, p, k);
		free(ids);
	}
	free(copy.p);
	free(p);
	return rc;
}

/* The outcomes' updates, run rows and moves, inside the caller's
 * transaction. */
static int
finish_in_tx(sked *h, const char *node_id, sked_outcome *o, int n)
{
	const sked_outcome **ended = malloc(sizeof *ended * (size_t)n);
	char *done = calloc((size_t)n, 1);
	int rc = SKED_OK, nended = 0;
	if (!ended || !done) {
		free(ended);
		free(done);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	/* per-call statements with up to 7 values a row: chunks keep under
	 * every product's parameter limit */
	if (h->dialect->caps & SKED_CAP_BATCH_FINISH) {
		int per = (h->dialect->max_params - 2) / 7;
		for (int at = 0; at < n && rc == SKED_OK; at += per)
			rc = finish_successes(h, node_id, o + at,
			                      n - at < per ? n - at : per,
			                      done + at, ended, &nended);
	}
	for (int i = 0; i < n && rc == SKED_OK; i++) {
		if (done[i])
			continue;
		rc = finish_one(h, node_id, &o[i]);
		if (rc == SKED_OK && o[i].applied &&
		    (o[i].what == SKED_FIN_OK || o[i].dead))
			ended[nended++] = &o[i];
	}
	/* the tasks that ended leave the hot table in this transaction,
	 * each with the attempt that ended it */
	if (rc == SKED_OK && nended > 0)
		rc = move_done_runs(h, ended, nended);
	free(ended);
	free(done);
	return rc;
}

static int finish_generic(sked *h, const char *node_id, sked_outcome *o, int n);

/* The outcomes an array statement deferred (a parent's end: see
 * dialect/postgresql.c) on the generic path, which resolves its
 * dependents in the ending transaction. */
static int
finish_deferred(sked *h, const char *node_id, sked_outcome *o, int n)
{
	int k = 0;
	for (int i = 0; i < n; i++)
		k += o[i].deferred;
	if (k == 0)
		return SKED_OK;
	sked_outcome *d = malloc(sizeof *d * (size_t)k);
	if (!d)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	for (int i = 0, j = 0; i < n; i++)
		if (o[i].deferred)
			d[j++] = o[i];
	int rc;
	for (int attempt = 1;; attempt++) {
		rc = finish_generic(h, node_id, d, k);
		if (!sked__retry_pause(h, rc, attempt, TRIES,
		                       "finishing parent tasks"))
			break;
	}
	for (int i = 0, j = 0; i < n; i++)
		if (o[i].deferred) {
			o[i].applied = d[j].applied;
			o[i].dead = d[j].dead;
			o[i].deferred = rc != SKED_OK;
			j++;
		}
	free(d);
	return rc;
}

static int
finish_once(sked *h, const char *node_id, sked_outcome *o, int n)
{
	if (h->dialect->caps & SKED_CAP_ARRAYS) {
		int rc = finish_arrays(h, node_id, o, n);
		return rc != SKED_OK ? rc : finish_deferred(h, node_id, o, n);
	}
	return finish_generic(h, node_id, o, n);
}

static int
finish_generic(sked *h, const char *node_id, sked_outcome *o, int n)
{
	int rc = sked__begin(h, 1);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot begin finishing tasks");
	rc = finish_in_tx(h, node_id, o, n);
	if (rc != SKED_OK) {
		sked__fail_db(h, rc, "cannot finish tasks");
		sked__rollback(h);
		return rc;
	}
	rc = sked__commit(h);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot commit finished tasks");
	return SKED_OK;
}

/* SQLite: the outcomes and the next claim in one IMMEDIATE transaction,
 * one take of the database's single write lock instead of two. */
static int
finish_claim_sqlite(sked *h, const char *node_id, sked_outcome *o, int n,
                    const sked_claim_req *req, sked_claimed **out, int *nout)
{
	*out = NULL;
	*nout = 0;
	int rc = sked__begin(h, 1);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot begin a claim");
	if (n > 0)
		rc = finish_in_tx(h, node_id, o, n);
	if (rc == SKED_OK && req->limit > 0)
		rc = sked__claim_in_tx(h, req, out, nout);
	if (rc == SKED_OK)
		rc = sked__commit(h);
	if (rc != SKED_OK) {
		sked__fail_db(h, rc, "cannot finish and claim tasks");
		sked__rollback(h);
		sked__claimed_free(*out, *nout);
		*out = NULL;
		*nout = 0;
	}
	return rc;
}

/* A finish or renewal the database rolled back as a deadlock, a lock wait
 * timeout or a busy SQLite database is tried again whole, up to TRIES
 * times (sked__retry_pause); each outcome's applied/dead flags are set
 * again by the try that commits. */

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
		o[i].recorded = 1;
	}
	return SKED_OK;
}

/* The attempts that never reached a handler go back apart (no run row);
 * *ran is then the others, copied (or o itself when all ran). */
static int
split_unstarted(sked *h, const char *node_id, sked_outcome *o, int n,
                sked_outcome **ran, int *nrun)
{
	int rc = SKED_OK;
	*ran = o;
	*nrun = 0;
	for (int i = 0; i < n; i++)
		*nrun += o[i].what != SKED_FIN_UNSTARTED;
	if (*nrun == n)
		return SKED_OK;
	for (int attempt = 1;; attempt++) {
		rc = give_back_unstarted(h, node_id, o, n);
		if (!sked__retry_pause(h, rc, attempt, TRIES,
		                       "giving tasks back"))
			break;
	}
	if (rc != SKED_OK || *nrun == 0)
		return rc;
	if (!(*ran = malloc(sizeof **ran * (size_t)*nrun)))
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	for (int i = 0, k = 0; i < n; i++)
		if (o[i].what != SKED_FIN_UNSTARTED)
			(*ran)[k++] = o[i];
	return SKED_OK;
}

/* Copy what the database said of the attempts that ran back into o. */
static void
merge_ran(sked_outcome *o, int n, sked_outcome *ran)
{
	if (ran == o)
		return;
	for (int i = 0, k = 0; i < n; i++)
		if (o[i].what != SKED_FIN_UNSTARTED)
			o[i] = ran[k++];
	free(ran);
}

/* Retry delays within what every engine's time arithmetic takes, and
 * nothing recorded yet. */
static void
prepare(sked_outcome *o, int n)
{
	for (int i = 0; i < n; i++) {
		if (o[i].retry_delay_ms < 0)
			o[i].retry_delay_ms = 0;
		else if (o[i].retry_delay_ms > SKED_RETRY_DELAY_MAX_MS)
			o[i].retry_delay_ms = SKED_RETRY_DELAY_MAX_MS;
		o[i].recorded = 0;
		o[i].deferred = 0;
	}
}

static void
set_recorded(sked_outcome *o, int n)
{
	for (int i = 0; i < n; i++)
		o[i].recorded = 1;
}

/* The outcomes that ran, tried TRIES times over deadlocks. */
static int
finish_tries(sked *h, const char *node_id, sked_outcome *o, int n)
{
	int rc;
	for (int attempt = 1;; attempt++) {
		rc = finish_once(h, node_id, o, n);
		if (!sked__retry_pause(h, rc, attempt, TRIES,
		                       "finishing tasks"))
			break;
	}
	if (rc == SKED_OK)
		set_recorded(o, n);
	return rc;
}

/* A batch the database refused for one of its values (sked__text_clean
 * missed it, or the engine has a limit of its own): record it in halves,
 * each committed on its own, until the refused outcome is alone; record
 * that one as a failed attempt without the values it brought. Costs at
 * most about 2 log2(n) statements per refused value. */
static int
finish_split(sked *h, const char *node_id, sked_outcome *o, int n)
{
	int rc = finish_tries(h, node_id, o, n);
	if (!sked__refused_value(h, rc))
		return rc;
	if (n > 1) {
		int half = n / 2;
		rc = finish_split(h, node_id, o, half);
		int rc2 = finish_split(h, node_id, o + half, n - half);
		return rc != SKED_OK ? rc : rc2;
	}
	sked__log(SKED_LOG_WARN,
	          "task %lld attempt %d: the database refused its result "
	          "(%s); recording it as a failed attempt without its error "
	          "and output",
	          (long long)o->id, o->attempt, sked_errmsg(h));
	if (o->what != SKED_FIN_RELEASE)
		o->what = SKED_FIN_FAIL;
	if (o->retry_delay_ms < 1000)
		o->retry_delay_ms = 1000;
	o->error = SKED_REFUSED_ERROR;
	o->output = NULL;
	o->result = NULL;
	return finish_tries(h, node_id, o, 1);
}

int
sked__finish(sked *h, const char *node_id, sked_outcome *o, int n)
{
	if (n == 0)
		return SKED_OK;
	prepare(o, n);
	sked_outcome *ran;
	int nrun;
	int rc = split_unstarted(h, node_id, o, n, &ran, &nrun);
	if (rc != SKED_OK || nrun == 0)
		return rc;
	rc = finish_split(h, node_id, ran, nrun);
	merge_ran(o, n, ran);
	return rc;
}

int
sked__finish_claim(sked *h, const char *node_id, sked_outcome *o, int n,
                   const sked_claim_req *req, sked_claimed **out, int *nout)
{
	*out = NULL;
	*nout = 0;
	int sqlite = h->strategy->id == SKED_STRAT_SQLITE;
	if (!(h->dialect->caps & SKED_CAP_FUSED) && !sqlite) {
		int rc = sked__finish(h, node_id, o, n);
		return rc != SKED_OK ? rc : sked__claim(h, req, out, nout);
	}
	prepare(o, n);
	sked_outcome *ran = o;
	int nrun = 0;
	int rc = n > 0 ? split_unstarted(h, node_id, o, n, &ran, &nrun)
	               : SKED_OK;
	if (rc != SKED_OK)
		return rc;
	for (int attempt = 1;; attempt++) {
		rc = sqlite ? finish_claim_sqlite(h, node_id, ran, nrun, req,
		                                  out, nout)
		            : finish_claim_once(h, node_id, ran, nrun, req, out,
		                                nout);
		if (rc == SKED_OK || *nout > 0 ||
		    !sked__retry_pause(h, rc, attempt, TRIES,
		                       "finishing and claiming tasks"))
			break;
	}
	if (rc == SKED_OK && !sqlite)
		rc = finish_deferred(h, node_id, ran, nrun);
	if (rc == SKED_OK) {
		set_recorded(ran, nrun);
	} else if (nrun > 0 && *nout == 0 && sked__refused_value(h, rc)) {
		/* a value the database refused: the outcomes apart, split
		 * until the bad one is alone, then the claim on its own */
		rc = finish_split(h, node_id, ran, nrun);
		if (rc == SKED_OK)
			rc = sked__claim(h, req, out, nout);
	}
	if (n > 0)
		merge_ran(o, n, ran);
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
sked__node_beat(sked *h, const char *node_id, int busy)
{
	sked_val p[2] = {SKED_TEXTV(node_id), SKED_INTV(busy)};
	int rc = sked__q(h, SKED_SQL_NODE_BEAT, p, 2, NULL);
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
