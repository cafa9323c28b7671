/*
 * limits.c — cluster-wide limits of a queue (see limits.h and
 * docs/limits.md): setting, pausing and listing them, and reading a rate.
 *
 * Layer: the model, above limited.c (the limited claim and the handle's
 * list of limited queues, which a change here makes stale at once). Each
 * change locks the queue's limit row (SKED_SQL_LIM_LOCK) in a
 * transaction of its own, so that it takes its turn with the limited
 * claims of that queue.
 */
#include "model/limits.h"

#include <stdlib.h>
#include <string.h>

#include "handle/internal.h"
#include "model/wake.h"
#include "sked_cli.h"

/* ---- setting and listing ---- */

static int
check_limit(sked *h, const char *what, int v, int max)
{
	if (v == SKED_LIMIT_KEEP || (v >= 0 && v <= max))
		return SKED_OK;
	return sked__fail(h, SKED_EINVAL,
	                  "%s %d is out of range (1 to %d, 0 for none)", what,
	                  v, max);
}

static sked_val
limit_val(int v)
{
	return v > 0 ? SKED_INTV(v) : SKED_NULLV;
}

static int
set_once(sked *h, const char *queue, int conc, int per_key, int rate_n,
         int64_t rate_ms)
{
	sked_res r = {0};
	int rc = sked__begin(h, 1);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot begin");
	sked_val q = SKED_TEXTV(queue);
	rc = sked__q(h, SKED_SQL_LIM_LOCK, &q, 1, &r);
	if (rc != SKED_OK) {
		sked__rollback(h);
		return sked__fail_db(h, rc, "cannot read the queue's limits");
	}
	int exists = r.nrows == 1;
	int paused = exists && sked__res_int(&r, 0, 6) != 0;
	int fair = exists && sked__res_int(&r, 0, 7) != 0;
	if (exists) {
		if (conc == SKED_LIMIT_KEEP)
			conc = (int)sked__res_int(&r, 0, 0);
		if (per_key == SKED_LIMIT_KEEP)
			per_key = (int)sked__res_int(&r, 0, 1);
		if (rate_n == SKED_LIMIT_KEEP) {
			rate_n = (int)sked__res_int(&r, 0, 2);
			rate_ms = sked__res_int(&r, 0, 3);
		}
	}
	sked__res_clear(&r);
	conc = conc < 0 ? 0 : conc;
	per_key = per_key < 0 ? 0 : per_key;
	if (rate_n <= 0)
		rate_n = 0, rate_ms = 0;
	sked_val p[5] = {q, limit_val(conc), limit_val(per_key),
	                 limit_val(rate_n),
	                 rate_n > 0 ? SKED_INTV(rate_ms) : SKED_NULLV};
	/* a paused or fair queue keeps its row, without limits */
	if (!conc && !per_key && !rate_n && !paused && !fair)
		rc = exists ? sked__q(h, SKED_SQL_LIM_DELETE, &q, 1, NULL)
		            : SKED_OK;
	else
		rc = sked__q(h,
		             exists ? SKED_SQL_LIM_UPDATE : SKED_SQL_LIM_INSERT,
		             p, 5, NULL);
	if (rc == SKED_OK)
		rc = sked__commit(h);
	if (rc != SKED_OK) {
		rc = sked__fail_db(h, rc, "cannot set the queue's limits");
		sked__rollback(h);
	}
	return rc;
}

SKED_API int
sked_queue_set(sked *h, const char *queue, int concurrency, int per_key,
               int rate_n, int64_t rate_window_ms)
{
	if (!h || !h->db)
		return SKED_EINVAL;
	int rc = sked__check_name(h, "queue", queue);
	if (rc == SKED_OK)
		rc = check_limit(h, "concurrency", concurrency, 1000000);
	if (rc == SKED_OK)
		rc = check_limit(h, "per-key concurrency", per_key, 1000000);
	if (rc == SKED_OK)
		rc = check_limit(h, "rate", rate_n, 100000);
	if (rc == SKED_OK && rate_n > 0 &&
	    (rate_window_ms < 1 || rate_window_ms > 86400000))
		rc = sked__fail(h, SKED_EINVAL,
		                "a rate's window must be 1 ms to 1 day");
	if (rc != SKED_OK)
		return rc;
	for (int attempt = 1;; attempt++) {
		rc = set_once(h, queue, concurrency, per_key, rate_n,
		              rate_window_ms);
		/* two first settings at once: one insert wins, the other
		 * updates the row it made */
		if (rc != SKED_OK && attempt == 1 &&
		    sked__err_kind(h) == SKED_DBE_UNIQUE)
			continue;
		if (!sked__retry_pause(h, rc, attempt, 3, "setting limits"))
			break;
	}
	if (rc == SKED_OK)
		sked__limits_stale(h); /* this handle sees it at once */
	return rc;
}

