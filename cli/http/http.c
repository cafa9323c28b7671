/*
 * http.c — the `sked` program's small HTTP server on libmicrohttpd, and
 * the string buffer its pages are written into.
 *
 * Layer: the command-line program (see http.h). This file knows HTTP and
 * nothing of tasks: it parses the listen address, collects a POST body
 * (at most 1 MiB), calls the handler on the connection's own thread and
 * sends what it wrote, with the security headers every page gets.
 */
#include "http/http.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#ifdef SKED_HAVE_MHD
#include <microhttpd.h>
#endif

#define BODY_MAX (1024 * 1024)

/* Slow clients (docs/security.md). Each connection has a thread; a
 * connection still sending its request is "waiting", and may take at most
 * REQUEST_DEADLINE_MS for the whole request, however it trickles it; a
 * reply must be taken by the client within REPLY_DEADLINE_MS (a client
 * that pipelines requests and never reads is closed then: MHD reads no
 * further request while a reply is unsent). When a client has more than
 * WAITING_PER_CLIENT connections, or all clients more than WAITING_MAX,
 * a new connection closes the oldest one (of that client, or of all)
 * that is waiting or whose reply is unsent, so that a fresh request such
 * as GET /healthz always gets in; a connection whose handler runs counts
 * too, and is closed only by its own client's bound. CONN_MAX (threads)
 * bounds them all. */
#define CONN_MAX            256u
#define WAITING_MAX         128
#define WAITING_PER_CLIENT  16
#define REQUEST_DEADLINE_MS 10000
#define REPLY_DEADLINE_MS   10000

/* ---- the string buffer ---- */

void
cli_sbuf_put(struct cli_sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 1024;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void
cli_sbuf_puts(struct cli_sbuf *b, const char *s)
{
	cli_sbuf_put(b, s, strlen(s));
}

void
cli_sbuf_printf(struct cli_sbuf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof tmp) {
		cli_sbuf_put(b, tmp, (size_t)n);
		return;
	}
	char *big = malloc((size_t)n + 1);
	if (!big) {
		b->oom = 1;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	cli_sbuf_put(b, big, (size_t)n);
	free(big);
}

void
cli_sbuf_htmln(struct cli_sbuf *b, const char *s, size_t n)
{
	size_t i, from = 0;

	for (i = 0; i < n; i++) {
		const char *rep = NULL;
		switch (s[i]) {
		case '&':
			rep = "&amp;";
			break;
		case '<':
			rep = "&lt;";
			break;
		case '>':
			rep = "&gt;";
			break;
		case '"':
			rep = "&quot;";
			break;
		case '\'':
			rep = "&#39;";
			break;
		case '\0':
			rep = "\xef\xbf\xbd"; /* U+FFFD */
			break;
		default:
			continue;
		}
		cli_sbuf_put(b, s + from, i - from);
		cli_sbuf_puts(b, rep);
		from = i + 1;
	}
	cli_sbuf_put(b, s + from, n - from);
}

void
cli_sbuf_html(struct cli_sbuf *b, const char *s)
{
	if (s)
		cli_sbuf_htmln(b, s, strlen(s));
}

void
cli_sbuf_url(struct cli_sbuf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || strchr("-_.~", ch)) {
			cli_sbuf_put(b, s, 1);
		} else {
			char e[3] = {'%', hex[ch >> 4], hex[ch & 15]};
			cli_sbuf_put(b, e, 3);
		}
	}
}

void
cli_sbuf_free(struct cli_sbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

int
cli_http_same(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i;
	unsigned diff = (unsigned)(la ^ lb);

	for (i = 0; i < la && i < lb; i++)
		diff |= (unsigned char)a[i] ^ (unsigned char)b[i];
	return diff == 0;
}

/* ---- what a request says (pure: no server needed; fuzz_http) ---- */

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* decode n bytes of a form value into buf (NUL-terminated) */
static void
form_decode(const char *s, size_t n, char *buf, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 1 < len; i++) {
		if (s[i] == '+') {
			buf[o++] = ' ';
		} else if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 &&
		           hexval(s[i + 2]) >= 0) {
			buf[o++] = (char)(hexval(s[i + 1]) * 16 +
			                  hexval(s[i + 2]));
			i += 2;
		} else {
			buf[o++] = s[i];
		}
	}
	buf[o] = '\0';
}

