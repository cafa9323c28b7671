/*
 * db/driver/libpq.c — the PostgreSQL driver (libpq).
 *
 * Layer: a driver behind db.c. It connects with the postgres:// or
 * postgresql:// URL handed to libpq unchanged (every libpq parameter
 * passes through), prepares each cached statement once per connection
 * under a generated name, rewrites sked's '?N' markers to '$N', sends
 * parameters as text and copies rows into a sked_res. It maps SQLSTATEs
 * to the seam's error kinds and lends its socket to the worker for
 * LISTEN/NOTIFY. Which SQL to send is the dialect's business
 * (src/dialect/postgresql.c); what to do with rows is the model's.
 *
 * Defaults the URL can override: connect_timeout=10 (unless
 * PGCONNECT_TIMEOUT is set) and fallback_application_name=sked, so an
 * administrator sees sked's sessions in pg_stat_activity.
 *
 * A borrowed connection (wrap) is the application's: sked never closes
 * it, never changes its notice processor, and runs unnamed statements
 * only, so it leaves no prepared statements behind in that session.
 *
 * Behind a pooler that hands out server sessions per transaction
 * (PgBouncer's pool_mode = transaction) nothing lives from one
 * transaction to the next, and a pooler does not say which mode it is
 * in, so the user says it: sked_pooling=transaction in the URL's query
 * (sked_pooling=session, the default, changes nothing). The driver takes
 * the parameter out before libpq sees the URL and then runs unnamed
 * statements only (Parse, Bind and Execute under one Sync, which the
 * pooler keeps on one server session), lends no socket for wake-ups and
 * turns LISTEN into a no-op, so workers poll.
 *
 * Without the parameter the driver finds a pooler by itself, in two ways.
 * At connect it asks the server for its process id: a pooler answers the
 * connect with a key of its own, so pg_backend_pid() differs from what
 * libpq was told, and the connection runs as with sked_pooling=transaction
 * (a pooler's mode cannot be asked). And a named statement missing
 * (SQLSTATE 26000) or already there (42P05) on a server session this
 * connection never prepared it on says the same: the connection switches
 * then, and runs the statement again unnamed when no transaction was under
 * way (inside one, the transaction is lost: SKED_DBE_RETRY). Either is
 * logged once per process, and every later connection of the process
 * starts unnamed. sked_pooling=session is the explicit choice of named
 * statements: no check, no switch, and those errors name the setting.
 */
#include "db/driver/driver.h"
#include "db/driver/errmap.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "util/log.h"

#define TEXTOID 25 /* pg_type.oid of text, fixed in the catalog */

/* Exposed for tests/unit/test_pg.c; not part of db.h. used (may be NULL)
 * gets a 1 at [N-1] for each $N the text refers to, for N <= nused. */
char *sked__pg_rewrite(const char *sql, unsigned char *used, int nused);
/* The same: forget that a pooler was found in this process. */
void sked__pg_forget_pooler(void);

/* sked_pooling in the URL */
enum { POOLING_UNSAID, POOLING_SESSION, POOLING_TRANSACTION };

enum { NOTE_KEEP = 16 };

typedef struct pgc {
	PGconn *conn;
	int borrowed;
	int pooling;     /* POOLING_*, as the URL says */
	int txpool;      /* said or found: nothing outlives a transaction */
	unsigned serial; /* makes statement names unique */
	unsigned char
	        ready[SKED_STMT_SLOTS]; /* slot prepared on this session */
	/* notifications that arrived with a result, kept for the next
	 * drain (at most NOTE_KEEP; past it, only that some were lost) */
	char *kept[NOTE_KEEP];
	int nkept, lost;
} pgc;

static atomic_uint next_serial;
/* A pooler was found on a connection whose URL did not say: every later
 * connection of this process starts unnamed; said is for the one line. */
static atomic_int pooler_found, pooler_said;

/* ---- '?N' → '$N' ---- */

