/*
 * db/driver/libodbc.c — the ODBC driver (unixODBC): any database that
 * ships one.
 *
 * Size: a driver is one file per client library (the seam's rule,
 * docs/design.md); the product specifics below are what a native driver
 * does itself. The marker rewrite, pure text, is markers.c's.
 *
 * Layer: a driver behind db.c. It connects with SQLDriverConnect from an
 * odbc: URL (a connection string "Driver=…;Server=…" or a DSN, "DSN=name;…"
 * or a bare "name"), reports SQL_DBMS_NAME and SQL_DBMS_VER so that the
 * same decision table and dialect choice apply as with a native driver,
 * prepares each cached statement once per connection, rewrites the
 * dialect's numbered markers (?N) into ODBC's positional '?' with a map
 * from marker to parameter, fetches every cell as text with SQLGetData
 * (in a loop, so megabyte payloads arrive whole) and maps SQLSTATE plus
 * the native error number to the seam's error kinds.
 *
 * What it leaves to others: the SQL is the dialect's (PostgreSQL through
 * psqlODBC gets the postgresql dialect, MariaDB the mysql one, SQLite the
 * sqlite one, SQL Server the sqlserver one). Transactions are the
 * dialect's BEGIN/COMMIT texts run as statements: the connection stays
 * in autocommit mode, where each of the drivers verified here passes
 * them to the server (SQLite needs its own BEGIN IMMEDIATE, which
 * SQLSetConnectAttr could not say). Except psqlODBC: in autocommit mode
 * it sends a COMMIT of its own after every INSERT, UPDATE or DELETE,
 * inside a BEGIN it was given or not, so a transaction ended at its
 * first write (a limited claim's row lock with it). On PostgreSQL the
 * transactions are therefore ODBC's own calls (the seam's tx verb):
 * autocommit off (psqlODBC then begins at the next statement),
 * SQLEndTran, autocommit on again. Oracle, which has no BEGIN statement
 * (a transaction starts with the first change), takes the same path.
 *
 * Product specifics, kept to what a native driver would do itself: on
 * SQLite the pragmas every SQLite connection gets (db/driver/errmap.c); on
 * MariaDB and MySQL a bound on every read and write (ODBC_IO_TIMEOUT_S,
 * unless the connection string sets READ_TIMEOUT or WRITE_TIMEOUT), as
 * MariaDB Connector/ODBC 3.1 otherwise waits for ever: a worker was seen
 * blocked in mysql_stmt_execute (poll with no timeout) on a claim the
 * server showed as finished, its connection idle and nothing left to
 * read; bounded, that read fails as a lost connection and the worker's
 * recovery of a claim whose outcome is unknown takes over. Which
 * product it is comes from dialect/detect.c, what its errors mean
 * from db/driver/errmap.c, and the inserted id, where an INSERT returns
 * no row, is the dialect's to ask for (sked_dialect.last_id).
 * Error messages are the driver's diagnostic text on one line, with any
 * password from the connection string masked; the connection string
 * itself is never quoted.
 */
#include "db/driver/driver.h"
#include "db/driver/errmap.h"
#include "db/driver/markers.h"
#include "dialect/detect.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sql.h>
#include <sqlext.h>

#include "util/sqlsplit.h"
#include "util/url.h"

#define SMALL 32
/* MariaDB and MySQL: longest wait for the server's next bytes, in
 * seconds; above InnoDB's default lock wait (50 s), so that a statement
 * waiting on a row lock fails as the server says, not here */
#define ODBC_IO_TIMEOUT_S 60

enum fam { FAM_OTHER, FAM_SQLITE, FAM_PG, FAM_MYSQL, FAM_MSSQL, FAM_ORACLE };

typedef struct ostmt {
	SQLHSTMT st;
	int *map;
	int nmarks;
} ostmt;

typedef struct odbc {
	SQLHENV env;
	SQLHDBC dbc;
	int owned; /* we connected (and so disconnect) */
	int fam;
	char product[64], version[64];
	char secret[128]; /* the PWD value, masked out of messages */
	ostmt slot[SKED_STMT_SLOTS];
	char *buf; /* SQLGetData buffer */
	size_t cap;
} odbc;

