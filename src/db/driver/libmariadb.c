/*
 * db/driver/libmariadb.c — the MySQL and MariaDB driver (MariaDB Connector/C).
 *
 * Layer: a driver behind db.c. It connects from a mysql:// or mariadb://
 * URL (utf8mb4, a connect timeout, TLS options passed through to
 * Connector/C), prepares statements once per cache slot with the binary
 * protocol, rewrites sked's numbered markers (?1, ?2 …, SQLite's form)
 * into MySQL's positional '?' with a map from each marker to its
 * parameter, fetches every result column as text, and maps server error
 * numbers to the seam's error kinds. Which SQL to say is the dialect's
 * business (dialect/mysql.c); session settings come from its session_init.
 *
 * Two choices a reader should know about:
 *   - connections use CLIENT_FOUND_ROWS, so "affected rows" counts the rows
 *     an UPDATE matched, as every other driver reports them, not only the
 *     rows whose values changed (sked's conditional updates rely on it);
 *   - a statement with no parameters and no cache slot (BEGIN, COMMIT,
 *     schema DDL, session settings) goes over the text protocol in one
 *     round trip instead of prepare/execute/close, and may hold several
 *     statements separated by ';' (the dialect's session_init does),
 *     run one by one as util/sqlsplit.h splits them.
 */
#include "db/driver/driver.h"
#include "db/driver/errmap.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <mysql.h>

#include "util/sqlsplit.h"
#include "util/url.h"

#define CONNECT_TIMEOUT_S 10
#define FIRST_CELL        64 /* initial fetch buffer per column, grows on demand */

/* The ?N → ? rewrite, exposed for tests/unit/test_mysql.c. */
int sked__mysql_rewrite(const char *sql, char **out, int **map, int *nmap);

typedef struct mstmt {
	MYSQL_STMT *st;
	int *map; /* marker k binds parameter map[k] (0-based) */
	int nmap;
} mstmt;

typedef struct my {
	MYSQL *m;
	int owned; /* 0: wraps the application's connection */
	mstmt slot[SKED_STMT_SLOTS];
} my;

/* ---- errors ---- */

static void
set_err(sked_dberr *e, unsigned int no, const char *state, const char *msg,
        const char *what)
{
	e->native = (int)no;
	e->kind = sked__errmap_mysql(no);
	snprintf(e->sqlstate, sizeof e->sqlstate, "%s", state ? state : "");
	snprintf(e->msg, sizeof e->msg, "mariadb: %s%s%s (%u%s%s)",
	         what ? what : "", what ? ": " : "", msg ? msg : "?", no,
	         e->sqlstate[0] ? ", SQLSTATE " : "", e->sqlstate);
}

/* A failed connect by the server's error number: access denied
 * (1045 ER_ACCESS_DENIED_ERROR, 1044 ER_DBACCESS_DENIED_ERROR, 1698
 * ER_ACCESS_DENIED_NO_PASSWORD_ERROR), an unknown database (1049
 * ER_BAD_DB_ERROR), TLS that cannot be had (2026 CR_SSL_CONNECTION_ERROR,
 * 3159 ER_SECURE_TRANSPORT_REQUIRED) or an authentication method the
 * client lacks (1251, 2059): waiting cannot fix them. Anything else
 * (2002/2003 refused, 1040 too many connections, a server starting) may
 * come back. */
static sked_dbe_kind
connect_kind(unsigned int n)
{
	switch (n) {
	case 1044:
	case 1045:
	case 1698:
		return SKED_DBE_PERM;
	case 1049:
	case 1251:
	case 2026:
	case 2059:
	case 3159:
		return SKED_DBE_CONFIG;
	default:
		return SKED_DBE_CONNECT;
	}
}

static void
conn_err(sked_dberr *e, MYSQL *m, const char *what)
{
	set_err(e, mysql_errno(m), mysql_sqlstate(m), mysql_error(m), what);
}

static void
stmt_err(sked_dberr *e, MYSQL_STMT *st, const char *what)
{
	set_err(e, mysql_stmt_errno(st), mysql_stmt_sqlstate(st),
	        mysql_stmt_error(st), what);
}

