/*
 * outcome.c — recording the end of attempts: one finish, its variants as
 * data (see outcome.h).
 *
 * Layer: the model, below take.c, above ending.c. Two tables say what
 * varies:
 *
 *   endings  (ending.c) what each end of an attempt writes: its
 *            conditional update (guarded by id, owner node, attempt and
 *            status running), the status it leaves, the run row's
 *            outcome, whether it ends the task (then the ended row
 *            carries the attempt: no run row);
 *   ways     (below) how a batch reaches the database, and whether the
 *            next claim rides with it: "rows" (a write transaction, one
 *            update and run row per outcome, MySQL's successes batched),
 *            "arrays" (one autocommit statement over arrays, PostgreSQL),
 *            and each of them with the claim (SQLite: in the same
 *            IMMEDIATE transaction; PostgreSQL: in the same statement).
 *
 * One function runs a way once (way_once); one function runs a batch
 * (finish): the attempts that never reached a handler given back apart,
 * retries over deadlocks and busy databases, a value the database refuses
 * isolated by halving, the outcomes an array statement deferred (a
 * parent's end) recorded the rows way.
 *
 * Row locks: a batch locks each finished task row (in the order the
 * worker hands them over) and inserts one run row per outcome, all in one
 * transaction or statement. A batch rolled back as a deadlock or lock
 * wait timeout is retried whole (bounded).
 */
#include "model/outcome.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ending.h"
#include "util/log.h"
#include "util/pgarray.h"

/* tries of a finish over deadlocks and busy databases (below) */
#define TRIES 3

/* ---- the arrays way (SKED_CAP_ARRAYS: PostgreSQL) ---- */

/* The n outcomes in one statement, autocommit, with the same contract as
 * the rows way (each update guarded by id, owner, attempt and running; a
 * rejected one recorded as late). SKED_SQL_FINISH_ARRAYS takes ?1 ids,
 * ?2 attempts, ?3 new status, ?4 started ms, ?5 retry delay ms, ?6 exit
 * codes, ?7 errors, ?8 output tails, ?9 outcome names, ?10 node, and
 * answers one (input position, applied) row per outcome; the fused
 * statements (SKED_SQL_FINISH_CLAIM_*) take the same and claim too. */
/* the arrays, in parameter order (?1 … ?9), then (after the node, ?10)
 * the successes' ids (?11) and the others' ids (?12). All in the order
 * of the outcomes sorted by id, then attempt (by_id): the statement
 * finds an outcome's place in ?1 by binary search (dialect/postgresql.c,
 * POS), and answers each outcome by that place. */
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

/* The arrays' order: by id, then attempt (<0, 0, >0 as for qsort). */
static int
cmp_id_attempt(int64_t ida, int atta, int64_t idb, int attb)
{
	if (ida != idb)
		return ida < idb ? -1 : 1;
	return (atta > attb) - (atta < attb);
}

/* An outcome's sort key; i its index in the batch. */
typedef struct {
	int64_t id;
	int attempt, i;
} by_id_key;

static int
by_id_cmp(const void *a, const void *b)
{
	const by_id_key *x = a, *y = b;
	return cmp_id_attempt(x->id, x->attempt, y->id, y->attempt);
}

/* by_id[k]: the outcome at place k + 1 of the arrays. A worker ends its
 * tasks in claim order most of the time, so a batch often comes sorted
 * already, which is looked at first. */
static int
sort_by_id(sked *h, const sked_outcome *o, int n, int *by_id)
{
	int sorted = 1;
	for (int i = 0; i < n; i++) {
		by_id[i] = i;
		if (i > 0 && cmp_id_attempt(o[i - 1].id, o[i - 1].attempt,
		                            o[i].id, o[i].attempt) > 0)
			sorted = 0;
	}
	if (sorted)
		return SKED_OK;
	by_id_key *k = malloc((size_t)n * sizeof *k);
	if (!k)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	for (int i = 0; i < n; i++)
		k[i] = (by_id_key){
		        .id = o[i].id, .attempt = o[i].attempt, .i = i};
	qsort(k, (size_t)n, sizeof *k, by_id_cmp);
	for (int i = 0; i < n; i++)
		by_id[i] = k[i].i;
	free(k);
	return SKED_OK;
}