/* Rewrite sked's parameter markers for PostgreSQL. '?N' becomes '$N';
 * a bare '?' becomes the next number after the highest seen. Quoted
 * literals ('…', "…", E'…' with backslashes) and -- comments are copied
 * untouched. Returns a malloc'd string or NULL (out of memory). */
char *
sked__pg_rewrite(const char *sql, unsigned char *used, int nused)
{
	if (used && nused > 0)
		memset(used, 0, (size_t)nused);
	size_t n = strlen(sql);
	/* '?' → '$' keeps the length; a bare '?' gains at most 10 digits */
	size_t cap = n * 6 + 1;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	size_t o = 0;
	int highest = 0;
	const char *s = sql;
	while (*s) {
		char c = *s;
		if (c == '\'' || c == '"') {
			int backslash = c == '\'' && s > sql &&
			                (s[-1] == 'E' || s[-1] == 'e');
			out[o++] = *s++;
			while (*s) {
				if (backslash && *s == '\\' && s[1]) {
					out[o++] = *s++;
					out[o++] = *s++;
					continue;
				}
				if (*s == c) {
					out[o++] = *s++;
					if (*s ==
					    c) { /* doubled: still inside */
						out[o++] = *s++;
						continue;
					}
					break;
				}
				out[o++] = *s++;
			}
			continue;
		}
		if (c == '-' && s[1] == '-') {
			while (*s && *s != '\n')
				out[o++] = *s++;
			continue;
		}
		if (c == '?') {
			s++;
			if (*s >= '0' && *s <= '9') {
				int v = 0;
				out[o++] = '$';
				while (*s >= '0' && *s <= '9') {
					v = v * 10 + (*s - '0');
					out[o++] = *s++;
				}
				if (v > highest)
					highest = v;
				if (used && v >= 1 && v <= nused)
					used[v - 1] = 1;
			} else {
				highest++;
				o += (size_t)snprintf(out + o, cap - o, "$%d",
				                      highest);
				if (used && highest <= nused)
					used[highest - 1] = 1;
			}
			continue;
		}
		out[o++] = *s++;
	}
	out[o] = '\0';
	return out;
}

/* ---- errors ---- */

/* Copy msg into e->msg as one line; mask pw wherever it appears. */
static void
put_msg(sked_dberr *e, const char *what, const char *msg, const char *pw)
{
	char line[400]; /* leaves room for the prefix and context */
	size_t o = 0;
	size_t pwlen = pw ? strlen(pw) : 0;
	int space = 0;
	for (const char *s = msg ? msg : ""; *s && o + 4 < sizeof line;) {
		if (pwlen && strncmp(s, pw, pwlen) == 0) {
			memcpy(line + o, "***", 3);
			o += 3;
			s += pwlen;
			space = 0;
			continue;
		}
		if (*s == '\n' || *s == '\r' || *s == '\t' || *s == ' ') {
			space = o > 0;
			s++;
			continue;
		}
		if (space)
			line[o++] = ' ';
		space = 0;
		line[o++] = *s++;
	}
	line[o] = '\0';
	snprintf(e->msg, sizeof e->msg, "postgresql: %s%s%s", what ? what : "",
	         what && *line ? ": " : "", line);
}

static void
set_err(sked_dberr *e, PGconn *conn, const PGresult *r)
{
	const char *st = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	const char *msg = r ? PQresultErrorMessage(r) : NULL;
	if (!msg || !*msg)
		msg = conn ? PQerrorMessage(conn) : "out of memory";
	e->kind = sked__errmap_sqlstate(st);
	e->native = 0;
	snprintf(e->sqlstate, sizeof e->sqlstate, "%s", st ? st : "");
	/* a dead session has no SQLSTATE to tell: the connection says */
	if (!conn || PQstatus(conn) == CONNECTION_BAD)
		e->kind = conn ? SKED_DBE_CONNECT : SKED_DBE_NOMEM;
	put_msg(e, NULL, msg, NULL);
	/* sked names its statements sked_<serial>_<slot>: one missing, or
	 * one there already that this session never made, means the server
	 * session changed under the connection — a transaction pooler */
	if (st && (strcmp(st, "26000") == 0 || strcmp(st, "42P05") == 0) &&
	    strstr(e->msg, "\"sked_")) {
		size_t l = strlen(e->msg);
		snprintf(e->msg + l, sizeof e->msg - l, "%s",
		         " (behind a pooler in transaction mode, such as "
		         "PgBouncer's pool_mode = transaction? add "
		         "sked_pooling=transaction to the URL)");
	}
}

