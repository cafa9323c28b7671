/*
 * db/driver/errmap.c — error maps per product and SQLite's connection settings
 * (see errmap.h).
 */
#include "db/driver/errmap.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

sked_dbe_kind
sked__errmap_sqlstate(const char *st)
{
	if (!st || strlen(st) != 5)
		return SKED_DBE_OTHER;
	if (strcmp(st, "23505") == 0)
		return SKED_DBE_UNIQUE;
	if (strcmp(st, "40001") == 0 || strcmp(st, "40P01") == 0 ||
	    strcmp(st, "55P03") == 0)
		return SKED_DBE_RETRY;
	if (strcmp(st, "42P01") == 0 || strcmp(st, "42S02") == 0)
		return SKED_DBE_NOTABLE;
	if (strcmp(st, "42501") == 0) /* insufficient_privilege */
		return SKED_DBE_PERM;
	if (strcmp(st, "25006") == 0)
		return SKED_DBE_READONLY;
	if (strcmp(st, "53200") == 0 || strcmp(st, "HY001") == 0)
		return SKED_DBE_NOMEM;
	/* class 22, data exception: a value the server will not take (an
	 * invalid byte sequence 22021, an interval or timestamp out of range
	 * 22008 and 22015, a string too long 22001, a numeric overflow 22003) */
	if (strncmp(st, "22", 2) == 0)
		return SKED_DBE_DATA;
	/* class 08: connection exception; 57P01-57P03: the server shut the
	 * session down (pg_terminate_backend, restart, still starting);
	 * HYT01: an ODBC connection timeout */
	if (strncmp(st, "08", 2) == 0 || strcmp(st, "57P01") == 0 ||
	    strcmp(st, "57P02") == 0 || strcmp(st, "57P03") == 0 ||
	    strcmp(st, "HYT01") == 0)
		return SKED_DBE_CONNECT;
	return SKED_DBE_OTHER;
}

sked_dbe_kind
sked__errmap_mysql(unsigned int no)
{
	switch (no) {
	case 1062: /* ER_DUP_ENTRY */
	case 1586: /* ER_DUP_ENTRY_WITH_KEY_NAME */
		return SKED_DBE_UNIQUE;
	case 1205: /* ER_LOCK_WAIT_TIMEOUT */
	case 1213: /* ER_LOCK_DEADLOCK (also a Galera certification failure) */
		return SKED_DBE_RETRY;
	case 1146: /* ER_NO_SUCH_TABLE */
		return SKED_DBE_NOTABLE;
	case 1044: /* ER_DBACCESS_DENIED_ERROR */
	case 1142: /* ER_TABLEACCESS_DENIED_ERROR */
	case 1143: /* ER_COLUMNACCESS_DENIED_ERROR */
	case 1227: /* ER_SPECIFIC_ACCESS_DENIED_ERROR */
		return SKED_DBE_PERM;
	case 2002: /* CR_CONNECTION_ERROR */
	case 2003: /* CR_CONN_HOST_ERROR */
	case 2006: /* CR_SERVER_GONE_ERROR */
	case 2013: /* CR_SERVER_LOST */
	case 2055: /* CR_SERVER_LOST_EXTENDED */
	case 1045: /* ER_ACCESS_DENIED_ERROR */
	case 1049: /* ER_BAD_DB_ERROR */
	case 1927: /* ER_CONNECTION_KILLED (MariaDB) */
	/* Galera: a node outside the primary component answers every
	 * statement with 1047 ("WSREP has not yet prepared node for
	 * application use"): the connection is as good as lost, and
	 * another connection (or the same node later) may take writes */
	case 1047: /* ER_UNKNOWN_COM_ERROR */
		return SKED_DBE_CONNECT;
	case 1290: /* ER_OPTION_PREVENTS_STATEMENT (--read-only) */
	case 1792: /* ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION */
	case 1836: /* ER_READ_ONLY_MODE */
		return SKED_DBE_READONLY;
	case 2008: /* CR_OUT_OF_MEMORY */
		return SKED_DBE_NOMEM;
	case 1264: /* ER_WARN_DATA_OUT_OF_RANGE */
	case 1292: /* ER_TRUNCATED_WRONG_VALUE (a datetime out of range) */
	case 1300: /* ER_INVALID_CHARACTER_STRING */
	case 1366: /* ER_TRUNCATED_WRONG_VALUE_FOR_FIELD (bad utf8mb4) */
	case 1406: /* ER_DATA_TOO_LONG */
	case 1441: /* ER_DATETIME_FUNCTION_OVERFLOW */
	case 1690: /* ER_DATA_OUT_OF_RANGE */
		return SKED_DBE_DATA;
	default:
		return SKED_DBE_OTHER;
	}
}

