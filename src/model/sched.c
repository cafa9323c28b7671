/*
 * sched.c — recurring schedules: add, replace, pause, list, and the tick
 * that turns due fire times into tasks, exactly once across the cluster.
 *
 * Layer: the model: schedule storage and the tick's transactions. Which
 * instants an expression names, and which of them to fire now (on time,
 * misfire, clock went back), is the pure arithmetic of cron.c and fire.c,
 * given the database's now, never the node's; when to tick is the worker
 * loop's (it calls sked__sched_poll between claims). Statements are
 * SKED_SQL_SCHED_* in the dialect registry.
 *
 * Exactly once, without a global lock: every worker reads the due
 * schedules, computes the fires itself, and claims them with a
 * conditional UPDATE of that schedule's own row (WHERE version = the
 * version it read), moving next_fire past them; the tasks are inserted in
 * the same transaction. Of two workers that read the same row, the
 * database lets one UPDATE match; the other changes nothing and inserts
 * nothing. The unique (schedule_name, fire_time) index is a second guard.
 *
 * Row locks: a tick transaction locks one schedule row (the claim), then
 * inserts task rows; it never locks two schedule rows, and nothing locks a
 * task row and then a schedule row, so ticks cannot deadlock. The claim
 * transaction is marked for the worker's lock-wait watchdog
 * (sked__wait_begin): a session holding the row makes the tick wait.
 *
 * Size: about 1,080 lines. The schedule's storage (add, replace, pause,
 * list, run now), its unique key (a fire's task under it, shared by the
 * tick and a run now) and the tick share the row format and its version
 * check; the tick, with the unique fire, is the part to move to its own
 * file (with the row reader in a small header) when it grows again.
 */
#include "model/sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/counters.h"
#include "model/enqueue.h"
#include "model/queue.h"
#include "model/wake.h"
#include "util/log.h"
#include "util/timefmt.h"
#include "sked_cli.h"

#define DUE_BATCH 100

static const char *const misfire_names[] = {"fire-once", "fire-all", "skip"};
static const char *const overlap_names[] = {"allow", "skip"};

SKED_API const char *
sked_misfire_name(int m)
{
	return m >= 0 && m < 3 ? misfire_names[m] : "?";
}

SKED_API int
sked_misfire_parse(const char *s)
{
	for (int i = 0; s && i < 3; i++)
		if (strcmp(s, misfire_names[i]) == 0)
			return i;
	return -1;
}

SKED_API const char *
sked_overlap_name(int o)
{
	return o >= 0 && o < 2 ? overlap_names[o] : "?";
}

SKED_API int
sked_overlap_parse(const char *s)
{
	for (int i = 0; s && i < 2; i++)
		if (strcmp(s, overlap_names[i]) == 0)
			return i;
	return -1;
}

/* ---- validation ---- */

static int
check_def(sked *h, const char *name, const char *expr, const char *kind,
          const sked_schedule_opts *o, sked_fire_plan *p)
{
	char err[256] = "";
	int rc = sked__check_name(h, "schedule name", name);
	if (rc == SKED_OK)
		rc = sked__check_name(h, "kind", kind);
	if (rc == SKED_OK && o->queue)
		rc = sked__check_name(h, "queue", o->queue);
	if (rc != SKED_OK)
		return rc;
	if (o->tz && strlen(o->tz) > 255)
		return sked__fail(h, SKED_ETZ, "time zone name is too long");
	if (o->max_attempts < 0 || o->max_attempts > 1000)
		return sked__fail(h, SKED_EINVAL,
		                  "max attempts %d is out of range 1-1000",
		                  o->max_attempts);
	if (o->misfire < 0 || o->misfire > 2)
		return sked__fail(h, SKED_EINVAL,
		                  "misfire policy %d is not "
		                  "fire-once, fire-all or skip",
		                  o->misfire);
	if (o->overlap < 0 || o->overlap > 1)
		return sked__fail(h, SKED_EINVAL,
		                  "overlap policy %d is not allow or skip",
		                  o->overlap);
	size_t plen = o->payload ? (o->payload_len ? o->payload_len
	                                           : strlen(o->payload))
	                         : 0;
	if (plen > SKED_MAX_PAYLOAD)
		return sked__fail(h, SKED_ETOOBIG,
		                  "payload is %zu bytes; the limit is %d", plen,
		                  SKED_MAX_PAYLOAD);
	if (!expr || strlen(expr) > 1000)
		return sked__fail(h, SKED_ECRON,
		                  "cron expression is missing "
		                  "or too long");
	rc = sked__fire_load(expr, o->tz, p, err, sizeof err);
	if (rc != SKED_OK)
		return sked__fail(h, rc, "%s",
		                  err[0] ? err : sked_strerror(rc));
	return SKED_OK;
}

/* ---- add, replace, remove, pause, resume ---- */

static int
same_text(const sked_res *r, int col, const char *s, size_t len)
{
	const char *v = sked__res_text(r, 0, col);
	return v && sked__res_len(r, 0, col) == len && memcmp(v, s, len) == 0;
}

/* NULL and NULL, or the same text */
static int
same_opt(const sked_res *r, int col, const char *s)
{
	if (sked__res_null(r, 0, col) || !sked__res_text(r, 0, col))
		return s == NULL;
	return s && same_text(r, col, s, strlen(s));
}

