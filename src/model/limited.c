/*
 * limited.c — the limited claim of a queue (see limits.h and
 * docs/limits.md) and the handle's list of limited queues. The pure
 * parts it rests on (the rate's window, picking under a per-key limit,
 * the fair order) are limit_pick.c's; setting, pausing and listing
 * limits are limits.c's.
 *
 * Layer: the model. It runs registry statements (SKED_SQL_LIM_*) through
 * the handle core and hands claims of unlimited queues to the claim seam
 * (claim.h) unchanged.
 *
 * The limited claim of queue Q, one transaction, whatever the strategy:
 *
 *   1. begin the claim's transaction (SQLite: BEGIN IMMEDIATE, which
 *      takes the one write lock at once);
 *   2. lock Q's limit row: SELECT … FOR UPDATE (PostgreSQL, MySQL,
 *      MariaDB), WITH (UPDLOCK, ROWLOCK) (SQL Server); on SQLite the
 *      write lock already serialises. Every limited claim of Q waits
 *      here for the one before it to commit;
 *   3. count Q's running tasks (status 1), by concurrency key, from the
 *      task table, in a statement that starts after the lock is held, so
 *      it sees every claim committed before (READ COMMITTED, a fresh
 *      snapshot per statement; SQLite: the writer sees everything);
 *   4. read the rate's window record from the locked row;
 *   5. read due candidates of Q (per-key: those whose key is not full),
 *      pick what the limits leave room for, claim them with UPDATE …
 *      WHERE id IN (…) AND still due, read them back (sked__claim_ids,
 *      the claim seam's one claim-by-ids);
 *   6. write the window record; commit.
 *
 * Counting running rows rather than keeping a counter means that a
 * finish, a lease taken back by the reaper and a worker killed with
 * kill -9 (once its leases run out and are reaped) give the capacity
 * back by themselves: there is no counter to leak. Tasks the limits
 * leave out are not touched, so they are not charged an attempt.
 *
 * A paused queue (sked_queue_pause) has a limit row too, with paused = 1
 * (and its limits, or none): the all-queue claim's NOT IN already leaves
 * it out, the handle's list (read every SKED_LIMITS_REFRESH_MS) says not
 * to claim it, and a limited claim that locks its row reads the flag
 * there and claims nothing. So a pause costs no statement of its own.
 *
 * Row locks: a limited claim locks Q's limit row, then the task rows it
 * claims. Nothing locks task rows and then a limit row (an unlimited
 * claim only reads the limit table, without locks), so limited and
 * unlimited claims cannot deadlock on each other.
 */
#include "model/limits.h"

#include <stdlib.h>
#include <string.h>

#include "handle/internal.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/log.h"

/* how soon a pause reaches a worker: its next read of the list */
_Static_assert(SKED_LIMITS_REFRESH_MS <= SKED_QUEUE_PAUSE_BOUND_MS,
               "the limits are read again less often than sked.h promises");

struct sked_limits {
	int64_t next_ms; /* monotonic ms of the next read of the list */
	int n;
	char **queues; /* the queues with a limit row, by name */
	char *paused;  /* paused[i]: queues[i] is paused (sked queue pause) */
	/* fair_after[i]: the key of this handle's last pick in fair
	 * queues[i] ("" for no key), after which its next fair claim takes
	 * up the keys and begins its rounds; NULL: from the first */
	char **fair_after;
	/* fair_used[i]: the turns fair_after[i] has had in its current turn
	 * (sked__fair_used) */
	int *fair_used;
	char *fair_only; /* fair_only[i]: fair, with no limit (the row said) */
	int turn;        /* which limited queue an all-queue claim starts at */
	/* the fair queues' key weights (queue set --weight, schema 15), by
	 * queue then key (strcmp): read with the list */
	int nw;
	struct fair_weight {
		char *queue, *key;
		int weight;
	} * w;
};