/* ---- errors ---- */

static void
one_line(char *s)
{
	for (; *s; s++)
		if (*s == '\n' || *s == '\r' || *s == '\t')
			*s = ' ';
}

/* Mask every occurrence of the password in msg. */
static void
mask(char *msg, const char *secret)
{
	size_t sl = strlen(secret);
	if (sl < 3) /* too short to find without masking ordinary text */
		return;
	char *p;
	while ((p = strstr(msg, secret)) != NULL) {
		memcpy(p, "***", 3);
		memmove(p + 3, p + sl, strlen(p + sl) + 1);
	}
}

/* One map per product (db/driver/errmap.c): the SQLSTATE first, then the
 * product's own numbers. */
static sked_dbe_kind
classify(int fam, const char *state, long native, const char *msg)
{
	sked_dbe_kind k = sked__errmap_sqlstate(state);
	if (k != SKED_DBE_OTHER)
		return k;
	switch (fam) {
	case FAM_MYSQL:
		return sked__errmap_mysql((unsigned int)native);
	case FAM_MSSQL:
		return sked__errmap_mssql(native);
	case FAM_ORACLE:
		return sked__errmap_oracle(native);
	case FAM_SQLITE:
		/* sqliteodbc reports SQLite's result code as the native
		 * error, mostly under SQLSTATE HY000 */
		return sked__errmap_sqlite((int)native, (int)native, msg);
	default:
		return SKED_DBE_OTHER;
	}
}

/* Fill e from the first diagnostic record of handle. */
static void
set_err(sked_dberr *e, const odbc *o, SQLSMALLINT type, SQLHANDLE handle,
        const char *what)
{
	SQLCHAR state[6] = "";
	SQLCHAR text[SQL_MAX_MESSAGE_LENGTH] = "";
	SQLINTEGER native = 0;
	SQLSMALLINT tlen = 0;
	SQLRETURN rc = handle ? SQLGetDiagRec(type, handle, 1, state, &native,
	                                      text, sizeof text, &tlen)
	                      : SQL_ERROR;
	if (!SQL_SUCCEEDED(rc)) {
		strcpy((char *)state, "HY000");
		snprintf((char *)text, sizeof text, "no diagnostic available");
	}
	one_line((char *)text);
	if (o && o->secret[0])
		mask((char *)text, o->secret);
	snprintf(e->sqlstate, sizeof e->sqlstate, "%s", (char *)state);
	e->native = (int)native;
	e->kind = classify(o ? o->fam : FAM_OTHER, e->sqlstate, (long)native,
	                   (char *)text);
	snprintf(e->msg, sizeof e->msg, "odbc: %.60s%s%.420s [%s]",
	         what ? what : "", what ? ": " : "", (char *)text, e->sqlstate);
}

/* ---- connections ---- */

/* The value of key (case-insensitive) in a connection string, braces
 * removed, into out (empty when absent). */
static void
conn_value(const char *cs, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);
	out[0] = '\0';
	const char *p = cs;
	while (*p) {
		while (*p == ' ' || *p == ';')
			p++;
		const char *eq = strchr(p, '=');
		if (!eq)
			return;
		const char *k = p, *ke = eq;
		while (ke > k && ke[-1] == ' ')
			ke--;
		const char *v = eq + 1, *ve;
		if (*v == '{') {
			v++;
			ve = strchr(v, '}');
			if (!ve)
				ve = v + strlen(v);
			p = *ve ? ve + 1 : ve;
		} else {
			ve = strchr(v, ';');
			if (!ve)
				ve = v + strlen(v);
			p = ve;
		}
		if ((size_t)(ke - k) == kl && strncasecmp(k, key, kl) == 0) {
			size_t n = (size_t)(ve - v);
			if (n >= len)
				n = len - 1;
			memcpy(out, v, n);
			out[n] = '\0';
			return;
		}
		while (*p && *p != ';')
			p++;
	}
}

