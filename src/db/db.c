/*
 * db.c — the one file that calls drivers.
 *
 * Layer: the driver seam (see db.h). Everything that must hold for every
 * driver lives here: picking the driver from the URL scheme, argument
 * asserts, SQL tracing (SKED_TRACE_SQL=1 logs each statement at debug
 * level), mapping driver error kinds to status codes, and fault injection
 * for tests. The result-set helpers are in driver/result.c.
 */
#include "db/db.h"
#include "db/driver/driver.h"
#include "dialect/dialect.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "util/url.h"

/* The statement id is the drivers' prepared-statement cache slot. */
_Static_assert(SKED_SQL__COUNT <= SKED_STMT_SLOTS,
               "more statements than the drivers' statement cache holds");

/* ---- fault injection ---- */

static atomic_int fault_countdown;
static atomic_int fault_kind;

void
sked__db_fault_after(int nth, sked_dbe_kind kind)
{
	atomic_store(&fault_kind, (int)kind);
	atomic_store(&fault_countdown, nth);
}

static int
fault_fires(void)
{
	int n = atomic_load(&fault_countdown);
	while (n > 0) {
		if (atomic_compare_exchange_weak(&fault_countdown, &n, n - 1))
			return n == 1;
	}
	return 0;
}

/* ---- connections ---- */

static const sked_driver *
driver_for(sked_url_kind kind)
{
	switch (kind) {
	case SKED_URL_SQLITE:
		return &sked__driver_sqlite;
	case SKED_URL_POSTGRES:
#ifdef SKED_HAVE_PG
		return &sked__driver_pg;
#else
		return NULL;
#endif
	case SKED_URL_MYSQL:
#ifdef SKED_HAVE_MYSQL
		return &sked__driver_mysql;
#else
		return NULL;
#endif
	case SKED_URL_ODBC:
#ifdef SKED_HAVE_ODBC
		return &sked__driver_odbc;
#else
		return NULL;
#endif
	}
	return NULL;
}

int
sked__db_open(const char *url, sked_db **out, char *err, size_t errlen)
{
	*out = NULL;
	sked_url u;
	int rc = sked__url_parse(url, &u, err, errlen);
	if (rc != SKED_OK)
		return rc;
	const sked_driver *drv = driver_for(u.kind);
	sked__url_free(&u);
	if (!drv) {
		snprintf(err, errlen,
		         "this build of sked has no driver for that URL scheme "
		         "(built: %s)",
		         SKED_BUILT_DRIVERS);
		return SKED_EUNSUPPORTED;
	}
	sked_db *db = calloc(1, sizeof *db);
	if (!db) {
		snprintf(err, errlen, "out of memory");
		return SKED_ENOMEM;
	}
	db->drv = drv;
	const char *t = getenv("SKED_TRACE_SQL");
	db->trace = t && *t && *t != '0';
	rc = drv->connect(url, &db->conn, &db->err);
	if (rc != SKED_OK || !db->conn) {
		/* a driver may echo the URL, or the piece it could not read */
		snprintf(err, errlen, "%s", db->err.msg);
		sked__url_scrub(url, err, errlen);
		/* a URL the driver cannot read stays the user's error */
		rc = rc == SKED_EURL                     ? SKED_EURL
		     : db->err.kind == SKED_DBE_NOMEM    ? SKED_ENOMEM
		     : db->err.kind == SKED_DBE_READONLY ? SKED_EREADONLY
		     : db->err.kind == SKED_DBE_PERM     ? SKED_EPERM
		     : db->err.kind == SKED_DBE_CONFIG   ? SKED_ECONFIG
		                                         : SKED_EUNAVAILABLE;
		free(db);
		return rc;
	}
	*out = db;
	return SKED_OK;
}

int
sked__db_wrap(const char *driver, void *native, sked_db **out, char *err,
              size_t errlen)
{
	static const sked_url_kind kinds[] = {SKED_URL_SQLITE,
	                                      SKED_URL_POSTGRES, SKED_URL_MYSQL,
	                                      SKED_URL_ODBC};
	*out = NULL;
	const sked_driver *drv = NULL;
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0] && !drv; i++) {
		const sked_driver *d = driver_for(kinds[i]);
		if (d && driver && strcmp(d->name, driver) == 0)
			drv = d;
	}
	if (!drv || !drv->wrap || !native) {
		snprintf(err, errlen,
		         "cannot wrap a native connection of driver '%s' "
		         "(built: %s)",
		         driver ? driver : "", SKED_BUILT_DRIVERS);
		return SKED_EUNSUPPORTED;
	}
	sked_db *db = calloc(1, sizeof *db);
	if (!db) {
		snprintf(err, errlen, "out of memory");
		return SKED_ENOMEM;
	}
	db->drv = drv;
	int rc = drv->wrap(native, &db->conn, &db->err);
	if (rc != SKED_OK || !db->conn) {
		snprintf(err, errlen, "%s", db->err.msg);
		free(db);
		return rc != SKED_OK ? rc : SKED_EUNAVAILABLE;
	}
	*out = db;
	return SKED_OK;
}