void
sked__limits_free(struct sked_limits *l)
{
	if (!l)
		return;
	for (int i = 0; i < l->n; i++) {
		free(l->queues[i]);
		if (l->fair_after)
			free(l->fair_after[i]);
	}
	for (int i = 0; i < l->nw; i++) {
		free(l->w[i].queue);
		free(l->w[i].key);
	}
	free(l->w);
	free(l->queues);
	free(l->paused);
	free(l->fair_after);
	free(l->fair_used);
	free(l->fair_only);
	free(l);
}

/* ---- the list of limited queues ---- */

static int
weight_cmp(const void *a, const void *b)
{
	const struct fair_weight *x = a, *y = b;
	int q = strcmp(x->queue, y->queue);
	return q ? q : strcmp(x->key, y->key);
}

/* The key weights of the fair queues (a few rows, none for most):
 * sorted here, since the server's collation need not be strcmp's. */
static int
read_weights(sked *h, struct sked_limits *l)
{
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_FAIR_WEIGHTS, NULL, 0, &r);
	if (rc != SKED_OK || r.nrows == 0) {
		sked__res_clear(&r);
		return rc;
	}
	int oom = !(l->w = calloc((size_t)r.nrows, sizeof *l->w));
	for (int i = 0; !oom && i < r.nrows; i++) {
		l->w[i].queue = sked__res_dup(&r, i, 0, &oom);
		l->w[i].key = sked__res_dup(&r, i, 1, &oom);
		l->w[i].weight = (int)sked__res_int(&r, i, 2);
		l->nw++;
	}
	sked__res_clear(&r);
	if (oom)
		return SKED_ENOMEM;
	qsort(l->w, (size_t)l->nw, sizeof *l->w, weight_cmp);
	return SKED_OK;
}

/* The weight of key in queue: 1 unless set. */
static int
weight_for(const struct sked_limits *l, const char *queue, const char *key)
{
	if (!l || l->nw == 0 || !key)
		return 1;
	struct fair_weight k = {.queue = (char *)queue, .key = (char *)key};
	const struct fair_weight *f =
	        bsearch(&k, l->w, (size_t)l->nw, sizeof *l->w, weight_cmp);
	return f && f->weight > 1 ? f->weight : 1;
}