/* ---- connections ---- */

static void
notice(void *arg, const char *msg)
{
	(void)arg;
	if (sked__log_enabled(SKED_LOG_DEBUG))
		sked__log(SKED_LOG_DEBUG, "postgresql: %s", msg);
}

static void
pg_close(void *c)
{
	pgc *p = c;
	if (!p)
		return;
	if (!p->borrowed)
		PQfinish(p->conn);
	for (int i = 0; i < p->nkept; i++)
		free(p->kept[i]);
	free(p);
}

/* The password the URL carries, for masking (malloc'd or NULL). */
static char *
url_password(const char *url)
{
	char *err = NULL;
	PQconninfoOption *opts = PQconninfoParse(url, &err);
	PQfreemem(err);
	if (!opts)
		return NULL;
	char *pw = NULL;
	for (PQconninfoOption *o = opts; o->keyword; o++)
		if (strcmp(o->keyword, "password") == 0 && o->val && *o->val)
			pw = strdup(o->val);
	PQconninfoFree(opts);
	return pw;
}

void
sked__pg_forget_pooler(void)
{
	atomic_store(&pooler_found, 0);
	atomic_store(&pooler_said, 0);
}

/* A pooler stands between (why says how it was found): unnamed
 * statements from now on, on this connection and every later one. */
static void
found_pooler(pgc *p, const char *why)
{
	p->txpool = 1;
	atomic_store(&pooler_found, 1);
	if (!atomic_exchange(&pooler_said, 1))
		sked__log(SKED_LOG_INFO,
		          "postgresql: %s: a connection pooler stands between, "
		          "which may hand each transaction another server "
		          "session; sked runs unnamed statements and polls "
		          "(say sked_pooling=transaction in the URL, or "
		          "sked_pooling=session to keep named statements)",
		          why);
}

/* The server process this connection talks to, against the one libpq was
 * told of at connect: a pooler answers the connect itself. A failed
 * question changes nothing (the statement errors below still find it). */
static void
check_pid(pgc *p)
{
	PGresult *r = PQexec(p->conn, "SELECT pg_backend_pid()");
	if (r && PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
		long server = strtol(PQgetvalue(r, 0, 0), NULL, 10);
		long told = (long)PQbackendPID(p->conn);
		if (server != told) {
			char why[128];
			snprintf(why, sizeof why,
			         "the server's process id (%ld) is not the one "
			         "the connection was given",
			         server);
			found_pooler(p, why);
		}
	}
	PQclear(r);
}

/* Take sked_pooling=MODE out of the URL's query ('?' or '&' before it).
 * *clean gets the URL libpq may read (malloc'd), *mode the POOLING_* it
 * says. Returns 0, or -1 with e set (a mode sked does not know, or out of
 * memory). */