/* A schedule's unique options as sked_enqueue checks them (enqueue.c):
 * only the four unique fields of u are read. */
static int
check_unique(sked *h, const char *kind, const sked_enqueue_opts *u,
             sked_enqueue_opts *out)
{
	memset(out, 0, sizeof *out);
	if (!u)
		return SKED_OK;
	out->unique_key = u->unique_key;
	out->unique_scope = u->unique_scope;
	out->unique_for_ms = u->unique_for_ms;
	out->unique_replace = u->unique_replace;
	return sked__enqueue_check(h, kind, NULL, 0, out);
}

SKED_API int
sked_schedule_put(sked *h, const char *name, const char *expr, const char *kind,
                  const sked_schedule_opts *opts, int *created_out)
{
	return sked_schedule_put_unique(h, name, expr, kind, opts, NULL,
	                                created_out);
}

SKED_API int
sked_schedule_put_unique(sked *h, const char *name, const char *expr,
                         const char *kind, const sked_schedule_opts *opts,
                         const sked_enqueue_opts *uo, int *created_out)
{
	static const sked_schedule_opts defaults = {0};
	if (!h || !h->db)
		return SKED_EINVAL;
	const sked_schedule_opts *o = opts ? opts : &defaults;
	if (created_out)
		*created_out = 0;
	sked_fire_plan p;
	sked_enqueue_opts u;
	int rc = check_def(h, name, expr, kind, o, &p);
	if (rc != SKED_OK)
		return rc;
	if ((rc = check_unique(h, kind, uo, &u)) != SKED_OK) {
		sked__fire_free(&p);
		return rc;
	}
	/* stored as read back: the period makes the scope, and the scope
	 * and replace mean nothing without a key */
	int uscope = u.unique_for_ms ? SKED_UNIQUE_PERIOD : u.unique_scope;
	const char *tz = o->tz && *o->tz ? o->tz : "UTC";
	const char *queue = o->queue ? o->queue : SKED_DEFAULT_QUEUE;
	const char *payload = o->payload ? o->payload : "";
	size_t plen = o->payload ? (o->payload_len ? o->payload_len
	                                           : strlen(o->payload))
	                         : 0;
	int max_attempts =
	        o->max_attempts ? o->max_attempts : SKED_DEFAULT_MAX_ATTEMPTS;
	int64_t now = 0, next = 0;
	if ((rc = sked__now(h, &now)) == SKED_OK &&
	    (rc = sked__fire_next(&p, now, &next)) == SKED_OK && next == 0)
		rc = sked__fail(h, SKED_ECRON,
		                "'%s' never fires within %d years", expr,
		                SKED_CRON_HORIZON_YEARS);
	sked__fire_free(&p);
	if (rc != SKED_OK)
		return rc;

	sked_val v[16] = {
	        SKED_TEXTV(name), SKED_TEXTV(expr), SKED_TEXTV(tz),
	        SKED_TEXTV(kind), SKED_BLOBV(payload, plen), SKED_TEXTV(queue),
	        SKED_INTV(o->priority), SKED_INTV(max_attempts),
	        SKED_TEXTV(sked_misfire_name(o->misfire)),
	        SKED_TEXTV(sked_overlap_name(o->overlap)),
	        /* ?11-?14: the unique key (schema 15), NULL for none */
	        SKED_TEXTV(u.unique_key),
	        u.unique_key ? SKED_INTV(uscope) : SKED_NULLV,
	        u.unique_key && u.unique_for_ms ? SKED_INTV(u.unique_for_ms)
	                                        : SKED_NULLV,
	        SKED_INTV(u.unique_key && u.unique_replace ? 1 : 0),
	        SKED_INTV(next), /* ?15: next fire (insert) or version */
	        SKED_INTV(next), /* ?16: next fire (update) */
	};
	/* Read, then a conditional write; a concurrent writer makes the
	 * write match nothing (or the insert hit the key), and we read
	 * again. */
	for (int attempt = 0; attempt < 5; attempt++) {
		sked_res r = {0};
		if ((rc = sked__begin(h, 0)) != SKED_OK)
			return sked__fail_db(h, rc, "cannot begin");
		rc = sked__q(h, SKED_SQL_SCHED_DEF, v, 1, &r);
		if (rc != SKED_OK) {
			sked__fail_db(h, rc, "cannot read the schedule");
			sked__rollback(h);
			return rc;
		}
		if (r.nrows == 0) {
			sked__res_clear(&r);
			v[14] = SKED_INTV(next);
			rc = sked__q(h, SKED_SQL_SCHED_INSERT, v, 15, NULL);
			if (rc == SKED_OK &&
			    (rc = sked__commit(h)) == SKED_OK) {
				if (created_out)
					*created_out = 1;
				return SKED_OK;
			}
			int unique = sked__err_kind(h) == SKED_DBE_UNIQUE;
			sked__rollback(h);
			if (unique)
				continue; /* added meanwhile: replace it */
			return sked__fail_db(h, rc, "cannot add the schedule");
		}
		int same_when = same_text(&r, 0, expr, strlen(expr)) &&
		                same_text(&r, 1, tz, strlen(tz));
		int same = same_when && same_text(&r, 2, kind, strlen(kind)) &&
		           same_text(&r, 3, payload, plen) &&
		           same_text(&r, 4, queue, strlen(queue)) &&
		           sked__res_int(&r, 0, 5) == o->priority &&
		           sked__res_int(&r, 0, 6) == max_attempts &&
		           same_text(&r, 7, sked_misfire_name(o->misfire),
		                     strlen(sked_misfire_name(o->misfire))) &&
		           same_text(&r, 8, sked_overlap_name(o->overlap),
		                     strlen(sked_overlap_name(o->overlap))) &&
		           same_opt(&r, 10, u.unique_key) &&
		           (!u.unique_key ||
		            (sked__res_int(&r, 0, 11) == uscope &&
		             sked__res_int(&r, 0, 12) == u.unique_for_ms &&
		             sked__res_int(&r, 0, 13) ==
		                     (u.unique_replace ? 1 : 0)));
		int64_t version = sked__res_int(&r, 0, 9);
		sked__res_clear(&r);
		if (same) {
			sked__rollback(h);
			return SKED_OK;
		}
		v[14] = SKED_INTV(version);
		/* the same expression and zone keep the pending next fire */
		if (same_when)
			rc = sked__q(h, SKED_SQL_SCHED_UPDATE_KEEP, v, 15,
			             NULL);
		else
			rc = sked__q(h, SKED_SQL_SCHED_UPDATE_NEXT, v, 16,
			             NULL);
		if (rc != SKED_OK) {
			sked__fail_db(h, rc, "cannot replace the schedule");
			sked__rollback(h);
			return rc;
		}
		if (sked__affected(h) != 1) {
			sked__rollback(h);
			continue; /* changed meanwhile: read again */
		}
		if ((rc = sked__commit(h)) != SKED_OK)
			return sked__fail_db(h, rc,
			                     "cannot replace the schedule");
		return SKED_OK;
	}
	return sked__fail(h, SKED_EBUSY,
	                  "schedule '%s' keeps changing under us; try again",
	                  name);
}

