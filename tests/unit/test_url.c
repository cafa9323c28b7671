/*
 * test_url.c — unit tests for database URL parsing and password redaction.
 *
 * Layer: tests (pure). The rule under test above all: a password never
 * shows up in a redacted URL or in an error message. Every password used
 * here contains the marker "S3cr" so one strstr finds any leak.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sked.h"
#include "sked_cli.h"
#include "util/url.h"

#define MARK "S3cr"

static void
no_leak(const char *what, const char *text)
{
	if (strstr(text, MARK) != NULL)
		fail_msg("password leaked by %s: %s", what, text);
}

static void
parse_ok(const char *url, sked_url *u)
{
	char err[256] = "untouched";
	int rc = sked__url_parse(url, u, err, sizeof(err));
	if (rc != SKED_OK)
		fail_msg("%s: rc %d: %s", url, rc, err);
	assert_string_equal(err, "");
}

static void
sqlite_urls(void **state)
{
	sked_url u;

	parse_ok("sqlite:sked.db", &u);
	assert_int_equal(u.kind, SKED_URL_SQLITE);
	assert_string_equal(u.path, "sked.db");
	assert_null(u.conninfo);
	sked__url_free(&u);
	assert_null(u.path);

	parse_ok("sqlite::memory:", &u);
	assert_string_equal(u.path, ":memory:");
	sked__url_free(&u);

	parse_ok("sqlite:///var/lib/sked/sked.db", &u);
	assert_string_equal(u.path, "/var/lib/sked/sked.db");
	sked__url_free(&u);

	parse_ok("sqlite:/abs/path.db", &u);
	assert_string_equal(u.path, "/abs/path.db");
	sked__url_free(&u);

	parse_ok("sqlite://rel/dir/x.db", &u);
	assert_string_equal(u.path, "rel/dir/x.db");
	sked__url_free(&u);

	parse_ok("SQLite:x.db", &u); /* schemes are case-insensitive */
	assert_int_equal(u.kind, SKED_URL_SQLITE);
	sked__url_free(&u);
}

static void
postgres_urls(void **state)
{
	sked_url u;
	const char *a =
	        "postgres://sked:pw@db.example:5432/jobs?sslmode=require";
	const char *b = "postgresql:///jobs?host=/run/postgresql";

	parse_ok(a, &u);
	assert_int_equal(u.kind, SKED_URL_POSTGRES);
	assert_string_equal(u.conninfo, a); /* unchanged, for libpq */
	assert_null(u.host);
	sked__url_free(&u);

	parse_ok(b, &u);
	assert_int_equal(u.kind, SKED_URL_POSTGRES);
	assert_string_equal(u.conninfo, b);
	sked__url_free(&u);
}