/* ---- a queue's flags: paused, fair ---- */

/* A flag of the queue's limit row. The row exists while the queue has a
 * limit or a flag set; a flag cleared on a row that holds nothing else
 * removes the row, so the queue is claimed as any queue without one. */
typedef struct queue_flag {
	int other_col;        /* the row's other flag (LIM_LOCK's columns) */
	sked_sql set;         /* ?2 into the flag of the existing row */
	sked_sql insert;      /* a row with the flag set */
	int wake_when_off;    /* clearing it makes waiting work due */
	const char *on, *off; /* what it does, for the retry's message */
	const char *fail_on, *fail_off; /* when it fails */
} queue_flag;

static const queue_flag PAUSED = {
        .other_col = 7, /* fair */
        .set = SKED_SQL_LIM_PAUSE,
        .insert = SKED_SQL_LIM_INSERT_PAUSED,
        .wake_when_off = 1,
        .on = "pausing a queue",
        .off = "resuming a queue",
        .fail_on = "cannot pause the queue",
        .fail_off = "cannot resume the queue",
};

static const queue_flag FAIR = {
        .other_col = 6, /* paused */
        .set = SKED_SQL_LIM_FAIR,
        .insert = SKED_SQL_LIM_INSERT_FAIR,
        .on = "setting fairness",
        .off = "setting fairness",
        .fail_on = "cannot set the queue's fairness",
        .fail_off = "cannot set the queue's fairness",
};

static int
flag_once(sked *h, const char *queue, const queue_flag *f, int on)
{
	sked_res r = {0};
	int rc = sked__begin(h, 1);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot begin");
	sked_val q = SKED_TEXTV(queue);
	rc = sked__q(h, SKED_SQL_LIM_LOCK, &q, 1, &r);
	if (rc != SKED_OK) {
		sked__rollback(h);
		return sked__fail_db(h, rc, "cannot read the queue's row");
	}
	int exists = r.nrows == 1;
	int keep = exists && (sked__res_int(&r, 0, 0) > 0 ||
	                      sked__res_int(&r, 0, 1) > 0 ||
	                      sked__res_int(&r, 0, 2) > 0 ||
	                      sked__res_int(&r, 0, f->other_col) != 0);
	sked__res_clear(&r);
	sked_val p[2] = {q, SKED_INTV(on)};
	if (on)
		rc = exists ? sked__q(h, f->set, p, 2, NULL)
		            : sked__q(h, f->insert, &q, 1, NULL);
	else if (exists)
		rc = keep ? sked__q(h, f->set, p, 2, NULL)
		          : sked__q(h, SKED_SQL_LIM_DELETE, &q, 1, NULL);
	/* a resumed queue's waiting work is due now: every worker that
	 * serves it looks (delivered at commit; docs/design.md,
	 * "Wake-ups") */
	if (rc == SKED_OK && !on && exists && f->wake_when_off)
		rc = sked__wake(h, sked__wake_r(), SKED_WAKE_ALL, queue, NULL);
	if (rc == SKED_OK)
		rc = sked__commit(h);
	if (rc != SKED_OK) {
		rc = sked__fail_db(h, rc, on ? f->fail_on : f->fail_off);
		sked__rollback(h);
	}
	return rc;
}

static int
flag_set(sked *h, const char *queue, const queue_flag *f, int on)
{
	if (!h || !h->db)
		return SKED_EINVAL;
	int rc = sked__check_name(h, "queue", queue);
	if (rc != SKED_OK)
		return rc;
	on = on != 0;
	for (int attempt = 1;; attempt++) {
		rc = flag_once(h, queue, f, on);
		/* two first settings at once: one insert wins, the other
		 * finds its row */
		if (rc != SKED_OK && attempt == 1 &&
		    sked__err_kind(h) == SKED_DBE_UNIQUE)
			continue;
		if (!sked__retry_pause(h, rc, attempt, 3, on ? f->on : f->off))
			break;
	}
	if (rc == SKED_OK)
		sked__limits_stale(h); /* this handle sees it at once */
	return rc;
}

