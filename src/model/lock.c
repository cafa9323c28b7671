/*
 * lock.c — named cluster locks (the role of Quartz's QRTZ_LOCKS and
 * ShedLock): a row per lock with its owner, its expiry by the database's
 * clock and a fencing token that grows with every acquisition.
 *
 * Layer: the model. Each call is one short transaction on one lock row:
 * acquire is a conditional UPDATE (free, expired, or ours) that bumps the
 * token, or, when the row does not exist yet, an INSERT that the unique
 * name decides between racers; the token is read back in the same
 * transaction. Rows are never deleted, so tokens never start over. What a
 * holder does with its lease (renewing it while a program runs) is left to
 * the caller, or to lock_run.c (sked_lock_run). sked_lock_list reads every
 * lock for operators (the dashboard's Locks page).
 *
 * Row locks: one lock row per transaction, nothing else. Acquire, extend
 * and release are marked for the worker's lock-wait watchdog
 * (sked__wait_begin): the places a worker may wait on a lock row.
 */
#include "model/lock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/counters.h"
#include "util/clock.h"
#include "util/timefmt.h"
#include "sked_cli.h"

static int
check(sked *h, const char *name, const char *owner, int64_t ttl_ms)
{
	if (!h || !h->db)
		return SKED_EINVAL;
	int rc = sked__check_name(h, "lock name", name);
	if (rc == SKED_OK)
		rc = sked__check_name(h, "lock owner", owner);
	if (rc != SKED_OK)
		return rc;
	if (ttl_ms < 1 || ttl_ms > SKED__LOCK_MAX_MS)
		return sked__fail(h, SKED_EINVAL,
		                  "lock time-to-live %lld ms is out of range "
		                  "(1 ms to a year)",
		                  (long long)ttl_ms);
	return SKED_OK;
}

/* "held by OWNER until TIME" into h's error, SKED_ELOCKED. */
static int
held_elsewhere(sked *h, const char *name, const sked_res *r)
{
	char until[32];
	const char *owner = sked__res_text(r, 0, 0);
	return sked__fail(
	        h, SKED_ELOCKED, "lock %s is held by %s until %s", name,
	        owner ? owner : "?",
	        sked_format_time(sked__res_int(r, 0, 1), until, sizeof until));
}

/* One try. SKED_ELOCKED when held elsewhere. */
static int
try_acquire_tx(sked *h, const char *name, const char *owner, int64_t ttl_ms,
               int64_t *token)
{
	sked_val v[3] = {SKED_TEXTV(name), SKED_TEXTV(owner),
	                 SKED_INTV(ttl_ms)};
	sked_res r = {0};
	int rc = sked__begin(h, 0);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot begin");
	rc = sked__q(h, SKED_SQL_LOCK_TAKE, v, 3, NULL);
	if (rc != SKED_OK)
		goto fail;
	if (sked__affected(h) == 1) {
		rc = sked__q(h, SKED_SQL_LOCK_TOKEN, v, 2, &r);
		if (rc == SKED_OK && r.nrows != 1)
			rc = SKED_EDB;
		if (rc != SKED_OK)
			goto fail;
		*token = sked__res_int(&r, 0, 0);
		sked__res_clear(&r);
		if ((rc = sked__commit(h)) != SKED_OK)
			return sked__fail_db(h, rc, "cannot commit the lock");
		return SKED_OK;
	}
	rc = sked__q(h, SKED_SQL_LOCK_PEEK, v, 1, &r);
	if (rc != SKED_OK)
		goto fail;
	if (r.nrows > 0) {
		sked__rollback(h);
		rc = held_elsewhere(h, name, &r);
		sked__res_clear(&r);
		return rc;
	}
	sked__res_clear(&r);
	/* never taken: the first row; the unique name decides a race */
	rc = sked__q(h, SKED_SQL_LOCK_INSERT, v, 3, NULL);
	if (rc == SKED_OK && (rc = sked__commit(h)) == SKED_OK) {
		*token = 1;
		return SKED_OK;
	}
	if (sked__err_kind(h) == SKED_DBE_UNIQUE) {
		sked__rollback(h);
		return sked__fail(h, SKED_ELOCKED,
		                  "lock %s is held by another owner (taken "
		                  "just now)",
		                  name);
	}
fail:
	sked__res_clear(&r);
	sked__fail_db(h, rc, "cannot acquire the lock");
	sked__rollback(h);
	return rc;
}

