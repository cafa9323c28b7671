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
 * A truncated result is still masked. */
void sked__url_redact(const char *url, char *out, size_t len);

#endif /* SKED_UTIL_URL_H */
