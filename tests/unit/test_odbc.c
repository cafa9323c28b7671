/*
 * test_odbc.c — the ODBC driver: marker rewrite, masked passwords, and
 * what real servers say they are through their ODBC drivers.
 *
 * Layer: tests. The rewrite is pure. The rest opens real connections
 * through unixODBC: SQLite always (a file in SKED_TEST_TMP), PostgreSQL
 * and MariaDB when SKED_TEST_ODBC_PG / SKED_TEST_ODBC_MY name them
 * (scripts/odbc-setup.sh); without them those tests say SKIP. Passwords
 * used here contain the marker "S3cr" so one strstr finds a leak.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "db/db.h"
#include "db/driver/driver.h" /* the driver is under test */
#include "db/driver/markers.h"
#include "dialect/detect.h"
#include "dialect/dialect.h"
#include "sked.h"

static void
rewrite_case(const char *in, const char *want, const int *want_map, int n)
{
	char *out = NULL;
	int *map = NULL, k = -1;
	assert_int_equal(sked__odbc_rewrite(in, &out, &map, &k), SKED_OK);
	assert_string_equal(out, want);
	assert_int_equal(k, n);
	for (int i = 0; i < n; i++)
		if (map[i] != want_map[i])
			fail_msg("%s: marker %d maps to %d, want %d", in, i,
			         map[i], want_map[i]);
	free(out);
	free(map);
}

static void
rewrite(void **state)
{
	/* the claim's order: limit first, node and lease later */
	rewrite_case("SELECT TOP (?3) id WHERE n = ?1 AND l = ?2 + ?2",
	             "SELECT TOP (?) id WHERE n = ? AND l = ? + ?",
	             (int[]){2, 0, 1, 1}, 4);
	/* quoted text and comments keep their question marks */
	rewrite_case("SELECT '?1', \"a?2\", 'it''s ?3' -- ?4\n, ?1 /* ?5 */",
	             "SELECT '?1', \"a?2\", 'it''s ?3' -- ?4\n, ? /* ?5 */",
	             (int[]){0}, 1);
	/* two-digit numbers and bare markers, as SQLite numbers them */
	rewrite_case("VALUES (?12, ?, ?3, ?)", "VALUES (?, ?, ?, ?)",
	             (int[]){11, 12, 2, 13}, 4);
	rewrite_case("SELECT 1", "SELECT 1", NULL, 0);
	/* many markers: the map grows */
	char big[4096] = "", want[4096] = "";
	int map[300];
	for (int i = 0; i < 300; i++) {
		char t[16];
		snprintf(t, sizeof t, "?%d,", 300 - i);
		strcat(big, t);
		strcat(want, "?,");
		map[i] = 299 - i;
	}
	rewrite_case(big, want, map, 300);
}

static const char *
tmpdir(void)
{
	const char *t = getenv("SKED_TEST_TMP");
	return t && *t ? t : "/tmp";
}

static void
bad_password_is_masked(void **state)
{
	/* a MariaDB driver and a refused port: the driver's message must
	 * not carry the password, nor must sked's */
	const char *urls[] = {
	        "odbc:Driver={MariaDB Unicode};Server=127.0.0.1;Port=1;"
	        "Uid=sked;PWD=S3cret-pw;Database=x",
	        "odbc:Driver={PostgreSQL Unicode};Server=127.0.0.1;Port=1;"
	        "Uid=sked;Password={S3cr;et};Database=x",
	        "odbc:Driver={No Such Driver};PWD=S3cretpw",
	        "odbc:DSN=nosuchdsn;UID=u;PWD=S3cretpw",
	        "odbc:nosuchdsn",
	};
	for (size_t i = 0; i < sizeof urls / sizeof urls[0]; i++) {
		sked_db *db = NULL;
		char err[512] = "";
		int rc = sked__db_open(urls[i], &db, err, sizeof err);
		assert_null(db);
		assert_int_equal(rc, SKED_EUNAVAILABLE);
		assert_true(strncmp(err, "odbc: cannot connect", 20) == 0);
		if (strstr(err, "S3cr"))
			fail_msg("password leaked: %s", err);
		assert_null(strchr(err, '\n'));
		sked *h = NULL;
		rc = sked_open(urls[i], NULL, &h);
		assert_int_equal(rc, SKED_EUNAVAILABLE);
		if (strstr(sked_errmsg(h), "S3cr"))
			fail_msg("password leaked: %s", sked_errmsg(h));
		sked_close(h);
	}
}

/* Connect through ODBC and check the product, version, dialect and
 * strategy that follow. */