static void
odbc_close(void *conn)
{
	odbc *o = conn;
	if (!o)
		return;
	for (int i = 0; i < SKED_STMT_SLOTS; i++) {
		if (o->slot[i].st)
			SQLFreeHandle(SQL_HANDLE_STMT, o->slot[i].st);
		free(o->slot[i].map);
	}
	if (o->owned && o->dbc) {
		SQLDisconnect(o->dbc);
		SQLFreeHandle(SQL_HANDLE_DBC, o->dbc);
	}
	if (o->env)
		SQLFreeHandle(SQL_HANDLE_ENV, o->env);
	free(o->buf);
	free(o);
}

/* The product as detection names it (detect.c), in the driver's terms. */
static int
family(const char *product, const char *version)
{
	switch (sked__product_of(product, version)) {
	case SKED_PROD_SQLITE:
		return FAM_SQLITE;
	case SKED_PROD_POSTGRESQL:
		return FAM_PG;
	case SKED_PROD_MYSQL:
	case SKED_PROD_MARIADB:
		return FAM_MYSQL;
	case SKED_PROD_SQLSERVER:
		return FAM_MSSQL;
	case SKED_PROD_ORACLE:
		return FAM_ORACLE;
	default:
		return FAM_OTHER;
	}
}

/* Run a statement that needs no parameters and whose rows (if any) are
 * not wanted. */
static int
direct(odbc *o, const char *sql, sked_dberr *e)
{
	SQLHSTMT st = NULL;
	if (!SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_STMT, o->dbc, &st))) {
		set_err(e, o, SQL_HANDLE_DBC, o->dbc, "cannot allocate");
		return SKED_EDB;
	}
	SQLRETURN rc = SQLExecDirect(st, (SQLCHAR *)sql, SQL_NTS);
	if (!SQL_SUCCEEDED(rc) && rc != SQL_NO_DATA) {
		set_err(e, o, SQL_HANDLE_STMT, st, NULL);
		SQLFreeHandle(SQL_HANDLE_STMT, st);
		return SKED_EDB;
	}
	SQLFreeHandle(SQL_HANDLE_STMT, st);
	return SKED_OK;
}

/* ODBC drivers pad the version: psqlODBC says "15.0.18" for PostgreSQL
 * 15.18 (major, a zero, minor, from server_version_num), MariaDB's driver
 * "10.11.000019", SQL Server's "16.00.1000". Leading zeros go, and for
 * PostgreSQL 10 and later the padding zero in the middle, so `sked info`
 * shows what the server's own version function would. */
static void
normalise_version(char *v, size_t len, int fam)
{
	long part[3] = {0};
	int n = 0;
	const char *p = v;
	char *end;
	while (n < 3 && isdigit((unsigned char)*p)) {
		part[n++] = strtol(p, &end, 10);
		p = end;
		if (*p != '.' || !isdigit((unsigned char)p[1]))
			break;
		p++;
	}
	if (n == 0)
		return;
	char rest[64], buf[200];
	snprintf(rest, sizeof rest, "%.63s", p);
	if (fam == FAM_PG && n == 3 && part[0] >= 10 && part[1] == 0)
		snprintf(buf, sizeof buf, "%ld.%ld%s", part[0], part[2], rest);
	else if (n == 3)
		snprintf(buf, sizeof buf, "%ld.%ld.%ld%s", part[0], part[1],
		         part[2], rest);
	else if (n == 2)
		snprintf(buf, sizeof buf, "%ld.%ld%s", part[0], part[1], rest);
	else
		snprintf(buf, sizeof buf, "%ld%s", part[0], rest);
	/* a version cut short is still a version */
	size_t k = strlen(buf);
	if (k >= len)
		k = len - 1;
	memcpy(v, buf, k);
	v[k] = '\0';
}

