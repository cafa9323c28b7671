/*
 * test_detect.c — unit tests for the strategy decision table.
 *
 * Layer: tests (pure). Every product/version string below is one a real
 * driver reports (libpq, MariaDB Connector/C, ODBC SQLGetInfo), plus the
 * edges of each threshold.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dialect/detect.h"

#define SQLITE   SKED_STRAT_SQLITE
#define SKIP     SKED_STRAT_SKIP_LOCKED
#define READPAST SKED_STRAT_READPAST
#define OPT      SKED_STRAT_OPTIMISTIC

struct row {
	const char *product, *version;
	sked_product want_product;
	int major, minor, patch;
	sked_strategy want;
	int warn;
	const char *reason; /* a substring of the reason, or NULL */
};

static const struct row table[] = {
        /* libpq */
        {"PostgreSQL", "15.4", SKED_PROD_POSTGRESQL, 15, 4, 0, SKIP, 0,
         "PostgreSQL 15.4 >= 9.5: FOR UPDATE SKIP LOCKED in one round trip"},
        {"PostgreSQL", "9.4.26", SKED_PROD_POSTGRESQL, 9, 4, 26, OPT, 0,
         "PostgreSQL 9.4.26 < 9.5: no SKIP LOCKED"},
        {"PostgreSQL", "9.5", SKED_PROD_POSTGRESQL, 9, 5, 0, SKIP, 0, NULL},
        {"PostgreSQL", "9.5.0", SKED_PROD_POSTGRESQL, 9, 5, 0, SKIP, 0, NULL},
        {"PostgreSQL", "9.4", SKED_PROD_POSTGRESQL, 9, 4, 0, OPT, 0, NULL},
        {"PostgreSQL", "16beta1", SKED_PROD_POSTGRESQL, 16, 0, 0, SKIP, 0,
         "PostgreSQL 16 >= 9.5"},
        {"PostgreSQL", "17.2 (Debian 17.2-1)", SKED_PROD_POSTGRESQL, 17, 2, 0,
         SKIP, 0, "PostgreSQL 17.2 >= 9.5"},
        {"PostgreSQL", "10.0", SKED_PROD_POSTGRESQL, 10, 0, 0, SKIP, 0, NULL},
        /* MariaDB Connector/C against MySQL */
        {"MySQL", "8.0.36", SKED_PROD_MYSQL, 8, 0, 36, SKIP, 0,
         "MySQL 8.0.36 >= 8.0.1: FOR UPDATE SKIP LOCKED"},
        {"MySQL", "5.7.44-log", SKED_PROD_MYSQL, 5, 7, 44, OPT, 0,
         "MySQL 5.7.44 < 8.0.1: no SKIP LOCKED, optimistic version-column "
         "claims"},
        {"MySQL", "8.4.0", SKED_PROD_MYSQL, 8, 4, 0, SKIP, 0, NULL},
        {"MySQL", "8.0.1", SKED_PROD_MYSQL, 8, 0, 1, SKIP, 0, NULL},
        {"MySQL", "8.0.0", SKED_PROD_MYSQL, 8, 0, 0, OPT, 0, NULL},
        {"MySQL", "8.0.0-dmr", SKED_PROD_MYSQL, 8, 0, 0, OPT, 0, NULL},
        /* ... and against MariaDB, product as reported or empty */
        {"MariaDB", "10.11.6-MariaDB-0+deb12u1", SKED_PROD_MARIADB, 10, 11, 6,
         SKIP, 0, "MariaDB 10.11.6 >= 10.6"},
        {"", "10.11.6-MariaDB-0+deb12u1", SKED_PROD_MARIADB, 10, 11, 6, SKIP, 0,
         NULL},
        {NULL, "11.4.2-MariaDB", SKED_PROD_MARIADB, 11, 4, 2, SKIP, 0, NULL},
        {"MySQL", "5.5.5-10.5.23-MariaDB", SKED_PROD_MARIADB, 10, 5, 23, OPT, 0,
         "MariaDB 10.5.23 < 10.6: no SKIP LOCKED, optimistic version-column "
         "claims"},
        {"", "5.5.5-10.6.0-MariaDB", SKED_PROD_MARIADB, 10, 6, 0, SKIP, 0,
         NULL},
        {"MariaDB", "10.5.99", SKED_PROD_MARIADB, 10, 5, 99, OPT, 0, NULL},
        {"MariaDB", "10.6.0", SKED_PROD_MARIADB, 10, 6, 0, SKIP, 0, NULL},
        {"MariaDB", "5.5.5-11.4.2-MariaDB-log", SKED_PROD_MARIADB, 11, 4, 2,
         SKIP, 0, NULL},
        /* ODBC SQL_DBMS_NAME / SQL_DBMS_VER */
        {"Microsoft SQL Server", "16.00.1000", SKED_PROD_SQLSERVER, 16, 0, 1000,
         READPAST, 0, "SQL Server 16.00.1000"},
        {"Microsoft SQL Server", "15.00.2000", SKED_PROD_SQLSERVER, 15, 0, 2000,
         READPAST, 0, NULL},
        {"Microsoft SQL Server", "14.00", SKED_PROD_SQLSERVER, 14, 0, 0,
         READPAST, 0, NULL},
        {"Microsoft SQL Server", "13.00", SKED_PROD_SQLSERVER, 13, 0, 0,
         READPAST, 0, NULL},
        {"Microsoft SQL Server", "12.00", SKED_PROD_SQLSERVER, 12, 0, 0,
         READPAST, 0, NULL},
        {"Microsoft SQL Server", "11.00.2100", SKED_PROD_SQLSERVER, 11, 0, 2100,
         READPAST, 0, NULL},
        {"Microsoft SQL Server", "09.00.1399", SKED_PROD_SQLSERVER, 9, 0, 1399,
         READPAST, 0, NULL},
        {"Microsoft SQL Server", "08.00.2039", SKED_PROD_SQLSERVER, 8, 0, 2039,
         OPT, 0, "older than 2005"},
        {"PostgreSQL", "09.05.0000", SKED_PROD_POSTGRESQL, 9, 5, 0, SKIP, 0,
         "PostgreSQL 09.05.0000 >= 9.5"},
        {"PostgreSQL", "09.04.0000", SKED_PROD_POSTGRESQL, 9, 4, 0, OPT, 0,
         NULL},
        {"MySQL", "08.00.0036", SKED_PROD_MYSQL, 8, 0, 36, SKIP, 0, NULL},
        {"MariaDB", "10.11.0006", SKED_PROD_MARIADB, 10, 11, 6, SKIP, 0, NULL},
        {"MariaDB", "10.05.0023", SKED_PROD_MARIADB, 10, 5, 23, OPT, 0, NULL},
        {"SQLite", "3.40.1", SKED_PROD_SQLITE, 3, 40, 1, SQLITE, 0,
         "SQLite 3.40.1"},
        {"SQLite", "3.35.0", SKED_PROD_SQLITE, 3, 35, 0, SQLITE, 0, NULL},
        {"SQLite", "3.31.1", SKED_PROD_SQLITE, 3, 31, 1, OPT, 1, "< 3.35"},
        {"Oracle",
         "Oracle Database 19c Enterprise Edition Release 19.0.0.0.0 - "
         "Production",
         SKED_PROD_ORACLE, 19, 0, 0, SKIP, 0,
         "Oracle 19.0.0.0.0 >= 12c: FOR UPDATE SKIP LOCKED"},
        {"Oracle", "12.1.0.2.0", SKED_PROD_ORACLE, 12, 1, 0, SKIP, 0, NULL},
        {"Oracle", "11.2.0.4.0", SKED_PROD_ORACLE, 11, 2, 0, OPT, 0,
         "Oracle 11.2.0.4.0 < 12c"},
        {"Oracle", "23.4.0.24.05", SKED_PROD_ORACLE, 23, 4, 0, SKIP, 0, NULL},
        /* the unknown, and the known with an unreadable version */
        {"Foo DB", "1.0", SKED_PROD_UNKNOWN, 1, 0, 0, OPT, 1,
         "unknown product 'Foo DB' 1.0: optimistic claims work everywhere"},
        {"", "8.0.36", SKED_PROD_UNKNOWN, 8, 0, 36, OPT, 1, "unknown product"},
        {NULL, NULL, SKED_PROD_UNKNOWN, 0, 0, 0, OPT, 1, "unknown product ''"},
        {"PostgreSQL", "devel", SKED_PROD_POSTGRESQL, 0, 0, 0, OPT, 1,
         "not understood"},
        {"MySQL", NULL, SKED_PROD_MYSQL, 0, 0, 0, OPT, 1, "not understood"},
};