const char *
cli_http_form(const struct cli_http_request *rq, const char *name, int idx,
              char *buf, size_t len)
{
	const char *p = rq->body, *end = rq->body + rq->body_len;
	size_t nl = strlen(name);
	int seen = 0;

	while (p < end) {
		const char *amp = memchr(p, '&', (size_t)(end - p));
		const char *fe = amp ? amp : end;
		const char *eq = memchr(p, '=', (size_t)(fe - p));
		if (eq && (size_t)(eq - p) == nl && memcmp(p, name, nl) == 0) {
			if (seen++ == idx) {
				form_decode(eq + 1, (size_t)(fe - eq - 1), buf,
				            len);
				return buf;
			}
		}
		p = fe + 1;
	}
	return NULL;
}

int
cli_http_own_path(const char *p)
{
	if (!p || p[0] != '/' || strstr(p, "//"))
		return 0;
	for (; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("/_-", *p)))
			return 0;
	return 1;
}

int
cli_http_basic(const char *header, char *buf, size_t len, const char **user,
               const char **pass)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
	                          "qrstuvwxyz0123456789+/";
	const char *in;
	unsigned acc = 0;
	int bits = 0;
	size_t o = 0;
	char *colon;

	if (!header || strncmp(header, "Basic ", 6) != 0 || len == 0)
		return -1;
	for (in = header + 6; *in && *in != '='; in++) {
		const char *p = strchr(tab, *in);
		if (!p)
			return -1;
		acc = (acc << 6) | (unsigned)(p - tab);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o + 1 >= len)
				return -1;
			buf[o++] = (char)((acc >> bits) & 0xff);
			if (buf[o - 1] == '\0')
				return -1; /* no NUL inside credentials */
		}
	}
	buf[o] = '\0';
	colon = strchr(buf, ':');
	if (!colon)
		return -1;
	*colon = '\0';
	*user = buf;
	*pass = colon + 1;
	return 0;
}

/* ---- the listen address ---- */

int
cli_http_parse_listen(const char *s, void *ss, unsigned *addrlen, int *loopback,
                      char *err, size_t errlen)
{
	char host[256];
	const char *colon, *port;
	struct addrinfo hints, *ai = NULL;
	size_t hl;
	char *end;
	long p;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':')
			goto bad;
		hl = (size_t)(close - s - 1);
		if (hl >= sizeof host)
			goto bad;
		memcpy(host, s + 1, hl);
		port = close + 2;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			goto bad;
		hl = (size_t)(colon - s);
		if (hl >= sizeof host)
			goto bad;
		memcpy(host, s, hl);
		port = colon + 1;
	}
	host[hl] = '\0';
	p = strtol(port, &end, 10);
	if (port[0] < '0' || port[0] > '9' || *end != '\0' || p < 0 ||
	    p > 65535)
		goto bad;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if (getaddrinfo(hl ? host : NULL, port, &hints, &ai) != 0 || !ai) {
		snprintf(err, errlen, "'%s': cannot resolve '%s'", s, host);
		return -1;
	}
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*addrlen = (unsigned)ai->ai_addrlen;
	if (ai->ai_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)ai->ai_addr;
		*loopback = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	} else if (ai->ai_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)ai->ai_addr;
		*loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
	} else {
		*loopback = 0;
	}
	freeaddrinfo(ai);
	return 0;
bad:
	snprintf(err, errlen, "'%s' is not ADDR:PORT (like 127.0.0.1:9187)", s);
	return -1;
}

#ifdef SKED_HAVE_MHD

/* one connection, on cli_http's list (oldest first) */
struct conn {
	struct conn *prev, *next;
	int fd;
	int family;
	unsigned char addr[16]; /* the client's address */
	int64_t since;          /* when its current request began (ms) */
	int busy;               /* its request is in: being answered */
	int64_t replying;       /* when its reply was queued (ms), or 0 */
	int closing;            /* shut down by the guard */
};