static int
nomem(sked_dberr *e)
{
	e->kind = SKED_DBE_NOMEM;
	snprintf(e->msg, sizeof e->msg, "mariadb: out of memory");
	return SKED_ENOMEM;
}

/* ---- the ?N rewrite ---- */

/* Copy sql to *out with every ?N (and bare ?, which takes the number after
 * the largest seen so far, as SQLite numbers it) replaced by '?', and
 * *map[k] = N - 1 for the k-th marker. Markers inside '…', "…" and `…`
 * quotes (with backslash escapes and doubled quotes) and inside comments
 * are text, not markers. SKED_EINVAL for ?0. */
int
sked__mysql_rewrite(const char *sql, char **out, int **map, int *nmap)
{
	size_t n = strlen(sql);
	char *o = malloc(n + 1);
	int *mp = malloc(sizeof *mp * (n / 2 + 1));
	int k = 0, top = 0;
	size_t j = 0;
	*out = NULL;
	*map = NULL;
	*nmap = 0;
	if (!o || !mp) {
		free(o);
		free(mp);
		return SKED_ENOMEM;
	}
	for (size_t i = 0; i < n;) {
		char c = sql[i];
		if (c == '\'' || c == '"' || c == '`') {
			/* a quoted literal or identifier, copied whole */
			o[j++] = sql[i++];
			while (i < n) {
				if (sql[i] == '\\' && c != '`' && i + 1 < n) {
					o[j++] = sql[i++];
					o[j++] = sql[i++];
					continue;
				}
				if (sql[i] == c) {
					o[j++] = sql[i++];
					if (i < n &&
					    sql[i] == c) { /* doubled */
						o[j++] = sql[i++];
						continue;
					}
					break;
				}
				o[j++] = sql[i++];
			}
			continue;
		}
		if ((c == '-' && sql[i + 1] == '-' &&
		     (sql[i + 2] == ' ' || sql[i + 2] == '\t')) ||
		    c == '#') {
			while (i < n && sql[i] != '\n')
				o[j++] = sql[i++];
			continue;
		}
		if (c == '/' && sql[i + 1] == '*') {
			const char *end = strstr(sql + i + 2, "*/");
			size_t stop = end ? (size_t)(end - sql) + 2 : n;
			while (i < stop)
				o[j++] = sql[i++];
			continue;
		}
		if (c != '?') {
			o[j++] = sql[i++];
			continue;
		}
		i++;
		long num = 0;
		int digits = 0;
		while (sql[i] >= '0' && sql[i] <= '9') {
			if (num < 100000)
				num = num * 10 + (sql[i] - '0');
			i++;
			digits++;
		}
		if (!digits)
			num = top + 1;
		if (num < 1 || num > 65535) {
			free(o);
			free(mp);
			return SKED_EINVAL;
		}
		if (num > top)
			top = (int)num;
		mp[k++] = (int)num - 1;
		o[j++] = '?';
	}
	o[j] = '\0';
	*out = o;
	*map = mp;
	*nmap = k;
	return SKED_OK;
}

/* ---- connecting ---- */

static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static int lib_rc;

static void
lib_init(void)
{
	/* not thread safe in Connector/C: once per process */
	lib_rc = mysql_library_init(0, NULL, NULL);
}

/* URL query parameters Connector/C understands, as mysql_optionsv takes
 * them. Names may use '-' for '_'. */