static int
take_pooling(const char *url, char **clean, int *mode, sked_dberr *e)
{
	static const char key[] = "sked_pooling=";
	*mode = POOLING_UNSAID;
	*clean = strdup(url);
	if (!*clean) {
		e->kind = SKED_DBE_NOMEM;
		snprintf(e->msg, sizeof e->msg, "out of memory");
		return -1;
	}
	char *s = *clean;
	for (char *k = strstr(s, key); k; k = strstr(k + 1, key)) {
		if (k == s || (k[-1] != '?' && k[-1] != '&'))
			continue;
		char *v = k + sizeof key - 1;
		size_t vl = strcspn(v, "&");
		if (vl == strlen("transaction") &&
		    strncmp(v, "transaction", vl) == 0) {
			*mode = POOLING_TRANSACTION;
		} else if (vl == strlen("session") &&
		           strncmp(v, "session", vl) == 0) {
			*mode = POOLING_SESSION;
		} else {
			e->kind = SKED_DBE_CONNECT;
			snprintf(
			        e->msg, sizeof e->msg,
			        "postgresql: sked_pooling must be 'session' or "
			        "'transaction', not '%.*s'",
			        (int)(vl > 40 ? 40 : vl), v);
			free(*clean);
			*clean = NULL;
			return -1;
		}
		/* drop "KEY=VALUE" with the '&' after it, or the '&' or '?'
		 * before it when it is the last */
		char *from = k, *to = v + vl;
		if (*to == '&')
			to++;
		else
			from = k - 1;
		memmove(from, to, strlen(to) + 1);
		k = from > s ? from - 1 : s;
	}
	return 0;
}

/* 1 when s is a list of ports libpq takes: numbers 1-65535 (or empty),
 * separated by commas */
static int
ports_ok(const char *s)
{
	while (*s) {
		long v = 0;
		size_t n = strspn(s, "0123456789");
		if (n > 5)
			return 0;
		for (size_t i = 0; i < n; i++)
			v = v * 10 + (s[i] - '0');
		if (n && (v < 1 || v > 65535))
			return 0;
		s += n;
		if (*s && *s++ != ',')
			return 0;
	}
	return 1;
}

/* A URL that libpq cannot read (an unknown ?parameter, a port that is
 * not a number) is the user's typo, not an unreachable server: it is
 * said at once (SKED_EURL), and --wait-db does not wait for it. */
static int
check_url(const char *url, sked_dberr *e)
{
	char *err = NULL;
	PQconninfoOption *opts = PQconninfoParse(url, &err);
	int rc = SKED_OK;

	if (!opts) {
		e->kind = SKED_DBE_CONNECT;
		snprintf(e->msg, sizeof e->msg, "postgresql: bad URL: %s",
		         err ? err : "out of memory");
		PQfreemem(err);
		e->msg[strcspn(e->msg, "\n")] = '\0';
		return err ? SKED_EURL : SKED_ENOMEM;
	}
	for (PQconninfoOption *o = opts; o->keyword; o++)
		if (o->val && strcmp(o->keyword, "port") == 0 &&
		    !ports_ok(o->val)) {
			e->kind = SKED_DBE_CONNECT;
			snprintf(e->msg, sizeof e->msg,
			         "postgresql: bad URL: port '%.40s' is not a "
			         "number from 1 to 65535",
			         o->val);
			rc = SKED_EURL;
		}
	PQconninfoFree(opts);
	return rc;
}

/* A failed connect that waiting cannot fix, by libpq's message (a
 * connect has no SQLSTATE to read): the server's FATAL texts for a
 * missing database (3D000) and for a failed authentication or missing
 * role (28P01, 28000), and libpq's own for TLS it cannot have. These are
 * the English texts (the server's lc_messages and the client's locale
 * may translate them): anything else, translated or not, is a server
 * that may come back (refused, starting up, too many clients), as
 * before. */
static sked_dbe_kind
connect_kind(const char *m)
{
	static const char *const perm[] = {
	        "password authentication failed",
	        "authentication failed for user",
	        "no pg_hba.conf entry",
	        "pg_hba.conf rejects connection",
	        "no password supplied",
	        "role \"",
	};
	static const char *const config[] = {
	        "server does not support SSL, but SSL was required",
	        "SSL is not supported by this build",
	        "certificate verify failed",
	        "sslmode value",
	};
	if (!m)
		return SKED_DBE_CONNECT;
	if (strstr(m, "database \"") && strstr(m, "does not exist"))
		return SKED_DBE_CONFIG;
	for (size_t i = 0; i < sizeof perm / sizeof perm[0]; i++)
		if (strstr(m, perm[i]) &&
		    (i + 1 < sizeof perm / sizeof perm[0] ||
		     strstr(m, "does not exist")))
			return SKED_DBE_PERM;
	for (size_t i = 0; i < sizeof config / sizeof config[0]; i++)
		if (strstr(m, config[i]))
			return SKED_DBE_CONFIG;
	return SKED_DBE_CONNECT;
}