SKED_API int
sked_queue_pause(sked *h, const char *queue, int paused)
{
	return flag_set(h, queue, &PAUSED, paused);
}

SKED_API int
sked_queue_set_fair(sked *h, const char *queue, int fair)
{
	return flag_set(h, queue, &FAIR, fair);
}

/* ---- a fair queue's key weights (schema 15) ---- */

SKED_API int
sked_queue_set_weight(sked *h, const char *queue, const char *key, int weight)
{
	if (!h || !h->db)
		return SKED_EINVAL;
	int rc = sked__check_name(h, "queue", queue);
	if (rc != SKED_OK)
		return rc;
	if (!key || !*key || strlen(key) > SKED_MAX_NAME)
		return sked__fail(h, SKED_EINVAL,
		                  "concurrency key must be 1 to %d bytes",
		                  SKED_MAX_NAME);
	if (weight < 1 || weight > SKED_MAX_WEIGHT)
		return sked__fail(h, SKED_EINVAL,
		                  "weight %d is out of range (1 to %d; 1 is "
		                  "the default)",
		                  weight, SKED_MAX_WEIGHT);
	sked_val p[3] = {SKED_TEXTV(queue), SKED_TEXTV(key), SKED_INTV(weight)};
	for (int attempt = 0; attempt < 3; attempt++) {
		if ((rc = sked__begin(h, 0)) != SKED_OK)
			return sked__fail_db(h, rc, "cannot begin");
		rc = sked__q(h, SKED_SQL_WEIGHT_DEL, p, 2, NULL);
		int had = rc == SKED_OK && sked__affected(h) > 0;
		int64_t keys = 0;
		if (rc == SKED_OK && weight > 1 && !had) {
			sked_res r = {0};
			rc = sked__q(h, SKED_SQL_WEIGHT_COUNT, p, 1, &r);
			keys = rc == SKED_OK && r.nrows
			               ? sked__res_int(&r, 0, 0)
			               : 0;
			sked__res_clear(&r);
			if (rc == SKED_OK && keys >= SKED_MAX_WEIGHTED_KEYS) {
				sked__rollback(h);
				return sked__fail(h, SKED_ETOOBIG,
				                  "queue '%s' has %d weighted "
				                  "keys, the most "
				                  "a queue may have "
				                  "(SKED_MAX_WEIGHTED_KEYS)",
				                  queue,
				                  SKED_MAX_WEIGHTED_KEYS);
			}
		}
		if (rc == SKED_OK && weight > 1)
			rc = sked__q(h, SKED_SQL_WEIGHT_PUT, p, 3, NULL);
		if (rc == SKED_OK)
			rc = sked__commit(h);
		if (rc == SKED_OK) {
			sked__limits_stale(h);
			return SKED_OK;
		}
		/* a concurrent set of the same key inserted it first */
		int dup = sked__err_kind(h) == SKED_DBE_UNIQUE;
		sked__rollback(h);
		if (!dup)
			return sked__fail_db(h, rc, "cannot set the weight");
	}
	return sked__fail(h, SKED_EBUSY,
	                  "the weight of key '%s' keeps changing; try again",
	                  key);
}

SKED_API int
sked_queue_weights(sked *h, const char *queue, sked_queue_weight **out,
                   size_t *n)
{
	if (!h || !h->db || !out || !n)
		return SKED_EINVAL;
	*out = NULL;
	*n = 0;
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_WEIGHT_LIST, NULL, 0, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot list the key weights");
	sked_queue_weight *w = calloc((size_t)r.nrows + 1, sizeof *w);
	int oom = !w;
	size_t k = 0;
	for (int i = 0; !oom && i < r.nrows; i++) {
		const char *q = sked__res_text(&r, i, 0);
		if (queue && (!q || strcmp(q, queue) != 0))
			continue;
		w[k].queue = sked__res_dup(&r, i, 0, &oom);
		w[k].key = sked__res_dup(&r, i, 1, &oom);
		w[k].weight = (int)sked__res_int(&r, i, 2);
		k++;
	}
	sked__res_clear(&r);
	if (oom) {
		sked_queue_weights_free(w, w ? k : 0);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	*out = w;
	*n = k;
	return SKED_OK;
}

SKED_API void
sked_queue_weights_free(sked_queue_weight *w, size_t n)
{
	if (!w)
		return;
	for (size_t i = 0; i < n; i++) {
		free(w[i].queue);
		free(w[i].key);
	}
	free(w);
}

static sked_queue_info *
info_for(sked_queue_info **arr, size_t *n, size_t *cap, const char *queue,
         int *oom)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*arr)[i].queue, queue) == 0)
			return &(*arr)[i];
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;
		sked_queue_info *a = realloc(*arr, sizeof *a * nc);
		if (!a) {
			*oom = 1;
			return NULL;
		}
		*arr = a;
		*cap = nc;
	}
	sked_queue_info *q = &(*arr)[*n];
	memset(q, 0, sizeof *q);
	if (!(q->queue = strdup(queue))) {
		*oom = 1;
		return NULL;
	}
	(*n)++;
	return q;
}

