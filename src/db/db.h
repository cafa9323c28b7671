/*
 * db.h — the driver seam: how bytes reach a database server.
 *
 * Folder src/db/ (floor 3, docs/design.md): the driver seam; db.c is
 * the one file that calls a driver.
 *
 * Layer: below the model (queue.c, lease.c, sched.c, lock.c, gauges.c) and
 * the claim strategies; above the drivers in src/db/driver/. A driver knows
 * nothing of tasks: it connects, reports the server's product and version,
 * runs one SQL statement with bound parameters and hands back a
 * materialized result. Which SQL to say is the dialect's business
 * (dialect.h); when to say it is the model's.
 *
 * Every call into a driver goes through db.c, which is the one place for
 * argument asserts, SQL tracing (SKED_TRACE_SQL=1), error mapping and fault
 * injection (sked__db_fault_after), so tests can make the third statement
 * fail without a broken server.
 *
 * SQL text uses '?' for every parameter; a driver whose server wants
 * another marker ($1, …) rewrites it when preparing. Statements with a
 * cache slot (>= 0) are prepared once per connection and reused.
 */
#ifndef SKED_DB_H
#define SKED_DB_H

#include <stddef.h>
#include <stdint.h>

#include "db/driver/result.h"
#include "sked.h"

/* Values, results and errors (what crosses this seam both ways) are
 * in db/driver/result.h, below the drivers.
 *
 * A connection: a driver, its native state and the last error. Opaque
 * above this seam; drivers and db.c see it through db/driver/driver.h. */
typedef struct sked_db sked_db;

/* Pick the driver from the URL's scheme and connect. On failure *out is
 * NULL and err (one line, password-free) says why; returns
 * SKED_EURL, SKED_EUNAVAILABLE, SKED_EUNSUPPORTED (driver not built) or
 * SKED_ENOMEM. */
int sked__db_open(const char *url, sked_db **out, char *err, size_t errlen)
        __attribute__((warn_unused_result));
void sked__db_close(sked_db *db);

/* A sked_db around a connection the application holds (driver by name:
 * "sqlite", "libpq", "mariadb", "odbc"). SKED_EUNSUPPORTED when that
 * driver is not built or cannot wrap. */
int sked__db_wrap(const char *driver, void *native, sked_db **out, char *err,
                  size_t errlen) __attribute__((warn_unused_result));

/* Run one statement. Returns SKED_OK or a SKED_E* code mapped from the
 * driver error (db->err keeps the detail). */
int sked__db_exec(sked_db *db, int slot, const char *sql, const sked_val *p,
                  int np, sked_res *res) __attribute__((warn_unused_result));

int sked__db_server(sked_db *db, char *product, size_t plen, char *version,
                    size_t vlen) __attribute__((warn_unused_result));

/* Map a driver error kind to a status code. */
int sked__db_status(const sked_db *db);

/* What the last statement left: its error (kind NONE after a success),
 * the rows it changed (-1: not a write), the id an INSERT produced. */
const sked_dberr *sked__db_err(const sked_db *db);
int64_t sked__db_affected(const sked_db *db);
int64_t sked__db_last_id(const sked_db *db);

/* Begin, commit or roll back (SKED_TX_*, db/driver/driver.h); sql is the
 * dialect's text for it. */
int sked__db_tx(sked_db *db, int op, const char *sql)
        __attribute__((warn_unused_result));

/* Roll back and keep the error of the statement before: for the failure
 * path. */
void sked__db_rollback_keep_err(sked_db *db, const char *sql);

/* The driver's name ("sqlite", "libpq", "mariadb", "odbc"). */
const char *sked__db_driver(const sked_db *db);

/* Push wake-up: a socket to poll for the server's notifications (-1 when
 * the driver has none), and consuming what arrived on it (and what
 * arrived with a statement's result), each payload handed to fn when it
 * is not NULL. */
int sked__db_socket(sked_db *db);
void sked__db_drain_notify(sked_db *db, sked_note_fn fn, void *arg);

/* 1 when a pooler may hand each transaction of db another server
 * session (PostgreSQL: sked_pooling=transaction, or a pooler found). */
int sked__db_pooled(const sked_db *db);

/* 1 when a marker left unbound reads as NULL on db's driver (native
 * SQLite): its batch statements may be padded (sked__dialect_pad). */
int sked__db_unbound_null(const sked_db *db);

/* Fault injection for tests: the nth statement executed from now on (1 =
 * the next) fails with kind; 0 disarms. Process-wide. */
void sked__db_fault_after(int nth, sked_dbe_kind kind);

#endif /* SKED_DB_H */
