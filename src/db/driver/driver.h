/*
 * db/driver/driver.h — what a driver implements, and the connection it fills.
 *
 * Folder src/db/driver/ (floor 2, docs/design.md): the drivers, one
 * per client library (libsqlite3.c, libpq.c, libmariadb.c, libodbc.c),
 * what they fill (result.c) and what errors mean (errmap.c). Called only
 * by db.c; they call util/ and dialect/detect.c.
 *
 * Layer: between db.c and the drivers in src/db/driver/. Nothing else includes
 * this file: the model and the strategies reach a connection only through
 * the functions of db.h, so that db.c stays the one place for asserts,
 * tracing, error mapping and fault injection.
 */
#ifndef SKED_DB_DRIVER_H
#define SKED_DB_DRIVER_H

#include "db/driver/result.h"

/* The method table a driver fills. Called only from db.c. */
/* How many prepared statements a driver caches per connection: a slot
 * per statement id of the dialect registry (SKED_SQL_*; db.c asserts
 * that they fit). A statement past it would be prepared on every call. */
#define SKED_STMT_SLOTS 192

typedef struct sked_driver {
	const char *name; /* "sqlite", "libpq", "mariadb", "odbc" */
	/* url is the whole URL (the driver parses what it needs with url.h).
	 * On failure *conn stays NULL and e says why. */
	int (*connect)(const char *url, void **conn, sked_dberr *e);
	void (*close)(void *conn);
	/* product as the server names itself, and its version string */
	int (*server)(void *conn, char *product, size_t plen, char *version,
	              size_t vlen, sked_dberr *e);
	/* Run sql with params. slot >= 0 (below SKED_STMT_SLOTS): cache the
	 * prepared statement under that slot (the same slot always carries
	 * the same sql). res may be
	 * NULL when no rows are wanted. *affected gets the rows changed by
	 * INSERT/UPDATE/DELETE (or -1). *last_id, if not NULL, gets the id an
	 * INSERT into an identity column produced (0 if none). */
	int (*exec)(void *conn, int slot, const char *sql, const sked_val *p,
	            int np, sked_res *res, int64_t *affected, int64_t *last_id,
	            sked_dberr *e);
	/* optional: begin, commit or roll back a transaction (SKED_TX_*).
	 * sql is the dialect's text for it, which a driver without this verb
	 * runs with exec; a driver whose client library ends transactions
	 * with calls of its own (ODBC's autocommit attribute and SQLEndTran)
	 * uses them, so that no driver recognises SQL text. */
	int (*tx)(void *conn, int op, const char *sql, sked_dberr *e);
	/* optional: an fd to poll for wake-ups (a socket that carries
	 * notifications, or a watch on a file that changes on every commit),
	 * or -1 */
	int (*socket)(void *conn);
	/* optional: consume pending notifications, each payload handed to fn
	 * (when not NULL; a NULL payload: some were lost); returns how many
	 * arrived */
	int (*drain_notify)(void *conn, sked_dberr *e, sked_note_fn fn,
	                    void *arg);
	/* optional: 1 when a pooler may hand each transaction another
	 * server session (said in the URL or found), so nothing of the
	 * session (its id, its name, a prepared statement) lasts */
	int (*pooled)(void *conn);
	/* optional: wrap a native connection the application holds; close
	 * must then leave the native connection open */
	int (*wrap)(void *native, void **conn, sked_dberr *e);
	/* 1: a marker exec leaves unbound reads as NULL (SQLite's own
	 * API), so a statement may carry more markers than it is given
	 * (sked__dialect_pad) */
	int unbound_null;
} sked_driver;

extern const sked_driver sked__driver_sqlite;
/* Texts without a slot the SQLite driver has prepared in this process,
 * kept or not: a batch's statements must stay prepared (tests/unit). */
long long sked__sqlite_text_prepares(void);
#ifdef SKED_HAVE_PG
extern const sked_driver sked__driver_pg;
#endif
#ifdef SKED_HAVE_MYSQL
extern const sked_driver sked__driver_mysql;
#endif
#ifdef SKED_HAVE_ODBC
extern const sked_driver sked__driver_odbc;
#endif

/* A connection: a driver, its native state and the last error. */
struct sked_db {
	const sked_driver *drv;
	void *conn;
	sked_dberr err;
	int64_t affected, last_id;
	int trace;
};

#endif /* SKED_DB_DRIVER_H */