static int
cmp_info(const void *a, const void *b)
{
	return strcmp(((const sked_queue_info *)a)->queue,
	              ((const sked_queue_info *)b)->queue);
}

SKED_API int
sked_queue_list(sked *h, sked_queue_info **out, size_t *n)
{
	if (!h || !h->db || !out || !n)
		return SKED_EINVAL;
	*out = NULL;
	*n = 0;
	sked_res lim = {0}, use = {0};
	int rc = sked__q(h, SKED_SQL_LIM_LIST, NULL, 0, &lim);
	if (rc == SKED_OK)
		rc = sked__q(h, SKED_SQL_LIM_USE, NULL, 0, &use);
	if (rc != SKED_OK) {
		sked__res_clear(&lim);
		return sked__fail_db(h, rc, "cannot list the queues' limits");
	}
	sked_queue_info *arr = NULL;
	size_t cnt = 0, cap = 0;
	int oom = 0;
	for (int i = 0; !oom && i < lim.nrows; i++) {
		sked_queue_info *q = info_for(&arr, &cnt, &cap,
		                              sked__res_text(&lim, i, 0), &oom);
		if (!q)
			break;
		q->concurrency = (int)sked__res_int(&lim, i, 1);
		q->per_key = (int)sked__res_int(&lim, i, 2);
		q->rate_n = (int)sked__res_int(&lim, i, 3);
		q->rate_window_ms = q->rate_n ? sked__res_int(&lim, i, 4) : 0;
		if (q->rate_n)
			q->rate_used =
			        sked__rate_used(sked__res_text(&lim, i, 5),
			                        sked__res_int(&lim, i, 6),
			                        q->rate_window_ms, q->rate_n);
		q->limited = q->concurrency > 0 || q->per_key > 0 || q->rate_n;
		q->paused = sked__res_int(&lim, i, 7) != 0;
		q->fair = sked__res_int(&lim, i, 8) != 0;
	}
	for (int i = 0; !oom && i < use.nrows; i++) {
		sked_queue_info *q = info_for(&arr, &cnt, &cap,
		                              sked__res_text(&use, i, 0), &oom);
		if (!q)
			break;
		int c = (int)sked__res_int(&use, i, 2);
		q->running += c;
		if (!sked__res_null(&use, i, 1)) {
			q->keys_running++;
			if (q->per_key > 0 && c >= q->per_key)
				q->keys_full++;
		}
	}
	sked__res_clear(&lim);
	sked__res_clear(&use);
	if (oom) {
		sked_queue_info_free(arr, cnt);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	if (cnt > 1)
		qsort(arr, cnt, sizeof *arr, cmp_info);
	*out = arr;
	*n = cnt;
	return SKED_OK;
}

SKED_API void
sked_queue_info_free(sked_queue_info *q, size_t n)
{
	if (!q)
		return;
	for (size_t i = 0; i < n; i++)
		free(q[i].queue);
	free(q);
}

SKED_API int
sked_parse_rate(const char *s, int *n, int64_t *window_ms)
{
	if (!s || !n || !window_ms)
		return SKED_EINVAL;
	const char *slash = strchr(s, '/');
	if (!slash || slash == s)
		return SKED_EINVAL;
	long v = 0;
	for (const char *p = s; p < slash; p++) {
		if (*p < '0' || *p > '9' || v > 100000)
			return SKED_EINVAL;
		v = v * 10 + (*p - '0');
	}
	int64_t ms;
	if (v < 1 || v > 100000 || sked_parse_duration(slash + 1, &ms) != 0 ||
	    ms < 1 || ms > 86400000)
		return SKED_EINVAL;
	*n = (int)v;
	*window_ms = ms;
	return SKED_OK;
}