/* What the server is, and the settings a native driver would make. */
static int
identify(odbc *o, sked_dberr *e)
{
	SQLSMALLINT n = 0;
	if (!SQL_SUCCEEDED(SQLGetInfo(o->dbc, SQL_DBMS_NAME, o->product,
	                              sizeof o->product, &n)) ||
	    !SQL_SUCCEEDED(SQLGetInfo(o->dbc, SQL_DBMS_VER, o->version,
	                              sizeof o->version, &n))) {
		set_err(e, o, SQL_HANDLE_DBC, o->dbc,
		        "cannot read the server's product and version");
		return SKED_EDB;
	}
	o->fam = family(o->product, o->version);
	normalise_version(o->version, sizeof o->version, o->fam);
	if (o->fam == FAM_SQLITE) {
		/* what the native SQLite driver sets (db/driver/errmap.c) */
		char sql[64];
		snprintf(sql, sizeof sql, "PRAGMA busy_timeout = %d",
		         sked__sqlite_busy_ms());
		if (direct(o, sql, e) != SKED_OK)
			return SKED_EDB;
		for (const char *const *p = sked__sqlite_pragmas; *p; p++)
			if (direct(o, *p, e) != SKED_OK)
				return SKED_EDB;
	}
	return SKED_OK;
}

/* Connect o->dbc (allocated, not connected) with connection string cs and
 * identify the server. On failure the handle is freed (o->dbc NULL). */
static int
dial(odbc *o, const char *cs, sked_dberr *e)
{
	SQLSetConnectAttr(o->dbc, SQL_ATTR_LOGIN_TIMEOUT, (SQLPOINTER)10, 0);
	SQLCHAR outs[1024];
	SQLSMALLINT outlen = 0;
	SQLRETURN rc =
	        SQLDriverConnect(o->dbc, NULL, (SQLCHAR *)cs, SQL_NTS, outs,
	                         sizeof outs, &outlen, SQL_DRIVER_NOPROMPT);
	if (!SQL_SUCCEEDED(rc)) {
		set_err(e, o, SQL_HANDLE_DBC, o->dbc, "cannot connect");
		e->kind = SKED_DBE_CONNECT;
		SQLFreeHandle(SQL_HANDLE_DBC, o->dbc);
		o->dbc = NULL;
		o->owned = 0;
		return SKED_EUNAVAILABLE;
	}
	/* autocommit is the ODBC default; say so, transactions are the
	 * dialect's statements */
	SQLSetConnectAttr(o->dbc, SQL_ATTR_AUTOCOMMIT,
	                  (SQLPOINTER)SQL_AUTOCOMMIT_ON, 0);
	if (identify(o, e) != SKED_OK) {
		e->kind = SKED_DBE_CONNECT;
		return SKED_EUNAVAILABLE;
	}
	return SKED_OK;
}

static int
odbc_connect(const char *url, void **conn, sked_dberr *e)
{
	sked_url u;
	char err[256];
	if (sked__url_parse(url, &u, err, sizeof err) != SKED_OK) {
		e->kind = SKED_DBE_CONNECT;
		snprintf(e->msg, sizeof e->msg, "%s", err);
		sked__url_free(&u);
		return SKED_EURL;
	}
	odbc *o = calloc(1, sizeof *o);
	char *cs = NULL;
	if (o) {
		/* a bare name is a DSN */
		size_t n = strlen(u.path) + 5;
		cs = malloc(n);
		if (cs)
			snprintf(cs, n, "%s%s",
			         strchr(u.path, '=') ? "" : "DSN=", u.path);
	}
	sked__url_free(&u);
	if (!o || !cs) {
		free(o);
		free(cs);
		e->kind = SKED_DBE_NOMEM;
		snprintf(e->msg, sizeof e->msg, "out of memory");
		return SKED_ENOMEM;
	}
	o->owned = 1;
	conn_value(cs, "PWD", o->secret, sizeof o->secret);
	if (!o->secret[0])
		conn_value(cs, "Password", o->secret, sizeof o->secret);
	if (!SQL_SUCCEEDED(
	            SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &o->env)) ||
	    !SQL_SUCCEEDED(SQLSetEnvAttr(o->env, SQL_ATTR_ODBC_VERSION,
	                                 (SQLPOINTER)SQL_OV_ODBC3, 0)) ||
	    !SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_DBC, o->env, &o->dbc))) {
		set_err(e, o, SQL_HANDLE_ENV, o->env,
		        "cannot set up the ODBC driver manager");
		e->kind = SKED_DBE_CONNECT;
		o->owned = 0;
		goto fail;
	}
	if (dial(o, cs, e) != SKED_OK)
		goto fail;
	/* MariaDB, MySQL: the same connection string with bounded reads and
	 * writes (see the top), unless it bounds them itself */
	char rt[32], wt[32];
	conn_value(cs, "READ_TIMEOUT", rt, sizeof rt);
	conn_value(cs, "WRITE_TIMEOUT", wt, sizeof wt);
	if (o->fam == FAM_MYSQL && !rt[0] && !wt[0]) {
		size_t n = strlen(cs) + 64;
		char *bounded = malloc(n);
		if (!bounded) {
			e->kind = SKED_DBE_NOMEM;
			snprintf(e->msg, sizeof e->msg, "out of memory");
			free(cs);
			odbc_close(o);
			return SKED_ENOMEM;
		}
		size_t l = strlen(cs);
		while (l > 0 && (cs[l - 1] == ';' || cs[l - 1] == ' '))
			l--;
		snprintf(bounded, n, "%.*s;READ_TIMEOUT=%d;WRITE_TIMEOUT=%d",
		         (int)l, cs, ODBC_IO_TIMEOUT_S, ODBC_IO_TIMEOUT_S);
		SQLDisconnect(o->dbc);
		int rc = dial(o, bounded, e);
		free(bounded);
		if (rc != SKED_OK)
			goto fail;
	}
	free(cs);
	*conn = o;
	return SKED_OK;
