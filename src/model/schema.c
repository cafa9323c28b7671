/*
 * schema.c — applies the versioned schema steps (see schema.h).
 *
 * Layer: the model's foundation. Concurrency: the whole migration runs
 * under the dialect's migration lock (PostgreSQL: a transaction-scoped
 * advisory lock taken first in the migration's transaction; MySQL:
 * GET_LOCK) or, where there is none, inside the dialect's write
 * transaction (SQLite: BEGIN IMMEDIATE, one writer at a time). The version
 * is read again under that lock, so a node that waited finds the work done
 * and applies nothing. Where DDL is transactional the steps and the
 * version bump commit together.
 */
#include "model/schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handle/internal.h"
#include "util/log.h"
#include "util/sqlsplit.h"

int
sked__schema_version(sked *h, int *version)
{
	sked_res r = {0};
	*version = 0;
	int rc = sked__q(h, SKED_SQL_META_GET, NULL, 0, &r);
	if (rc == SKED_ESCHEMA) { /* no meta table: a fresh database */
		/* PostgreSQL aborts a transaction on error; we are not in one
		 */
		return SKED_OK;
	}
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot read the schema version");
	if (r.nrows > 0)
		*version = (int)sked__res_int(&r, 0, 0);
	sked__res_clear(&r);
	return SKED_OK;
}

/* Run each statement of a rendered step (util/sqlsplit.h), one by one. */
static int
run_step(sked *h, char *sql)
{
	const char *at = sql, *b, *e;
	while (sked__sql_next(&at, &b, &e)) {
		/* the step is ours: end the statement in place, for a moment */
		char *end = sql + (e - sql), keep = *end;
		*end = '\0';
		int rc = sked__qdyn(h, b, NULL, 0, NULL);
		*end = keep;
		/* where DDL is not transactional, a step cut short (a crash
		 * after its DDL, before the version was recorded) runs again:
		 * an index that exists already is then done, not an error */
		int native = sked__db_err(h->db)->native;
		if (rc != SKED_OK && native &&
		    (native == h->dialect->ddl_exists_error ||
		     native == h->dialect->ddl_exists_error2))
			rc = SKED_OK;
		if (rc != SKED_OK)
			return rc;
	}
	return SKED_OK;
}

static int
apply(sked *h, int *applied)
{
	const sked_dialect *d = h->dialect;
	int rc, version = 0;
	if ((rc = sked__q(h, SKED_SQL_META_CREATE, NULL, 0, NULL)) != SKED_OK)
		return sked__fail_db(h, rc, "cannot create the meta table");
	sked_res r = {0};
	if ((rc = sked__q(h, SKED_SQL_META_GET, NULL, 0, &r)) != SKED_OK)
		return sked__fail_db(h, rc, "cannot read the schema version");
	if (r.nrows > 0)
		version = (int)sked__res_int(&r, 0, 0);
	sked__res_clear(&r);
	if (version > SKED_SCHEMA_VERSION)
		return sked__fail(
		        h, SKED_ESCHEMA,
		        "the database's schema is at version %d, newer "
		        "than this sked knows (%d)",
		        version, SKED_SCHEMA_VERSION);
	for (const sked_schema_step *st = d->schema; st && st->version; st++) {
		if (st->version <= version || st->version > SKED_SCHEMA_VERSION)
			continue;
		char *sql = sked__dialect_expand(d, h->prefix, st->sql);
		if (!sql)
			return sked__fail(h, SKED_ENOMEM, "out of memory");
		rc = run_step(h, sql);
		free(sql);
		if (rc != SKED_OK) {
			char ctx[64];
			snprintf(ctx, sizeof ctx, "schema step %d failed",
			         st->version);
			return sked__fail_db(h, rc, ctx);
		}
		char v[16];
		snprintf(v, sizeof v, "%d", st->version);
		sked_val p[2] = {SKED_TEXTV("schema_version"), SKED_TEXTV(v)};
		if ((rc = sked__q(h, SKED_SQL_META_DEL, p, 1, NULL)) !=
		            SKED_OK ||
		    (rc = sked__q(h, SKED_SQL_META_PUT, p, 2, NULL)) != SKED_OK)
			return sked__fail_db(
			        h, rc, "cannot record the schema version");
		version = st->version;
		(*applied)++;
	}
	return SKED_OK;
}

