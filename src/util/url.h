/*
 * url.h — database URLs: which driver, and the pieces it needs.
 *
 * Layer: util (pure: no I/O, no driver headers). Splits a URL into what a
 * driver needs and masks passwords for anything that is shown or logged.
 * libpq parses its own URLs, so postgres URLs are checked only for their
 * scheme and handed over whole; ODBC connection strings are the driver
 * manager's to read.
 */
#ifndef SKED_UTIL_URL_H
#define SKED_UTIL_URL_H

#include <stddef.h>

typedef enum {
	SKED_URL_SQLITE,
	SKED_URL_POSTGRES,
	SKED_URL_MYSQL,
	SKED_URL_ODBC
} sked_url_kind;

typedef struct sked_url {
	sked_url_kind kind;
	/* sqlite: the file path (may be ":memory:");
	 * odbc: the connection string or DSN, verbatim */
	char *path;
	/* postgres: the URL to hand to libpq unchanged */
	char *conninfo;
	/* mysql/mariadb, percent-decoded; NULL when absent, port 0 when
	 * absent. A host that decodes to a path ("%2Frun%2Fmysqld.sock")
	 * becomes socket, with host "localhost". */
	char *host, *user, *password, *dbname, *socket;
	int port;
	/* mysql/mariadb ?key=value&… query parameters, percent-decoded, in
	 * order; socket= also sets socket. */
	char **keys, **values;
	int nparams;
} sked_url;

/* Parse url into *out (zeroed first; free with sked__url_free even on
 * failure). Schemes: "sqlite:PATH" ("sqlite:///abs" is "/abs"),
 * "postgres://", "postgresql://", "mysql://", "mariadb://", "odbc:".
 * Returns SKED_OK, SKED_EURL (err gets one line that never contains the
 * password), SKED_ENOMEM, SKED_EINVAL (NULL arguments). err may be NULL. */
int sked__url_parse(const char *url, sked_url *out, char *err, size_t errlen)
        __attribute__((warn_unused_result));

/* Free what sked__url_parse allocated and zero *u. Accepts NULL. */
void sked__url_free(sked_url *u);

/* Copy url into out with passwords masked as "***": the password of URL
 * user info ("user:***@"), password=, pwd=, passwd= and sslpassword=
 * values in URL queries, libpq keyword strings and ODBC connection
 * strings (keys case-insensitive, '{…}' and '…' quoted values included).
 * Every way a driver could read the string is masked at once: user info
 * as libpq finds it (up to the first '@' before any '/') and as sked's
 * MySQL parser does (the last '@' before the query); odbc: strings, with
 * or without "//", by ODBC's rules only. A truncated result is still
 * masked. tests/fuzz/fuzz_url_redact.c checks this against libpq's own
 * parser, the MySQL parser and an ODBC connection-string reader. */
void sked__url_redact(const char *url, char *out, size_t len);

/* Mask, in msg (a NUL-terminated buffer of cap bytes), every secret of
 * url as it is written and as it decodes: for driver messages that echo
 * parts of the URL they were given (libpq does). */
void sked__url_scrub(const char *url, char *msg, size_t cap);

#endif /* SKED_UTIL_URL_H */
