/*
 * handle.h — the handle core: struct sked and what every layer above the
 * driver seam does with it.
 *
 * Folder src/handle/ (floor 4, docs/design.md): struct sked and what
 * every floor above does with it (handle.c); internal.h is what a model
 * file includes. Calls db/ and below.
 *
 * Layer: the bottom of the model. A struct sked is one connection plus
 * what was detected and chosen for it: dialect, claim strategy, rendered
 * SQL. This header declares failing (one-line messages), querying
 * (registry statements by id, text joined from registry fragments),
 * transactions, the database's clock, reconnecting and the bounded
 * retry; handle.c defines them on top of db.h and nothing else of
 * sked's. Calls run one way:
 * api.c → schema / claim / model → this → db.c → drivers. Nothing here
 * is thread safe; a handle is used by one thread at a time.
 */
#ifndef SKED_HANDLE_H
#define SKED_HANDLE_H

#include <pthread.h>
#include <stdarg.h>

#include "db/db.h"
#include "dialect/detect.h"
#include "dialect/dialect.h"
#include "sked.h"

/* Where a watched handle says it is waiting on one of sked's own rows (a
 * schedule row, a cluster lock row, a queue limit row), for the worker's
 * lock-wait watchdog (worker/waits.c), which reads it from another
 * thread: the one part of a handle that is shared, under its own mutex.
 * The slot belongs to the worker and outlives the handles pointed at it. */
typedef struct sked_wait_slot {
	pthread_mutex_t mu;
	int64_t since_ms;  /* monotonic ms the wait began; 0: not waiting */
	unsigned long seq; /* one more for every wait */
	int what;          /* SKED_WAIT_* */
	char row[SKED_MAX_NAME + 1];
	int64_t backend; /* the server's id of the waiting connection; 0 */
	char where[512]; /* the database, as the URL says it (no password) */
} sked_wait_slot;

struct sked {
	sked_db *db;
	const sked_dialect *dialect;
	const struct sked_claim_strategy *strategy; /* claim/claim.h */
	sked_decision decision; /* product, version, default strategy, why */
	char *sql[SKED_SQL__COUNT];
	char *listen_sql,
	        *notify_sql; /* push wake-up, where the dialect has it */
	int listening;       /* LISTEN is on: a reconnect issues it again */
	int in_tx;           /* a transaction of ours is open */
	int borrowed; /* wraps the application's connection: never begins,
	                 commits or closes it */
	char prefix[32];
	char *url; /* as given (may hold a password): never logged */
	char url_redacted[512];
	char product[64], version[64];
	char reason[512]; /* why this strategy */
	sked_options opts;
	char strategy_opt[32];
	int schema_version;
	unsigned long retries; /* claims and finishes retried after a
	                          deadlock, lock wait timeout or busy */
	char errmsg[1024];
	/* the lock-wait watchdog (sked__wait_begin): the worker's slot for
	 * this handle, or NULL (then marking costs a test of this pointer);
	 * the server's id of this connection, asked once per connection
	 * (0: not asked yet, -1: not known here) */
	sked_wait_slot *wait;
	int64_t backend_id;
	/* the name the server shows for this connection (PostgreSQL's
	 * application_name), set again after a reconnect; "" none */
	char app_name[SKED_MAX_NAME + 1];
	/* which queues have cluster-wide limits, as this handle last read
	 * them (limits.c); NULL until its first claim */
	struct sked_limits *limits;
	/* the tasks a cancel cancelled with it, collected while on
	 * (done.c, sked_cancel_graph); off otherwise */
	struct {
		int on, oom;
		int64_t *ids;
		size_t n, cap;
	} cascade;
};

/* Record the detail of a failure on h and return rc. The message is one
 * line; callers pass text that holds no password. */