sked_dbe_kind
sked__errmap_mssql(long no)
{
	switch (no) {
	case 2627: /* violation of a PRIMARY KEY or UNIQUE constraint */
	case 2601: /* duplicate key row in a unique index */
		return SKED_DBE_UNIQUE;
	case 1205: /* chosen as the deadlock victim */
	case 1222: /* lock request time out */
		return SKED_DBE_RETRY;
	case 208: /* invalid object name */
		return SKED_DBE_NOTABLE;
	case 229: /* the permission was denied on the object */
	case 230: /* the same, on a column */
		return SKED_DBE_PERM;
	case 3906: /* the database is read-only */
		return SKED_DBE_READONLY;
	case 242:  /* conversion to datetime out of range */
	case 517:  /* adding a value to a datetime caused an overflow */
	case 8115: /* arithmetic overflow */
	case 8152: /* string or binary data would be truncated */
	case 2628: /* the same, naming the column */
		return SKED_DBE_DATA;
	default:
		return SKED_DBE_OTHER;
	}
}

sked_dbe_kind
sked__errmap_oracle(long no)
{
	switch (no) {
	case 1: /* unique constraint violated (SQLSTATE 23000) */
		return SKED_DBE_UNIQUE;
	case 60:    /* deadlock detected while waiting for resource */
	case 8177:  /* cannot serialize access for this transaction */
	case 30006: /* resource busy; acquire with WAIT timeout expired */
		return SKED_DBE_RETRY;
	case 942: /* table or view does not exist */
		return SKED_DBE_NOTABLE;
	case 1031: /* insufficient privileges */
		return SKED_DBE_PERM;
	case 16000: /* database or pluggable database open for read-only */
		return SKED_DBE_READONLY;
	case 3113:  /* end-of-file on communication channel */
	case 3114:  /* not connected to ORACLE */
	case 3135:  /* connection lost contact */
	case 12541: /* TNS: no listener */
	case 12514: /* TNS: listener does not know of service */
	case 12537: /* TNS: connection closed */
	case 1017:  /* invalid username/password */
	case 1089:  /* immediate shutdown or close in progress */
	case 28:    /* your session has been killed */
		return SKED_DBE_CONNECT;
	case 4030: /* out of process memory */
		return SKED_DBE_NOMEM;
	case 1438:  /* value larger than specified precision */
	case 12899: /* value too large for column */
	case 1841:  /* (full) year must be between -4713 and +9999 */
	case 1873:  /* the leading precision of the interval is too small */
		return SKED_DBE_DATA;
	default:
		return SKED_DBE_OTHER;
	}
}

sked_dbe_kind
sked__errmap_sqlite(int rc, int ext, const char *msg)
{
	msg = msg ? msg : "";
	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return SKED_DBE_RETRY;
	case SQLITE_READONLY:
		return SKED_DBE_READONLY;
	case SQLITE_NOMEM:
		return SKED_DBE_NOMEM;
	case SQLITE_CONSTRAINT:
		if (ext == SQLITE_CONSTRAINT_UNIQUE ||
		    ext == SQLITE_CONSTRAINT_PRIMARYKEY)
			return SKED_DBE_UNIQUE;
		if (ext == (rc & 0xff) &&
		    (strstr(msg, "UNIQUE") || strstr(msg, "PRIMARY KEY") ||
		     strstr(msg, "unique")))
			return SKED_DBE_UNIQUE;
		return SKED_DBE_OTHER;
	case SQLITE_CANTOPEN:
	case SQLITE_NOTADB:
		return SKED_DBE_CONNECT;
	default:
		if (strstr(msg, "no such table"))
			return SKED_DBE_NOTABLE;
		if (strstr(msg, "database is locked"))
			return SKED_DBE_RETRY;
		return SKED_DBE_OTHER;
	}
}

const char *const sked__sqlite_pragmas[] = {
        "PRAGMA journal_mode=WAL",
        "PRAGMA synchronous=NORMAL",
        "PRAGMA foreign_keys=ON",
        NULL,
};

int
sked__sqlite_busy_ms(void)
{
	const char *bms = getenv("SKED_SQLITE_BUSY_MS");
	return bms && *bms ? atoi(bms) : 10000;
}