int
sked__schema_migrate(sked *h)
{
	const sked_dialect *d = h->dialect;
	int rc, applied = 0;
	/* Where DDL is transactional the lock is taken inside the migration's
	 * transaction: a transaction-scoped lock (PostgreSQL's
	 * pg_advisory_xact_lock) then holds exactly as long as the work and
	 * never outlives it in a server session a pooler hands on. */
	if (d->ddl_in_tx) {
		rc = sked__begin(h, 0);
		if (rc != SKED_OK)
			return sked__fail_db(h, rc,
			                     "cannot begin the migration");
	}
	if (d->migrate_lock) {
		/* a template: the lock may be keyed by the prefix */
		char *lock =
		        sked__dialect_expand(d, h->prefix, d->migrate_lock);
		rc = lock ? sked__qdyn(h, lock, NULL, 0, NULL) : SKED_ENOMEM;
		free(lock);
		if (rc != SKED_OK) {
			sked__fail_db(h, rc, "cannot take the migration lock");
			if (d->ddl_in_tx)
				sked__rollback(h);
			return rc;
		}
	}
	rc = apply(h, &applied);
	if (d->ddl_in_tx) {
		if (rc == SKED_OK) {
			rc = sked__commit(h);
			if (rc != SKED_OK)
				sked__fail_db(h, rc,
				              "cannot commit the migration");
		} else {
			sked__rollback(h);
		}
	}
	if (d->migrate_unlock) {
		char *unlock =
		        sked__dialect_expand(d, h->prefix, d->migrate_unlock);
		if (unlock)
			sked__ignore(sked__qdyn(h, unlock, NULL, 0, NULL));
		free(unlock);
	}
	if (rc == SKED_OK && applied)
		sked__log(SKED_LOG_INFO, "schema migrated to version %d",
		          SKED_SCHEMA_VERSION);
	return rc;
}

/* ---- the rights a worker needs ---- */

/* Each table a worker touches, and a column to name in the probes (never
 * an identity column, which SQL Server will not take in an INSERT's list). */
static const struct {
	const char *table, *column;
	int write; /* INSERT, UPDATE and DELETE too, not SELECT alone */
} rights[] = {
        {"task", "queue", 1},        {"task_done", "queue", 1},
        {"run", "task_id", 1},       {"node", "id", 1},
        {"schedule", "name", 1},     {"lock", "name", 1},
        {"queue_limit", "queue", 1}, {"task_dep", "child_id", 1},
        {"meta", "name", 0},
};

static const char *const right_names[] = {"SELECT", "INSERT", "UPDATE",
                                          "DELETE"};

/* Try right k (right_names) on table t: 1 held, 0 refused, or an error. */
static int
try_right(sked *h, int k, const char *t, const char *c)
{
	char sql[256];
	switch (k) {
	case 0:
		snprintf(sql, sizeof sql, "SELECT 1 FROM {p}%s WHERE 1 = 0", t);
		break;
	case 1:
		snprintf(sql, sizeof sql,
		         "INSERT INTO {p}%s (%s) SELECT %s FROM {p}%s WHERE 1 "
		         "= 0",
		         t, c, c, t);
		break;
	case 2:
		snprintf(sql, sizeof sql,
		         "UPDATE {p}%s SET %s = %s WHERE 1 = 0", t, c, c);
		break;
	default:
		snprintf(sql, sizeof sql, "DELETE FROM {p}%s WHERE 1 = 0", t);
		break;
	}
	char *text = sked__dialect_expand(h->dialect, h->prefix, sql);
	if (!text)
		return SKED_ENOMEM;
	int rc = sked__qdyn(h, text, NULL, 0, NULL);
	free(text);
	/* refused for anything else (MariaDB's strict mode names a NOT NULL
	 * column the INSERT leaves out, even for no row): the server checks
	 * rights first, so this one is held */
	if (rc == SKED_OK || rc == SKED_EDB)
		return 1;
	return rc == SKED_EPERM ? 0 : rc;
}

int
sked__schema_rights(sked *h)
{
	if (h->decision.product == SKED_PROD_SQLITE || h->borrowed)
		return SKED_OK;
	char missing[512] = "";
	size_t len = 0;
	for (size_t i = 0; i < sizeof rights / sizeof rights[0]; i++) {
		int n = rights[i].write ? 4 : 1;
		for (int k = 0; k < n; k++) {
			int got = try_right(h, k, rights[i].table,
			                    rights[i].column);
			if (got < 0)
				return sked__fail_db(
				        h, got,
				        "cannot check the database "
				        "user's rights");
			if (got == 0 && len < sizeof missing)
				len += (size_t)snprintf(
				        missing + len, sizeof missing - len,
				        "%s%s on %s%s", len ? ", " : "",
				        right_names[k], h->prefix,
				        rights[i].table);
			/* the other probes read a column: without SELECT
			 * they would fail whatever else is granted */
			if (got == 0 && k == 0)
				break;
		}
	}
	if (!len)
		return SKED_OK;
	return sked__fail(h, SKED_EPERM,
	                  "the database user lacks %s: grant what "
	                  "docs/operations.md lists under 'The database user'",
	                  missing);
}