static int
refresh(sked *h)
{
	int64_t now = sked__mono_ms();
	if (h->limits && now < h->limits->next_ms)
		return SKED_OK;
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_LIM_QUEUES, NULL, 0, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot read the queue limits");
	struct sked_limits *l = calloc(1, sizeof *l);
	int oom = !l;
	if (l && r.nrows > 0) {
		l->queues = calloc((size_t)r.nrows, sizeof *l->queues);
		l->paused = calloc((size_t)r.nrows, 1);
		l->fair_after = calloc((size_t)r.nrows, sizeof *l->fair_after);
		l->fair_used = calloc((size_t)r.nrows, sizeof *l->fair_used);
		l->fair_only = calloc((size_t)r.nrows, 1);
		oom = !l->queues || !l->paused || !l->fair_after ||
		      !l->fair_used || !l->fair_only;
		for (int i = 0; !oom && i < r.nrows; i++) {
			l->queues[i] = sked__res_dup(&r, i, 0, &oom);
			l->paused[i] = sked__res_int(&r, i, 1) != 0;
			l->fair_only[i] = sked__res_int(&r, i, 2) != 0;
			l->n += l->queues[i] != NULL;
		}
	}
	sked__res_clear(&r);
	if (!oom && l->n > 0 && (rc = read_weights(h, l)) != SKED_OK) {
		sked__limits_free(l);
		return rc == SKED_ENOMEM
		               ? sked__fail(h, rc, "out of memory")
		               : sked__fail_db(h, rc,
		                               "cannot read the fair queues' "
		                               "key weights");
	}
	if (oom) {
		sked__limits_free(l);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	l->next_ms = now + SKED_LIMITS_REFRESH_MS;
	if (h->limits) {
		struct sked_limits *o = h->limits;
		l->turn = o->turn;
		/* each fair queue's place among its keys carries over */
		for (int i = 0; i < l->n; i++)
			for (int j = 0; j < o->n; j++)
				if (o->fair_after && o->fair_after[j] &&
				    strcmp(o->queues[j], l->queues[i]) == 0) {
					l->fair_after[i] = o->fair_after[j];
					l->fair_used[i] = o->fair_used[j];
					o->fair_after[j] = NULL;
				}
	}
	sked__limits_free(h->limits);
	h->limits = l;
	return SKED_OK;
}

/* 0: queue has no limit row, as far as h knows; 1: it has one; 2: it
 * is paused. */
static int
is_limited(const sked *h, const char *queue)
{
	for (int i = 0; h->limits && i < h->limits->n; i++)
		if (strcmp(h->limits->queues[i], queue) == 0)
			return 1 + h->limits->paused[i];
	return 0;
}

int
sked__limits_plain(sked *h, const sked_claim_req *req)
{
	if (refresh(h) != SKED_OK)
		return 0;
	if (!h->limits || h->limits->n == 0)
		return 1;
	return req->queue && !is_limited(h, req->queue);
}

/* ---- the fair claim's candidates ---- */

/* The keys one fair claim reads at most (and one more than its batch):
 * each key costs two index probes (docs/limits.md, "Fair queues") */
#define FAIR_KEYS_MAX 256

static int
fair_index(const sked *h, const char *queue)
{
	for (int i = 0; h->limits && i < h->limits->n; i++)
		if (strcmp(h->limits->queues[i], queue) == 0)
			return i;
	return -1;
}

/* The next key after `after` (NULL: the first) with waiting tasks in
 * queue, malloc'd in *key (NULL: none). */
static int
fair_next_key(sked *h, const char *queue, const char *after, char **key)
{
	sked_res r = {0};
	sked_val p[2] = {SKED_TEXTV(queue), SKED_TEXTV(after)};
	int oom = 0;
	*key = NULL;
	int rc = sked__q(
	        h, after ? SKED_SQL_FAIR_KEY_NEXT : SKED_SQL_FAIR_KEY_FIRST, p,
	        after ? 2 : 1, &r);
	if (rc == SKED_OK && r.nrows > 0 && !sked__res_null(&r, 0, 0))
		*key = sked__res_dup(&r, 0, 0, &oom);
	sked__res_clear(&r);
	return rc == SKED_OK && oom ? SKED_ENOMEM : rc;
}

/* Append the first `each` due tasks of key (NULL: of no key) to *c. */
static int
fair_read_key(sked *h, const sked_claim_req *req, const char *key, int each,
              int skip, sked_fair_cand **c, int *n, int *cap)
{
	sked_res r = {0};
	sked_val p[6] = {SKED_TEXTV(req->node_id), SKED_INTV(req->lease_ms),
	                 SKED_INTV(each),          SKED_TEXTV(req->queue),
	                 SKED_TEXTV(req->kinds),   SKED_TEXTV(key)};
	sked_sql id =
	        skip ? (key ? SKED_SQL_FAIR_CAND_SKIP
	                    : SKED_SQL_FAIR_CAND_NULL_SKIP)
	             : (key ? SKED_SQL_FAIR_CAND : SKED_SQL_FAIR_CAND_NULL);
	int rc = sked__q(h, id, p, key ? 6 : 5, &r);
	if (rc != SKED_OK)
		return rc;
	if (*n + r.nrows > *cap) {
		int nc = (*n + r.nrows) * 2;
		sked_fair_cand *a = realloc(*c, sizeof *a * (size_t)nc);
		if (!a) {
			sked__res_clear(&r);
			return SKED_ENOMEM;
		}
		*c = a;
		*cap = nc;
	}
	int oom = 0;
	for (int i = 0; i < r.nrows; i++) {
		sked_fair_cand *t = &(*c)[(*n)++];
		memset(t, 0, sizeof *t);
		t->id = sked__res_int(&r, i, 0);
		t->key = sked__res_null(&r, i, 1)
		                 ? NULL
		                 : sked__res_dup(&r, i, 1, &oom);
		t->priority = (int)sked__res_int(&r, i, 2);
		t->run_at_ms = sked__res_int(&r, i, 3);
	}
	sked__res_clear(&r);
	return oom ? SKED_ENOMEM : SKED_OK;
}

/* A fair claim's candidates, in the fair order (sked__fair_order): the
 * first `each` due tasks of every key with waiting tasks, up to
 * FAIR_KEYS_MAX keys, and of no key; keys taken up, and rounds begun,
 * after the key of this handle's last pick in the queue. */
static int
fair_read(sked *h, const sked_claim_req *req, int want, int each, int skip,
          sked_fair_cand **c, int *n)
{
	int cap = 0, nkeys = 0, rc;
	int max_keys = want + 1 < FAIR_KEYS_MAX ? want + 1 : FAIR_KEYS_MAX;
	int qi = fair_index(h, req->queue);
	char *start = qi >= 0 ? h->limits->fair_after[qi] : NULL;
	int used = qi >= 0 ? h->limits->fair_used[qi] : 0;
	char *key = NULL;
	*c = NULL;
	*n = 0;
	rc = fair_read_key(h, req, NULL, each, skip, c, n, &cap);
	/* from the key after start to the last; then, wrapping, from the
	 * first to start */
	for (int pass = 0; rc == SKED_OK && pass < 2; pass++) {
		if (pass == 1 && !start)
			break;
		const char *after = pass == 0 ? start : NULL;
		char *prev = NULL;
		while (rc == SKED_OK && nkeys < max_keys) {
			rc = fair_next_key(h, req->queue, prev ? prev : after,
			                   &key);
			if (rc != SKED_OK || !key)
				break;
			if (pass == 1 && strcmp(key, start) > 0)
				break;
			rc = fair_read_key(h, req, key, each, skip, c, n, &cap);
			nkeys++;
			free(prev);
			prev = key;
			key = NULL;
		}
		free(key);
		key = NULL;
		free(prev);
		if (nkeys == max_keys)
			break;
	}
	if (rc == SKED_OK) {
		for (int i = 0; i < *n; i++)
			(*c)[i].weight =
			        weight_for(h->limits, req->queue, (*c)[i].key);
		sked__fair_order_turns(*c, *n, start, used);
	}
	return rc;
}

/* Remember the key of a fair claim's last pick (the group of no key as
 * ""), and the turns it has had in its turn: the next claim of queue by
 * this handle starts its rounds, and its reading of the keys, after it,
 * or with it while its turn lasts (a weight above 1). */
static void
fair_remember(sked *h, const char *queue, const sked_fair_cand *c,
              const int *pick, int npick)
{
	int qi = fair_index(h, queue);
	if (qi < 0 || npick <= 0)
		return;
	const char *key = c[pick[npick - 1]].key;
	char *k = strdup(key ? key : "");
	if (!k)
		return;
	h->limits->fair_used[qi] =
	        sked__fair_used(c, pick, npick, h->limits->fair_after[qi],
	                        h->limits->fair_used[qi]);
	free(h->limits->fair_after[qi]);
	h->limits->fair_after[qi] = k;
}

static void
fair_free(sked_fair_cand *c, int n)
{
	for (int i = 0; c && i < n; i++)
		free(c[i].key);
	free(c);
}

/* ---- the limited claim ---- */

/* What the locked limit row and the running rows say. */
typedef struct limit_row {
	int concurrency, per_key, rate_n, paused, fair;
	int64_t rate_ms, now_ms;
	char *log;
	int running;
	/* running tasks by concurrency key (NULL key not among them) */
	int nkeys;
	const char **keys;
	int *key_running;
} limit_row;

#define NOT_LIMITED 1 /* the queue has no limit row (any more) */

static int
read_running(sked *h, const char *queue, limit_row *lr, sked_res *run)
{
	sked_val q = SKED_TEXTV(queue);
	int rc = sked__q(h, SKED_SQL_LIM_RUNNING, &q, 1, run);
	if (rc != SKED_OK)
		return rc;
	lr->keys = malloc(sizeof *lr->keys * (size_t)(run->nrows + 1));
	lr->key_running =
	        malloc(sizeof *lr->key_running * (size_t)(run->nrows + 1));
	if (!lr->keys || !lr->key_running)
		return SKED_ENOMEM;
	for (int i = 0; i < run->nrows; i++) {
		int c = (int)sked__res_int(run, i, 1);
		lr->running += c;
		if (sked__res_null(run, i, 0))
			continue;
		lr->keys[lr->nkeys] = sked__res_text(run, i, 0);
		lr->key_running[lr->nkeys++] = c;
	}
	return SKED_OK;
}

static int
limited_once(sked *h, const sked_claim_req *req, sked_claimed **out, int *n)
{
	limit_row lr = {0};
	sked_res row = {0}, run = {0}, cand = {0};
	int *pick = NULL;
	int64_t *ids = NULL;
	const char **ckeys = NULL;
	sked_fair_cand *fair = NULL; /* a fair queue's candidates */
	int nf = 0;
	sked_buf log = {0};
	/* the limit row is where a limited claim may wait on another
	 * session: marked for the worker's lock-wait watchdog (an unlimited
	 * claim never comes here) */
	sked__wait_begin(h, SKED_WAIT_QUEUE_LIMIT, req->queue);
	int rc = sked__begin(h, 1);
	if (rc != SKED_OK) {
		sked__wait_end(h);
		return sked__fail_db(h, rc, "cannot begin a limited claim");
	}
	sked_val q = SKED_TEXTV(req->queue);
	rc = sked__q(h, SKED_SQL_LIM_LOCK, &q, 1, &row);
	sked__wait_end(h);
	if (rc != SKED_OK)
		goto db_failed;
	if (row.nrows == 0) { /* the limits were removed meanwhile */
		sked__res_clear(&row);
		rc = sked__commit(h);
		return rc == SKED_OK ? NOT_LIMITED
		                     : sked__fail_db(h, rc, "cannot commit");
	}
	lr.concurrency = (int)sked__res_int(&row, 0, 0);
	lr.per_key = (int)sked__res_int(&row, 0, 1);
	lr.rate_n = (int)sked__res_int(&row, 0, 2);
	lr.rate_ms = sked__res_int(&row, 0, 3);
	lr.log = (char *)sked__res_text(&row, 0, 4);
	lr.now_ms = sked__res_int(&row, 0, 5);
	/* paused since this handle last read the list: nothing, at once */
	lr.paused = sked__res_int(&row, 0, 6) != 0;
	lr.fair = sked__res_int(&row, 0, 7) != 0;
	/* The instant this claim starts its tasks at, judges the window at
	 * and records: the database's now, or the window's last start if
	 * that is later. Claims of the queue take turns on the row, so these
	 * instants never go back from one claim to the next, even where now
	 * is the transaction's start (PostgreSQL) and a claim that began
	 * first got the row last. */
	int64_t last = sked__rate_last(lr.log);
	if (last > lr.now_ms)
		lr.now_ms = last;
	int want = lr.paused ? 0 : req->limit;
	if (want > 0 && (lr.concurrency > 0 || lr.per_key > 0)) {
		rc = read_running(h, req->queue, &lr, &run);
		if (rc != SKED_OK)
			goto db_failed;
		if (lr.concurrency > 0 && lr.concurrency - lr.running < want)
			want = lr.concurrency - lr.running;
	}
	if (want > 0 && lr.rate_n > 0 && lr.rate_ms > 0) {
		int left = lr.rate_n - sked__rate_used(lr.log, lr.now_ms,
		                                       lr.rate_ms, lr.rate_n);
		if (left < want)
			want = left;
	}
	if (want > 0 && lr.fair) {
		/* a key never takes more than its room under per_key */
		int each =
		        lr.per_key > 0 && lr.per_key < want ? lr.per_key : want;
		rc = fair_read(h, req, want, each, 0, &fair, &nf);
		if (rc == SKED_ENOMEM)
			goto failed;
		if (rc != SKED_OK)
			goto db_failed;
		pick = malloc(sizeof *pick * (size_t)(nf + 1));
		ckeys = malloc(sizeof *ckeys * (size_t)(nf + 1));
		if (!pick || !ckeys) {
			rc = SKED_ENOMEM;
			goto failed;
		}
		for (int i = 0; i < nf; i++)
			ckeys[i] = fair[i].key;
		int npick =
		        sked__limits_pick(ckeys, nf, want, lr.per_key, lr.keys,
		                          lr.key_running, lr.nkeys, pick);
		if (npick < 0 ||
		    !(ids = malloc(sizeof *ids * (size_t)(npick + 1)))) {
			rc = SKED_ENOMEM;
			goto failed;
		}
		for (int i = 0; i < npick; i++)
			ids[i] = fair[pick[i]].id;
		fair_remember(h, req->queue, fair, pick, npick);
		fair_free(fair, nf);
		fair = NULL;
		nf = 0;
		sked_claim_ids how = {.claim = SKED_SQL_LIM_CLAIM,
		                      .get = SKED_SQL_LIM_GET,
		                      .with_start = 1,
		                      .start_ms = lr.now_ms,
		                      .spare = 4};
		rc = sked__claim_ids(h, req, &how, ids, npick, out, n);
		if (rc != SKED_OK)
			goto db_failed;
	} else if (want > 0) {
		/* per-key: more candidates than wanted, since some may share
		 * a key; the statement already skips keys that are full */
		int ncand = want;
		if (lr.per_key > 0) {
			ncand = want * 4 + 16;
			if (ncand > 1000)
				ncand = want > 1000 ? want : 1000;
		}
		sked_val p[6] = {
		        SKED_TEXTV(req->node_id), SKED_INTV(req->lease_ms),
		        SKED_INTV(ncand),         SKED_TEXTV(req->queue),
		        SKED_TEXTV(req->kinds),   SKED_INTV(lr.per_key)};
		rc = sked__q(h,
		             lr.per_key > 0 ? SKED_SQL_LIM_CAND_KEY
		                            : SKED_SQL_LIM_CAND,
		             p, lr.per_key > 0 ? 6 : 5, &cand);
		if (rc != SKED_OK)
			goto db_failed;
		pick = malloc(sizeof *pick * (size_t)(cand.nrows + 1));
		ckeys = malloc(sizeof *ckeys * (size_t)(cand.nrows + 1));
		if (!pick || !ckeys) {
			rc = SKED_ENOMEM;
			goto failed;
		}
		for (int i = 0; i < cand.nrows; i++)
			ckeys[i] = sked__res_null(&cand, i, 1)
			                   ? NULL
			                   : sked__res_text(&cand, i, 1);
		int npick = sked__limits_pick(ckeys, cand.nrows, want,
		                              lr.per_key, lr.keys,
		                              lr.key_running, lr.nkeys, pick);
		if (npick < 0 ||
		    !(ids = malloc(sizeof *ids * (size_t)(npick + 1)))) {
			rc = SKED_ENOMEM;
			goto failed;
		}
		for (int i = 0; i < npick; i++)
			ids[i] = sked__res_int(&cand, pick[i], 0);
		/* claimed if still due, started at the instant the window
		 * was judged at */
		sked_claim_ids how = {.claim = SKED_SQL_LIM_CLAIM,
		                      .get = SKED_SQL_LIM_GET,
		                      .with_start = 1,
		                      .start_ms = lr.now_ms,
		                      .spare = 4};
		rc = sked__claim_ids(h, req, &how, ids, npick, out, n);
		if (rc != SKED_OK)
			goto db_failed;
	}
	if (lr.rate_n > 0 && *n > 0) {
		/* the batch started at lr.now_ms, as the claim wrote it */
		sked__rate_add(lr.log, lr.now_ms, lr.rate_ms, lr.now_ms, *n,
		               &log);
		if (log.oom) {
			rc = SKED_ENOMEM;
			goto failed;
		}
		sked_val u[2] = {SKED_TEXTV(req->queue), SKED_TEXTV(log.p)};
		rc = sked__q(h, SKED_SQL_LIM_RATE, u, 2, NULL);
		if (rc != SKED_OK)
			goto db_failed;
	}
	rc = sked__commit(h);
	if (rc != SKED_OK)
		goto db_failed;
	goto done;
db_failed:
	rc = sked__fail_db(h, rc, "limited claim failed");
	goto done;
failed:
	rc = sked__fail(h, rc, "out of memory");
done:
	free(lr.keys);
	free(lr.key_running);
	free(pick);
	free(ids);
	free(ckeys);
	fair_free(fair, nf);
	sked__buf_free(&log);
	sked__res_clear(&row);
	sked__res_clear(&run);
	sked__res_clear(&cand);
	return rc;
}

#define USE_LOCKED 2 /* the queue has limits or a pause (any more) */

/* Whether h claims fair queue (by its list: fair, without limits)
 * without the limit row's lock: skip-locked strategy, and a product
 * whose candidates can be read FOR UPDATE SKIP LOCKED. */
static int
fair_unlocked(const sked *h, const char *queue)
{
	if (h->strategy->id != SKED_STRAT_SKIP_LOCKED ||
	    !sked__sql_needed(h->dialect, SKED_SQL_FAIR_CAND_SKIP))
		return 0;
	for (int i = 0; h->limits && i < h->limits->n; i++)
		if (strcmp(h->limits->queues[i], queue) == 0)
			return h->limits->fair_only[i];
	return 0;
}

/* The fair claim of a fair queue without limits: nothing to count, so
 * no turn on the limit row. One transaction: the row read without a
 * lock (a limit or pause set meanwhile sends the claim to the locked
 * path), the candidates read and locked key by key with SKIP LOCKED
 * (another claim's candidates are skipped, not waited for), the chosen
 * ones claimed by id; the rest are unlocked at commit. */
static int
fair_unlocked_once(sked *h, const sked_claim_req *req, sked_claimed **out,
                   int *n)
{
	sked_res row = {0};
	sked_fair_cand *fair = NULL;
	int nf = 0, *pick = NULL;
	int64_t *ids = NULL;
	int rc = sked__begin(h, 1);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot begin a fair claim");
	sked_val q = SKED_TEXTV(req->queue);
	rc = sked__q(h, SKED_SQL_LIM_PEEK, &q, 1, &row);
	if (rc != SKED_OK)
		goto db_failed;
	if (row.nrows == 0 || sked__res_int(&row, 0, 0) > 0 ||
	    sked__res_int(&row, 0, 1) > 0 || sked__res_int(&row, 0, 2) > 0 ||
	    sked__res_int(&row, 0, 6) != 0 || sked__res_int(&row, 0, 7) == 0) {
		int back = row.nrows == 0 ? NOT_LIMITED : USE_LOCKED;
		sked__res_clear(&row);
		rc = sked__commit(h);
		return rc == SKED_OK ? back
		                     : sked__fail_db(h, rc, "cannot commit");
	}
	int64_t now_ms = sked__res_int(&row, 0, 5);
	sked__res_clear(&row);
	rc = fair_read(h, req, req->limit, req->limit, 1, &fair, &nf);
	if (rc == SKED_ENOMEM)
		goto failed;
	if (rc != SKED_OK)
		goto db_failed;
	int npick = nf < req->limit ? nf : req->limit;
	if (!(ids = malloc(sizeof *ids * (size_t)(npick + 1))) ||
	    !(pick = malloc(sizeof *pick * (size_t)(npick + 1)))) {
		rc = SKED_ENOMEM;
		goto failed;
	}
	for (int i = 0; i < npick; i++) {
		ids[i] = fair[i].id;
		pick[i] = i;
	}
	fair_remember(h, req->queue, fair, pick, npick);
	sked_claim_ids how = {.claim = SKED_SQL_LIM_CLAIM,
	                      .get = SKED_SQL_LIM_GET,
	                      .with_start = 1,
	                      .start_ms = now_ms,
	                      .spare = 4};
	rc = sked__claim_ids(h, req, &how, ids, npick, out, n);
	if (rc == SKED_OK)
		rc = sked__commit(h);
	if (rc != SKED_OK)
		goto db_failed;
	goto done;
db_failed:
	rc = sked__fail_db(h, rc, "fair claim failed");
	goto done;
failed:
	rc = sked__fail(h, rc, "out of memory");
done:
	fair_free(fair, nf);
	free(ids);
	free(pick);
	sked__res_clear(&row);
	return rc;
}

/* sked__claim, appending to what *out holds already. */
static int
claim_more(sked *h, const sked_claim_req *req, sked_claimed **out, int *n)
{
	sked_claimed *c = NULL;
	int k = 0;
	int rc = sked__claim(h, req, &c, &k);
	if (rc != SKED_OK || k == 0) {
		sked__claimed_free(c, k);
		return rc;
	}
	if (*n == 0) {
		free(*out);
		*out = c;
		*n = k;
		return SKED_OK;
	}
	sked_claimed *a = realloc(*out, sizeof *a * (size_t)(*n + k));
	if (!a) {
		sked__claimed_free(c, k);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	memcpy(a + *n, c, sizeof *c * (size_t)k);
	free(c);
	*out = a;
	*n += k;
	return SKED_OK;
}

#define LIMITED_TRIES 3

/* The limited claim of req->queue, retried as sked__claim retries. */
static int
limited(sked *h, const sked_claim_req *req, sked_claimed **out, int *n)
{
	for (int attempt = 1;; attempt++) {
		int before = *n;
		int rc = fair_unlocked(h, req->queue)
		                 ? fair_unlocked_once(h, req, out, n)
		                 : USE_LOCKED;
		if (rc == USE_LOCKED)
			rc = limited_once(h, req, out, n);
		if (rc == NOT_LIMITED)
			return claim_more(h, req, out, n);
		if (rc == SKED_OK)
			return rc;
		sked__rollback(h);
		/* nothing of this try stays claimed: drop what it added */
		for (int i = before; i < *n; i++)
			sked__claimed_clear(&(*out)[i]);
		*n = before;
		if (!sked__retry_pause(h, rc, attempt, LIMITED_TRIES,
		                       "limited claim"))
			return rc;
	}
}

int
sked__limits_claim(sked *h, const sked_claim_req *req, sked_claimed **out,
                   int *n)
{
	*out = NULL;
	*n = 0;
	int rc = refresh(h);
	if (rc != SKED_OK)
		return rc;
	struct sked_limits *l = h->limits;
	int lim = req->queue ? is_limited(h, req->queue) : 1;
	if (l->n == 0 || lim == 0)
		return sked__claim(h, req, out, n);
	if (lim == 2) /* paused */
		return SKED_OK;
	if (req->queue)
		rc = limited(h, req, out, n);
	else {
		/* every queue: the limited ones each by the limited claim,
		 * starting at a different one each time so that none starves
		 * the others, then the rest by the plain claim that leaves
		 * the limited queues out */
		int nq = l->n;
		int start = l->turn++ % nq;
		for (int i = 0; rc == SKED_OK && i < nq && *n < req->limit;
		     i++) {
			if (l->paused[(start + i) % nq])
				continue;
			sked_claim_req sub = *req;
			sub.queue = l->queues[(start + i) % nq];
			sub.limit = req->limit - *n;
			rc = limited(h, &sub, out, n);
		}
		if (rc == SKED_OK && *n < req->limit) {
			sked_claim_req sub = *req;
			sub.limit = req->limit - *n;
			sub.skip_limited = 1;
			rc = claim_more(h, &sub, out, n);
		}
	}
	if (rc != SKED_OK) {
		/* what was claimed stays claimed; the caller's recovery of
		 * claims it did not see gives it back (worker.c) */
		sked__claimed_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

void
sked__limits_stale(sked *h)
{
	if (h->limits)
		h->limits->next_ms = 0;
}