fail:
	free(cs);
	odbc_close(o);
	return SKED_EUNAVAILABLE;
}

static int
odbc_wrap(void *native, void **conn, sked_dberr *e)
{
	odbc *o = calloc(1, sizeof *o);
	if (!o) {
		e->kind = SKED_DBE_NOMEM;
		snprintf(e->msg, sizeof e->msg, "out of memory");
		return SKED_ENOMEM;
	}
	o->dbc = (SQLHDBC)native;
	o->owned = 0;
	if (identify(o, e) != SKED_OK) {
		odbc_close(o);
		return SKED_EUNAVAILABLE;
	}
	*conn = o;
	return SKED_OK;
}

static int
odbc_server(void *conn, char *product, size_t plen, char *version, size_t vlen,
            sked_dberr *e)
{
	odbc *o = conn;
	snprintf(product, plen, "%s", o->product);
	snprintf(version, vlen, "%s", o->version);
	return SKED_OK;
}

/* ---- statements ---- */

/* sqliteodbc decides from a statement's first word whether it returns
 * rows, so the rows of UPDATE/INSERT/DELETE … RETURNING would be lost. A
 * WITH clause in front (which SQLite allows before any of them) makes it
 * fetch them; the CTE itself is never read. */
static int
needs_with(const char *sql)
{
	while (isspace((unsigned char)*sql))
		sql++;
	return (strncasecmp(sql, "UPDATE", 6) == 0 ||
	        strncasecmp(sql, "INSERT", 6) == 0 ||
	        strncasecmp(sql, "DELETE", 6) == 0) &&
	       strcasestr(sql, "RETURNING") != NULL;
}

static char *
with_prefix(const char *sql)
{
	static const char head[] = "WITH sked__odbc AS (SELECT 1) ";
	size_t n = strlen(sql);
	char *w = malloc(sizeof head + n);
	if (w) {
		memcpy(w, head, sizeof head - 1);
		memcpy(w + sizeof head - 1, sql, n + 1);
	}
	return w;
}