static int
build_arrays(sked *h, const sked_outcome *o, const int *by_id, int n,
             sked_buf a[NA])
{
	size_t nkeys = 0, nother = 0, nres = 0;
	for (int k0 = 0; k0 < n; k0++) {
		size_t k = (size_t)k0;
		int i = by_id[k0];
		const sked_ending *e = sked__ending_of(&o[i]);
		sked__pgarray_int(&a[IDS], k, o[i].id, 0);
		sked__pgarray_int(&a[ATT], k, o[i].attempt, 0);
		sked__pgarray_int(&a[ST], k, e->status, 0);
		sked__pgarray_int(&a[STARTED], k, o[i].started_ms, 0);
		sked__pgarray_int(&a[DELAY], k, o[i].retry_delay_ms, 0);
		sked__pgarray_int(&a[EXIT], k, o[i].exit_code,
		                  o[i].exit_code < 0);
		sked__pgarray_text(&a[ERR], k, o[i].error,
		                   o[i].error ? strlen(o[i].error) : 0);
		sked__pgarray_text(&a[OUT], k, o[i].output,
		                   o[i].output ? strlen(o[i].output) : 0);
		sked__pgarray_text(&a[OUTCOME], k, e->outcome,
		                   strlen(e->outcome));
		if (o[i].result)
			nres++;
		if (o[i].what == SKED_FIN_OK)
			sked__pgarray_int(&a[KEYS], nkeys++, o[i].id, 0);
		else
			sked__pgarray_int(&a[OTHER], nother++, o[i].id, 0);
	}
	/* the results only when one of them has one: a batch without
	 * passes NULL (sked pays nothing for them) */
	for (int k = 0; nres > 0 && k < n; k++)
		sked__pgarray_text(
		        &a[RES], (size_t)k, o[by_id[k]].result,
		        o[by_id[k]].result ? strlen(o[by_id[k]].result) : 0);
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

static void
free_arrays(sked_buf a[NA])
{
	for (int j = 0; j < NA; j++)
		sked__buf_free(&a[j]);
}

/* What the database said of the outcome at place ord (1-based) of the
 * arrays (by_id maps places to outcomes). */
static void
set_applied(sked_outcome *o, const int *by_id, int n, int64_t ord,
            int64_t applied)
{
	if (ord < 1 || ord > n)
		return;
	sked_outcome *x = &o[by_id[ord - 1]];
	x->applied = applied == 1;
	x->deferred = applied == 2;
	x->dead = x->applied && x->what == SKED_FIN_FAIL &&
	          x->attempt >= x->max_attempts;
}

/* The finish statement's answer: one (position, applied) row each. */
static int
read_finished(sked *h, const sked_res *r, sked_outcome *o, const int *by_id,
              int n)
{
	if (r->nrows != n)
		return sked__fail(h, SKED_EDB,
		                  "finishing %d task(s) answered %d row(s)", n,
		                  r->nrows);
	for (int i = 0; i < r->nrows; i++)
		set_applied(o, by_id, n, sked__res_int(r, i, 0),
		            sked__res_int(r, i, 1));
	return SKED_OK;
}

/* The fused statement's answer: a row per outcome (tag 0: position ?1,
 * applied ?5) and per claimed task (tag 1, column 8). */
static int
read_fused(sked *h, const sked_res *r, sked_outcome *o, const int *by_id, int n,
           const sked_claim_req *req, sked_claimed **out, int *nout)
{
	int nclaimed = 0, nfinished = 0;
	for (int i = 0; i < r->nrows; i++)
		if (sked__res_int(r, i, 7) == 1)
			nclaimed++;
		else
			nfinished++;
	if (nfinished != n || nclaimed > req->limit)
		return sked__fail(h, SKED_EDB,
		                  "finishing %d and claiming up to %d task(s) "
		                  "answered %d and %d row(s)",
		                  n, req->limit, nfinished, nclaimed);
	if (nclaimed > 0 && !(*out = calloc((size_t)nclaimed, sizeof **out)))
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	for (int i = 0; i < r->nrows; i++) {
		if (sked__res_int(r, i, 7) != 1) {
			set_applied(o, by_id, n, sked__res_int(r, i, 0),
			            sked__res_int(r, i, 4));
			continue;
		}
		/* claimed: committed already, so keep going on a failed
		 * copy and hand over what we have */
		int rc = sked__claimed_from_row(r, i, 11, &(*out)[*nout]);
		(*nout)++;
		if (rc != SKED_OK)
			return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	return SKED_OK;
}

/* ---- the rows way: a write transaction ---- */

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
		sked__late_error(late[nlate], SKED_OUTCOME_SUCCEEDED, x->error);
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
			run_vals(&p[8 * i], o, sked__ending_of(o)->outcome,
			         o->error);
			p[8 * i + 7] = SKED_TEXTV(o->result);
		}
		/* MariaDB: the copy answers which of them are parents */
		int ret = (h->dialect->caps & SKED_CAP_INSERT_RETURNING) != 0;
		sked_res r = {0};
		copy.n = 0;
		sked__sql_fill(&copy,
		               h->sql[ret ? SKED_SQL_DONE_COPY_RUN_RET
		                          : SKED_SQL_DONE_COPY_RUN],
		               1, k);
		if (copy.oom) {
			rc = sked__fail(h, SKED_ENOMEM, "out of memory");
			break;
		}
		rc = sked__qdyn(h, copy.p, p, 8 * k, ret ? &r : NULL);
		if (rc != SKED_OK) {
			sked__res_clear(&r);
			break;
		}
		int64_t *ids = malloc(sizeof *ids * (size_t)k);
		if (!ids) {
			sked__res_clear(&r);
			rc = sked__fail(h, SKED_ENOMEM, "out of memory");
			break;
		}
		for (int i = 0; i < k; i++)
			ids[i] = x[at + i]->id;
		for (int i = 0; i < k; i++)
			p[i] = SKED_INTV(x[at + i]->id);
		/* the rows leave, their dependents told (done.c) */
		rc = ret ? sked__drop_copied(h, ids, p, k, &r)
		         : sked__drop_ended(h, ids, p, k);
		sked__res_clear(&r);
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
		rc = sked__finish_one(h, node_id, &o[i]);
		if (rc == SKED_OK && o[i].applied &&
		    sked__ending_of(&o[i])->ends)
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

/* ---- ways: how a batch reaches the database ---- */

typedef struct finish_way {
	int arrays; /* 1: one autocommit statement over arrays (sql_any,
	                sql_q: of one queue); 0: a write transaction, an
	                update and a run row per outcome (finish_in_tx) */
	int claims; /* the next claim rides along: in the same statement,
	                or in the same transaction (sked__claim_in_tx) */
	sked_sql sql_any, sql_q;
	/* what a failure says: at the begin, in the work, at the commit */
	const char *begin_err, *err, *commit_err;
} finish_way;

enum { WAY_ROWS, WAY_ROWS_CLAIM, WAY_ARRAYS, WAY_ARRAYS_CLAIM };

static const finish_way ways[] = {
        [WAY_ROWS] = {.err = "cannot finish tasks",
                      .begin_err = "cannot begin finishing tasks",
                      .commit_err = "cannot commit finished tasks"},
        /* SQLite: one take of its single write lock instead of two */
        [WAY_ROWS_CLAIM] = {.claims = 1,
                            .err = "cannot finish and claim tasks",
                            .begin_err = "cannot begin a claim",
                            .commit_err = "cannot finish and claim tasks"},
        [WAY_ARRAYS] = {.arrays = 1,
                        .sql_any = SKED_SQL_FINISH_ARRAYS,
                        .sql_q = SKED_SQL_FINISH_ARRAYS,
                        .err = "cannot finish tasks"},
        /* SKED_CAP_FUSED: one round trip */
        [WAY_ARRAYS_CLAIM] = {.arrays = 1,
                              .claims = 1,
                              .sql_any = SKED_SQL_FINISH_CLAIM_ANY,
                              .sql_q = SKED_SQL_FINISH_CLAIM_Q,
                              .err = "cannot finish and claim tasks"},
};

int
sked__finish_fuses(const sked *h)
{
	return ((h->dialect->caps & SKED_CAP_FUSED) &&
	        h->strategy->id == SKED_STRAT_SKIP_LOCKED) ||
	       h->strategy->id == SKED_STRAT_SQLITE;
}

/* The way of h's batches: with the claim (claims: only where h fuses,
 * sked__finish_fuses) or without. */
static const finish_way *
way_for(const sked *h, int claims)
{
	if (claims)
		return &ways[h->strategy->id == SKED_STRAT_SQLITE
		                     ? WAY_ROWS_CLAIM
		                     : WAY_ARRAYS_CLAIM];
	return &ways[h->dialect->caps & SKED_CAP_ARRAYS ? WAY_ARRAYS
	                                                : WAY_ROWS];
}

static int
arrays_once(sked *h, const finish_way *way, const char *node_id,
            sked_outcome *o, int n, const sked_claim_req *req,
            sked_claimed **out, int *nout)
{
	sked_buf a[NA];
	memset(a, 0, sizeof a);
	sked_res r = {0};
	int *by_id = malloc((size_t)(n > 0 ? n : 1) * sizeof *by_id);
	int rc = by_id ? sort_by_id(h, o, n, by_id)
	               : sked__fail(h, SKED_ENOMEM, "out of memory");
	if (rc == SKED_OK)
		rc = build_arrays(h, o, by_id, n, a);
	if (rc != SKED_OK)
		goto out;
	/* ?1-?9 the arrays, ?10 the node, ?11 and ?12 the split by outcome,
	 * ?13 the results (NULL: none); claiming: ?14 lease ms, ?15 limit,
	 * ?16 kinds, ?17 the queue */
	sked_val p[17];
	for (int j = 0; j < OUTCOME + 1; j++)
		p[j] = SKED_TEXTV(a[j].p);
	p[9] = SKED_TEXTV(node_id);
	p[10] = SKED_TEXTV(a[KEYS].p);
	p[11] = SKED_TEXTV(a[OTHER].p);
	p[12] = SKED_TEXTV(a[RES].p);
	int np = 13;
	if (way->claims) {
		p[np++] = SKED_INTV(req->lease_ms);
		p[np++] = SKED_INTV(req->limit);
		p[np++] = SKED_TEXTV(req->kinds);
		if (req->queue)
			p[np++] = SKED_TEXTV(req->queue);
	}
	int q = way->claims && req->queue;
	rc = sked__q(h, q ? way->sql_q : way->sql_any, p, np, &r);
	if (rc != SKED_OK) {
		sked__fail_db(h, rc, way->err);
		goto out;
	}
	rc = way->claims ? read_fused(h, &r, o, by_id, n, req, out, nout)
	                 : read_finished(h, &r, o, by_id, n);
out:
	sked__res_clear(&r);
	free_arrays(a);
	free(by_id);
	return rc;
}

static int
rows_once(sked *h, const finish_way *way, const char *node_id, sked_outcome *o,
          int n, const sked_claim_req *req, sked_claimed **out, int *nout)
{
	int rc = sked__begin(h, 1);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, way->begin_err);
	if (n > 0)
		rc = finish_in_tx(h, node_id, o, n);
	if (rc == SKED_OK && way->claims && req->limit > 0)
		rc = sked__claim_in_tx(h, req, out, nout);
	if (rc != SKED_OK) {
		sked__fail_db(h, rc, way->err);
		sked__rollback(h);
	} else if ((rc = sked__commit(h)) != SKED_OK) {
		sked__fail_db(h, rc, way->commit_err);
	}
	if (rc != SKED_OK && way->claims) {
		/* rolled back: nothing of it stays claimed */
		sked__claimed_free(*out, *nout);
		*out = NULL;
		*nout = 0;
	}
	return rc;
}