void
sked__db_close(sked_db *db)
{
	if (!db)
		return;
	if (db->conn)
		db->drv->close(db->conn);
	free(db);
}

int
sked__db_status(const sked_db *db)
{
	switch (db->err.kind) {
	case SKED_DBE_NONE:
		return SKED_OK;
	case SKED_DBE_CONNECT:
		return SKED_EUNAVAILABLE;
	case SKED_DBE_RETRY:
		return SKED_EBUSY;
	case SKED_DBE_READONLY:
		return SKED_EREADONLY;
	case SKED_DBE_NOTABLE:
		return SKED_ESCHEMA;
	case SKED_DBE_NOMEM:
		return SKED_ENOMEM;
	case SKED_DBE_PERM:
		return SKED_EPERM;
	case SKED_DBE_CONFIG:
		return SKED_ECONFIG;
	case SKED_DBE_UNIQUE:
	case SKED_DBE_OTHER:
	case SKED_DBE_DATA:
		break;
	}
	return SKED_EDB;
}

int
sked__db_exec(sked_db *db, int slot, const char *sql, const sked_val *p, int np,
              sked_res *res)
{
	assert(db && db->conn && sql);
	assert(np == 0 || p);
	memset(&db->err, 0, sizeof db->err);
	db->affected = -1;
	db->last_id = 0;
	if (res)
		sked__res_clear(res);
	if (db->trace)
		sked__log(SKED_LOG_DEBUG, "sql[%d]: %s", slot, sql);
	if (fault_fires()) {
		db->err.kind = (sked_dbe_kind)atomic_load(&fault_kind);
		snprintf(db->err.msg, sizeof db->err.msg,
		         "injected fault (test)");
		return sked__db_status(db);
	}
	int rc = db->drv->exec(db->conn, slot, sql, p, np, res, &db->affected,
	                       &db->last_id, &db->err);
	if (rc != SKED_OK) {
		if (db->err.kind == SKED_DBE_NONE)
			db->err.kind = SKED_DBE_OTHER;
		if (res)
			sked__res_clear(res);
		if (db->trace)
			sked__log(SKED_LOG_DEBUG, "sql[%d] failed: %s", slot,
			          db->err.msg);
		return sked__db_status(db);
	}
	return SKED_OK;
}

int
sked__db_server(sked_db *db, char *product, size_t plen, char *version,
                size_t vlen)
{
	memset(&db->err, 0, sizeof db->err);
	int rc = db->drv->server(db->conn, product, plen, version, vlen,
	                         &db->err);
	if (rc != SKED_OK) {
		if (db->err.kind == SKED_DBE_NONE)
			db->err.kind = SKED_DBE_OTHER;
		return sked__db_status(db);
	}
	return SKED_OK;
}

/* ---- what the model may see of a connection ---- */

const sked_dberr *
sked__db_err(const sked_db *db)
{
	return &db->err;
}

int64_t
sked__db_affected(const sked_db *db)
{
	return db->affected;
}

int64_t
sked__db_last_id(const sked_db *db)
{
	return db->last_id;
}

int
sked__db_tx(sked_db *db, int op, const char *sql)
{
	if (!db->drv->tx)
		return sked__db_exec(db, -1, sql, NULL, 0, NULL);
	memset(&db->err, 0, sizeof db->err);
	db->affected = -1;
	db->last_id = 0;
	if (db->trace)
		sked__log(SKED_LOG_DEBUG, "tx %d: %s", op, sql);
	if (fault_fires()) {
		db->err.kind = (sked_dbe_kind)atomic_load(&fault_kind);
		snprintf(db->err.msg, sizeof db->err.msg,
		         "injected fault (test)");
		return sked__db_status(db);
	}
	if (db->drv->tx(db->conn, op, sql, &db->err) != SKED_OK) {
		if (db->err.kind == SKED_DBE_NONE)
			db->err.kind = SKED_DBE_OTHER;
		return sked__db_status(db);
	}
	return SKED_OK;
}

void
sked__db_rollback_keep_err(sked_db *db, const char *sql)
{
	sked_dberr keep = db->err;
	int64_t affected = db->affected, last_id = db->last_id;
	int rc = sked__db_tx(db, SKED_TX_ROLLBACK, sql);
	(void)rc; /* the earlier error is the one to report */
	db->err = keep;
	db->affected = affected;
	db->last_id = last_id;
}

const char *
sked__db_driver(const sked_db *db)
{
	return db->drv->name;
}

int
sked__db_socket(sked_db *db)
{
	return db->drv->socket ? db->drv->socket(db->conn) : -1;
}

int
sked__db_pooled(const sked_db *db)
{
	return db->drv->pooled ? db->drv->pooled(db->conn) : 0;
}

int
sked__db_unbound_null(const sked_db *db)
{
	return db->drv->unbound_null;
}

void
sked__db_drain_notify(sked_db *db, sked_note_fn fn, void *arg)
{
	if (db->drv->drain_notify)
		(void)db->drv->drain_notify(db->conn, &db->err, fn, arg);
}
