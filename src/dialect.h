/*
 * dialect.h — what to say to each database product: SQL text as data.
 *
 * Layer: beside the driver seam. A dialect is a table of SQL statements
 * plus a few expressions (the database clock, time arithmetic) and
 * capability flags. The model and the claim strategies name statements by
 * id (SKED_SQL_*); they never write SQL of their own. One driver (ODBC)
 * can front several dialects.
 *
 * Every statement has a generic text in dialect.c, written in the SQL that
 * SQLite, PostgreSQL and MySQL share; a dialect overrides only what it must.
 * Texts are templates, rendered once per handle by sked__dialect_render:
 *
 *   {p}        the table prefix (validated: [a-z_][a-z0-9_]{0,30})
 *   {now}      the database clock, as a timestamp column value
 *   {nowms}    the database clock, as int64 ms since the epoch
 *   {now+X}    the clock plus X milliseconds (X is a parameter marker)
 *   {ts:X}     X (a parameter marker holding epoch ms) as a timestamp
 *   {ms:C}     column C read back as epoch ms (NULL stays NULL)
 *   {ret}      " RETURNING id" where the dialect has it, else ""
 *   {lim:X}    a row limit of X after ORDER BY (" LIMIT X" unless the
 *              dialect says otherwise)
 *
 * Parameters are written '?N' (1-based, SQLite's own form); drivers whose
 * server wants something else rewrite the markers (db.h).
 */
#ifndef SKED_DIALECT_H
#define SKED_DIALECT_H

#include <stddef.h>
#include <stdint.h>

#include "schema.h"

struct sked;
struct sked_outcome;
struct sked_enqueue_opts;

/* The statements. Generic texts are in dialect.c, in the same order. */
typedef enum sked_sql {
	SKED_SQL_NOW,
	SKED_SQL_META_GET,
	SKED_SQL_META_CREATE,
	SKED_SQL_META_DEL,
	SKED_SQL_META_PUT,
	SKED_SQL_ENQ_IN,
	SKED_SQL_ENQ_AT,
	SKED_SQL_UNIQUE_GET,
	SKED_SQL_TASK_GET,
	SKED_SQL_TASK_STATUS,
	SKED_SQL_RUNS_GET,
	SKED_SQL_CANCEL,
	SKED_SQL_RETRY,
	SKED_SQL_STATS,
	SKED_SQL_NODES,
	SKED_SQL_NODE_INSERT,
	SKED_SQL_NODE_GET,
	SKED_SQL_NODE_DELETE,
	SKED_SQL_NODE_BEAT,
	SKED_SQL_RENEW,
	SKED_SQL_HELD,
	SKED_SQL_REAP_SELECT,
	SKED_SQL_REAP,
	SKED_SQL_FINISH_OK,
	SKED_SQL_FINISH_RETRY,
	SKED_SQL_FINISH_DEAD,
	SKED_SQL_RELEASE,
	SKED_SQL_GIVE_BACK,
	SKED_SQL_RUN_INSERT,
	SKED_SQL_EMPTY_ANY,
	SKED_SQL_EMPTY_Q,
	/* claims: param order is always node ?1, lease ms ?2, limit ?3,
	 * queue ?4 (the _Q forms) */
	SKED_SQL_CLAIM_ANY, /* one statement claiming a batch, RETURNING */
	SKED_SQL_CLAIM_Q,
	SKED_SQL_CAND_ANY, /* candidates without locks: id, version */
	SKED_SQL_CAND_Q,
	SKED_SQL_LOCK_ANY, /* candidates, locked: FOR UPDATE SKIP LOCKED */
	SKED_SQL_LOCK_Q,
	SKED_SQL_OPT_CLAIM, /* node ?1, lease ?2, id ?3, version ?4 */
	SKED_SQL_ID_CLAIM,  /* node ?1, lease ?2, id ?3 (row already locked) */
	SKED_SQL_CLAIMED_GET, /* id ?1, node ?2 */
	SKED_SQL_NODE_EXPIRE, /* node ?1: end a previous incarnation's leases */
	/* the skip-locked three steps for a whole batch: {ids} stands for the
	 * id markers ?3, ?4, … and is filled per call (node ?1, lease ?2) */
	SKED_SQL_IDS_CLAIM,
	SKED_SQL_IDS_GET,
	SKED_SQL__COUNT
} sked_sql;