enum { OPT_STR, OPT_UINT, OPT_BOOL };
static const struct {
	const char *name;
	enum mysql_option opt;
	int type;
} url_opts[] = {
        {"connect_timeout", MYSQL_OPT_CONNECT_TIMEOUT, OPT_UINT},
        {"read_timeout", MYSQL_OPT_READ_TIMEOUT, OPT_UINT},
        {"write_timeout", MYSQL_OPT_WRITE_TIMEOUT, OPT_UINT},
        {"ssl", MYSQL_OPT_SSL_ENFORCE, OPT_BOOL},
        {"ssl_ca", MYSQL_OPT_SSL_CA, OPT_STR},
        {"ssl_capath", MYSQL_OPT_SSL_CAPATH, OPT_STR},
        {"ssl_cert", MYSQL_OPT_SSL_CERT, OPT_STR},
        {"ssl_key", MYSQL_OPT_SSL_KEY, OPT_STR},
        {"ssl_cipher", MYSQL_OPT_SSL_CIPHER, OPT_STR},
        {"ssl_crl", MYSQL_OPT_SSL_CRL, OPT_STR},
        {"ssl_crlpath", MYSQL_OPT_SSL_CRLPATH, OPT_STR},
        {"ssl_verify_server_cert", MYSQL_OPT_SSL_VERIFY_SERVER_CERT, OPT_BOOL},
        {"tls_version", MYSQL_OPT_TLS_VERSION, OPT_STR},
        {"tls_peer_fp", MARIADB_OPT_TLS_PEER_FP, OPT_STR},
        {"server_public_key", MYSQL_SERVER_PUBLIC_KEY, OPT_STR},
        {"default_auth", MYSQL_DEFAULT_AUTH, OPT_STR},
};

static int
name_is(const char *key, const char *name)
{
	for (; *key && *name; key++, name++) {
		char c = *key == '-' ? '_' : *key;
		if ((c | 0x20) != *name && c != *name)
			return 0;
	}
	return *key == '\0' && *name == '\0';
}

static int
apply_param(MYSQL *m, const char *key, const char *val, sked_dberr *e)
{
	if (name_is(key, "socket"))
		return SKED_OK; /* sked__url_parse put it in u.socket */
	for (size_t i = 0; i < sizeof url_opts / sizeof url_opts[0]; i++) {
		if (!name_is(key, url_opts[i].name))
			continue;
		int rc;
		if (url_opts[i].type == OPT_STR) {
			rc = mysql_optionsv(m, url_opts[i].opt, val);
		} else {
			char *end;
			unsigned long v;
			if (url_opts[i].type == OPT_BOOL &&
			    (strcasecmp(val, "true") == 0 ||
			     strcasecmp(val, "on") == 0))
				v = 1;
			else if (url_opts[i].type == OPT_BOOL &&
			         (strcasecmp(val, "false") == 0 ||
			          strcasecmp(val, "off") == 0))
				v = 0;
			else
				v = strtoul(val, &end, 10);
			if (url_opts[i].type == OPT_UINT || v > 1) {
				if (!*val ||
				    (url_opts[i].type == OPT_UINT && *end) ||
				    v > 86400) {
					e->kind = SKED_DBE_CONNECT;
					snprintf(e->msg, sizeof e->msg,
					         "mariadb: URL parameter '%s' "
					         "wants a number of seconds "
					         "(0..86400) or a boolean",
					         key);
					return SKED_EURL;
				}
			}
			if (url_opts[i].type == OPT_UINT) {
				unsigned int u = (unsigned int)v;
				rc = mysql_optionsv(m, url_opts[i].opt, &u);
			} else {
				my_bool b = v ? 1 : 0;
				rc = mysql_optionsv(m, url_opts[i].opt, &b);
			}
		}
		if (rc != 0) {
			e->kind = SKED_DBE_CONNECT;
			snprintf(e->msg, sizeof e->msg,
			         "mariadb: Connector/C refused URL parameter "
			         "'%s'",
			         key);
			return SKED_EURL;
		}
		return SKED_OK;
	}
	e->kind = SKED_DBE_CONNECT;
	snprintf(e->msg, sizeof e->msg,
	         "mariadb: unknown URL parameter '%.64s' (known: socket, "
	         "connect_timeout, read_timeout, write_timeout, ssl, ssl_ca, "
	         "ssl_capath, ssl_cert, ssl_key, ssl_cipher, ssl_crl, "
	         "ssl_crlpath, ssl_verify_server_cert, tls_version, "
	         "tls_peer_fp, server_public_key, default_auth)",
	         key);
	return SKED_EURL;
}