/* The one transaction that may wait on the lock row (another session
 * holding it in a transaction of its own): marked for the worker's
 * lock-wait watchdog. */
static int
try_acquire(sked *h, const char *name, const char *owner, int64_t ttl_ms,
            int64_t *token)
{
	sked__wait_begin(h, SKED_WAIT_LOCK, name);
	int rc = try_acquire_tx(h, name, owner, ttl_ms, token);
	sked__wait_end(h);
	return rc;
}

SKED_API int
sked_lock_acquire(sked *h, const char *name, const char *owner, int64_t ttl_ms,
                  const sked_lock_opts *opts, int64_t *token_out)
{
	int rc = check(h, name, owner, ttl_ms);
	if (rc != SKED_OK)
		return rc;
	if (!token_out)
		return SKED_EINVAL;
	int64_t wait_ms = opts ? opts->wait_ms : 0;
	if (wait_ms < 0 || wait_ms > SKED__LOCK_MAX_MS ||
	    (opts &&
	     (opts->at_least_ms < 0 || opts->at_least_ms > SKED__LOCK_MAX_MS)))
		return sked__fail(h, SKED_EINVAL,
		                  "lock wait and at-least must be 0 to a year");
	int64_t deadline = sked__mono_ms() + wait_ms;
	int64_t pause = SKED__LOCK_WAIT_MIN_MS;
	for (;;) {
		rc = try_acquire(h, name, owner, ttl_ms, token_out);
		/* a busy database (SQLite's writer lock, a deadlock victim)
		 * is worth another try within the wait, like a held lock */
		if (rc != SKED_ELOCKED && rc != SKED_EBUSY) {
			if (rc == SKED_OK)
				sked__count(SKED__COUNT_LOCKS, 1);
			return rc;
		}
		int64_t left = deadline - sked__mono_ms();
		if (left <= 0) {
			if (rc == SKED_ELOCKED)
				sked__count(SKED__COUNT_LOCK_BUSY, 1);
			return rc;
		}
		int64_t d = pause < left ? pause : left;
		struct timespec ts = {d / 1000, (d % 1000) * 1000000};
		nanosleep(&ts, NULL);
		pause = pause * 2 > SKED__LOCK_WAIT_MAX_MS
		                ? SKED__LOCK_WAIT_MAX_MS
		                : pause * 2;
	}
}

SKED_API int
sked_lock_extend(sked *h, const char *name, const char *owner, int64_t token,
                 int64_t ttl_ms)
{
	int rc = check(h, name, owner, ttl_ms);
	if (rc != SKED_OK)
		return rc;
	sked_val v[4] = {SKED_TEXTV(name), SKED_TEXTV(owner), SKED_INTV(token),
	                 SKED_INTV(ttl_ms)};
	sked__wait_begin(h, SKED_WAIT_LOCK, name);
	rc = sked__q(h, SKED_SQL_LOCK_EXTEND, v, 4, NULL);
	sked__wait_end(h);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot extend the lock");
	if (sked__affected(h) != 1)
		return sked__fail(h, SKED_ELOST,
		                  "lock %s is no longer held by %s with token "
		                  "%lld (it expired or was taken over)",
		                  name, owner, (long long)token);
	return SKED_OK;
}