static void
detect_via(const char *url, sked_product want, const char *dialect,
           sked_strategy strat)
{
	sked_db *db = NULL;
	char err[512] = "";
	int rc = sked__db_open(url, &db, err, sizeof err);
	if (rc != SKED_OK)
		fail_msg("cannot connect: %s", err);
	char product[64], version[64];
	assert_int_equal(sked__db_server(db, product, sizeof product, version,
	                                 sizeof version),
	                 SKED_OK);
	sked_decision d;
	sked__decide(product, version, &d);
	print_message("# %s %s -> %s\n", product, version,
	              sked__strategy_name(d.strategy));
	assert_int_equal(d.product, want);
	assert_true(d.major > 0);
	/* the version as the server would print it: no zero padding
	 * ("10.11.000019", "15.0.18" for 15.18) */
	for (const char *v = version; (v = strstr(v, ".0")) != NULL; v++)
		if (v[2] >= '0' && v[2] <= '9')
			fail_msg("padded version '%s'", version);
	if (want == SKED_PROD_POSTGRESQL && d.major >= 10)
		assert_int_equal(d.patch, 0);
	assert_int_equal(d.strategy, strat);
	const sked_dialect *di = sked__dialect_for(d.product);
	if (dialect) {
		assert_non_null(di);
		assert_string_equal(di->name, dialect);
	}
	/* a value round trip with a NULL, a long text and numbered
	 * markers out of order */
	size_t big = 300000;
	char *s = malloc(big + 1);
	assert_non_null(s);
	for (size_t i = 0; i < big; i++)
		s[i] = (char)('a' + i % 26);
	s[big] = '\0';
	sked_val p[3] = {SKED_INTV(42), SKED_TEXTV(s), SKED_NULLV};
	sked_res r = {0};
	rc = sked__db_exec(db, -1,
	                   want == SKED_PROD_POSTGRESQL
	                           ? "SELECT CAST(?2 AS TEXT), ?1 + 1, "
	                             "CAST(?3 AS TEXT)"
	                           : "SELECT ?2, ?1 + 1, ?3",
	                   p, 3, &r);
	if (rc != SKED_OK)
		fail_msg("select failed: %s", db->err.msg);
	assert_int_equal(r.nrows, 1);
	assert_int_equal(sked__res_len(&r, 0, 0), big);
	assert_memory_equal(sked__res_text(&r, 0, 0), s, big);
	assert_int_equal(sked__res_int(&r, 0, 1), 43);
	assert_true(sked__res_null(&r, 0, 2));
	sked__res_clear(&r);
	/* a missing table is reported as such */
	rc = sked__db_exec(db, -1, "SELECT x FROM sked_no_such_table_odbc",
	                   NULL, 0, NULL);
	assert_int_equal(rc, SKED_ESCHEMA);
	assert_int_equal(db->err.kind, SKED_DBE_NOTABLE);
	free(s);
	sked__db_close(db);
}

static void
detect_sqlite(void **state)
{
	const char *drv = getenv("SKED_TEST_ODBC_SQLITE_DRIVER");
	char path[256], url[512];
	snprintf(path, sizeof path, "%s/odbc-%d.db", tmpdir(), (int)getpid());
	snprintf(url, sizeof url, "odbc:Driver=%s;Database=%s",
	         drv && *drv ? drv : "SQLite3", path);
	detect_via(url, SKED_PROD_SQLITE, "sqlite", SKED_STRAT_SQLITE);
	unlink(path);
}

static void
detect_pg(void **state)
{
	const char *cs = getenv("SKED_TEST_ODBC_PG");
	if (!cs || !*cs)
		skip(); /* SKIP: no PostgreSQL ODBC connection string */
	char url[1024];
	snprintf(url, sizeof url, "odbc:%s", cs);
#ifdef SKED_HAVE_DIALECT_PG
	detect_via(url, SKED_PROD_POSTGRESQL, "postgresql",
	           SKED_STRAT_SKIP_LOCKED);
#else
	detect_via(url, SKED_PROD_POSTGRESQL, NULL, SKED_STRAT_SKIP_LOCKED);
#endif
}

static void
detect_mariadb(void **state)
{
	const char *cs = getenv("SKED_TEST_ODBC_MY");
	if (!cs || !*cs)
		skip(); /* SKIP: no MariaDB ODBC connection string */
	char url[1024];
	snprintf(url, sizeof url, "odbc:%s", cs);
#ifdef SKED_HAVE_DIALECT_MYSQL
	detect_via(url, SKED_PROD_MARIADB, "mysql", SKED_STRAT_SKIP_LOCKED);
#else
	detect_via(url, SKED_PROD_MARIADB, NULL, SKED_STRAT_SKIP_LOCKED);
#endif
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(rewrite),
	        cmocka_unit_test(bad_password_is_masked),
	        cmocka_unit_test(detect_sqlite),
	        cmocka_unit_test(detect_pg),
	        cmocka_unit_test(detect_mariadb),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