int sked__fail(sked *h, int rc, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* SKED_OK when s is a name (util/ident.h); otherwise SKED_EINVAL with
 * "WHAT 'S' is not a valid name (…)" on h. The one wording of that
 * refusal for every kind of name (queue, kind, node, lock, schedule). */
int sked__check_name(sked *h, const char *what, const char *s);
/* Record the database's error (h->db->err) with a leading context. */
int sked__fail_db(sked *h, int rc, const char *context);

/* Run registry statement id (dialect.h) with params; res may be NULL.
 * The id is also the driver's prepared-statement cache slot. */
int sked__q(sked *h, sked_sql id, const sked_val *p, int np, sked_res *res)
        __attribute__((warn_unused_result));
/* Run dynamic SQL text (already rendered: registry fragments joined by
 * sked__sql_fill, a schema step), no statement cache. */
int sked__qdyn(sked *h, const char *sql, const sked_val *p, int np,
               sked_res *res) __attribute__((warn_unused_result));

/* Transactions: begin (claim = the dialect's claim transaction), commit,
 * rollback (never fails loudly: it is the cleanup path). */
int sked__begin(sked *h, int claim) __attribute__((warn_unused_result));
int sked__commit(sked *h) __attribute__((warn_unused_result));
void sked__rollback(sked *h);

/* Replace a broken connection with a new one to the same database;
 * prepared statements are prepared again on first use. */
int sked__reconnect(sked *h) __attribute__((warn_unused_result));

/* A second connection to h's database (the worker's extra connections):
 * the same URL, options, strategy and name on the server, with h's
 * detection, rendered statements and schema check reused, not run
 * again; only the connection and its session setup are new. *out is set
 * even on a failure (its message is on it), to be closed with
 * sked_close. A borrowed handle cannot be cloned. */
int sked__clone(const sked *h, sked **out) __attribute__((warn_unused_result));

/* After a failed try of a claim, finish or renewal: when the database
 * rolled it back as a deadlock, lock wait timeout or busy database
 * (rc SKED_EBUSY, error kind SKED_DBE_RETRY), the handle is not borrowed
 * and attempt < tries, roll back, count the retry, pause briefly and
 * return 1 (try again); otherwise return 0 and leave h as it is. */
int sked__retry_pause(sked *h, int rc, int attempt, int tries,
                      const char *what);

/* 1 when rc is the database refusing a value of the statement (error kind
 * SKED_DBE_DATA): the same statement would be refused again. */
int sked__refused_value(const sked *h, int rc);

/* For a status that is deliberately not acted on (cleanup paths, best
 * effort calls): says so where a (void) cast would not silence
 * warn_unused_result. */
static inline void
sked__ignore(int rc)
{
	(void)rc;
}

/* The lock-wait watchdog's marks, around a statement that may wait on a
 * row of sked's own (what: SKED_WAIT_*, row: its name). Outside any
 * transaction: the first mark on a connection asks the server its id of
 * the connection (one round trip per connection). Nothing on a handle
 * with no slot. */
void sked__wait_begin(sked *h, int what, const char *row);
void sked__wait_end(sked *h);
/* Make this connection a worker's, now and after every reconnect: name
 * it for the server's own views (PostgreSQL's application_name: the node
 * id) and let it plan each prepared statement once (PostgreSQL's
 * plan_cache_mode). Best effort; nothing where the dialect cannot,
 * behind a transaction pooler or on the application's own connection. */
void sked__worker_session(sked *h, const char *name);

/* Run outcome text (kept in the run table). */
#define SKED_OUTCOME_SUCCEEDED     "succeeded"
#define SKED_OUTCOME_FAILED        "failed"
#define SKED_OUTCOME_LEASE_EXPIRED "lease-expired"
#define SKED_OUTCOME_LATE          "late"
#define SKED_OUTCOME_RELEASED      "released"

/* The database now, as ms. */
int sked__now(sked *h, int64_t *ms) __attribute__((warn_unused_result));

/* What the last statement on h changed, as the driver counted it (-1:
 * not a write), and the id an INSERT produced. */
static inline int64_t
sked__affected(const sked *h)
{
	return sked__db_affected(h->db);
}

static inline int64_t
sked__last_id(const sked *h)
{
	return sked__db_last_id(h->db);
}

/* The kind of the last database error on h (SKED_DBE_NONE: none). */
static inline sked_dbe_kind
sked__err_kind(const sked *h)
{
	return sked__db_err(h->db)->kind;
}

#endif /* SKED_HANDLE_H */