/* Read column c of the current row into the result. */
static int
get_cell(odbc *o, SQLHSTMT st, int c, sked_res *res, sked_dberr *e)
{
	size_t n = 0;
	if (!o->buf) {
		o->cap = 4096;
		o->buf = malloc(o->cap);
		if (!o->buf)
			goto nomem;
	}
	for (;;) {
		SQLLEN ind = 0;
		SQLRETURN rc =
		        SQLGetData(st, (SQLUSMALLINT)(c + 1), SQL_C_CHAR,
		                   o->buf + n, (SQLLEN)(o->cap - n), &ind);
		if (rc == SQL_NO_DATA)
			break;
		if (!SQL_SUCCEEDED(rc)) {
			set_err(e, o, SQL_HANDLE_STMT, st,
			        "cannot read a value");
			return SKED_EDB;
		}
		if (ind == SQL_NULL_DATA)
			return sked__res_add(res, NULL, 0) == SKED_OK
			               ? SKED_OK
			               : SKED_ENOMEM;
		if (rc == SQL_SUCCESS) {
			n += (size_t)ind;
			break;
		}
		/* truncated: the buffer holds cap - n - 1 bytes and a NUL */
		size_t got = o->cap - n - 1;
		size_t need =
		        ind == SQL_NO_TOTAL ? o->cap * 2 : n + (size_t)ind + 1;
		n += got;
		if (need <= o->cap)
			need = o->cap * 2;
		char *b = realloc(o->buf, need);
		if (!b)
			goto nomem;
		o->buf = b;
		o->cap = need;
	}
	if (sked__res_add(res, o->buf, n) != SKED_OK)
		goto nomem;
	return SKED_OK;
nomem:
	e->kind = SKED_DBE_NOMEM;
	snprintf(e->msg, sizeof e->msg, "odbc: out of memory");
	return SKED_ENOMEM;
}

/* 1 when sql holds more than one statement (util/sqlsplit.h). */
static int
several(const char *sql)
{
	const char *at = sql, *b, *e;
	return sked__sql_next(&at, &b, &e) && sked__sql_next(&at, &b, &e);
}

static int odbc_exec(void *conn, int slot, const char *sql, const sked_val *p,
                     int np, sked_res *res, int64_t *affected, int64_t *last_id,
                     sked_dberr *e);

/* MariaDB's ODBC driver runs one statement per call unless the user's
 * connection string allows more; the dialect's parameterless
 * multi-statement texts (session settings) are run one by one, as the
 * native driver does: the last one's rows, count and id are the
 * answer. */
static int
exec_each(odbc *o, const char *sql, sked_res *res, int64_t *affected,
          int64_t *last_id, sked_dberr *e)
{
	const char *at = sql, *b, *end, *nb = NULL, *ne = NULL;
	int more = sked__sql_next(&at, &b, &end), rc = SKED_OK;
	while (more && rc == SKED_OK) {
		more = sked__sql_next(&at, &nb, &ne);
		char *one = strndup(b, (size_t)(end - b));
		if (!one) {
			e->kind = SKED_DBE_NOMEM;
			snprintf(e->msg, sizeof e->msg, "odbc: out of memory");
			return SKED_EDB;
		}
		rc = odbc_exec(o, -1, one, NULL, 0, more ? NULL : res, affected,
		               more ? NULL : last_id, e);
		free(one);
		b = nb;
		end = ne;
	}
	return rc;
}

/* A transaction (the seam's tx verb): the dialect's text as a statement,
 * but on psqlODBC through the ODBC calls (see the top). */
static int
odbc_tx(void *conn, int op, const char *sql, sked_dberr *e)
{
	odbc *o = conn;
	int rc = SKED_OK;
	int64_t affected, last_id;
	/* Oracle has no BEGIN statement at all: the same calls */
	if (o->fam != FAM_PG && o->fam != FAM_ORACLE)
		return odbc_exec(conn, -1, sql, NULL, 0, NULL, &affected,
		                 &last_id, e);
	if (op == SKED_TX_BEGIN) {
		if (!SQL_SUCCEEDED(SQLSetConnectAttr(
		            o->dbc, SQL_ATTR_AUTOCOMMIT,
		            (SQLPOINTER)SQL_AUTOCOMMIT_OFF, 0))) {
			set_err(e, o, SQL_HANDLE_DBC, o->dbc, "begin");
			rc = SKED_EDB;
		}
		return rc;
	}
	int commit = op == SKED_TX_COMMIT;
	SQLRETURN r = SQLEndTran(SQL_HANDLE_DBC, o->dbc,
	                         commit ? SQL_COMMIT : SQL_ROLLBACK);
	if (!SQL_SUCCEEDED(r)) {
		set_err(e, o, SQL_HANDLE_DBC, o->dbc,
		        commit ? "commit" : "rollback");
		rc = SKED_EDB;
	}
	/* back to autocommit even when the end failed: a rollback is the
	 * cleanup path, and the next statement must not run in a
	 * transaction nobody will end */
	if (!SQL_SUCCEEDED(SQLSetConnectAttr(o->dbc, SQL_ATTR_AUTOCOMMIT,
	                                     (SQLPOINTER)SQL_AUTOCOMMIT_ON,
	                                     0)) &&
	    rc == SKED_OK) {
		set_err(e, o, SQL_HANDLE_DBC, o->dbc, "autocommit");
		rc = SKED_EDB;
	}
	return rc;
}

