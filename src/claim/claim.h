/*
 * claim.h — the claim-strategy seam: how to take up to N due tasks safely.
 *
 * Folder src/claim/ (floor 5, docs/design.md): the claim-strategy seam
 * (claim.c) and the strategies (onestep.c, threestep.c, ids.c,
 * optimistic.c, rows.c). Calls handle/ and below.
 *
 * Layer: between the model and the dialects. A strategy is an algorithm
 * (the seed's fetchTasks(limit)); the SQL it runs comes from the dialect.
 * Every strategy leaves each claimed task with status running, node_id set
 * to the claimer, lease_until = database now + lease, attempts + 1 and
 * version + 1, and never hands the same (task, attempt) to two claimers.
 *
 *   sqlite       one IMMEDIATE transaction, UPDATE … RETURNING: SQLite has
 *                one writer at a time, which makes it atomic.
 *   skip-locked  one round trip where the dialect has a claim statement
 *                (PostgreSQL: a materialized CTE that locks with SKIP
 *                LOCKED feeding UPDATE … RETURNING); else in one
 *                transaction: SELECT … FOR UPDATE SKIP LOCKED, UPDATE the
 *                locked ids, read the rows back, where MySQL and MariaDB
 *                read them in the lock instead (SKED_CAP_LOCK_READS).
 *   readpast     one statement, the dialect's TOP (n) … WITH (UPDLOCK,
 *                READPAST, ROWLOCK) with OUTPUT (SQL Server).
 *   optimistic   read candidates without locks, then UPDATE … WHERE id = ?
 *                AND version = ? per row: one row changed = claimed. Works
 *                on anything.
 */
#ifndef SKED_CLAIM_H
#define SKED_CLAIM_H

#include <stddef.h>
#include <stdint.h>

#include "dialect/detect.h"
#include "dialect/dialect.h"

struct sked;

typedef struct sked_claim_req {
	const char *node_id;
	const char *queue; /* NULL: any queue */
	int limit;         /* >= 1 */
	int64_t lease_ms;
	/* the kinds to claim, as ",a,b," (names hold no comma); NULL: any
	 * kind (a worker with a catch-all handler) */
	const char *kinds;
	/* with queue NULL: leave out every queue the limit table names (the
	 * SKED_SQL_*_XQ forms; model/limited.c claims those itself) */
	int skip_limited;
} sked_claim_req;

/* A claimed task. Strings are owned by the array (sked__claimed_free). */
typedef struct sked_claimed {
	int64_t id;
	char *queue, *kind, *payload;
	size_t payload_len;
	int attempt, max_attempts;
	int64_t started_ms;
	int has_parents;    /* it waited for parents (their results are read
	                    for its handler: worker/parents.c) */
	char *traceparent;  /* or NULL */
	int64_t timeout_ms; /* its own timeout (enqueue --timeout), 0: none */
} sked_claimed;

/* How long the handler of t may run: the shorter of the task's own
 * timeout and kind_ms, the kind's (or the worker's); 0 for neither. A
 * task cannot outlast its kind's bound (docs/handlers.md). */
static inline int64_t
sked__claimed_timeout(const sked_claimed *t, int64_t kind_ms)
{
	if (t->timeout_ms <= 0)
		return kind_ms;
	return kind_ms > 0 && kind_ms < t->timeout_ms ? kind_ms : t->timeout_ms;
}

typedef struct sked_claim_strategy {
	sked_strategy id;
	const char *name;
	/* Claim up to req->limit due tasks. *out is malloc'd (NULL when
	 * *n == 0). On error nothing stays claimed (its transaction was rolled
	 * back). */
	int (*claim)(struct sked *h, const sked_claim_req *req,
	             sked_claimed **out, int *n);
} sked_claim_strategy;

extern const sked_claim_strategy sked__claim_sqlite;
extern const sked_claim_strategy sked__claim_skip_locked;
extern const sked_claim_strategy sked__claim_readpast;
extern const sked_claim_strategy sked__claim_optimistic;

const sked_claim_strategy *sked__claim_for(sked_strategy s);

/* Claiming tasks a caller has chosen already, and reading them back:
 * the skip-locked strategy's three steps (the ids it locked:
 * SKED_SQL_IDS_CLAIM, SKED_SQL_IDS_GET) and the limited claim (the ids
 * the limits leave room for, still due: SKED_SQL_LIM_CLAIM, which also
 * sets their start, and SKED_SQL_LIM_GET). The claim binds node ?1,
 * lease ?2, with_start: start ?3, then the ids; the read-back node ?1,
 * the ids from ?3. */
typedef struct sked_claim_ids {
	sked_sql claim, get;
	int with_start;
	int64_t start_ms;
	int spare; /* markers kept below the dialect's max_params */
} sked_claim_ids;

/* Claim ids[0..n) as how says, in chunks under the dialect's parameter
 * limit, appending what was claimed to *out (*got of them), inside the
 * caller's transaction. */
int sked__claim_ids(struct sked *h, const sked_claim_req *req,
                    const sked_claim_ids *how, const int64_t *ids, int n,
                    sked_claimed **out, int *got)
        __attribute__((warn_unused_result));

/* skip-locked in three steps, in one transaction of its own
 * (threestep.c), for a dialect that cannot claim in one statement. */
int sked__claim_three_steps(struct sked *h, const sked_claim_req *req,
                            sked_claimed **out, int *n)
        __attribute__((warn_unused_result));

/* The sqlite strategy's claim statement without its transaction, for a
 * caller that holds SQLite's write lock already (model/outcome.c). */
int sked__claim_in_tx(struct sked *h, const sked_claim_req *req,
                      sked_claimed **out, int *n)
        __attribute__((warn_unused_result));

/* The one entry point the model uses. */
int sked__claim(struct sked *h, const sked_claim_req *req, sked_claimed **out,
                int *n) __attribute__((warn_unused_result));
void sked__claimed_free(sked_claimed *c, int n);
/* Free the strings of one claimed task (not the task itself). */
void sked__claimed_clear(sked_claimed *t);

/* Shared by strategies: parse rows of CLAIMED_COLS (id, queue, kind,
 * payload, attempts, max_attempts, started ms, traceparent) appending to
 * *out. */
struct sked_res;
int sked__claimed_from_rows(const struct sked_res *r, sked_claimed **out,
                            int *n) __attribute__((warn_unused_result));
/* One such row (row i) into *t, its traceparent from column tp_col;
 * SKED_ENOMEM leaves *t freeable. */
int sked__claimed_from_row(const struct sked_res *r, int i, int tp_col,
                           sked_claimed *t) __attribute__((warn_unused_result));

#endif /* SKED_CLAIM_H */