static int
check_name(sked *h, const char *name)
{
	if (!h || !h->db)
		return SKED_EINVAL;
	return sked__check_name(h, "schedule name", name);
}

static int
not_found(sked *h, const char *name)
{
	return sked__fail(h, SKED_ENOTFOUND, "no schedule named '%s'", name);
}

SKED_API int
sked_schedule_remove(sked *h, const char *name)
{
	int rc = check_name(h, name);
	if (rc != SKED_OK)
		return rc;
	sked_val v = SKED_TEXTV(name);
	rc = sked__q(h, SKED_SQL_SCHED_DELETE, &v, 1, NULL);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot remove the schedule");
	return sked__affected(h) == 1 ? SKED_OK : not_found(h, name);
}

SKED_API int
sked_schedule_pause(sked *h, const char *name)
{
	int rc = check_name(h, name);
	if (rc != SKED_OK)
		return rc;
	sked_val v = SKED_TEXTV(name);
	rc = sked__q(h, SKED_SQL_SCHED_PAUSE, &v, 1, NULL);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot pause the schedule");
	return sked__affected(h) == 1 ? SKED_OK : not_found(h, name);
}

SKED_API int
sked_schedule_resume(sked *h, const char *name)
{
	int rc = check_name(h, name);
	if (rc != SKED_OK)
		return rc;
	for (int attempt = 0; attempt < 5; attempt++) {
		sked_val v[3] = {SKED_TEXTV(name)};
		sked_res r = {0};
		rc = sked__q(h, SKED_SQL_SCHED_DEF, v, 1, &r);
		if (rc != SKED_OK)
			return sked__fail_db(h, rc, "cannot read the schedule");
		if (r.nrows == 0) {
			sked__res_clear(&r);
			return not_found(h, name);
		}
		sked_fire_plan p;
		char err[256] = "";
		int64_t now = 0, next = 0;
		int64_t version = sked__res_int(&r, 0, 9);
		rc = sked__fire_load(sked__res_text(&r, 0, 0),
		                     sked__res_text(&r, 0, 1), &p, err,
		                     sizeof err);
		sked__res_clear(&r);
		if (rc != SKED_OK)
			return sked__fail(h, rc, "schedule '%s': %s", name,
			                  err);
		rc = sked__now(h, &now);
		if (rc == SKED_OK)
			rc = sked__fire_next(&p, now, &next);
		sked__fire_free(&p);
		if (rc != SKED_OK)
			return rc;
		/* fires missed while paused are not misfires: continue from
		 * the first fire after now */
		v[1] = next ? SKED_INTV(next) : SKED_NULLV;
		v[2] = SKED_INTV(version);
		rc = sked__q(h, SKED_SQL_SCHED_RESUME, v, 3, NULL);
		if (rc != SKED_OK)
			return sked__fail_db(h, rc,
			                     "cannot resume the schedule");
		if (sked__affected(h) == 1)
			return SKED_OK;
		/* already enabled, or changed meanwhile */
		rc = sked__q(h, SKED_SQL_SCHED_DEF, v, 1, &r);
		if (rc != SKED_OK)
			return sked__fail_db(h, rc, "cannot read the schedule");
		int gone = r.nrows == 0;
		int moved = !gone && sked__res_int(&r, 0, 9) != version;
		sked__res_clear(&r);
		if (gone)
			return not_found(h, name);
		if (!moved)
			return SKED_OK; /* it was running already */
	}
	return sked__fail(h, SKED_EBUSY,
	                  "schedule '%s' keeps changing; try "
	                  "again",
	                  name);
}