struct cli_http {
	struct MHD_Daemon *d;
	cli_http_fn fn;
	void *ud;
	pthread_mutex_t mu; /* guards the list and stop */
	pthread_cond_t cv;
	struct conn *head, *tail;
	pthread_t reaper;
	int reaper_on, stop;
};

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
waiting(const struct conn *c)
{
	return !c->busy && !c->closing;
}

/* may be closed for a newer connection: waiting, or its reply unsent
 * (any open one when any is true) */
static int
closable(const struct conn *c, int any)
{
	return !c->closing && (any || !c->busy || c->replying);
}

static int
same_client(const struct conn *a, const struct conn *b)
{
	return a->family == b->family &&
	       memcmp(a->addr, b->addr, sizeof a->addr) == 0;
}

/* Close c's socket under the client's feet: its thread sees the end of
 * the stream and MHD closes the connection (the descriptor stays ours
 * until MHD reports it closed, under s->mu). */
static void
shut(struct conn *c)
{
	c->closing = 1;
	shutdown(c->fd, SHUT_RDWR);
}

/* the oldest connection but c that may be closed (of c's client when
 * mine), and how many open ones there are (of that client, or in all) */
static struct conn *
oldest_open(struct cli_http *s, const struct conn *c, int mine, int *count)
{
	struct conn *o = NULL;

	*count = 0;
	for (struct conn *p = s->head; p; p = p->next) {
		if (p->closing || (mine && !same_client(p, c)))
			continue;
		(*count)++;
		if (!o && p != c && closable(p, mine))
			o = p;
	}
	return o;
}

static void
on_connection(void *cls, struct MHD_Connection *mc, void **ctx,
              enum MHD_ConnectionNotificationCode code)
{
	struct cli_http *s = cls;
	struct conn *c = *ctx, *o;
	const union MHD_ConnectionInfo *fi, *ai;
	int n;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (!c)
			return;
		pthread_mutex_lock(&s->mu);
		*(c->prev ? &c->prev->next : &s->head) = c->next;
		*(c->next ? &c->next->prev : &s->tail) = c->prev;
		pthread_mutex_unlock(&s->mu);
		free(c);
		*ctx = NULL;
		return;
	}
	fi = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
	ai = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (!fi || !(c = calloc(1, sizeof *c)))
		return;
	c->fd = fi->connect_fd;
	if (ai && ai->client_addr) {
		const struct sockaddr *sa = ai->client_addr;
		c->family = sa->sa_family;
		if (sa->sa_family == AF_INET)
			memcpy(c->addr,
			       &((const struct sockaddr_in *)(const void *)sa)
			                ->sin_addr,
			       4);
		else if (sa->sa_family == AF_INET6)
			memcpy(c->addr,
			       &((const struct sockaddr_in6 *)(const void *)sa)
			                ->sin6_addr,
			       16);
	}
	c->since = mono_ms();
	*ctx = c;
	pthread_mutex_lock(&s->mu);
	c->prev = s->tail;
	*(s->tail ? &s->tail->next : &s->head) = c;
	s->tail = c;
	o = oldest_open(s, c, 1, &n);
	if (n > WAITING_PER_CLIENT && o)
		shut(o);
	o = oldest_open(s, c, 0, &n);
	if (n > WAITING_MAX && o)
		shut(o);
	pthread_mutex_unlock(&s->mu);
}

static void
conn_mark(struct MHD_Connection *mc, struct cli_http *s, int busy)
{
	const union MHD_ConnectionInfo *i =
	        MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *c = i ? i->socket_context : NULL;

	if (!c)
		return;
	pthread_mutex_lock(&s->mu);
	c->busy = busy != 0;
	c->since = mono_ms();
	c->replying = busy == 2 ? c->since : 0;
	pthread_mutex_unlock(&s->mu);
}

/* closes the connections whose request takes longer than the deadline */
static void *
reaper(void *arg)
{
	struct cli_http *s = arg;

	pthread_mutex_lock(&s->mu);
	while (!s->stop) {
		struct timespec ts;
		int64_t now = mono_ms();
		for (struct conn *c = s->head; c; c = c->next)
			if ((waiting(c) &&
			     now - c->since > REQUEST_DEADLINE_MS) ||
			    (c->replying && !c->closing &&
			     now - c->replying > REPLY_DEADLINE_MS))
				shut(c);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 500 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->cv, &s->mu, &ts);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

struct req_state {
	struct cli_sbuf body;
	int too_big;
	int refused; /* answered at its headers */
};

const char *
cli_http_arg(const struct cli_http_request *rq, const char *name)
{
	return MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND,
	                                   name);
}

