/*
 * handle.c — the handle core: failing, querying, transactions, the
 * database's clock, reconnecting, a second connection like a handle
 * (sked__clone, the worker's), and the one rule for trying again.
 *
 * Layer: below the model (queue.c, lease.c, sched.c, lock.c, gauges.c,
 * schema.c) and the claim strategies, above the driver seam (db.h). It
 * calls down only, into db.c for statements (rendered once per handle
 * by api.c from the dialect registry), never into api.c, the dialect
 * layer or the model. api.c builds a
 * handle and hands it to the layers that use this file.
 */
#include "handle/handle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/clock.h"
#include "util/ident.h"
#include "util/log.h"

/* ---- errors on a handle ---- */

int
sked__fail(sked *h, int rc, const char *fmt, ...)
{
	if (!h)
		return rc;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(h->errmsg, sizeof h->errmsg, fmt, ap);
	va_end(ap);
	/* one line, always */
	for (char *c = h->errmsg; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	return rc;
}

int
sked__check_name(sked *h, const char *what, const char *s)
{
	if (s && sked__name_valid(s))
		return SKED_OK;
	return sked__fail(h, SKED_EINVAL,
	                  "%s '%.64s' is not a valid name (letters, digits, "
	                  "'_', '.', ':', '-'; at most %d bytes)",
	                  what, s ? s : "", SKED_MAX_NAME);
}

int
sked__fail_db(sked *h, int rc, const char *context)
{
	return sked__fail(h, rc, "%s: %s", context, sked__db_err(h->db)->msg);
}

SKED_API const char *
sked_errmsg(const sked *h)
{
	if (!h)
		return "out of memory";
	return h->errmsg[0] ? h->errmsg : "no error";
}

/* ---- statements ---- */

int
sked__q(sked *h, sked_sql id, const sked_val *p, int np, sked_res *res)
{
	if (!h->sql[id])
		return sked__fail(h, SKED_EUNSUPPORTED,
		                  "statement %d has no text for the %s dialect",
		                  (int)id, h->dialect->name);
	return sked__db_exec(h->db, (int)id, h->sql[id], p, np, res);
}

int
sked__qdyn(sked *h, const char *sql, const sked_val *p, int np, sked_res *res)
{
	return sked__db_exec(h->db, -1, sql, p, np, res);
}

int
sked__begin(sked *h, int claim)
{
	if (h->borrowed) /* the application's transaction decides */
		return SKED_OK;
	const char *sql = claim ? h->dialect->begin_claim : h->dialect->begin;
	int rc = sked__db_tx(h->db, SKED_TX_BEGIN, sql);
	if (rc == SKED_OK)
		h->in_tx = 1;
	return rc;
}

int
sked__commit(sked *h)
{
	if (h->borrowed)
		return SKED_OK;
	int rc = sked__db_tx(h->db, SKED_TX_COMMIT, h->dialect->commit);
	if (rc == SKED_OK)
		h->in_tx = 0;
	else
		sked__rollback(h);
	return rc;
}

void
sked__rollback(sked *h)
{
	if (!h->in_tx)
		return;
	/* the first error is the one to report, not the rollback's */
	sked__db_rollback_keep_err(h->db, h->dialect->rollback);
	h->in_tx = 0;
}

int
sked__now(sked *h, int64_t *ms)
{
	sked_res r = {0};
	int rc = sked__q(h, SKED_SQL_NOW, NULL, 0, &r);
	if (rc == SKED_OK && r.nrows == 1)
		*ms = sked__res_int(&r, 0, 0);
	else if (rc == SKED_OK)
		rc = SKED_EDB;
	sked__res_clear(&r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot read the database clock");
	return SKED_OK;
}

SKED_API int
sked_now(sked *h, int64_t *now_ms)
{
	if (!h || !now_ms)
		return SKED_EINVAL;
	return sked__now(h, now_ms);
}

/* ---- connections ---- */

int
sked__reconnect(sked *h)
{
	if (h->borrowed)
		return sked__fail(h, SKED_EUNAVAILABLE,
		                  "the application's connection is broken");
	char err[512];
	sked_db *db = NULL;
	int rc = sked__db_open(h->url, &db, err, sizeof err);
	if (rc != SKED_OK)
		return sked__fail(h, rc, "%s", err);
	sked__db_close(h->db);
	h->db = db;
	h->backend_id = 0; /* a new connection: ask again */
	if (h->dialect->session_init)
		sked__ignore(
		        sked__qdyn(h, h->dialect->session_init, NULL, 0, NULL));
	if (h->app_name[0])
		sked__worker_session(h, h->app_name);
	/* a worker that listened for new tasks listens again */
	if (h->listening && h->listen_sql &&
	    sked__qdyn(h, h->listen_sql, NULL, 0, NULL) != SKED_OK)
		h->listening = 0;
	return SKED_OK;
}

/* ---- a second connection like a handle ---- */

static char *
dup_or_null(const char *s, int *oom)
{
	char *c = s ? strdup(s) : NULL;
	if (s && !c)
		*oom = 1;
	return c;
}

int
sked__clone(const sked *h, sked **out)
{
	sked *c = calloc(1, sizeof *c);
	*out = c;
	if (!c)
		return SKED_ENOMEM;
	if (h->borrowed || !h->url || !h->dialect || !h->strategy)
		return sked__fail(c, SKED_EINVAL,
		                  "only a handle sked opened itself can be "
		                  "cloned");
	/* what detection, the choice of strategy, rendering and the schema
	 * check found for h holds for another connection to its database */
	c->dialect = h->dialect;
	c->strategy = h->strategy;
	c->decision = h->decision;
	c->opts = h->opts;
	c->schema_version = h->schema_version;
	memcpy(c->prefix, h->prefix, sizeof c->prefix);
	memcpy(c->url_redacted, h->url_redacted, sizeof c->url_redacted);
	memcpy(c->product, h->product, sizeof c->product);
	memcpy(c->version, h->version, sizeof c->version);
	memcpy(c->reason, h->reason, sizeof c->reason);
	memcpy(c->strategy_opt, h->strategy_opt, sizeof c->strategy_opt);
	/* copies, not shared: each handle frees its own (sked_close) */
	int oom = 0;
	c->url = dup_or_null(h->url, &oom);
	for (int i = 0; i < SKED_SQL__COUNT; i++)
		c->sql[i] = dup_or_null(h->sql[i], &oom);
	c->listen_sql = dup_or_null(h->listen_sql, &oom);
	c->notify_sql = dup_or_null(h->notify_sql, &oom);
	if (oom)
		return sked__fail(c, SKED_ENOMEM, "out of memory");
	/* the connection and its session: what every connection needs */
	char err[512];
	int rc = sked__db_open(c->url, &c->db, err, sizeof err);
	if (rc != SKED_OK)
		return sked__fail(c, rc, "%s", err);
	if (c->dialect->session_init) {
		rc = sked__qdyn(c, c->dialect->session_init, NULL, 0, NULL);
		if (rc != SKED_OK)
			return sked__fail_db(c, rc,
			                     "cannot set up the session");
	}
	if (h->app_name[0])
		sked__worker_session(c, h->app_name);
	return SKED_OK;
}

/* ---- the lock-wait watchdog's marks ---- */

/* Behind a transaction pooler (sked_pooling=transaction, or one the
 * driver found) a session's id and name hold for one transaction only:
 * neither is asked nor set. */
static int
pooled(const sked *h)
{
	return sked__db_pooled(h->db);
}

void
sked__wait_begin(sked *h, int what, const char *row)
{
	sked_wait_slot *s = h->wait;
	if (!s)
		return;
	/* asked outside a transaction only (a failed statement would end
	 * it on PostgreSQL): a mark inside one waits for a later mark */
	if (h->backend_id == 0 && !h->in_tx) {
		h->backend_id = -1;
		sked_res r = {0};
		if ((h->dialect->caps & SKED_CAP_WAIT_HOLDER) && !pooled(h) &&
		    sked__q(h, SKED_SQL_BACKEND_ID, NULL, 0, &r) == SKED_OK &&
		    r.nrows == 1)
			h->backend_id = sked__res_int(&r, 0, 0);
		sked__res_clear(&r);
	}
	pthread_mutex_lock(&s->mu);
	s->what = what;
	snprintf(s->row, sizeof s->row, "%s", row ? row : "");
	s->backend = h->backend_id > 0 ? h->backend_id : 0;
	snprintf(s->where, sizeof s->where, "%s", h->url_redacted);
	s->seq++;
	s->since_ms = sked__mono_ms();
	pthread_mutex_unlock(&s->mu);
}

void
sked__wait_end(sked *h)
{
	sked_wait_slot *s = h->wait;
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	s->since_ms = 0;
	pthread_mutex_unlock(&s->mu);
}

void
sked__worker_session(sked *h, const char *name)
{
	if (name != h->app_name)
		snprintf(h->app_name, sizeof h->app_name, "%s", name);
	/* Never on the application's own connection (sked_wrap), nor behind
	 * a transaction pooler (the setting would stay with a server session
	 * other clients share), nor inside a transaction. */
	if (pooled(h) || h->in_tx || h->borrowed || !h->app_name[0])
		return;
	sked_res r = {0};
	if (h->dialect->caps & SKED_CAP_GENERIC_PLANS) {
		sked__ignore(sked__q(h, SKED_SQL_GENERIC_PLANS, NULL, 0, &r));
		sked__res_clear(&r);
	}
	/* where the operator named the sessions (application_name in the
	 * URL, or libpq's PGAPPNAME), theirs wins */
	if (!(h->dialect->caps & SKED_CAP_APP_NAME) ||
	    strstr(h->url_redacted, "application_name=") || getenv("PGAPPNAME"))
		return;
	sked_val v = SKED_TEXTV(h->app_name);
	sked__ignore(sked__q(h, SKED_SQL_APP_NAME, &v, 1, &r));
	sked__res_clear(&r);
}

/* ---- trying again ---- */

/* A claim, a finish or a lease renewal that the database rolled back as a
 * deadlock (MySQL 1213, a Galera certification failure), a lock wait
 * timeout (1205) or a busy SQLite database is tried again whole, a few
 * times, after a short random pause so that the two sides of a deadlock
 * do not meet again. Never on a borrowed connection: its transaction is
 * the application's to retry. */
int
sked__refused_value(const sked *h, int rc)
{
	return rc == SKED_EDB && h->db &&
	       sked__db_err(h->db)->kind == SKED_DBE_DATA;
}

int
sked__retry_pause(sked *h, int rc, int attempt, int tries, const char *what)
{
	if (rc != SKED_EBUSY || sked__db_err(h->db)->kind != SKED_DBE_RETRY ||
	    h->borrowed || attempt >= tries)
		return 0;
	sked__rollback(h);
	h->retries++;
	sked__log(SKED_LOG_DEBUG,
	          "%s: try %d of %d failed (%s); trying again (%lu retries "
	          "on this handle)",
	          what, attempt, tries, h->errmsg, h->retries);
	/* 2..12 ms, then 4..24 ms: short next to a claim's own lock waits */
	long ms = (2 + random() % 11) * attempt;
	struct timespec ts = {0, ms * 1000000L};
	nanosleep(&ts, NULL);
	return 1;
}