/* One try of a batch the given way. */
static int
way_once(sked *h, const finish_way *way, const char *node_id, sked_outcome *o,
         int n, const sked_claim_req *req, sked_claimed **out, int *nout)
{
	if (way->claims) {
		*out = NULL;
		*nout = 0;
	}
	return way->arrays ? arrays_once(h, way, node_id, o, n, req, out, nout)
	                   : rows_once(h, way, node_id, o, n, req, out, nout);
}

/* ---- one batch ---- */

/* The outcomes an array statement deferred (a parent's end: see
 * dialect/postgresql.c) the rows way, which resolves its dependents in
 * the ending transaction. */
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
		rc = way_once(h, &ways[WAY_ROWS], node_id, d, k, NULL, NULL,
		              NULL);
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

/* Give back attempts that never reached a handler: the attempt number is
 * returned and no run row is written, since nothing ran. Each is one
 * conditional update of its own; a task no longer held is left alone. */
static int
give_back_unstarted(sked *h, const char *node, sked_outcome *o, int n)
{
	for (int i = 0; i < n; i++) {
		if (o[i].what != SKED_FIN_UNSTARTED)
			continue;
		int rc = sked__finish_one(h, node, &o[i]);
		if (rc != SKED_OK)
			return sked__fail_db(h, rc, "cannot give tasks back");
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

/* The outcomes that ran, without a claim, tried TRIES times over
 * deadlocks and busy databases; each outcome's applied/dead flags are
 * set again by the try that commits. */
static int
finish_tries(sked *h, const char *node_id, sked_outcome *o, int n)
{
	const finish_way *way = way_for(h, 0);
	int rc;
	for (int attempt = 1;; attempt++) {
		rc = way_once(h, way, node_id, o, n, NULL, NULL, NULL);
		if (rc == SKED_OK && way->arrays)
			rc = finish_deferred(h, node_id, o, n);
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

/* The outcomes that ran and the claim, the fused way: tried over
 * deadlocks until something was claimed (then it committed); a value the
 * database refused sends the outcomes apart (finish_split) and the claim
 * on its own. */
static int
finish_fused(sked *h, const char *node_id, sked_outcome *ran, int nrun,
             const sked_claim_req *req, sked_claimed **out, int *nout)
{
	const finish_way *way = way_for(h, 1);
	int rc;
	for (int attempt = 1;; attempt++) {
		rc = way_once(h, way, node_id, ran, nrun, req, out, nout);
		if (rc == SKED_OK || *nout > 0 ||
		    !sked__retry_pause(h, rc, attempt, TRIES,
		                       "finishing and claiming tasks"))
			break;
	}
	if (rc == SKED_OK && way->arrays)
		rc = finish_deferred(h, node_id, ran, nrun);
	if (rc == SKED_OK) {
		set_recorded(ran, nrun);
	} else if (nrun > 0 && *nout == 0 && sked__refused_value(h, rc)) {
		rc = finish_split(h, node_id, ran, nrun);
		if (rc == SKED_OK)
			rc = sked__claim(h, req, out, nout);
	}
	return rc;
}

/* One batch: the unstarted given back, then the others recorded, with
 * the claim when req is set (the handle fuses). */
static int
finish(sked *h, const char *node_id, sked_outcome *o, int n,
       const sked_claim_req *req, sked_claimed **out, int *nout)
{
	prepare(o, n);
	sked_outcome *ran = o;
	int nrun = 0;
	int rc = n > 0 ? split_unstarted(h, node_id, o, n, &ran, &nrun)
	               : SKED_OK;
	if (rc != SKED_OK || (!req && nrun == 0))
		return rc;
	rc = req ? finish_fused(h, node_id, ran, nrun, req, out, nout)
	         : finish_split(h, node_id, ran, nrun);
	if (n > 0)
		merge_ran(o, n, ran);
	return rc;
}

int
sked__finish(sked *h, const char *node_id, sked_outcome *o, int n)
{
	if (n == 0)
		return SKED_OK;
	return finish(h, node_id, o, n, NULL, NULL, NULL);
}

int
sked__finish_claim(sked *h, const char *node_id, sked_outcome *o, int n,
                   const sked_claim_req *req, sked_claimed **out, int *nout)
{
	*out = NULL;
	*nout = 0;
	if (!sked__finish_fuses(h)) {
		int rc = sked__finish(h, node_id, o, n);
		return rc != SKED_OK ? rc : sked__claim(h, req, out, nout);
	}
	return finish(h, node_id, o, n, req, out, nout);
}