static int
pg_connect(const char *url_in, void **out, sked_dberr *e)
{
	*out = NULL;
	char *url = NULL;
	int mode = POOLING_UNSAID;
	if (take_pooling(url_in, &url, &mode, e) != 0)
		return e->kind == SKED_DBE_NOMEM ? SKED_ENOMEM : SKED_EURL;
	int rc = check_url(url, e);
	if (rc != SKED_OK) {
		free(url);
		return rc;
	}
	pgc *p = calloc(1, sizeof *p);
	if (!p) {
		free(url);
		e->kind = SKED_DBE_NOMEM;
		snprintf(e->msg, sizeof e->msg, "out of memory");
		return SKED_ENOMEM;
	}
	p->pooling = mode;
	p->txpool = mode == POOLING_TRANSACTION ||
	            (mode == POOLING_UNSAID && atomic_load(&pooler_found));
	/* Defaults first, the URL last: with expand_dbname libpq keeps the
	 * last value of a repeated key word, so the URL overrides. */
	const char *keys[4], *vals[4];
	int k = 0;
	const char *ct = getenv("PGCONNECT_TIMEOUT");
	if (!ct || !*ct) {
		keys[k] = "connect_timeout";
		vals[k++] = "10";
	}
	keys[k] = "fallback_application_name";
	vals[k++] = "sked";
	keys[k] = "dbname";
	vals[k++] = url;
	keys[k] = NULL;
	vals[k] = NULL;
	p->conn = PQconnectdbParams(keys, vals, 1);
	if (!p->conn || PQstatus(p->conn) != CONNECTION_OK) {
		char *pw = url_password(url);
		e->kind = p->conn ? SKED_DBE_CONNECT : SKED_DBE_NOMEM;
		put_msg(e, "cannot connect",
		        p->conn ? PQerrorMessage(p->conn) : "out of memory",
		        pw);
		free(pw);
		free(url);
		if (p->conn)
			e->kind = connect_kind(PQerrorMessage(p->conn));
		pg_close(p);
		return e->kind == SKED_DBE_NOMEM ? SKED_ENOMEM
		                                 : SKED_EUNAVAILABLE;
	}
	free(url);
	PQsetNoticeProcessor(p->conn, notice, NULL);
	p->serial = atomic_fetch_add(&next_serial, 1);
	if (!p->txpool && p->pooling == POOLING_UNSAID)
		check_pid(p);
	*out = p;
	return SKED_OK;
}

static int
pg_wrap(void *native, void **out, sked_dberr *e)
{
	*out = NULL;
	PGconn *conn = native;
	if (PQstatus(conn) != CONNECTION_OK) {
		e->kind = SKED_DBE_CONNECT;
		put_msg(e, "the application's connection is not open",
		        PQerrorMessage(conn), NULL);
		return SKED_EUNAVAILABLE;
	}
	pgc *p = calloc(1, sizeof *p);
	if (!p) {
		e->kind = SKED_DBE_NOMEM;
		snprintf(e->msg, sizeof e->msg, "out of memory");
		return SKED_ENOMEM;
	}
	p->conn = conn;
	p->borrowed = 1;
	p->serial = atomic_fetch_add(&next_serial, 1);
	*out = p;
	return SKED_OK;
}

static int
pg_server(void *c, char *product, size_t plen, char *version, size_t vlen,
          sked_dberr *e)
{
	pgc *p = c;
	const char *v = PQparameterStatus(p->conn, "server_version");
	if (!v) {
		e->kind = SKED_DBE_CONNECT;
		put_msg(e, "the server did not report its version",
		        PQerrorMessage(p->conn), NULL);
		return SKED_EUNAVAILABLE;
	}
	snprintf(product, plen, "PostgreSQL");
	snprintf(version, vlen, "%s", v);
	return SKED_OK;
}

