/*
 * schema.h — versioned schema steps and the migration that applies them.
 *
 * Layer: the model's foundation. The steps live in sql/<dialect>/NNN_*.sql
 * and are embedded at build time (cmake/embed_sql.cmake); each file is a
 * list of statements separated by ';' at the end of a line, in the
 * dialect's template language (dialect.h). sked__schema_migrate applies the
 * steps newer than the version recorded in {p}meta, each with its version
 * bump, under the dialect's migration lock, so several nodes starting at
 * once neither race nor fail.
 */
#ifndef SKED_SCHEMA_H
#define SKED_SCHEMA_H

/* The steps themselves (sked_schema_step, one list per dialect) are
 * declared in dialect/dialect.h: a dialect names its list. */
struct sked;
/* The version recorded in the database (0: none). */
int sked__schema_version(struct sked *h, int *version)
        __attribute__((warn_unused_result));
/* Bring the schema to SKED_SCHEMA_VERSION. */
int sked__schema_migrate(struct sked *h) __attribute__((warn_unused_result));
/* Whether the database user holds every right a worker needs (the GRANTs
 * in docs/operations.md): SELECT, INSERT, UPDATE and DELETE on each table
 * but {p}meta, SELECT on {p}meta. Each right is tried with a statement
 * that touches no row, which the server checks all the same. SKED_OK; or
 * SKED_EPERM, failed on h with the missing rights named; or the error of
 * a statement that failed for another reason. SQLite has no rights. */
int sked__schema_rights(struct sked *h) __attribute__((warn_unused_result));

#endif /* SKED_SCHEMA_H */