static void
my_close(void *conn)
{
	my *c = conn;
	if (!c)
		return;
	for (int i = 0; i < SKED_STMT_SLOTS; i++) {
		if (c->slot[i].st)
			mysql_stmt_close(c->slot[i].st);
		free(c->slot[i].map);
	}
	if (c->owned && c->m)
		mysql_close(c->m);
	free(c);
}

static int
my_connect(const char *url, void **conn, sked_dberr *e)
{
	sked_url u;
	char err[256];
	*conn = NULL;
	if (sked__url_parse(url, &u, err, sizeof err) != SKED_OK) {
		sked__url_free(&u);
		e->kind = SKED_DBE_CONNECT;
		snprintf(e->msg, sizeof e->msg, "%s", err);
		return SKED_EURL;
	}
	pthread_once(&lib_once, lib_init);
	my *c = calloc(1, sizeof *c);
	if (!c || lib_rc != 0 || !(c->owned = 1, c->m = mysql_init(NULL))) {
		free(c);
		sked__url_free(&u);
		return nomem(e);
	}
	unsigned int timeout = CONNECT_TIMEOUT_S;
	my_bool no = 0;
	int rc = SKED_OK;
	if (mysql_optionsv(c->m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout) ||
	    mysql_optionsv(c->m, MYSQL_SET_CHARSET_NAME, "utf8mb4") ||
	    mysql_optionsv(c->m, MYSQL_OPT_RECONNECT, &no)) {
		rc = nomem(e);
		goto fail;
	}
	for (int i = 0; i < u.nparams && rc == SKED_OK; i++)
		rc = apply_param(c->m, u.keys[i], u.values[i], e);
	if (rc != SKED_OK)
		goto fail;
	if (!mysql_real_connect(c->m, u.host, u.user, u.password, u.dbname,
	                        (unsigned int)u.port, u.socket,
	                        CLIENT_FOUND_ROWS)) {
		char what[600];
		char red[512];
		sked__url_redact(url, red, sizeof red);
		snprintf(what, sizeof what, "cannot connect to %s", red);
		conn_err(e, c->m, what);
		/* whatever the server said, the connection did not happen;
		 * what waiting cannot fix ends the wait (connect_kind) */
		if (e->kind != SKED_DBE_NOMEM)
			e->kind = connect_kind(mysql_errno(c->m));
		rc = SKED_EUNAVAILABLE;
		goto fail;
	}
	sked__url_free(&u);
	*conn = c;
	return SKED_OK;
fail:
	sked__url_free(&u);
	my_close(c);
	return rc;
}

static int
my_wrap(void *native, void **conn, sked_dberr *e)
{
	my *c = calloc(1, sizeof *c);
	if (!c)
		return nomem(e);
	c->m = native;
	c->owned = 0;
	*conn = c;
	return SKED_OK;
}

static int
my_server(void *conn, char *product, size_t plen, char *version, size_t vlen,
          sked_dberr *e)
{
	my *c = conn;
	const char *v = mysql_get_server_info(c->m);
	if (!v) {
		conn_err(e, c->m, "cannot read the server version");
		return SKED_EDB;
	}
	int maria = mariadb_connection(c->m) || strcasestr(v, "mariadb");
	snprintf(product, plen, "%s", maria ? "MariaDB" : "MySQL");
	snprintf(version, vlen, "%s", v);
	return SKED_OK;
}

/* ---- the text protocol: no parameters, no cache slot ---- */

static int
text_one(my *c, const char *sql, size_t len, sked_res *res, int64_t *affected,
         int64_t *last_id, sked_dberr *e)
{
	if (mysql_real_query(c->m, sql, (unsigned long)len) != 0) {
		conn_err(e, c->m, NULL);
		return SKED_EDB;
	}
	MYSQL_RES *rs = mysql_store_result(c->m);
	if (!rs) {
		if (mysql_field_count(c->m) != 0) {
			conn_err(e, c->m, NULL);
			return SKED_EDB;
		}
		*affected = (int64_t)mysql_affected_rows(c->m);
		if (last_id)
			*last_id = (int64_t)mysql_insert_id(c->m);
		return SKED_OK;
	}
	int rc = SKED_OK;
	unsigned int ncols = mysql_num_fields(rs);
	if (res && sked__res_begin(res, (int)ncols) != SKED_OK)
		rc = nomem(e);
	MYSQL_ROW row;
	while (rc == SKED_OK && res && (row = mysql_fetch_row(rs))) {
		unsigned long *lens = mysql_fetch_lengths(rs);
		for (unsigned int i = 0; i < ncols && rc == SKED_OK; i++)
			if (sked__res_add(res, row[i], row[i] ? lens[i] : 0) !=
			    SKED_OK)
				rc = nomem(e);
	}
	*affected = -1;
	mysql_free_result(rs);
	return rc;
}

