/*
 * detect.h — from what the server says it is to the claim strategy.
 *
 * Layer: below the claim seam, beside it: a pure decision table (no I/O,
 * no driver). Drivers report a product name and version string as they
 * get them (libpq, MariaDB Connector/C, sqlite3_libversion, ODBC
 * SQLGetInfo); this module reads those strings, decides, and says why.
 * Running a strategy is claim.c's business; honouring an override is
 * the opener's, using sked__strategy_allowed.
 */
#ifndef SKED_DETECT_H
#define SKED_DETECT_H

#include <stddef.h>

typedef enum {
	SKED_PROD_UNKNOWN,
	SKED_PROD_SQLITE,
	SKED_PROD_POSTGRESQL,
	SKED_PROD_MYSQL,
	SKED_PROD_MARIADB,
	SKED_PROD_SQLSERVER,
	SKED_PROD_ORACLE
} sked_product;

typedef enum {
	SKED_STRAT_NONE = -1,
	SKED_STRAT_SQLITE,      /* IMMEDIATE transaction, one writer */
	SKED_STRAT_SKIP_LOCKED, /* SELECT … FOR UPDATE SKIP LOCKED */
	SKED_STRAT_READPAST,    /* SQL Server UPDLOCK, READPAST hints */
	SKED_STRAT_OPTIMISTIC   /* version-column claims: works everywhere */
} sked_strategy;

typedef struct sked_decision {
	sked_product product;
	int major, minor, patch; /* 0 when the version was not understood */
	sked_strategy strategy;
	int warn;         /* 1: a fallback worth a warning (unknown product
	                     or version) */
	char reason[256]; /* what was seen and why, one line */
} sked_decision;

/* Decide the default strategy for a server that calls itself product
 * (may be NULL or "": then the version string may still tell, e.g.
 * "10.11.6-MariaDB") at version (may be NULL). Always fills *out. */
void sked__decide(const char *product, const char *version, sked_decision *out);

/* The product a server's name and version string say it is (pure; the
 * ODBC driver uses it too, so that products are told apart in one
 * place). */
sked_product sked__product_of(const char *product, const char *version);

/* 1 when strategy s can run on the server described by d; else 0 with
 * why (may be NULL) telling the user what it needs. */
int sked__strategy_allowed(const sked_decision *d, sked_strategy s, char *why,
                           size_t len);

/* "sqlite", "skip-locked", "readpast", "optimistic"; "none" otherwise. */
const char *sked__strategy_name(sked_strategy s);

/* The inverse, case-insensitive ('_' may stand for '-'); SKED_STRAT_NONE
 * when s names no strategy ("auto" included: the caller handles it). */
sked_strategy sked__strategy_parse(const char *s);

/* "PostgreSQL", "MySQL", "MariaDB", "SQLite", "SQL Server", "Oracle",
 * "unknown". */
const char *sked__product_name(sked_product p);

#endif /* SKED_DETECT_H */
