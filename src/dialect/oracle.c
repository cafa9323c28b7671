/*
 * dialect/oracle.c — SQL for Oracle Database (12c Release 1 or newer),
 * reached through Oracle's ODBC driver.
 *
 * Layer: a dialect (see dialect.h). The choices, and why (docs/oracle.md
 * says more, for users):
 *
 *   times         TIMESTAMP(3) in UTC from SYS_EXTRACT_UTC(SYSTIMESTAMP),
 *                 the server's clock: the same precision (ms) and zone
 *                 (UTC) as every other dialect's columns, readable in
 *                 SQL*Plus, and no TIME ZONE column whose arithmetic
 *                 depends on the session. {ms:C} reads a time back as
 *                 epoch ms from the interval C - 1970-01-01 (exact, no
 *                 DATE conversion that could round the seconds); {ts:X}
 *                 adds NUMTODSINTERVAL(X / 1000, 'SECOND') to the epoch.
 *   ids           {p}task takes its id from the sequence sked_task_id_seq
 *                 (a column DEFAULT, 12c). Oracle's INSERT … RETURNING
 *                 needs an out bind, which the driver seam has not got;
 *                 last_id reads the session's CURRVAL of that sequence
 *                 instead, a query that cannot name the table prefix, so
 *                 the sequence is one per schema, shared by prefixes
 *                 (ids stay unique, only not dense per prefix). {p}run
 *                 uses an identity column: nobody reads its new ids.
 *   claim         skip-locked, one autocommit statement: a PL/SQL block
 *                 opens a cursor SELECT id … ORDER BY claim order FOR
 *                 UPDATE SKIP LOCKED with no row limit, FETCHes it BULK
 *                 COLLECT … LIMIT n, updates those rows and returns them
 *                 as an implicit result set (DBMS_SQL.RETURN_RESULT, 12c;
 *                 the ODBC driver hands it over as the statement's rows).
 *                 With SKIP LOCKED, Oracle locks a row when the cursor
 *                 fetches it, not when the cursor opens, skipping rows
 *                 others hold; so the fetch stops after n rows locked by
 *                 this claim, whatever other claimers hold. ROWNUM or
 *                 FETCH FIRST n in the same query would cut the result
 *                 to n rows *before* locking, and a claim whose first n
 *                 candidates another worker holds would come back short
 *                 or empty while free rows wait: no statement here joins
 *                 the two (tests/unit/test_oracle.c checks it).
 *   optimistic    Oracle 11g and older (no SKIP LOCKED documented, no
 *                 identity, no FETCH FIRST) are detected and get the
 *                 optimistic strategy by the decision table, but this
 *                 dialect's schema needs 12c, so sked_open refuses them
 *                 (api.c, as SQL Server before 2016); the optimistic
 *                 claim (CAND_*, OPT_CLAIM) runs on 12c+ as an override
 *                 (--strategy optimistic).
 *   {lim:X}       FETCH FIRST X ROWS ONLY, only in queries that lock
 *                 nothing.
 *   upserts       none are needed: the model inserts and reads the
 *                 unique violation (ORA-00001), as on every engine, so
 *                 there is no MERGE.
 *   IN lists      max_params is 1,000: every {ids} list is chunked by it
 *                 (ORA-01795: at most 1,000 expressions in a list).
 *   {rows8}       Oracle's SELECT needs FROM DUAL and its UNION ALL one
 *                 type per column: {rows8t} (dialect.c) casts each value.
 *   DDL           commits on its own (ddl_in_tx 0); a step run again
 *                 treats ORA-00955 and ORA-01430 as done. META_CREATE is
 *                 a block that swallows ORA-00955 only.
 *   migration     DBMS_LOCK, held by the session across the steps' own
 *                 commits (the user needs EXECUTE on SYS.DBMS_LOCK).
 *   transactions  Oracle has no BEGIN: the ODBC driver switches
 *                 autocommit off and ends with SQLEndTran, as it does
 *                 for PostgreSQL; the texts below are for the reader.
 *   ''            Oracle stores an empty string as NULL. sked already
 *                 reads a NULL payload, result, error or output as empty;
 *                 a unique key is never '' (enqueue refuses it); names
 *                 (queue, kind, node) are never empty.
 *
 * Row locks: the claim locks the rows it returns only, in claim order,
 * until its block commits; everything else is as dialect.c says.
 *
 * Writing a new schema step for Oracle (sql/oracle/NNN_*.sql): plain
 * DDL, one statement per ';', no PL/SQL (the step splitter cuts at every
 * ';'), types as sql/oracle/001_init.sql says, text columns that may be
 * '' left nullable; ALTER TABLE … ADD (col …) and CREATE INDEX are safe
 * to run again (ORA-01430, ORA-00955 count as done), DROP is not.
 *
 * Not yet run against a real Oracle server (none is available where it
 * was written); see docs/oracle.md and scripts/verify-oracle.sh.
 */
#include "dialect/dialect.h"

