/*
 * db/driver/errmap.h — what a product's error codes mean to sked, one map per
 * product, and the connection settings every SQLite connection gets.
 *
 * Layer: below the drivers (the lib*.c files of src/db/driver/), which call
 * it; it knows error numbers, not connections. The native drivers and the
 * ODBC driver read the same servers, so they share these maps instead of
 * keeping copies.
 */
#ifndef SKED_DB_ERRMAP_H
#define SKED_DB_ERRMAP_H

#include "db/driver/result.h"

/* SQLSTATEs: PostgreSQL's own, and the ISO/ODBC classes any driver may
 * report (08 connection, 40001/40P01/55P03 retry, 23505 unique, 42P01 and
 * 42S02 no table, 25006 read only, HY001 and 53200 out of memory). */
sked_dbe_kind sked__errmap_sqlstate(const char *sqlstate);

/* MySQL / MariaDB server and client error numbers. */
sked_dbe_kind sked__errmap_mysql(unsigned int no);

/* SQL Server error numbers. */
sked_dbe_kind sked__errmap_mssql(long no);

/* Oracle error numbers (ORA-NNNNN, as the ODBC driver's native error). */
sked_dbe_kind sked__errmap_oracle(long no);

/* SQLite result codes: rc (primary or extended), ext the extended code
 * when known (else rc), msg the message (sqliteodbc reports only the
 * primary code, so a unique violation is told by its text). */
sked_dbe_kind sked__errmap_sqlite(int rc, int ext, const char *msg);

/* Pragmas run on every SQLite connection after its busy timeout (which
 * SKED_SQLITE_BUSY_MS sets, default 10 s): NULL-terminated. */
extern const char *const sked__sqlite_pragmas[];
int sked__sqlite_busy_ms(void);

#endif /* SKED_DB_ERRMAP_H */