static void
mysql_urls(void **state)
{
	sked_url u;

	parse_ok("mysql://sked:p%40ss@db.example:3307/jobs?ssl-mode=REQUIRED&"
	         "connect_timeout=5",
	         &u);
	assert_int_equal(u.kind, SKED_URL_MYSQL);
	assert_string_equal(u.user, "sked");
	assert_string_equal(u.password, "p@ss");
	assert_string_equal(u.host, "db.example");
	assert_int_equal(u.port, 3307);
	assert_string_equal(u.dbname, "jobs");
	assert_null(u.socket);
	assert_int_equal(u.nparams, 2);
	assert_string_equal(u.keys[0], "ssl-mode");
	assert_string_equal(u.values[0], "REQUIRED");
	assert_string_equal(u.keys[1], "connect_timeout");
	assert_string_equal(u.values[1], "5");
	sked__url_free(&u);
	assert_int_equal(u.nparams, 0);
	assert_null(u.keys);

	parse_ok("mariadb://root@localhost/sked?socket=/run/mysqld/"
	         "mysqld.sock",
	         &u);
	assert_int_equal(u.kind, SKED_URL_MYSQL);
	assert_string_equal(u.user, "root");
	assert_null(u.password);
	assert_string_equal(u.host, "localhost");
	assert_int_equal(u.port, 0);
	assert_string_equal(u.dbname, "sked");
	assert_string_equal(u.socket, "/run/mysqld/mysqld.sock");
	sked__url_free(&u);

	/* an encoded socket path in the host position */
	parse_ok("mariadb://u@%2Frun%2Fmysqld%2Fmysqld.sock/sked", &u);
	assert_string_equal(u.socket, "/run/mysqld/mysqld.sock");
	assert_string_equal(u.host, "localhost");
	assert_string_equal(u.dbname, "sked");
	sked__url_free(&u);

	/* everything defaulted */
	parse_ok("mysql://", &u);
	assert_null(u.host);
	assert_null(u.user);
	assert_null(u.dbname);
	assert_int_equal(u.port, 0);
	sked__url_free(&u);

	/* IPv6 */
	parse_ok("mysql://u:pw@[::1]:3306/db", &u);
	assert_string_equal(u.host, "::1");
	assert_int_equal(u.port, 3306);
	sked__url_free(&u);

	/* a password with unencoded '/', '@' and '?' stays a password */
	parse_ok("mysql://u:a/b@c@host:3306/db", &u);
	assert_string_equal(u.password, "a/b@c");
	assert_string_equal(u.host, "host");
	assert_string_equal(u.dbname, "db");
	sked__url_free(&u);
	parse_ok("mysql://u:a?b@host/db", &u);
	assert_string_equal(u.password, "a?b");
	assert_string_equal(u.host, "host");
	sked__url_free(&u);

	/* empty password, no user */
	parse_ok("mysql://u:@h/db", &u);
	assert_string_equal(u.password, "");
	sked__url_free(&u);
	parse_ok("mysql://h:1/db?flag", &u);
	assert_null(u.user);
	assert_int_equal(u.port, 1);
	assert_int_equal(u.nparams, 1);
	assert_string_equal(u.keys[0], "flag");
	assert_string_equal(u.values[0], "");
	sked__url_free(&u);
}

static void
odbc_urls(void **state)
{
	sked_url u;
	const char *cs = "odbc:Driver={ODBC Driver 18 for SQL Server};"
	                 "Server=tcp:db,1433;Database=sked;UID=sa;PWD=x;";

	parse_ok(cs, &u);
	assert_int_equal(u.kind, SKED_URL_ODBC);
	assert_string_equal(u.path, cs + 5);
	sked__url_free(&u);

	parse_ok("odbc:MyDSN", &u);
	assert_string_equal(u.path, "MyDSN");
	sked__url_free(&u);
}

static void
expect_err(const char *url, int code, const char *want)
{
	sked_url u;
	char err[256] = "";
	int rc = sked__url_parse(url, &u, err, sizeof(err));

	if (rc != code)
		fail_msg("%s: rc %d, wanted %d (%s)", url, rc, code, err);
	if (strstr(err, want) == NULL)
		fail_msg("%s: error '%s' lacks '%s'", url, err, want);
	assert_null(strchr(err, '\n'));
	no_leak("an error message", err);
	sked__url_free(&u);
}