#define NOW   "SYS_EXTRACT_UTC(SYSTIMESTAMP)"
#define EPOCH "TIMESTAMP '1970-01-01 00:00:00'"
/* epoch ms of the timestamp {} (NULL stays NULL) */
#define MS_OF(t)                                                               \
	"(EXTRACT(DAY FROM (" t " - " EPOCH ")) * 86400000 + "                 \
	"EXTRACT(HOUR FROM (" t " - " EPOCH ")) * 3600000 + "                  \
	"EXTRACT(MINUTE FROM (" t " - " EPOCH ")) * 60000 + "                  \
	"FLOOR(EXTRACT(SECOND FROM (" t " - " EPOCH ")) * 1000))"

#define CLAIM_SET                                                              \
	"status = 1, node_id = ?1, lease_until = {now+?2}, "                   \
	"started_at = {now}, attempts = attempts + 1, version = version + 1, " \
	"updated_at = {now}"
#define CLAIMED_COLS                                                           \
	"id, queue, kind, payload, attempts, max_attempts, {ms:started_at}, "  \
	"open_parents, traceparent, timeout_ms"
#define DUE         "status IN (0, 4) AND run_at <= {now}"
#define CLAIM_ORDER " ORDER BY priority DESC, run_at, id"
#define NOT_LIMITED " AND queue NOT IN (SELECT queue FROM {p}queue_limit)"

/* The candidates, locked as they are fetched: never with a row limit */
#define LOCKING(where)                                                         \
	"SELECT id FROM {p}task WHERE " where CLAIM_ORDER                      \
	" FOR UPDATE SKIP LOCKED"

/* The claim: fetch up to ?3 rows of the locking cursor, claim them, and
 * answer them as the statement's rows. The update checks that the row is
 * still due (belt and braces: a row fetched FOR UPDATE is current, but a
 * retry whose run_at moved on is not claimed early whatever the cursor
 * saw), and the read-back takes only rows this claim set. */
#define CLAIM_DECLARE "; ids SYS.ODCINUMBERLIST; r SYS_REFCURSOR; BEGIN "
#define CLAIM_FETCH   "OPEN c; FETCH c BULK COLLECT INTO ids LIMIT ?3; CLOSE c; "
#define CLAIM_UPDATE                                                           \
	"FORALL i IN 1 .. ids.COUNT UPDATE {p}task SET " CLAIM_SET             \
	" WHERE id = ids(i) AND " DUE "; "
#define CLAIM_ANSWER                                                           \
	"OPEN r FOR SELECT " CLAIMED_COLS " FROM {p}task WHERE id IN (SELECT " \
	"COLUMN_VALUE FROM TABLE(ids)) AND node_id = ?1 AND status = 1; "      \
	"DBMS_SQL.RETURN_RESULT(r); END;"
#define CLAIM_BLOCK(where)                                                     \
	"DECLARE CURSOR c IS " LOCKING(where)                                  \
	        CLAIM_DECLARE CLAIM_FETCH CLAIM_UPDATE CLAIM_ANSWER

#define WHERE_ANY "{kinds:?5} AND " DUE
#define WHERE_Q   "queue = ?4 AND {kinds:?5} AND " DUE
#define WHERE_XQ  "{kinds:?5} AND " DUE NOT_LIMITED

/* integer minutes: '/' is exact division on NUMBER */
#define RUNS_WINDOW_ORA                                                        \
	"SELECT TRUNC(f / 60000), o, COUNT(*), MIN(id), MAX(f) FROM (SELECT "  \
	"id, {ms:finished_at} AS f, outcome AS o FROM {p}run WHERE id < ?1 "   \
	"ORDER BY id DESC{lim:?2}) c GROUP BY TRUNC(f / 60000), o"
#define DONE_WINDOW_ORA                                                        \
	"SELECT TRUNC(f / 60000), o, COUNT(*) FROM (SELECT {ms:finished_at} "  \
	"AS f, outcome AS o FROM {p}task_done WHERE status IN (2, 3) AND "     \
	"finished_at >= {ts:?1} AND outcome IS NOT NULL) d GROUP BY "          \
	"TRUNC(f / 60000), o"