static void
decision_table(void **state)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const struct row *r = &table[i];
		sked_decision d;
		memset(&d, 0x5a, sizeof(d));
		sked__decide(r->product, r->version, &d);
		if (d.product != r->want_product || d.strategy != r->want ||
		    d.warn != r->warn || d.major != r->major ||
		    d.minor != r->minor || d.patch != r->patch)
			fail_msg("row %zu (%s / %s): product %d %d.%d.%d "
			         "strategy %s warn %d: %s",
			         i, r->product ? r->product : "(null)",
			         r->version ? r->version : "(null)", d.product,
			         d.major, d.minor, d.patch,
			         sked__strategy_name(d.strategy), d.warn,
			         d.reason);
		assert_true(strlen(d.reason) > 0);
		assert_null(strchr(d.reason, '\n'));
		if (r->reason != NULL && strstr(d.reason, r->reason) == NULL)
			fail_msg("row %zu: reason '%s' lacks '%s'", i, d.reason,
			         r->reason);
		/* the default is always allowed where it was chosen */
		assert_true(sked__strategy_allowed(&d, d.strategy, NULL, 0));
	}
}

static void
overrides(void **state)
{
	sked_decision pg, old_maria, mssql, lite, unknown;
	char why[256];

	sked__decide("PostgreSQL", "15.4", &pg);
	sked__decide("", "5.5.5-10.5.23-MariaDB", &old_maria);
	sked__decide("Microsoft SQL Server", "16.00.1000", &mssql);
	sked__decide("SQLite", "3.40.1", &lite);
	sked__decide("Foo DB", "1.0", &unknown);

	/* optimistic works everywhere, SQLite included */
	assert_true(sked__strategy_allowed(&pg, OPT, why, sizeof(why)));
	assert_string_equal(why, "");
	assert_true(sked__strategy_allowed(&old_maria, OPT, NULL, 0));
	assert_true(sked__strategy_allowed(&mssql, OPT, NULL, 0));
	assert_true(sked__strategy_allowed(&lite, OPT, NULL, 0));
	assert_true(sked__strategy_allowed(&unknown, OPT, NULL, 0));

	/* sqlite only on SQLite */
	assert_true(sked__strategy_allowed(&lite, SQLITE, NULL, 0));
	assert_false(sked__strategy_allowed(&pg, SQLITE, why, sizeof(why)));
	assert_non_null(strstr(why, "needs SQLite"));
	assert_non_null(strstr(why, "PostgreSQL 15.4"));

	/* skip-locked only where the table says */
	assert_true(sked__strategy_allowed(&pg, SKIP, NULL, 0));
	assert_false(
	        sked__strategy_allowed(&old_maria, SKIP, why, sizeof(why)));
	assert_non_null(strstr(why, "MariaDB >= 10.6"));
	assert_non_null(strstr(why, "this is MariaDB 10.5.23"));
	assert_false(sked__strategy_allowed(&mssql, SKIP, NULL, 0));
	assert_false(sked__strategy_allowed(&lite, SKIP, NULL, 0));
	assert_false(sked__strategy_allowed(&unknown, SKIP, why, sizeof(why)));
	assert_non_null(strstr(why, "this is unknown"));

	/* readpast only on SQL Server */
	assert_true(sked__strategy_allowed(&mssql, READPAST, NULL, 0));
	assert_false(sked__strategy_allowed(&pg, READPAST, why, sizeof(why)));
	assert_non_null(strstr(why, "SQL Server"));
	assert_false(sked__strategy_allowed(&lite, READPAST, NULL, 0));

	/* no strategy at all */
	assert_false(
	        sked__strategy_allowed(&pg, SKED_STRAT_NONE, why, sizeof(why)));
	assert_true(strlen(why) > 0);
	assert_false(sked__strategy_allowed(NULL, OPT, NULL, 0));
}