static int
release_tx(sked *h, const char *name, const char *owner, int64_t token,
           const sked_lock_opts *opts)
{
	int rc;
	int64_t at_least = opts ? opts->at_least_ms : 0;
	sked_val v[4] = {SKED_TEXTV(name), SKED_TEXTV(owner), SKED_INTV(token),
	                 SKED_NULLV};
	sked_res r = {0};
	if ((rc = sked__begin(h, 0)) != SKED_OK)
		return sked__fail_db(h, rc, "cannot begin");
	rc = sked__q(h, SKED_SQL_LOCK_HELD, v, 3, &r);
	if (rc != SKED_OK)
		goto fail;
	if (r.nrows == 0) {
		sked__res_clear(&r);
		sked__rollback(h);
		return sked__fail(h, SKED_ELOST,
		                  "lock %s is not held by %s with token %lld "
		                  "(taken over since)",
		                  name, owner, (long long)token);
	}
	int64_t hold_until = sked__res_int(&r, 0, 0) + at_least;
	int64_t now = sked__res_int(&r, 0, 1);
	sked__res_clear(&r);
	if (at_least > 0 && hold_until > now) {
		/* lock-at-least-for: stay taken until locked_at + at_least */
		v[3] = SKED_INTV(hold_until);
		rc = sked__q(h, SKED_SQL_LOCK_HOLD, v, 4, NULL);
	} else {
		rc = sked__q(h, SKED_SQL_LOCK_FREE, v, 3, NULL);
	}
	if (rc != SKED_OK)
		goto fail;
	if ((rc = sked__commit(h)) != SKED_OK)
		return sked__fail_db(h, rc, "cannot commit the release");
	return SKED_OK;
fail:
	sked__fail_db(h, rc, "cannot release the lock");
	sked__rollback(h);
	return rc;
}

SKED_API int
sked_lock_release(sked *h, const char *name, const char *owner, int64_t token,
                  const sked_lock_opts *opts)
{
	int rc = check(h, name, owner, 1);
	if (rc != SKED_OK)
		return rc;
	sked__wait_begin(h, SKED_WAIT_LOCK, name);
	rc = release_tx(h, name, owner, token, opts);
	sked__wait_end(h);
	return rc;
}

SKED_API int
sked_lock_get(sked *h, const char *name, sked_lock_state *out)
{
	int rc = check(h, name, "x", 1);
	if (rc != SKED_OK)
		return rc;
	if (!out)
		return SKED_EINVAL;
	memset(out, 0, sizeof *out);
	sked_val v = SKED_TEXTV(name);
	sked_res r = {0};
	rc = sked__q(h, SKED_SQL_LOCK_GET, &v, 1, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot read the lock");
	if (r.nrows == 0) {
		sked__res_clear(&r);
		return sked__fail(h, SKED_ENOTFOUND, "lock %s was never taken",
		                  name);
	}
	const char *owner = sked__res_text(&r, 0, 0);
	snprintf(out->owner, sizeof out->owner, "%s", owner ? owner : "");
	out->locked_at_ms = sked__res_int(&r, 0, 1);
	out->locked_until_ms = sked__res_int(&r, 0, 2);
	out->token = sked__res_int(&r, 0, 3);
	out->now_ms = sked__res_int(&r, 0, 4);
	out->held = owner && out->locked_until_ms > out->now_ms;
	sked__res_clear(&r);
	return SKED_OK;
}

SKED_API int
sked_lock_list(sked *h, sked_lock_row **out, size_t *n)
{
	if (!h || !h->db || !out || !n)
		return SKED_EINVAL;
	*out = NULL;
	*n = 0;
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_LOCK_LIST, NULL, 0, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot list locks");
	if (r.nrows == 0) {
		sked__res_clear(&r);
		return SKED_OK;
	}
	sked_lock_row *l = calloc((size_t)r.nrows, sizeof *l);
	int oom = !l;
	for (int i = 0; l && i < r.nrows; i++) {
		l[i].name = sked__res_dup(&r, i, 0, &oom);
		l[i].owner = sked__res_dup(&r, i, 1, &oom);
		l[i].locked_at_ms = sked__res_int(&r, i, 2);
		l[i].locked_until_ms = sked__res_int(&r, i, 3);
		l[i].token = sked__res_int(&r, i, 4);
		l[i].held = l[i].owner && l[i].owner[0] &&
		            l[i].locked_until_ms > sked__res_int(&r, i, 5);
	}
	size_t cnt = (size_t)r.nrows;
	sked__res_clear(&r);
	if (oom) {
		sked_lock_rows_free(l, l ? cnt : 0);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	*out = l;
	*n = cnt;
	return SKED_OK;
}

SKED_API void
sked_lock_rows_free(sked_lock_row *l, size_t n)
{
	if (!l)
		return;
	for (size_t i = 0; i < n; i++) {
		free(l[i].name);
		free(l[i].owner);
	}
	free(l);
}