static int
text_exec(my *c, const char *sql, sked_res *res, int64_t *affected,
          int64_t *last_id, sked_dberr *e)
{
	/* one statement at a time (util/sqlsplit.h); constant text only
	 * (no parameters ever reach this path) */
	const char *at = sql, *b, *end;
	while (sked__sql_next(&at, &b, &end)) {
		int rc = text_one(c, b, (size_t)(end - b), res, affected,
		                  last_id, e);
		if (rc != SKED_OK)
			return rc;
	}
	return SKED_OK;
}

/* ---- prepared statements ---- */

/* The ?N rewrite of sql into *text and ms's marker map, and a statement
 * handle for it (not prepared yet). */
static int
rewrite_init(my *c, const char *sql, mstmt *ms, char **text, sked_dberr *e)
{
	int rc = sked__mysql_rewrite(sql, text, &ms->map, &ms->nmap);
	if (rc == SKED_ENOMEM)
		return nomem(e);
	if (rc != SKED_OK) {
		e->kind = SKED_DBE_OTHER;
		snprintf(e->msg, sizeof e->msg,
		         "mariadb: bad parameter marker in statement");
		return SKED_EDB;
	}
	ms->st = mysql_stmt_init(c->m);
	if (!ms->st) {
		free(*text);
		*text = NULL;
		conn_err(e, c->m, "cannot prepare");
		return SKED_EDB;
	}
	return SKED_OK;
}

static int
prepare(my *c, const char *sql, mstmt *ms, sked_dberr *e)
{
	char *text;
	int rc = rewrite_init(c, sql, ms, &text, e);
	if (rc != SKED_OK)
		return rc;
	if (mysql_stmt_prepare(ms->st, text, (unsigned long)strlen(text))) {
		stmt_err(e, ms->st, NULL);
		free(text);
		mysql_stmt_close(ms->st);
		ms->st = NULL;
		free(ms->map);
		ms->map = NULL;
		return SKED_EDB;
	}
	free(text);
	if (mysql_stmt_param_count(ms->st) != (unsigned long)ms->nmap) {
		e->kind = SKED_DBE_OTHER;
		snprintf(e->msg, sizeof e->msg,
		         "mariadb: the server counts %lu parameter markers, "
		         "sked %d",
		         mysql_stmt_param_count(ms->st), ms->nmap);
		mysql_stmt_close(ms->st);
		ms->st = NULL;
		return SKED_EDB;
	}
	return SKED_OK;
}

static void
unprepare(mstmt *ms)
{
	if (ms->st)
		mysql_stmt_close(ms->st);
	free(ms->map);
	memset(ms, 0, sizeof *ms);
}