/* capability flags */
#define SKED_CAP_RETURNING   0x01 /* UPDATE … RETURNING */
#define SKED_CAP_SKIP_LOCKED 0x02 /* FOR UPDATE SKIP LOCKED */
#define SKED_CAP_READPAST    0x04 /* WITH (UPDLOCK, READPAST, ROWLOCK) */
#define SKED_CAP_NOTIFY      0x08 /* LISTEN/NOTIFY */

typedef struct sked_dialect {
	const char *name;  /* "sqlite", "postgresql", "mysql", … */
	const char *now;   /* {now} */
	const char *nowms; /* {nowms} */
	/* formats: "{}" stands for the argument (once or twice) */
	const char *now_plus;    /* {now+X} */
	const char *ts;          /* {ts:X} */
	const char *ms;          /* {ms:C} */
	const char *ret;         /* {ret} */
	const char *limit;       /* {lim:X}; NULL: " LIMIT {}" */
	const char *begin;       /* a transaction that will write */
	const char *begin_claim; /* a claim's transaction (SQLite: IMMEDIATE) */
	const char *commit;
	const char *rollback;
	/* serialize schema migration across processes; may be NULL
	 * (then begin_claim must serialize, as SQLite's IMMEDIATE does) */
	const char *migrate_lock;
	const char *migrate_unlock;
	int ddl_in_tx; /* DDL is transactional */
	/* optional: run once on every new connection (session settings) */
	const char *session_init;
	/* optional push wake-up: a worker runs listen once; an enqueue runs
	 * notify once per transaction, after its inserts */
	const char *listen;
	const char *notify;
	const sked_schema_step *schema;
	const char *const
	        *sql; /* overrides, [SKED_SQL__COUNT]; NULL = generic */
	unsigned caps;
	/* SKED_SQL_CLAIM_* is a safe one-statement claim on this product
	 * (it cannot take more than the limit, nor a row another claimer
	 * holds); else skip-locked claims in three steps */
	int claim_one_statement;
	int max_params; /* bound parameters per statement */
	/* optional hooks where a product can do a batch in fewer round trips
	 * than the generic loop (e.g. PostgreSQL arrays). Same contract as the
	 * generic code they replace (lease.c, queue.c). */
	int (*finish_batch)(struct sked *h, const char *node_id,
	                    struct sked_outcome *o, int n);
	int (*enqueue_many)(struct sked *h, const char *kind, size_t n,
	                    const char *const *payloads, const size_t *lens,
	                    const struct sked_enqueue_opts *opts,
	                    int64_t *ids_out);
} sked_dialect;

extern const sked_dialect sked__dialect_sqlite;
extern const sked_dialect sked__dialect_postgresql;
extern const sked_dialect sked__dialect_mysql;
extern const sked_dialect sked__dialect_sqlserver;

/* The dialect for a product name as sked__decide reports it, or NULL. */
const sked_dialect *sked__dialect_for(int product);

/* Render every statement (and the schema steps, see schema.h) for prefix.
 * out[i] are malloc'd; free with sked__dialect_free_rendered. */
int sked__dialect_render(const sked_dialect *d, const char *prefix,
                         char *out[SKED_SQL__COUNT])
        __attribute__((warn_unused_result));
void sked__dialect_free_rendered(char *out[SKED_SQL__COUNT]);

/* Render one template (for schema steps and dynamic statements). */
char *sked__dialect_expand(const sked_dialect *d, const char *prefix,
                           const char *tmpl);

#endif /* SKED_DIALECT_H */