static void
bad_urls(void **state)
{
	expect_err("redis://localhost", SKED_EURL,
	           "unknown URL scheme 'redis' (expected sqlite:, postgres://, "
	           "mysql://, mariadb://, odbc:)");
	expect_err("sked.db", SKED_EURL, "no scheme");
	expect_err("", SKED_EURL, "no scheme");
	expect_err("://x", SKED_EURL, "no scheme");
	expect_err("sqlite:", SKED_EURL, "sqlite: URL has no path");
	expect_err("sqlite://", SKED_EURL, "sqlite: URL has no path");
	expect_err("odbc:", SKED_EURL, "no connection string");
	expect_err("postgres:jobs", SKED_EURL, "postgres://");
	expect_err("mysql:jobs", SKED_EURL, "mysql://");
	expect_err("mysql://u:" MARK "et@h:x/db", SKED_EURL,
	           "mysql URL: bad port 'x'");
	expect_err("mysql://u:" MARK "et@h:0/db", SKED_EURL, "bad port '0'");
	expect_err("mysql://u:" MARK "et@h:65536/db", SKED_EURL,
	           "bad port '65536'");
	expect_err("mysql://u:" MARK "et@h:/db", SKED_EURL, "bad port ''");
	expect_err("mysql://u:" MARK "%zz@h/db", SKED_EURL,
	           "bad %-escape in the password");
	expect_err("mysql://u:" MARK "%00@h/db", SKED_EURL, "password");
	expect_err("mysql://u:" MARK "%4@h/db", SKED_EURL, "password");
	expect_err("mysql://u%zz:" MARK "@h/db", SKED_EURL, "user name");
	expect_err("mysql://[::1/db", SKED_EURL, "unclosed '['");
	expect_err("mysql://h/db?=x", SKED_EURL, "without a name");
	/* a password that looks like a port must not be echoed */
	expect_err("mysql://u:" MARK "/x@h:bad/db", SKED_EURL,
	           "bad port 'bad'");

	sked_url u;
	assert_int_equal(sked__url_parse(NULL, &u, NULL, 0), SKED_EINVAL);
	assert_int_equal(sked__url_parse("sqlite:x", NULL, NULL, 0),
	                 SKED_EINVAL);
	/* err may be NULL */
	assert_int_equal(sked__url_parse("nope:x", &u, NULL, 0), SKED_EURL);
	sked__url_free(&u);
	sked__url_free(NULL);
}

static void
redact_is(const char *url, const char *want)
{
	char out[512];

	sked__url_redact(url, out, sizeof(out));
	if (strcmp(out, want) != 0)
		fail_msg("redact(%s) = %s, wanted %s", url, out, want);
	no_leak("redaction", out);
	/* every truncation of it is masked too */
	for (size_t n = 1; n <= strlen(want) + 1; n++) {
		char small[512];
		sked__url_redact(url, small, n);
		assert_int_equal(strlen(small), n - 1);
		assert_memory_equal(small, want, n - 1);
	}
	/* the public wrapper does the same */
	assert_ptr_equal(sked_redact_url(url, out, sizeof(out)), out);
	assert_string_equal(out, want);
}