/* Fetch every row of st's result as text into res (NULL: discard). */
static int
fetch_all(MYSQL_STMT *st, MYSQL_RES *meta, sked_res *res, sked_dberr *e)
{
	unsigned int ncols = mysql_num_fields(meta);
	MYSQL_BIND *b = calloc(ncols, sizeof *b);
	unsigned long *len = calloc(ncols, sizeof *len);
	my_bool *isnull = calloc(ncols, sizeof *isnull);
	int rc = SKED_OK;
	if (!b || !len || !isnull)
		goto oom;
	for (unsigned int i = 0; i < ncols; i++) {
		b[i].buffer_type = MYSQL_TYPE_STRING;
		b[i].buffer = malloc(FIRST_CELL);
		b[i].buffer_length = FIRST_CELL;
		b[i].length = &len[i];
		b[i].is_null = &isnull[i];
		if (!b[i].buffer)
			goto oom;
	}
	if (mysql_stmt_bind_result(st, b)) {
		stmt_err(e, st, "bind result");
		rc = SKED_EDB;
		goto out;
	}
	if (res && sked__res_begin(res, (int)ncols) != SKED_OK)
		goto oom;
	for (;;) {
		int f = mysql_stmt_fetch(st);
		if (f == MYSQL_NO_DATA)
			break;
		if (f == 1) {
			stmt_err(e, st, NULL);
			rc = SKED_EDB;
			goto out;
		}
		if (!res)
			continue;
		int rebind = 0;
		for (unsigned int i = 0; i < ncols; i++) {
			if (isnull[i] || len[i] < b[i].buffer_length)
				continue;
			/* truncated: grow this column's buffer, fetch it
			 * again, and keep the size for the rows to come */
			void *nb = realloc(b[i].buffer, len[i] + 1);
			if (!nb)
				goto oom;
			b[i].buffer = nb;
			b[i].buffer_length = len[i] + 1;
			if (mysql_stmt_fetch_column(st, &b[i], i, 0)) {
				stmt_err(e, st, "fetch column");
				rc = SKED_EDB;
				goto out;
			}
			rebind = 1;
		}
		for (unsigned int i = 0; i < ncols; i++)
			if (sked__res_add(res, isnull[i] ? NULL : b[i].buffer,
			                  isnull[i] ? 0 : len[i]) != SKED_OK)
				goto oom;
		if (rebind && mysql_stmt_bind_result(st, b)) {
			stmt_err(e, st, "bind result");
			rc = SKED_EDB;
			goto out;
		}
	}
	goto out;
oom:
	rc = nomem(e);
out:
	for (unsigned int i = 0; b && i < ncols; i++)
		free(b[i].buffer);
	free(b);
	free(len);
	free(isnull);
	return rc;
}

#define SMALL 16

/* Bind p to ms's markers, execute ms (in one round trip with its prepare
 * when direct is its text), and fetch the result into res. */
static int
bind_run(mstmt *ms, const char *direct, const sked_val *p, int np,
         sked_res *res, int64_t *affected, int64_t *last_id, sked_dberr *e)
{
	MYSQL_BIND sb[SMALL];
	unsigned long slen[SMALL];
	long long sint[SMALL];
	MYSQL_BIND *b = sb;
	unsigned long *lens = slen;
	long long *ints = sint;
	int rc;
	if (ms->nmap > SMALL) {
		b = calloc((size_t)ms->nmap, sizeof *b);
		lens = calloc((size_t)ms->nmap, sizeof *lens);
		ints = calloc((size_t)ms->nmap, sizeof *ints);
		if (!b || !lens || !ints) {
			rc = nomem(e);
			goto done;
		}
	} else {
		memset(sb, 0, sizeof sb);
	}
	for (int k = 0; k < ms->nmap; k++) {
		int i = ms->map[k];
		if (i >= np) {
			e->kind = SKED_DBE_OTHER;
			snprintf(e->msg, sizeof e->msg,
			         "mariadb: statement wants parameter %d, %d "
			         "given",
			         i + 1, np);
			rc = SKED_EDB;
			goto done;
		}
		switch (p[i].type) {
		case SKED_VINT:
			ints[k] = (long long)p[i].i;
			b[k].buffer_type = MYSQL_TYPE_LONGLONG;
			b[k].buffer = &ints[k];
			break;
		case SKED_VTEXT:
			lens[k] = (unsigned long)p[i].len;
			b[k].buffer_type = MYSQL_TYPE_STRING;
			b[k].buffer = (void *)(p[i].s ? p[i].s : "");
			b[k].buffer_length = lens[k];
			b[k].length = &lens[k];
			break;
		default:
			b[k].buffer_type = MYSQL_TYPE_NULL;
		}
	}
	if (ms->nmap > 0 && mysql_stmt_bind_param(ms->st, b)) {
		stmt_err(e, ms->st, "bind");
		rc = SKED_EDB;
		goto done;
	}
	if (direct ? mariadb_stmt_execute_direct(ms->st, direct, strlen(direct))
	           : mysql_stmt_execute(ms->st)) {
		stmt_err(e, ms->st, NULL);
		rc = SKED_EDB;
		goto done;
	}
	MYSQL_RES *meta = mysql_stmt_result_metadata(ms->st);
	if (meta) {
		rc = fetch_all(ms->st, meta, res, e);
		mysql_free_result(meta);
		*affected = -1;
	} else {
		rc = SKED_OK;
		*affected = (int64_t)mysql_stmt_affected_rows(ms->st);
		if (last_id)
			*last_id = (int64_t)mysql_stmt_insert_id(ms->st);
	}
	mysql_stmt_free_result(ms->st);
done:
	if (b != sb) {
		free(b);
		free(lens);
		free(ints);
	}
	return rc;
}