/* Take the notifications that arrived with a result out of libpq's queue
 * (a queue nobody reads grows) and keep the first NOTE_KEEP payloads for
 * the next drain: the worker's poll wakes only for new bytes on the
 * socket, and a wake-up read with a claim's reply is still for it
 * (util/wake.h). Past NOTE_KEEP the drain reports that some were lost. */
static void
keep_notifies(pgc *p)
{
	PGnotify *n;
	while ((n = PQnotifies(p->conn)) != NULL) {
		char *k = p->nkept < NOTE_KEEP ? strdup(n->extra) : NULL;
		if (k)
			p->kept[p->nkept++] = k;
		else
			p->lost = 1;
		PQfreemem(n);
	}
}

static int
pg_exec(void *c, int slot, const char *sql, const sked_val *v, int np,
        sked_res *res, int64_t *affected, int64_t *last_id, sked_dberr *e)
{
	pgc *p = c;
	(void)last_id; /* PostgreSQL hands ids back with RETURNING */
	/* text parameters: integers printed, text copied to add the NUL
	 * libpq wants (a payload is a length, not a C string) */
	size_t need = 0;
	for (int i = 0; i < np; i++)
		need += v[i].type == SKED_VTEXT  ? v[i].len + 1
		        : v[i].type == SKED_VINT ? 24
		                                 : 0;
	char *buf = need ? malloc(need) : NULL;
	const char **vals = np > 0 ? calloc((size_t)np, sizeof *vals) : NULL;
	Oid *types = np > 0 ? calloc((size_t)np, sizeof *types) : NULL;
	if ((need && !buf) || (np > 0 && (!vals || !types))) {
		free(buf);
		free(vals);
		free(types);
		e->kind = SKED_DBE_NOMEM;
		snprintf(e->msg, sizeof e->msg, "postgresql: out of memory");
		return SKED_ENOMEM;
	}
	size_t off = 0;
	for (int i = 0; i < np; i++) {
		switch (v[i].type) {
		case SKED_VNULL:
			vals[i] = NULL;
			break;
		case SKED_VINT:
			vals[i] = buf + off;
			off += (size_t)snprintf(buf + off, 24, "%lld",
			                        (long long)v[i].i) +
			       1;
			break;
		case SKED_VTEXT:
			vals[i] = buf + off;
			if (v[i].len)
				memcpy(buf + off, v[i].s, v[i].len);
			buf[off + v[i].len] = '\0';
			off += v[i].len + 1;
			break;
		}
	}
	int rc = SKED_OK;
	PGresult *r = NULL;
	/* The text is rewritten only when the server is to read it: a
	 * statement this session prepared already runs by name (rewriting
	 * the fused claim's text at every run was a tenth of the worker's
	 * instructions per no-op task, counted with callgrind). */
	char *text = NULL;
	int cached;
again:
	cached = slot >= 0 && slot < SKED_STMT_SLOTS && !p->borrowed &&
	         !p->txpool;
	if (!text && !(cached && p->ready[slot])) {
		unsigned char used[256];
		int nu = np < 256 ? np : 256;
		text = sked__pg_rewrite(sql, used, nu);
		if (!text)
			goto nomem;
		/* a parameter the text never names (a statement family
		 * shares one parameter list) has no type to infer: declare
		 * it text; the server infers the rest from where they stand */
		for (int i = 0; i < nu; i++)
			types[i] = used[i] ? 0 : TEXTOID;
		/* no session of its own to LISTEN in: the worker polls */
		if (p->txpool && strncmp(text, "LISTEN ", 7) == 0) {
			*affected = -1;
			goto done;
		}
	}
	if (cached) {
		char name[48];
		snprintf(name, sizeof name, "sked_%u_%d", p->serial, slot);
		if (!p->ready[slot]) {
			r = PQprepare(p->conn, name, text, np, types);
			if (!r || PQresultStatus(r) != PGRES_COMMAND_OK)
				goto fail;
			PQclear(r);
			p->ready[slot] = 1;
		}
		r = PQexecPrepared(p->conn, name, np, vals, NULL, NULL, 0);
	} else {
		r = PQexecParams(p->conn, text, np, types, vals, NULL, NULL, 0);
	}
	if (!r)
		goto fail;
	ExecStatusType st = PQresultStatus(r);
	if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK)
		goto fail;
	if (res && st == PGRES_TUPLES_OK) {
		int nrows = PQntuples(r), ncols = PQnfields(r);
		if (ncols > 0 && sked__res_begin(res, ncols) != SKED_OK)
			goto nomem;
		for (int i = 0; i < nrows; i++)
			for (int j = 0; j < ncols; j++) {
				const char *t = PQgetisnull(r, i, j)
				                        ? NULL
				                        : PQgetvalue(r, i, j);
				size_t n = t ? (size_t)PQgetlength(r, i, j) : 0;
				if (sked__res_add(res, t, n) != SKED_OK)
					goto nomem;
			}
	}
	const char *ct = PQcmdTuples(r);
	*affected = ct && *ct ? strtoll(ct, NULL, 10) : -1;
	goto done;