static void
redaction(void **state)
{
	redact_is("postgres://sked:" MARK "et@db:5432/jobs",
	          "postgres://sked:***@db:5432/jobs");
	redact_is("postgresql://sked@db/jobs", "postgresql://sked@db/jobs");
	redact_is("mysql://u:" MARK "%40x@h/db?ssl=1",
	          "mysql://u:***@h/db?ssl=1");
	redact_is("mariadb://u:a/b@c" MARK "@h/db", "mariadb://u:***@h/db");
	redact_is("mysql://u:a?" MARK "@h/db", "mysql://u:***@h/db");
	redact_is("mysql://u:@h/db", "mysql://u:***@h/db");
	redact_is("postgres://db/jobs?user=u&password=" MARK "&sslmode=x",
	          "postgres://db/jobs?user=u&password=***&sslmode=x");
	/* libpq has no fragments: "#frag" is part of the password */
	redact_is("postgres://db/jobs?PWD=" MARK "#frag",
	          "postgres://db/jobs?PWD=***");
	redact_is("postgres://db/jobs?sslpassword=" MARK,
	          "postgres://db/jobs?sslpassword=***");
	/* a key that merely ends in "password" is not a secret key... */
	redact_is("postgres://db/x?mypassword=1",
	          "postgres://db/x?mypassword=1");
	/* libpq keyword form */
	redact_is("host=db user=u password=" MARK " dbname=jobs",
	          "host=db user=u password=*** dbname=jobs");
	redact_is("host=db password = '" MARK " x\\' y' dbname=jobs",
	          "host=db password =*** dbname=jobs");
	/* ODBC */
	redact_is("odbc:Driver={SQL Server};UID=sa;PWD=" MARK ";Database=d",
	          "odbc:Driver={SQL Server};UID=sa;PWD=***;Database=d");
	redact_is("odbc:DSN=x;pwd={" MARK ";}};x};UID=u",
	          "odbc:DSN=x;pwd=***;UID=u");
	redact_is("odbc:DSN=x;Password=" MARK, "odbc:DSN=x;Password=***");
	redact_is("odbc:DSN=x;PWD = " MARK " with space;UID=u",
	          "odbc:DSN=x;PWD =***;UID=u");
	redact_is("DSN=x;PWD=" MARK, "DSN=x;PWD=***");
	/* found by fuzzing against the drivers' own readers: libpq reads
	 * the user info up to the first '@' before any '/', whatever '=',
	 * '#' or '?' it holds */
	redact_is("postgres://app:pa=" MARK "#1@127.0.0.1:55599/x",
	          "postgres://app:***@127.0.0.1:55599/x");
	redact_is("postgres://app:pa=" MARK "?1@h/x", "postgres://app:***@h/x");
	/* odbc:// is a connection string, not a URL */
	redact_is("odbc://DSN=x;UID=app;PWD=abc&" MARK "gh",
	          "odbc://DSN=x;UID=app;PWD=***");
	redact_is("odbc://DSN=x;PWD={p#" MARK ";word};UID=y",
	          "odbc://DSN=x;PWD=***;UID=y");
	/* a user name that looks like a secret key hides the password too */
	redact_is("mysql://pwd=a:" MARK "&ret@h/db", "mysql://pwd=***@h/db");
	redact_is("mysql://password=:" MARK "@h/db", "mysql://password=***");
	/* nothing to hide */
	redact_is("sqlite:sked.db", "sqlite:sked.db");
	redact_is("odbc:MyDSN", "odbc:MyDSN");
	redact_is("", "");

	char out[8] = "zzzz";
	sked__url_redact(NULL, out, sizeof(out));
	assert_string_equal(out, "");
	sked__url_redact("x", out, 0); /* no room: no write */
	assert_string_equal(out, "");
}

/* Driver messages that echo the URL, or the piece they could not read,
 * lose every secret of the URL, as written and as decoded. */
static void
scrubbing(void **state)
{
	(void)state;
	char m[256];
	const char *url = "postgres://u:hun%zz" MARK "@localhost/db";
	snprintf(m, sizeof m,
	         "invalid percent-encoded token: \"hun%%zz" MARK "\"");
	sked__url_scrub(url, m, sizeof m);
	no_leak("scrub", m);
	assert_string_equal(m, "invalid percent-encoded token: \"***\"");

	url = "postgres://u:p" MARK "@[bad";
	snprintf(m, sizeof m, "looking for \"]\" in URI: \"%s\"", url);
	sked__url_scrub(url, m, sizeof m);
	no_leak("scrub", m);
	assert_string_equal(
	        m, "looking for \"]\" in URI: \"postgres://u:***@[bad\"");

	url = "mysql://u:a%40" MARK "@h/db";
	snprintf(m, sizeof m, "user u, password a@" MARK ", raw a%%40" MARK);
	sked__url_scrub(url, m, sizeof m);
	no_leak("scrub", m);

	/* a short password still goes, and the buffer bound holds */
	char small[12];
	snprintf(small, sizeof small, "ab-ab-ab-ab");
	sked__url_scrub("postgres://u:ab@h/d", small, sizeof small);
	assert_null(strstr(small, "ab"));
	assert_true(strlen(small) < sizeof small);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(sqlite_urls), cmocka_unit_test(postgres_urls),
	        cmocka_unit_test(mysql_urls),  cmocka_unit_test(odbc_urls),
	        cmocka_unit_test(bad_urls),    cmocka_unit_test(redaction),
	        cmocka_unit_test(scrubbing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