/* ---- listing ---- */

SKED_API int
sked_schedule_list(sked *h, sked_schedule **out, size_t *n)
{
	if (!h || !h->db || !out || !n)
		return SKED_EINVAL;
	*out = NULL;
	*n = 0;
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_SCHED_LIST, NULL, 0, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot list schedules");
	if (r.nrows == 0) {
		sked__res_clear(&r);
		return SKED_OK;
	}
	sked_schedule *s = calloc((size_t)r.nrows, sizeof *s);
	int oom = !s;
	for (int i = 0; !oom && i < r.nrows; i++) {
		s[i].name = sked__res_dup(&r, i, 0, &oom);
		s[i].expr = sked__res_dup(&r, i, 1, &oom);
		s[i].tz = sked__res_dup(&r, i, 2, &oom);
		s[i].kind = sked__res_dup(&r, i, 3, &oom);
		s[i].payload = sked__res_dup(&r, i, 4, &oom);
		s[i].payload_len = s[i].payload ? sked__res_len(&r, i, 4) : 0;
		s[i].queue = sked__res_dup(&r, i, 5, &oom);
		s[i].priority = (int)sked__res_int(&r, i, 6);
		s[i].max_attempts = (int)sked__res_int(&r, i, 7);
		s[i].misfire = sked_misfire_parse(sked__res_text(&r, i, 8));
		s[i].overlap = sked_overlap_parse(sked__res_text(&r, i, 9));
		s[i].enabled = sked__res_int(&r, i, 10) != 0;
		s[i].next_fire_ms = sked__res_int(&r, i, 11);
		s[i].last_fire_ms = sked__res_int(&r, i, 12);
	}
	int rows = r.nrows;
	sked__res_clear(&r);
	if (oom) {
		sked_schedules_free(s, s ? (size_t)rows : 0);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	*out = s;
	*n = (size_t)rows;
	return SKED_OK;
}

SKED_API void
sked_schedules_free(sked_schedule *s, size_t n)
{
	if (!s)
		return;
	for (size_t i = 0; i < n; i++) {
		free(s[i].name);
		free(s[i].expr);
		free(s[i].tz);
		free(s[i].kind);
		free(s[i].payload);
		free(s[i].queue);
	}
	free(s);
}

SKED_API int
sked_schedule_uniques(sked *h, sked_schedule_unique **out, size_t *n)
{
	if (!h || !h->db || !out || !n)
		return SKED_EINVAL;
	*out = NULL;
	*n = 0;
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_SCHED_LIST, NULL, 0, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot list schedules");
	sked_schedule_unique *u = calloc((size_t)r.nrows + 1, sizeof *u);
	int oom = !u;
	size_t k = 0;
	for (int i = 0; !oom && i < r.nrows; i++) {
		if (sked__res_null(&r, i, 13))
			continue;
		u[k].name = sked__res_dup(&r, i, 0, &oom);
		u[k].key = sked__res_dup(&r, i, 13, &oom);
		u[k].scope = (int)sked__res_int(&r, i, 14);
		u[k].for_ms = sked__res_int(&r, i, 15);
		u[k].replace = sked__res_int(&r, i, 16) != 0;
		k++;
	}
	sked__res_clear(&r);
	if (oom) {
		sked_schedule_uniques_free(u, u ? k + 1 : 0);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	*out = u;
	*n = k;
	return SKED_OK;
}

SKED_API void
sked_schedule_uniques_free(sked_schedule_unique *u, size_t n)
{
	if (!u)
		return;
	for (size_t i = 0; i < n; i++) {
		free(u[i].name);
		free(u[i].key);
	}
	free(u);
}

/* ---- a fire's task, under the schedule's unique key ---- */

/* A schedule's unique key as its row says (schema 15); key NULL: none. */
typedef struct sched_unique {
	const char *key;
	int scope, replace;
	int64_t for_ms;
} sched_unique;

static sched_unique
unique_of(const sked_res *r, int row, int col)
{
	sched_unique u = {0};
	if (sked__res_null(r, row, col))
		return u;
	u.key = sked__res_text(r, row, col);
	u.scope = (int)sked__res_int(r, row, col + 1);
	u.for_ms = sked__res_int(r, row, col + 2);
	u.replace = sked__res_int(r, row, col + 3) != 0;
	if (u.for_ms > 0)
		u.scope = SKED_UNIQUE_PERIOD;
	else if (u.scope == SKED_UNIQUE_PERIOD)
		u.scope = SKED_UNIQUE_LIVE; /* no period: cannot be */
	return u;
}

/* The task of one fire (t: the seven values of SKED_SQL_SCHED_TASK) with
 * the schedule's unique key, in the caller's transaction, as sked_enqueue
 * would enqueue it (enqueue.c, docs/unique.md). The live and pending
 * scopes: the key's holder is looked up first, by the index the insert
 * would hit, so a held key does not spoil the transaction (PostgreSQL);
 * held, the fire makes nothing (*held = 1, *id = the holder), or with
 * replace the waiting holder takes the payload and run-at now
 * (*replaced = 1). Free, the task is inserted with the key; an enqueue
 * that takes the key in between makes the insert fail on the unique
 * index, and the caller treats that as a fire enqueued already. The
 * period scope: the task inserted, then the key's {p}unique_for row
 * upserted and read back; held by another task, the new task is deleted
 * again (*held = 1). */
static int
unique_fire(sked *h, const sched_unique *u, const sked_val *t, int64_t *id,
            int *held, int *replaced)
{
	sked_val k = SKED_TEXTV(u->key);
	int64_t holder = 0;
	*id = 0;
	*held = *replaced = 0;
	int rc;
	if (u->scope != SKED_UNIQUE_PERIOD) {
		if ((rc = sked__one_id(h, SKED_SQL_UNIQUE_HELD, &k, 1,
		                       &holder)) != SKED_OK)
			return rc;
		if (holder) {
			*held = 1;
			*id = holder;
			if (!u->replace)
				return SKED_OK;
			sked_val p[3] = {SKED_INTV(holder), t[2], SKED_INTV(0)};
			rc = sked__q(h, SKED_SQL_UNIQUE_REPLACE_IN, p, 3, NULL);
			*replaced = rc == SKED_OK && sked__affected(h) > 0;
			return rc;
		}
	}
	sked_val v[9];
	memcpy(v, t, sizeof *v * 7);
	v[7] = k;
	v[8] = u->scope ? SKED_INTV(u->scope) : SKED_NULLV;
	if ((rc = sked__q(h, SKED_SQL_SCHED_TASK_UNIQUE, v, 9, NULL)) !=
	    SKED_OK)
		return rc;
	/* the new task, by its (schedule, fire time) */
	sked_val f[2] = {t[5], t[6]};
	if ((rc = sked__one_id(h, SKED_SQL_SCHED_FIRE_ID, f, 2, id)) !=
	            SKED_OK ||
	    u->scope != SKED_UNIQUE_PERIOD)
		return rc;
	sked_val p[3] = {k, SKED_INTV(*id), SKED_INTV(u->for_ms)};
	if ((rc = sked__q(h, SKED_SQL_UNIQUE_FOR_PUT, p, 3, NULL)) != SKED_OK ||
	    (rc = sked__one_id(h, SKED_SQL_UNIQUE_FOR_GET, &k, 1, &holder)) !=
	            SKED_OK)
		return rc;
	if (holder == *id)
		return SKED_OK;
	sked_val d = SKED_INTV(*id);
	if ((rc = sked__q(h, SKED_SQL_ENQ_UNDO, &d, 1, NULL)) != SKED_OK)
		return rc;
	*held = 1;
	*id = holder;
	return SKED_OK;
}

/* ---- the tick ---- */

/* One due schedule, as read. Strings point into the result. */
typedef struct due {
	const char *name, *expr, *tz, *kind, *payload, *queue;
	size_t payload_len;
	int priority, max_attempts, misfire, overlap;
	int64_t next_fire, version;
	sched_unique unique; /* key NULL: none */
} due;

static int
disable(sked *h, const due *d, const char *why)
{
	sked__log(SKED_LOG_ERROR, "schedule %s disabled: %s", d->name, why);
	sked_val v[2] = {SKED_TEXTV(d->name), SKED_INTV(d->version)};
	return sked__q(h, SKED_SQL_SCHED_DISABLE, v, 2, NULL);
}

/* The fires to enqueue now and the next fire after them (fire.c's
 * arithmetic), saying what a misfire did. */
static int
plan_fires(const due *d, const sked_fire_plan *p, int64_t now, int64_t *fires,
           int *n, int64_t *next, int *misfired)
{
	sked_fire_result r;
	int rc = sked__fire_due(p, d->next_fire, d->misfire, now, &r);
	*n = 0;
	*misfired = 0;
	if (rc != SKED_OK)
		return rc;
	memcpy(fires, r.fires, sizeof *fires * (size_t)r.n);
	*n = r.n;
	*next = r.next;
	if (r.clock_case == SKED_FIRE_ON_TIME ||
	    r.clock_case == SKED_FIRE_CLOCK_BACK)
		return SKED_OK;
	*misfired = 1;
	if (r.clock_case == SKED_FIRE_MISFIRE_ALL && r.missed != r.n)
		sked__log(SKED_LOG_WARN,
		          "schedule %s missed more than %d fires: only "
		          "the latest %d are enqueued",
		          d->name, SKED_MAX_CATCHUP, SKED_MAX_CATCHUP);
	char buf[32];
	sked__log(SKED_LOG_INFO,
	          "schedule %s misfired (next fire was %s): %s, %d catch-up "
	          "task(s)",
	          d->name, sked_format_time(d->next_fire, buf, sizeof buf),
	          sked_misfire_name(d->misfire), *n);
	return SKED_OK;
}

/* Claim and enqueue the fires of one due schedule. *fired gets the tasks
 * made. Someone else having claimed them first is not an error. */
static int
fire_one_tx(sked *h, const due *d, int64_t now, int *fired)
{
	*fired = 0;
	sked_fire_plan p;
	char err[256] = "";
	int rc = sked__fire_load(d->expr, d->tz, &p, err, sizeof err);
	if (rc == SKED_ENOMEM)
		return rc;
	if (rc != SKED_OK) /* the zone left the tz database, say */
		return disable(h, d, err);
	int64_t fires[SKED_MAX_CATCHUP], next = 0;
	int n = 0, misfired = 0;
	rc = plan_fires(d, &p, now, fires, &n, &next, &misfired);
	sked__fire_free(&p);
	if (rc != SKED_OK)
		return rc;

	for (int pass = 0; pass < 2; pass++) {
		/* pass 1 (only after a duplicate fire): claim without tasks */
		if ((rc = sked__begin(h, 0)) != SKED_OK)
			return rc;
		sked_val c[3] = {SKED_TEXTV(d->name), SKED_INTV(d->version),
		                 next ? SKED_INTV(next) : SKED_NULLV};
		rc = sked__q(h, SKED_SQL_SCHED_CLAIM, c, 3, NULL);
		if (rc != SKED_OK || sked__affected(h) != 1) {
			/* another node claimed these fires (or the schedule
			 * changed): nothing to do */
			sked__rollback(h);
			return rc;
		}
		int made = 0, skipped = 0, merged = 0, fire_ended = 0;
		int64_t last = 0;
		for (int i = 0; pass == 0 && rc == SKED_OK && i < n; i++) {
			if (d->overlap == SKED_OVERLAP_SKIP) {
				sked_val a = SKED_TEXTV(d->name);
				sked_res r = {0};
				rc = sked__q(h, SKED_SQL_SCHED_ACTIVE, &a, 1,
				             &r);
				int busy = r.nrows > 0;
				sked__res_clear(&r);
				if (rc != SKED_OK)
					break;
				if (busy) {
					skipped++;
					continue;
				}
			}
			sked_val t[7] = {
			        SKED_TEXTV(d->queue),
			        SKED_TEXTV(d->kind),
			        SKED_BLOBV(d->payload, d->payload_len),
			        SKED_INTV(d->priority),
			        SKED_INTV(d->max_attempts),
			        SKED_TEXTV(d->name),
			        SKED_INTV(fires[i]),
			};
			int held = 0, replaced = 0;
			if (d->unique.key) {
				int64_t tid = 0;
				rc = unique_fire(h, &d->unique, t, &tid, &held,
				                 &replaced);
				if (rc == SKED_OK && held) {
					/* its key is held: as an overlap skip,
					 * or the holder debounced */
					merged += replaced;
					skipped += !replaced;
					continue;
				}
			} else
				rc = sked__q(h, SKED_SQL_SCHED_TASK, t, 7,
				             NULL);
			if (rc == SKED_OK) {
				made++;
				last = fires[i];
			}
			/* The unique index sees live tasks only; an ended
			 * task of this fire is in {p}task_done. Looked for in
			 * a new statement after the insert, so a move that
			 * committed before it is seen (as enqueue_unique does
			 * for a unique key, enqueue.c). */
			sked_val df[2] = {SKED_TEXTV(d->name),
			                  SKED_INTV(fires[i])};
			sked_res dr = {0};
			if (rc == SKED_OK)
				rc = sked__q(h, SKED_SQL_DONE_FIRE, df, 2, &dr);
			fire_ended = rc == SKED_OK && dr.nrows > 0;
			sked__res_clear(&dr);
			if (fire_ended)
				break;
		}
		if (rc == SKED_OK && fire_ended) {
			sked__rollback(h);
			sked__log(
			        SKED_LOG_WARN,
			        "schedule %s: a fire was already enqueued and "
			        "has ended; moving on without enqueuing it "
			        "twice",
			        d->name);
			continue;
		}
		if (rc == SKED_OK && made) {
			sked_val l[2] = {SKED_TEXTV(d->name), SKED_INTV(last)};
			rc = sked__q(h, SKED_SQL_SCHED_LAST_FIRE, l, 2, NULL);
			if (rc == SKED_OK)
				rc = sked__wake(h, sked__wake_r(), made,
				                d->queue, d->kind);
		}
		if (rc == SKED_OK)
			rc = sked__commit(h);
		if (rc == SKED_OK) {
			*fired = made;
			sked__count(SKED__COUNT_SKIPS, skipped);
			/* counted by the node whose claim of the misfire won */
			sked__count(SKED__COUNT_MISFIRES, misfired);
			if (skipped && d->unique.key)
				sked__log(
				        SKED_LOG_INFO,
				        "schedule %s: %d fire(s) skipped, its "
				        "unique key '%s' is held (%s)",
				        d->name, skipped, d->unique.key,
				        d->unique.scope == SKED_UNIQUE_PERIOD
				                ? "unique for a period"
				                : "unique key");
			else if (skipped)
				sked__log(
				        SKED_LOG_INFO,
				        "schedule %s: %d fire(s) skipped, its "
				        "previous task is not finished "
				        "(overlap skip)",
				        d->name, skipped);
			if (merged)
				sked__log(SKED_LOG_INFO,
				          "schedule %s: %d fire(s) merged into "
				          "the waiting task that holds unique "
				          "key '%s' (replace)",
				          d->name, merged, d->unique.key);
			return SKED_OK;
		}
		int dup = sked__err_kind(h) == SKED_DBE_UNIQUE;
		sked__rollback(h);
		if (!dup)
			return rc;
		/* The second guard held: a task for one of these fires exists
		 * already (the database clock went back, say). Move past
		 * them without enqueuing again. */
		sked__log(SKED_LOG_WARN,
		          "schedule %s: a fire was already enqueued; moving on "
		          "without enqueuing it twice",
		          d->name);
	}
	return SKED_OK;
}

/* The claim transaction is where a tick may wait on a schedule row that
 * another session holds: marked for the worker's lock-wait watchdog. */
static int
fire_one(sked *h, const due *d, int64_t now, int *fired)
{
	sked__wait_begin(h, SKED_WAIT_SCHEDULE, d->name);
	int rc = fire_one_tx(h, d, now, fired);
	sked__wait_end(h);
	return rc;
}

/* The earliest next fire of an enabled schedule and the database's now. */
static int
earliest(sked *h, int64_t *next, int64_t *now)
{
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_SCHED_EARLIEST, NULL, 0, &r);
	if (rc != SKED_OK)
		return rc;
	*next = r.nrows ? sked__res_int(&r, 0, 0) : 0;
	*now = r.nrows ? sked__res_int(&r, 0, 1) : 0;
	sked__res_clear(&r);
	return SKED_OK;
}

static int
tick(sked *h, int *fired, int64_t *next, int64_t *now)
{
	*fired = 0;
	int rc = earliest(h, next, now);
	if (rc != SKED_OK || *next == 0 || *next > *now)
		return rc;
	sked_val lim = SKED_INTV(DUE_BATCH);
	sked_res r = {0};
	rc = sked__q(h, SKED_SQL_SCHED_DUE, &lim, 1, &r);
	if (rc != SKED_OK)
		return rc;
	for (int i = 0; rc == SKED_OK && i < r.nrows; i++) {
		due d = {
		        .name = sked__res_text(&r, i, 0),
		        .expr = sked__res_text(&r, i, 1),
		        .tz = sked__res_text(&r, i, 2),
		        .kind = sked__res_text(&r, i, 3),
		        .payload = sked__res_text(&r, i, 4),
		        .payload_len = sked__res_len(&r, i, 4),
		        .queue = sked__res_text(&r, i, 5),
		        .priority = (int)sked__res_int(&r, i, 6),
		        .max_attempts = (int)sked__res_int(&r, i, 7),
		        .misfire = sked_misfire_parse(sked__res_text(&r, i, 8)),
		        .overlap = sked_overlap_parse(sked__res_text(&r, i, 9)),
		        .next_fire = sked__res_int(&r, i, 10),
		        .version = sked__res_int(&r, i, 11),
		        .unique = unique_of(&r, i, 13),
		};
		int64_t t_now = sked__res_int(&r, i, 12);
		if (!d.payload)
			d.payload = "";
		if (d.misfire < 0)
			d.misfire = SKED_MISFIRE_FIRE_ONCE;
		if (d.overlap < 0)
			d.overlap = SKED_OVERLAP_ALLOW;
		int made = 0;
		rc = fire_one(h, &d, t_now, &made);
		*fired += made;
		sked__count(SKED__COUNT_FIRES, made);
	}
	sked__res_clear(&r);
	if (rc != SKED_OK)
		return rc;
	return earliest(h, next, now);
}

SKED_API int
sked_schedule_tick(sked *h, int *fired, int64_t *next_ms)
{
	if (!h || !h->db)
		return SKED_EINVAL;
	int f = 0;
	int64_t next = 0, now = 0;
	int rc = tick(h, &f, &next, &now);
	if (fired)
		*fired = f;
	if (next_ms)
		*next_ms = next;
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "schedule tick failed");
	return SKED_OK;
}