/* The server answers a cached statement it no longer holds with 1243
 * (ER_UNKNOWN_STMT_HANDLER) and one whose tables changed under it with
 * 1615 (ER_NEED_REPREPARE). Either comes before the statement runs, so
 * the transaction stands where it stood: the statement is prepared
 * again and run once more, as it would have run with a good handle.
 * A Galera node answered 1243 to a worker's claim after another node
 * was killed (t_galera, 2026-12-05); before, the slot kept the dead
 * handle and that worker could not claim again on its connection. */
static int
stale_handle(const mstmt *ms, const mstmt *once, const sked_dberr *e)
{
	return ms != once && (e->native == 1243 || e->native == 1615);
}

static int
my_exec(void *conn, int slot, const char *sql, const sked_val *p, int np,
        sked_res *res, int64_t *affected, int64_t *last_id, sked_dberr *e)
{
	my *c = conn;
	if (np == 0 && slot < 0)
		return text_exec(c, sql, res, affected, last_id, e);
	mstmt once = {0};
	mstmt *ms =
	        slot >= 0 && slot < SKED_STMT_SLOTS ? &c->slot[slot] : &once;
	/* a statement run once (its text is made per call: a batch's ids)
	 * is prepared and executed in one round trip where the server
	 * takes both at once (MariaDB 10.2+; Connector/C sends them one
	 * after the other elsewhere) */
	char *direct = NULL;
	int rc;
	if (ms == &once) {
		if ((rc = rewrite_init(c, sql, ms, &direct, e)) != SKED_OK)
			return rc;
		unsigned int npar = (unsigned int)ms->nmap;
		if (mysql_stmt_attr_set(ms->st, STMT_ATTR_PREBIND_PARAMS,
		                        &npar)) {
			stmt_err(e, ms->st, "bind");
			free(direct);
			unprepare(ms);
			return SKED_EDB;
		}
	} else if (!ms->st && (rc = prepare(c, sql, ms, e)) != SKED_OK) {
		return rc;
	}
	rc = bind_run(ms, direct, p, np, res, affected, last_id, e);
	if (rc != SKED_OK && stale_handle(ms, &once, e)) {
		/* the error came from the execute, before any row */
		unprepare(ms);
		rc = prepare(c, sql, ms, e);
		if (rc == SKED_OK)
			rc = bind_run(ms, NULL, p, np, res, affected, last_id,
			              e);
	}
	/* a lost connection leaves the statement useless: prepare again
	 * after a reconnect (db.c callers get a new conn; this is for the
	 * odd statement the server dropped, e.g. after a schema change) */
	if (rc != SKED_OK && ms != &once &&
	    (stale_handle(ms, &once, e) || e->kind == SKED_DBE_CONNECT))
		unprepare(ms);
	if (ms == &once)
		unprepare(ms);
	free(direct);
	return rc;
}

const sked_driver sked__driver_mysql = {
        .name = "mariadb",
        .connect = my_connect,
        .close = my_close,
        .server = my_server,
        .exec = my_exec,
        .socket = NULL,
        .drain_notify = NULL,
        .wrap = my_wrap,
};