static const char *const oracle_sql[SKED_SQL__COUNT] = {
        [SKED_SQL_NOW] = "SELECT {nowms} FROM DUAL",
        /* run on every start: a table that exists is no error */
        [SKED_SQL_META_CREATE] =
                "BEGIN EXECUTE IMMEDIATE 'CREATE TABLE {p}meta (name "
                "VARCHAR2(64) NOT NULL PRIMARY KEY, value VARCHAR2(255) NOT "
                "NULL)'; EXCEPTION WHEN OTHERS THEN IF SQLCODE <> -955 THEN "
                "RAISE; END IF; END;",
        [SKED_SQL_CLAIM_ANY] = CLAIM_BLOCK(WHERE_ANY),
        [SKED_SQL_CLAIM_Q] = CLAIM_BLOCK(WHERE_Q),
        [SKED_SQL_CLAIM_XQ] = CLAIM_BLOCK(WHERE_XQ),
        /* the cursor of the claim alone (a claim in steps would need a
         * driver that stops fetching after n rows; none runs these) */
        [SKED_SQL_LOCK_ANY] = LOCKING(WHERE_ANY),
        [SKED_SQL_LOCK_Q] = LOCKING(WHERE_Q),
        [SKED_SQL_LOCK_XQ] = LOCKING(WHERE_XQ),
        [SKED_SQL_RUNS_WINDOW] = RUNS_WINDOW_ORA,
        [SKED_SQL_DONE_WINDOW] = DONE_WINDOW_ORA,
        [SKED_SQL_DONE_COPY_RUN] =
                "INSERT INTO {p}task_done (" SKED__DONE_COLS
                ", outcome, exit_code, error, output) SELECT " SKED__DONE_T_COLS
                ", v.c8, v.c4, v.c5, v.c6, v.c7 FROM ({rows8t}) v JOIN "
                "{p}task t ON t.id = v.c1 AND t.attempts = v.c2 WHERE "
                "t.status + 0 IN (2, 3)",
        [SKED_SQL_RUN_ROWS] =
                "INSERT INTO {p}run (task_id, attempt, node_id, started_at, "
                "finished_at, outcome, exit_code, error, output) SELECT "
                "v.c1, v.c2, ?1, {ts:v.c3}, {now}, v.c4, v.c5, v.c6, v.c7 "
                "FROM ({rows7t}) v",
        /* Oracle's RETURNING needs out binds: this one is never run
         * (no SKED_CAP_RETURNING); the generic text without it */
        [SKED_SQL_DONE_DROP_RET] = "DELETE FROM {p}task WHERE id IN ({ids}) "
                                   "AND status + 0 IN (2, 3, 5)",
        /* a unique key held for a period (docs/unique.md): Oracle has no
         * ON CONFLICT; MERGE takes the key when it is new or its period
         * is over. Two enqueuers of a new key at once: the second meets
         * the primary key (ORA-00001), which the enqueue reports; only
         * a real server can say how often (docs/oracle.md) */
        [SKED_SQL_UNIQUE_FOR_PUT] =
                "MERGE INTO {p}unique_for u USING (SELECT ?1 AS k FROM DUAL) "
                "s ON (u.unique_key = s.k) WHEN MATCHED THEN UPDATE SET "
                "u.task_id = ?2, u.held_until = {now+?3} WHERE "
                "u.held_until <= {now} WHEN NOT MATCHED THEN INSERT "
                "(unique_key, task_id, held_until) VALUES (?1, ?2, "
                "{now+?3})",
};

const sked_dialect sked__dialect_oracle = {
        .name = "oracle",
        .now = NOW,
        .nowms = MS_OF(NOW),
        .now_plus = "(" NOW " + NUMTODSINTERVAL({} / 1000, 'SECOND'))",
        .ts = "(" EPOCH " + NUMTODSINTERVAL({} / 1000, 'SECOND'))",
        .ms = MS_OF("{}"),
        .ret = "",
        .limit = " FETCH FIRST {} ROWS ONLY",
        .last_id = "SELECT sked_task_id_seq.CURRVAL FROM DUAL",
        .kinds_in = "({} IS NULL OR INSTR({}, ',' || kind || ',') > 0)",
        /* the ODBC driver's own transaction calls run instead */
        .begin = "SET TRANSACTION ISOLATION LEVEL READ COMMITTED",
        .begin_claim = "SET TRANSACTION ISOLATION LEVEL READ COMMITTED",
        .commit = "COMMIT",
        .rollback = "ROLLBACK",
        .migrate_lock =
                "DECLARE h VARCHAR2(128); r INTEGER; BEGIN "
                "DBMS_LOCK.ALLOCATE_UNIQUE('{p}sked_migrate', h); "
                "r := DBMS_LOCK.REQUEST(h, DBMS_LOCK.X_MODE, 120, FALSE); "
                "IF r NOT IN (0, 4) THEN RAISE_APPLICATION_ERROR(-20001, "
                "'timed out waiting for the sked migration lock'); END IF; "
                "END;",
        .migrate_unlock = "DECLARE h VARCHAR2(128); r INTEGER; BEGIN "
                          "DBMS_LOCK.ALLOCATE_UNIQUE('{p}sked_migrate', h); "
                          "r := DBMS_LOCK.RELEASE(h); END;",
        .ddl_in_tx = 0,
        .ddl_exists_error = 955,   /* name is already used */
        .ddl_exists_error2 = 1430, /* column being added already exists */
        .session_init = NULL,
        .listen = NULL,
        .notify = NULL,
        .schema = sked__schema_oracle,
        .sql = oracle_sql,
        .caps = SKED_CAP_SKIP_LOCKED,
        .claim_one_statement = 1,
        /* not Oracle's bind limit (65,535) but its IN list's: every
         * {ids} list is chunked below this */
        .max_params = 1000,
        .rows_shared_params = 0,
};