int64_t
sked__sched_poll(sked *h, sked_sched_clock *c, int64_t mono_ms)
{
	if (mono_ms < c->next_mono_ms)
		return c->next_mono_ms - mono_ms;
	int fired = 0;
	int64_t next = 0, now = 0, wait = SKED__SCHED_MAX_MS;
	int rc = tick(h, &fired, &next, &now);
	if (rc != SKED_OK) {
		if (!c->failing)
			sked__log(SKED_LOG_WARN, "schedule tick failed: %s",
			          sked__db_err(h->db)->msg[0]
			                  ? sked__db_err(h->db)->msg
			                  : sked_strerror(rc));
		c->failing = 1;
	} else {
		if (c->failing)
			sked__log(SKED_LOG_INFO, "schedule ticks work again");
		c->failing = 0;
		if (fired)
			sked__log(SKED_LOG_DEBUG, "schedules made %d task(s)",
			          fired);
		if (next != 0)
			wait = next - now;
	}
	if (wait < SKED__SCHED_MIN_MS)
		wait = SKED__SCHED_MIN_MS;
	if (wait > SKED__SCHED_MAX_MS)
		wait = SKED__SCHED_MAX_MS;
	c->next_mono_ms = mono_ms + wait;
	return wait;
}

/* ---- running a schedule now (`sked cron run`) ---- */