static int
odbc_exec(void *conn, int slot, const char *sql, const sked_val *p, int np,
          sked_res *res, int64_t *affected, int64_t *last_id, sked_dberr *e)
{
	odbc *o = conn;
	if (o->fam == FAM_MYSQL && np == 0 && slot < 0 && several(sql))
		return exec_each(o, sql, res, affected, last_id, e);
	ostmt tmp = {0}, *s;
	int cached = slot >= 0 && slot < SKED_STMT_SLOTS;
	s = cached ? &o->slot[slot] : &tmp;
	if (!s->st) {
		char *text = NULL;
		if (sked__odbc_rewrite(sql, &text, &s->map, &s->nmarks) !=
		    SKED_OK)
			goto nomem;
		SQLRETURN rc = SQLAllocHandle(SQL_HANDLE_STMT, o->dbc, &s->st);
		if (!SQL_SUCCEEDED(rc)) {
			set_err(e, o, SQL_HANDLE_DBC, o->dbc, NULL);
			s->st = NULL;
			free(text);
			goto drop;
		}
		if (o->fam == FAM_SQLITE && needs_with(text)) {
			char *w = with_prefix(text);
			free(text);
			if (!(text = w))
				goto nomem;
		}
		rc = SQLPrepare(s->st, (SQLCHAR *)text, SQL_NTS);
		free(text);
		if (!SQL_SUCCEEDED(rc)) {
			set_err(e, o, SQL_HANDLE_STMT, s->st, NULL);
			goto drop;
		}
	}
	for (int k = 0; k < s->nmarks; k++) {
		if (s->map[k] < 0 || s->map[k] >= np) {
			e->kind = SKED_DBE_OTHER;
			snprintf(e->msg, sizeof e->msg,
			         "odbc: the statement uses parameter %d of %d",
			         s->map[k] + 1, np);
			goto drop;
		}
	}
	/* per-marker buffers: an indicator, and the integer it points at */
	SQLLEN ind_small[SMALL];
	SQLBIGINT int_small[SMALL];
	SQLLEN *ind = ind_small;
	SQLBIGINT *ints = int_small;
	if (s->nmarks > SMALL) {
		ind = malloc((size_t)s->nmarks * sizeof *ind);
		ints = malloc((size_t)s->nmarks * sizeof *ints);
		if (!ind || !ints) {
			if (ind != ind_small)
				free(ind);
			if (ints != int_small)
				free(ints);
			goto nomem;
		}
	}
	int rcode = SKED_OK;
	SQLRETURN rc = SQL_SUCCESS;
	for (int k = 0; k < s->nmarks && SQL_SUCCEEDED(rc); k++) {
		const sked_val *v = &p[s->map[k]];
		SQLUSMALLINT pos = (SQLUSMALLINT)(k + 1);
		switch (v->type) {
		case SKED_VINT:
			ints[k] = (SQLBIGINT)v->i;
			ind[k] = 0;
			rc = SQLBindParameter(s->st, pos, SQL_PARAM_INPUT,
			                      SQL_C_SBIGINT, SQL_BIGINT, 0, 0,
			                      &ints[k], 0, &ind[k]);
			break;
		case SKED_VTEXT:
			ind[k] = (SQLLEN)v->len;
			rc = SQLBindParameter(
			        s->st, pos, SQL_PARAM_INPUT, SQL_C_CHAR,
			        v->len > 4000 ? SQL_LONGVARCHAR : SQL_VARCHAR,
			        v->len ? v->len : 1, 0, (SQLPOINTER)v->s,
			        (SQLLEN)v->len, &ind[k]);
			break;
		case SKED_VNULL:
		default:
			ind[k] = SQL_NULL_DATA;
			rc = SQLBindParameter(s->st, pos, SQL_PARAM_INPUT,
			                      SQL_C_CHAR, SQL_VARCHAR, 1, 0,
			                      NULL, 0, &ind[k]);
			break;
		}
	}
	if (!SQL_SUCCEEDED(rc)) {
		set_err(e, o, SQL_HANDLE_STMT, s->st, "bind");
		rcode = SKED_EDB;
		goto done;
	}
	rc = SQLExecute(s->st);
	if (!SQL_SUCCEEDED(rc) && rc != SQL_NO_DATA) {
		set_err(e, o, SQL_HANDLE_STMT, s->st, NULL);
		rcode = SKED_EDB;
		goto done;
	}
	SQLLEN count = -1;
	if (rc != SQL_NO_DATA && !SQL_SUCCEEDED(SQLRowCount(s->st, &count)))
		count = -1;
	if (rc == SQL_NO_DATA)
		count = 0;
	SQLSMALLINT ncols = 0;
	if (rc != SQL_NO_DATA &&
	    !SQL_SUCCEEDED(SQLNumResultCols(s->st, &ncols)))
		ncols = 0;
	int nrows = 0;
	if (ncols > 0) {
		if (res && sked__res_begin(res, ncols) != SKED_OK) {
			rcode = SKED_ENOMEM;
			goto done;
		}
		while ((rc = SQLFetch(s->st)) != SQL_NO_DATA) {
			if (!SQL_SUCCEEDED(rc)) {
				set_err(e, o, SQL_HANDLE_STMT, s->st, NULL);
				rcode = SKED_EDB;
				goto done;
			}
			nrows++;
			for (int c = 0; res && c < ncols; c++) {
				rcode = get_cell(o, s->st, c, res, e);
				if (rcode != SKED_OK)
					goto done;
			}
		}
	}
	/* drain what else the statement sent (SQL Server sends counts) */
	while ((rc = SQLMoreResults(s->st)) != SQL_NO_DATA) {
		if (!SQL_SUCCEEDED(rc)) {
			set_err(e, o, SQL_HANDLE_STMT, s->st, NULL);
			rcode = SKED_EDB;
			goto done;
		}
	}
	/* with rows (RETURNING, OUTPUT) each row is one changed row; some
	 * drivers report no count for those */
	*affected = ncols > 0 ? nrows : (int64_t)count;
done:
	SQLFreeStmt(s->st, SQL_CLOSE);
	SQLFreeStmt(s->st, SQL_RESET_PARAMS);
	if (ind != ind_small)
		free(ind);
	if (ints != int_small)
		free(ints);
	if (!cached) {
		SQLFreeHandle(SQL_HANDLE_STMT, s->st);
		free(s->map);
	}
	if (rcode == SKED_ENOMEM) {
		e->kind = SKED_DBE_NOMEM;
		snprintf(e->msg, sizeof e->msg, "odbc: out of memory");
	}
	return rcode == SKED_OK ? SKED_OK : SKED_EDB;
nomem:
	e->kind = SKED_DBE_NOMEM;
	snprintf(e->msg, sizeof e->msg, "odbc: out of memory");
drop:
	/* a statement that failed to prepare is not kept */
	if (s->st)
		SQLFreeHandle(SQL_HANDLE_STMT, s->st);
	free(s->map);
	memset(s, 0, sizeof *s);
	return SKED_EDB;
}

const sked_driver sked__driver_odbc = {
        .name = "odbc",
        .connect = odbc_connect,
        .close = odbc_close,
        .server = odbc_server,
        .exec = odbc_exec,
        .tx = odbc_tx,
        .socket = NULL,
        .drain_notify = NULL,
        .wrap = odbc_wrap,
};
