/*
 * db/sqlite.c — the SQLite driver (libsqlite3), the embedded default.
 *
 * Layer: a driver behind db.c. It opens the file named by a sqlite: URL in
 * WAL mode with a busy timeout, keeps prepared statements per cache slot,
 * binds parameters and copies rows into a sked_res. It maps SQLite's
 * result codes to the seam's error kinds; everything about tasks lives
 * above it.
 *
 * Settings, chosen for a task table shared by several processes on one
 * host: journal_mode=WAL (readers never block the one writer),
 * synchronous=NORMAL (durable across process crashes; a power loss may
 * drop the last commits, which WAL keeps consistent), busy_timeout 10 s
 * (SKED_SQLITE_BUSY_MS overrides) so that concurrent writers queue rather
 * than fail.
 */
#include "db/driver.h"
#include "db/errmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "util/url.h"

#define NSLOTS 192

typedef struct lite {
	sqlite3 *db;
	sqlite3_stmt *slot[NSLOTS];
} lite;

static void
set_err(sked_dberr *e, sqlite3 *db, int rc, const char *what)
{
	int ext = db ? sqlite3_extended_errcode(db) : rc;
	const char *msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
	e->native = ext;
	e->kind = sked__errmap_sqlite(rc, ext, msg);
	snprintf(e->msg, sizeof e->msg, "sqlite: %s%s%s", what ? what : "",
	         what ? ": " : "", msg);
}

static void
lite_close(void *conn)
{
	lite *l = conn;
	if (!l)
		return;
	for (int i = 0; i < NSLOTS; i++)
		sqlite3_finalize(l->slot[i]);
	sqlite3_close_v2(l->db);
	free(l);
}

static int
pragma(lite *l, const char *sql, sked_dberr *e)
{
	char *msg = NULL;
	int rc = sqlite3_exec(l->db, sql, NULL, NULL, &msg);
	sqlite3_free(msg);
	if (rc != SQLITE_OK) {
		set_err(e, l->db, rc, "cannot set up the database");
		return SKED_EDB;
	}
	return SKED_OK;
}

static int
lite_connect(const char *url, void **conn, sked_dberr *e)
{
	sked_url u;
	char err[256];
	if (sked__url_parse(url, &u, err, sizeof err) != SKED_OK) {
		e->kind = SKED_DBE_CONNECT;
		snprintf(e->msg, sizeof e->msg, "%s", err);
		return SKED_EURL;
	}
	lite *l = calloc(1, sizeof *l);
	if (!l) {
		sked__url_free(&u);
		e->kind = SKED_DBE_NOMEM;
		snprintf(e->msg, sizeof e->msg, "out of memory");
		return SKED_ENOMEM;
	}
	int rc = sqlite3_open_v2(u.path, &l->db,
	                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
	                                 SQLITE_OPEN_NOMUTEX,
	                         NULL);
	if (rc != SQLITE_OK) {
		char what[300];
		snprintf(what, sizeof what, "cannot open '%s'", u.path);
		set_err(e, l->db, rc, what);
		e->kind = rc == SQLITE_READONLY ? SKED_DBE_READONLY
		                                : SKED_DBE_CONNECT;
		sked__url_free(&u);
		lite_close(l);
		return SKED_EUNAVAILABLE;
	}
	sqlite3_extended_result_codes(l->db, 1);
	sqlite3_busy_timeout(l->db, sked__sqlite_busy_ms());
	/* journal_mode answers with a row; sqlite3_exec discards it. A file
	 * in a folder we cannot write fails here, naming the file. */
	int bad = 0;
	for (const char *const *pr = sked__sqlite_pragmas; *pr && !bad; pr++)
		bad = pragma(l, *pr, e) != SKED_OK;
	if (bad) {
		char what[300];
		snprintf(what, sizeof what, "cannot use '%s'", u.path);
		set_err(e, l->db, sqlite3_errcode(l->db), what);
		if (e->kind != SKED_DBE_READONLY)
			e->kind = SKED_DBE_CONNECT;
		sked__url_free(&u);
		lite_close(l);
		return SKED_EUNAVAILABLE;
	}
	sked__url_free(&u);
	*conn = l;
	return SKED_OK;
}

static int
lite_server(void *conn, char *product, size_t plen, char *version, size_t vlen,
            sked_dberr *e)
{
	snprintf(product, plen, "SQLite");
	snprintf(version, vlen, "%s", sqlite3_libversion());
	return SKED_OK;
}

static int
lite_exec(void *conn, int slot, const char *sql, const sked_val *p, int np,
          sked_res *res, int64_t *affected, int64_t *last_id, sked_dberr *e)
{
	lite *l = conn;
	sqlite3_stmt *st = NULL;
	int rc;
	if (slot >= 0 && slot < NSLOTS && l->slot[slot]) {
		st = l->slot[slot];
	} else {
		unsigned flags = slot >= 0 ? SQLITE_PREPARE_PERSISTENT : 0;
		rc = sqlite3_prepare_v3(l->db, sql, -1, flags, &st, NULL);
		if (rc != SQLITE_OK) {
			set_err(e, l->db, rc, NULL);
			return SKED_EDB;
		}
		if (slot >= 0 && slot < NSLOTS)
			l->slot[slot] = st;
	}
	for (int i = 0; i < np; i++) {
		switch (p[i].type) {
		case SKED_VNULL:
			rc = sqlite3_bind_null(st, i + 1);
			break;
		case SKED_VINT:
			rc = sqlite3_bind_int64(st, i + 1, p[i].i);
			break;
		case SKED_VTEXT:
			rc = sqlite3_bind_text64(st, i + 1, p[i].s, p[i].len,
			                         SQLITE_STATIC, SQLITE_UTF8);
			break;
		default:
			rc = SQLITE_MISUSE;
		}
		if (rc != SQLITE_OK) {
			set_err(e, l->db, rc, "bind");
			goto fail;
		}
	}
	int ncols = sqlite3_column_count(st);
	if (res && ncols > 0 && sked__res_begin(res, ncols) != SKED_OK)
		goto nomem;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!res)
			continue;
		for (int c = 0; c < ncols; c++) {
			const char *t = NULL;
			size_t n = 0;
			if (sqlite3_column_type(st, c) != SQLITE_NULL) {
				t = (const char *)sqlite3_column_text(st, c);
				n = (size_t)sqlite3_column_bytes(st, c);
				if (!t)
					goto nomem;
			}
			if (sked__res_add(res, t, n) != SKED_OK)
				goto nomem;
		}
	}
	if (rc != SQLITE_DONE) {
		set_err(e, l->db, rc, NULL);
		goto fail;
	}
	*affected = sqlite3_changes64(l->db);
	if (last_id)
		*last_id = sqlite3_last_insert_rowid(l->db);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (slot < 0 || slot >= NSLOTS)
		sqlite3_finalize(st);
	return SKED_OK;
nomem:
	e->kind = SKED_DBE_NOMEM;
	snprintf(e->msg, sizeof e->msg, "sqlite: out of memory");
fail:
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (slot < 0 || slot >= NSLOTS)
		sqlite3_finalize(st);
	return SKED_EDB;
}

static void *
lite_native(void *conn)
{
	return ((lite *)conn)->db;
}

const sked_driver sked__driver_sqlite = {
        .name = "sqlite",
        .connect = lite_connect,
        .close = lite_close,
        .server = lite_server,
        .exec = lite_exec,
        .socket = NULL,
        .drain_notify = NULL,
        .native = lite_native,
};