nomem:
	e->kind = SKED_DBE_NOMEM;
	snprintf(e->msg, sizeof e->msg, "postgresql: out of memory");
	rc = SKED_ENOMEM;
	goto done;
fail:
	set_err(e, p->conn, r);
	rc = e->kind == SKED_DBE_CONNECT ? SKED_EUNAVAILABLE : SKED_EDB;
	/* a named statement this connection never prepared on the server
	 * session it met (42P05), or prepared and did not find (26000): a
	 * pooler moved it, unless the URL said sessions are kept */
	if (cached && p->pooling == POOLING_UNSAID &&
	    (strcmp(e->sqlstate, "42P05") == 0 ||
	     strcmp(e->sqlstate, "26000") == 0)) {
		const char *what =
		        r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY)
		          : NULL;
		char why[256];
		snprintf(why, sizeof why, "%s (SQLSTATE %s)",
		         what ? what : "a prepared statement moved",
		         e->sqlstate);
		found_pooler(p, why);
		if (PQtransactionStatus(p->conn) == PQTRANS_IDLE) {
			/* nothing ran: run it again, unnamed */
			PQclear(r);
			r = NULL;
			memset(e, 0, sizeof *e);
			rc = SKED_OK;
			goto again;
		}
		/* the transaction it was in is lost: the caller rolls back
		 * and may try again, as after a serialization failure */
		e->kind = SKED_DBE_RETRY;
		rc = SKED_EBUSY;
	}
done:
	PQclear(r);
	if (!p->borrowed)
		keep_notifies(p);
	free(text);
	free(buf);
	free(vals);
	free(types);
	return rc;
}

static int
pg_socket(void *c)
{
	pgc *p = c;
	return p->txpool ? -1 : PQsocket(p->conn);
}

static int
pg_drain_notify(void *c, sked_dberr *e, sked_note_fn fn, void *arg)
{
	pgc *p = c;
	int n = p->nkept + p->lost;
	for (int i = 0; i < p->nkept; i++) {
		if (fn)
			fn(arg, p->kept[i]);
		free(p->kept[i]);
	}
	if (p->lost && fn)
		fn(arg, NULL);
	p->nkept = p->lost = 0;
	if (!PQconsumeInput(p->conn)) {
		set_err(e, p->conn, NULL);
		return n;
	}
	PGnotify *m;
	while ((m = PQnotifies(p->conn)) != NULL) {
		if (fn)
			fn(arg, m->extra);
		PQfreemem(m);
		n++;
	}
	return n;
}

static int
pg_pooled(void *c)
{
	return ((pgc *)c)->txpool;
}

const sked_driver sked__driver_pg = {
        .name = "libpq",
        .connect = pg_connect,
        .close = pg_close,
        .server = pg_server,
        .exec = pg_exec,
        .socket = pg_socket,
        .drain_notify = pg_drain_notify,
        .pooled = pg_pooled,
        .wrap = pg_wrap,
};
