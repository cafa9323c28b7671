/*
 * http.h — the `sked` program's small HTTP server (libmicrohttpd), shared
 * by `worker --http` (cli/serve/worker_ops.c) and `sked dashboard`
 * (cli/web/dashboard/dashboard.c).
 *
 * Layer: the command-line program. One thread per connection, so that a
 * request that waits on the database never holds up a health probe. A
 * handler gets a parsed request and fills a reply; it must be thread safe.
 * Built without libmicrohttpd, cli_http_start fails with a one-line
 * reason and the commands that need it exit EX_UNAVAILABLE.
 */
#ifndef SKED_CLI_HTTP_H
#define SKED_CLI_HTTP_H

#include <stdarg.h>
#include <stddef.h>

/* A growable string. oom is set on the first failed allocation; the text
 * then stays as it was. */
struct cli_sbuf {
	char *p;
	size_t len, cap;
	int oom;
};
void cli_sbuf_put(struct cli_sbuf *b, const char *s, size_t n);
void cli_sbuf_puts(struct cli_sbuf *b, const char *s);
void cli_sbuf_printf(struct cli_sbuf *b, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
/* s escaped for HTML text and attribute values (& < > " '). NULL: "". */
void cli_sbuf_html(struct cli_sbuf *b, const char *s);
void cli_sbuf_htmln(struct cli_sbuf *b, const char *s, size_t n);
/* s escaped for a query-string value */
void cli_sbuf_url(struct cli_sbuf *b, const char *s);
void cli_sbuf_free(struct cli_sbuf *b);

/* 1 when the secrets a and b are equal, in a time that does not depend on
 * where they differ */
int cli_http_same(const char *a, const char *b);

/* 1 when p is a path of this server to redirect to: '/', then letters,
 * digits, '/', '_' and '-', never "//". A browser drops tabs and newlines
 * from a URL and reads '\\' as '/', so "/\t/evil.example" would lead to
 * another host. */
int cli_http_own_path(const char *p);

/* An Authorization header "Basic BASE64(user:password)" decoded into buf
 * (len bytes): *user and *pass point into it. -1 for another scheme, bad
 * base64, no ':', a NUL byte, or more than fits. */
int cli_http_basic(const char *header, char *buf, size_t len, const char **user,
                   const char **pass);

struct cli_http_request {
	const char *method; /* "GET", "POST", … */
	const char *path;   /* without the query string */
	const char *body;   /* POST body (NUL-terminated), or "" */
	size_t body_len;
	void *conn; /* the server's connection, for the lookups below */
};

/* A query-string argument, or NULL. */
const char *cli_http_arg(const struct cli_http_request *rq, const char *name);
/* A request header, or NULL. */
const char *cli_http_header(const struct cli_http_request *rq,
                            const char *name);
/* the value of the request's cookie NAME, or NULL */
const char *cli_http_cookie(const struct cli_http_request *rq,
                            const char *name);
/* The i-th value of name in an application/x-www-form-urlencoded body,
 * decoded into buf; NULL when there are fewer. */
const char *cli_http_form(const struct cli_http_request *rq, const char *name,
                          int i, char *buf, size_t len);

struct cli_http_reply {
	int status;               /* 0: 200 */
	const char *content_type; /* NULL: text/plain; charset=utf-8 */
	struct cli_sbuf body;
	char location[1024];          /* a redirect target, or "" */
	char set_cookie[256];         /* or "" */
	const char *www_authenticate; /* or NULL */
	int no_frames;                /* add the headers a page needs */
};

typedef void (*cli_http_fn)(void *ud, const struct cli_http_request *rq,
                            struct cli_http_reply *rp);

struct cli_http;

/* Parse "ADDR:PORT" ("127.0.0.1:9187", "[::1]:9187", ":9187" for every
 * address, "localhost:9187"). *loopback is 1 for a loopback address.
 * Returns 0, or -1 with one line in err. */
int cli_http_parse_listen(const char *s, void *sockaddr_storage,
                          unsigned *addrlen, int *loopback, char *err,
                          size_t errlen);

/* Serve fn on listen. Returns NULL with one line in err. The port
 * actually bound (listen may say port 0) is in *port. */
struct cli_http *cli_http_start(const char *listen, cli_http_fn fn, void *ud,
                                int *port, char *err, size_t errlen);
void cli_http_stop(struct cli_http *s);

#endif /* SKED_CLI_HTTP_H */