static void
names(void **state)
{
	assert_string_equal(sked__strategy_name(SQLITE), "sqlite");
	assert_string_equal(sked__strategy_name(SKIP), "skip-locked");
	assert_string_equal(sked__strategy_name(READPAST), "readpast");
	assert_string_equal(sked__strategy_name(OPT), "optimistic");
	assert_string_equal(sked__strategy_name(SKED_STRAT_NONE), "none");

	for (int s = SQLITE; s <= OPT; s++)
		assert_int_equal(sked__strategy_parse(sked__strategy_name(s)),
		                 s);
	assert_int_equal(sked__strategy_parse("SKIP_LOCKED"), SKIP);
	assert_int_equal(sked__strategy_parse("Optimistic"), OPT);
	assert_int_equal(sked__strategy_parse("auto"), SKED_STRAT_NONE);
	assert_int_equal(sked__strategy_parse(""), SKED_STRAT_NONE);
	assert_int_equal(sked__strategy_parse("skip"), SKED_STRAT_NONE);
	assert_int_equal(sked__strategy_parse("skip-locked2"), SKED_STRAT_NONE);
	assert_int_equal(sked__strategy_parse(NULL), SKED_STRAT_NONE);

	assert_string_equal(sked__product_name(SKED_PROD_POSTGRESQL),
	                    "PostgreSQL");
	assert_string_equal(sked__product_name(SKED_PROD_MARIADB), "MariaDB");
	assert_string_equal(sked__product_name(SKED_PROD_SQLSERVER),
	                    "SQL Server");
	assert_string_equal(sked__product_name(SKED_PROD_UNKNOWN), "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(decision_table),
	        cmocka_unit_test(overrides),
	        cmocka_unit_test(names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
