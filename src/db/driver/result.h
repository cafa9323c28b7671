/*
 * db/driver/result.h — what crosses the driver seam: a bound value, a
 * materialized result, a driver's error and a notification's payload.
 *
 * Layer: the bottom of src/db/driver/, below the drivers and db.c (whose
 * db.h passes these types on to the layers above). result.c fills and
 * reads results; nothing here knows a connection or SQL.
 */
#ifndef SKED_DB_RESULT_H
#define SKED_DB_RESULT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sked.h"

/* A notification's payload, as a driver's drain hands it over (NULL:
 * some arrived whose payloads were lost). */
typedef void (*sked_note_fn)(void *arg, const char *payload);

/* A bound parameter. Text is borrowed for the duration of the call. */
typedef enum { SKED_VNULL = 0, SKED_VINT, SKED_VTEXT } sked_vtype;
typedef struct sked_val {
	sked_vtype type;
	int64_t i;
	const char *s;
	size_t len;
} sked_val;

#define SKED_NULLV   ((sked_val){.type = SKED_VNULL})
#define SKED_INTV(x) ((sked_val){.type = SKED_VINT, .i = (int64_t)(x)})
static inline sked_val
sked__textv(const char *s)
{
	sked_val v = {.type = s ? SKED_VTEXT : SKED_VNULL,
	              .s = s,
	              .len = s ? strlen(s) : 0};
	return v;
}
#define SKED_TEXTV(x)    sked__textv(x)
#define SKED_BLOBV(p, n) ((sked_val){.type = SKED_VTEXT, .s = (p), .len = (n)})

/* A materialized result: nrows × ncols cells, each NULL or a
 * NUL-terminated string (integers in decimal). Owned by the caller of
 * sked__db_exec; release with sked__res_clear. The cells' bytes share
 * one growing buffer (a claim's dozen cells a row cost one allocation
 * per doubling, not one each: 13 mallocs per no-op task went here). */
typedef struct sked_res {
	int nrows, ncols;
	size_t *off;   /* [row * ncols + col]: offset in bytes, or SIZE_MAX */
	size_t *len;   /* byte length of each cell */
	size_t ncells; /* cells filled */
	size_t cap;    /* cells allocated */
	char *bytes;   /* every non-NULL cell, each followed by a NUL */
	size_t nbytes, bcap;
} sked_res;

/* Helpers for drivers to fill a result. */
int sked__res_begin(sked_res *r, int ncols) __attribute__((warn_unused_result));
int sked__res_add(sked_res *r, const char *s, size_t len) __attribute__((
        warn_unused_result)); /* next cell, row-major; s NULL = NULL */
void sked__res_clear(sked_res *r);

int sked__res_null(const sked_res *r, int row, int col);
int64_t sked__res_int(const sked_res *r, int row, int col); /* NULL → 0 */
const char *sked__res_text(const sked_res *r, int row, int col); /* or NULL */
size_t sked__res_len(const sked_res *r, int row, int col);
/* A strdup of the cell, or NULL for NULL; sets *nomem on failure. */
char *sked__res_dup(const sked_res *r, int row, int col, int *nomem);

/* What went wrong, as a driver reports it. */
typedef enum {
	SKED_DBE_NONE = 0,
	SKED_DBE_OTHER,   /* any other error: SKED_EDB */
	SKED_DBE_CONNECT, /* cannot connect / connection lost: SKED_EUNAVAILABLE
	                   */
	SKED_DBE_UNIQUE,  /* a unique constraint was violated */
	SKED_DBE_RETRY,   /* deadlock, serialization failure, lock wait timeout,
	                     busy */
	SKED_DBE_READONLY, /* the database cannot be written */
	SKED_DBE_NOTABLE,  /* the table does not exist (schema missing) */
	SKED_DBE_NOMEM,
	SKED_DBE_PERM, /* the user lacks a right (a GRANT): SKED_EPERM */
	SKED_DBE_DATA, /* the server refused a value (SQLSTATE class 22: bad
	                 encoding, out of range, too long): SKED_EDB, and the
	                 same statement would be refused again */
	/* a connection refused for what waiting cannot fix (a connect's
	 * kinds only): the database does not exist, or TLS is required or
	 * refused: SKED_ECONFIG; authentication failed or the role does
	 * not exist: SKED_DBE_PERM */
	SKED_DBE_CONFIG
} sked_dbe_kind;

typedef struct sked_dberr {
	sked_dbe_kind kind;
	int native;       /* driver/server error number, or 0 */
	char sqlstate[6]; /* "" when unknown */
	char msg[512];    /* one line, password-free */
} sked_dberr;

/* What the seam's transaction verb does (driver.h tx, db.h sked__db_tx). */
enum { SKED_TX_BEGIN, SKED_TX_COMMIT, SKED_TX_ROLLBACK };

#endif /* SKED_DB_RESULT_H */