const char *
cli_http_header(const struct cli_http_request *rq, const char *name)
{
	return MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, name);
}

const char *
cli_http_cookie(const struct cli_http_request *rq, const char *name)
{
	return MHD_lookup_connection_value(rq->conn, MHD_COOKIE_KIND, name);
}

/* Content-Length given twice with different values: a request that a
 * proxy in front may read otherwise (request smuggling); refused. */
struct lengths {
	const char *first;
	int differ;
};

static enum MHD_Result
on_length(void *cls, enum MHD_ValueKind kind, const char *key,
          const char *value)
{
	struct lengths *l = cls;

	(void)kind;
	if (!key || strcasecmp(key, "Content-Length") != 0)
		return MHD_YES;
	if (!l->first)
		l->first = value ? value : "";
	else if (strcmp(l->first, value ? value : "") != 0)
		l->differ = 1;
	return MHD_YES;
}

static enum MHD_Result
refuse(struct MHD_Connection *conn, const char *url, unsigned status,
       const char *why)
{
	char body[256];
	int api = strncmp(url, "/api/", 5) == 0;
	struct MHD_Response *resp;
	enum MHD_Result ret;

	if (api)
		snprintf(body, sizeof body,
		         "{\"error\":{\"code\":65,\"message\":\"%s\"}}\n", why);
	else
		snprintf(body, sizeof body, "%s\n", why);
	resp = MHD_create_response_from_buffer(strlen(body), body,
	                                       MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type",
	                        api ? "application/json"
	                            : "text/plain; charset=utf-8");
	MHD_add_response_header(resp, "Connection", "close");
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url,
           const char *method, const char *version, const char *upload,
           size_t *upload_size, void **con_cls)
{
	struct cli_http *s = cls;
	struct req_state *st = *con_cls;
	struct cli_http_reply rp;
	struct cli_http_request rq;
	struct MHD_Response *resp;
	enum MHD_Result ret;

	(void)version;
	if (!st) {
		struct lengths l = {NULL, 0};
		st = calloc(1, sizeof *st);
		if (!st)
			return MHD_NO;
		*con_cls = st;
		MHD_get_connection_values(conn, MHD_HEADER_KIND, on_length, &l);
		if (l.differ) {
			st->refused = 1;
			return refuse(conn, url, 400,
			              "two different Content-Length headers");
		}
		return MHD_YES;
	}
	if (st->refused) {
		*upload_size = 0; /* the refusal is queued: drop the rest */
		return MHD_YES;
	}
	if (*upload_size > 0) {
		if (st->body.len + *upload_size > BODY_MAX)
			st->too_big = 1;
		else
			cli_sbuf_put(&st->body, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	memset(&rp, 0, sizeof rp);
	memset(&rq, 0, sizeof rq);
	rq.method = method;
	rq.path = url;
	rq.body = st->body.p ? st->body.p : "";
	rq.body_len = st->body.len;
	rq.conn = conn;
	conn_mark(conn, s, 1); /* the request is in: no deadline now */
	if (st->too_big || st->body.oom) {
		rp.status = 413;
		cli_sbuf_puts(&rp.body, "request body too large\n");
	} else {
		s->fn(s->ud, &rq, &rp);
	}
	if (rp.body.oom) {
		cli_sbuf_free(&rp.body);
		rp.status = 500;
		cli_sbuf_puts(&rp.body, "out of memory\n");
	}
	if ((st->too_big || st->body.oom) && strncmp(url, "/api/", 5) == 0) {
		/* the JSON API's one error shape (cli/web/api/api_serve.c) */
		cli_sbuf_free(&rp.body);
		rp.content_type = "application/json";
		cli_sbuf_puts(&rp.body, "{\"error\":{\"code\":65,\"message\":"
		                        "\"the request body is larger than 1 "
		                        "MiB\"}}\n");
	}
	resp = MHD_create_response_from_buffer(
	        rp.body.len, rp.body.p ? rp.body.p : "", MHD_RESPMEM_MUST_COPY);
	cli_sbuf_free(&rp.body);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type",
	                        rp.content_type ? rp.content_type
	                                        : "text/plain; charset=utf-8");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (rp.no_frames) {
		MHD_add_response_header(resp, "X-Frame-Options", "DENY");
		MHD_add_response_header(
		        resp, "Content-Security-Policy",
		        "default-src 'none'; style-src 'self'; script-src "
		        "'self'; img-src 'self' data:; connect-src 'self'; "
		        "form-action 'self'; frame-ancestors 'none'; "
		        "base-uri 'none'");
		MHD_add_response_header(resp, "Referrer-Policy", "same-origin");
	}
	if (rp.location[0])
		MHD_add_response_header(resp, "Location", rp.location);
	if (rp.set_cookie[0])
		MHD_add_response_header(resp, "Set-Cookie", rp.set_cookie);
	if (rp.www_authenticate)
		MHD_add_response_header(resp, "WWW-Authenticate",
		                        rp.www_authenticate);
	ret = MHD_queue_response(conn, rp.status ? (unsigned)rp.status : 200,
	                         resp);
	MHD_destroy_response(resp);
	conn_mark(conn, s, 2); /* the reply's deadline starts */
	return ret;
}

static void
on_done(void *cls, struct MHD_Connection *conn, void **con_cls,
        enum MHD_RequestTerminationCode toe)
{
	struct req_state *st = *con_cls;

	(void)toe;
	/* the connection now waits for its next request */
	conn_mark(conn, cls, 0);
	if (st) {
		cli_sbuf_free(&st->body);
		free(st);
		*con_cls = NULL;
	}
}

struct cli_http *
cli_http_start(const char *listen, cli_http_fn fn, void *ud, int *port,
               char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	unsigned alen = 0;
	int loop;
	struct cli_http *s;
	unsigned flags =
	        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD;
	const union MHD_DaemonInfo *info;

	if (cli_http_parse_listen(listen, &ss, &alen, &loop, err, errlen) != 0)
		return NULL;
	s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->fn = fn;
	s->ud = ud;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	s->d = MHD_start_daemon(
	        flags, 0, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR,
	        (struct sockaddr *)&ss, MHD_OPTION_NOTIFY_COMPLETED, on_done, s,
	        MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
	        MHD_OPTION_CONNECTION_LIMIT, CONN_MAX,
	        MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);
	if (s->d && pthread_create(&s->reaper, NULL, reaper, s) == 0)
		s->reaper_on = 1;
	if (!s->d || !s->reaper_on) {
		snprintf(err, errlen,
		         "cannot listen on %s (in use, or not "
		         "an address of this host)",
		         listen);
		cli_http_stop(s);
		return NULL;
	}
	info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	if (port)
		*port = info ? (int)info->port : 0;
	return s;
}

void
cli_http_stop(struct cli_http *s)
{
	if (!s)
		return;
	if (s->reaper_on) {
		pthread_mutex_lock(&s->mu);
		s->stop = 1;
		pthread_cond_signal(&s->cv);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->reaper, NULL);
	}
	if (s->d)
		MHD_stop_daemon(s->d);
	while (s->head) {
		struct conn *c = s->head;
		s->head = c->next;
		free(c);
	}
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

#else /* !SKED_HAVE_MHD */

const char *
cli_http_arg(const struct cli_http_request *rq, const char *name)
{
	return NULL;
}

const char *
cli_http_header(const struct cli_http_request *rq, const char *name)
{
	return NULL;
}

const char *
cli_http_cookie(const struct cli_http_request *rq, const char *name)
{
	return NULL;
}

struct cli_http *
cli_http_start(const char *listen, cli_http_fn fn, void *ud, int *port,
               char *err, size_t errlen)
{
	snprintf(err, errlen,
	         "this sked was built without libmicrohttpd: no HTTP server");
	return NULL;
}

void
cli_http_stop(struct cli_http *s)
{
}

#endif