/* A manual run's fire time: the database's now, moved off a whole
 * second. Every cron fire lies on a whole second (no cron field is finer),
 * so a manual run never takes a cron fire's place in the unique
 * (schedule_name, fire_time) index, and a cron fire never finds its place
 * taken by a manual run. A run that finds its millisecond taken (runs in
 * quick succession) goes on after the latest fire time taken. */
static int64_t
manual_fire(int64_t t)
{
	return t % 1000 == 0 ? t + 1 : t;
}

/* One attempt: in one transaction, read the definition, insert its task
 * at fire time *fire and read back its id. *taken = 1 when that fire time
 * holds a task already (live: the unique index; ended: {p}task_done). */
static int
run_tx(sked *h, const char *name, int64_t *fire, int64_t *id, int *taken)
{
	sked_val v = SKED_TEXTV(name);
	sked_res r = {0};
	int64_t now = 0;
	int held = 0, replaced = 0;
	*taken = 0;
	int rc = sked__begin(h, 0);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot run the schedule");
	rc = sked__q(h, SKED_SQL_SCHED_DEF, &v, 1, &r);
	if (rc == SKED_OK && r.nrows == 0) {
		sked__res_clear(&r);
		sked__rollback(h);
		return not_found(h, name);
	}
	if (rc == SKED_OK)
		rc = sked__now(h, &now);
	if (rc == SKED_OK) {
		*fire = manual_fire(now > *fire ? now : *fire);
		const char *payload = sked__res_text(&r, 0, 3);
		sked_val t[7] = {
		        SKED_TEXTV(sked__res_text(&r, 0, 4)),
		        SKED_TEXTV(sked__res_text(&r, 0, 2)),
		        SKED_BLOBV(payload ? payload : "",
		                   payload ? sked__res_len(&r, 0, 3) : 0),
		        SKED_INTV(sked__res_int(&r, 0, 5)),
		        SKED_INTV(sked__res_int(&r, 0, 6)),
		        SKED_TEXTV(name),
		        SKED_INTV(*fire),
		};
		sched_unique u = unique_of(&r, 0, 10);
		if (u.key)
			rc = unique_fire(h, &u, t, id, &held, &replaced);
		else
			rc = sked__q(h, SKED_SQL_SCHED_TASK, t, 7, NULL);
		if (rc != SKED_OK && sked__err_kind(h) == SKED_DBE_UNIQUE)
			*taken = 1;
	}
	sked__res_clear(&r);
	if (rc == SKED_OK && held) {
		/* the key's holder answers, as sked_enqueue's would */
		if ((rc = sked__commit(h)) == SKED_OK)
			return SKED_OK;
		sked__rollback(h);
		return sked__fail_db(h, rc, "cannot run the schedule");
	}
	/* the task of this fire, live (just made) or ended already */
	sked_val f[2] = {SKED_TEXTV(name), SKED_INTV(*fire)};
	if (rc == SKED_OK) {
		rc = sked__q(h, SKED_SQL_DONE_FIRE, f, 2, &r);
		*taken = rc == SKED_OK && r.nrows > 0;
		sked__res_clear(&r);
	}
	if (rc == SKED_OK && !*taken) {
		rc = sked__q(h, SKED_SQL_SCHED_FIRE_ID, f, 2, &r);
		*id = rc == SKED_OK && r.nrows == 1 ? sked__res_int(&r, 0, 0)
		                                    : 0;
		sked__res_clear(&r);
	}
	if (rc == SKED_OK && !*taken)
		rc = sked__wake(h, sked__wake_r(), 1, NULL, NULL);
	if (rc == SKED_OK && !*taken)
		rc = sked__commit(h);
	if (rc == SKED_OK && !*taken)
		return SKED_OK;
	sked__rollback(h);
	if (*taken)
		return SKED_OK;
	return sked__fail_db(h, rc, "cannot run the schedule");
}

/* Past the latest fire time at or after *fire that a task of the
 * schedule holds, live or ended: runs in quick succession go on from the
 * last one instead of trying each taken millisecond in turn. */
static int
past_taken(sked *h, const char *name, int64_t *fire)
{
	int64_t latest = *fire;
	for (int done = 0; done < 2; done++) {
		sked_val v[2] = {SKED_TEXTV(name), SKED_INTV(*fire)};
		sked_res r = {0};
		int rc = sked__q(h,
		                 done ? SKED_SQL_SCHED_FIRE_MAX_DONE
		                      : SKED_SQL_SCHED_FIRE_MAX,
		                 v, 2, &r);
		if (rc != SKED_OK)
			return sked__fail_db(h, rc, "cannot run the schedule");
		int64_t t = r.nrows > 0 ? sked__res_int(&r, 0, 0) : 0;
		sked__res_clear(&r);
		if (t > latest)
			latest = t;
	}
	*fire = latest + 1;
	return SKED_OK;
}

SKED_API int
sked_schedule_run(sked *h, const char *name, int64_t *id_out)
{
	int rc = check_name(h, name);
	if (rc != SKED_OK)
		return rc;
	int64_t fire = 0, id = 0;
	for (int attempt = 0; attempt < 5; attempt++) {
		int taken = 0;
		rc = run_tx(h, name, &fire, &id, &taken);
		if (rc != SKED_OK)
			return rc;
		if (!taken) {
			if (id_out)
				*id_out = id;
			return SKED_OK;
		}
		/* that millisecond has a task (another run in the same one,
		 * or a run racing this one): go on after the latest */
		if ((rc = past_taken(h, name, &fire)) != SKED_OK)
			return rc;
	}
	return sked__fail(h, SKED_EBUSY,
	                  "schedule '%s' is being run too often at once; "
	                  "try again",
	                  name);
}
