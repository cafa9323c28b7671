/*
 * dialect/sqlite.c — SQL for SQLite.
 *
 * Layer: a dialect (see dialect.h). SQLite has no timestamp type, so sked
 * keeps every time as INTEGER milliseconds since the Unix epoch, UTC, read
 * from SQLite's own clock ('now' is fixed for the length of a statement).
 * The generic texts are SQLite's already; only the expressions differ.
 * Claims run in BEGIN IMMEDIATE transactions: SQLite has one writer at a
 * time, which is what makes its claim atomic.
 */
#include "dialect/dialect.h"

/* SQLite keeps the time as whole milliseconds of the Julian day, and
 * julianday() answers them divided by 86400000: multiplied back and
 * rounded it is those milliseconds exactly (a double's error there is
 * about 50 ns), the same value the two strftime calls (seconds, then
 * the milliseconds cut out of '%f') gave, for a fifth of their
 * instructions (about 1,000 against 5,600 an evaluation; the finish of
 * a task evaluates it twice). */
#define NOWMS                                                                  \
	"CAST(round((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)"

/* Whether work is outstanding (--until-empty asks after each batch):
 * the running rows and the claimable ones through their partial indexes,
 * each EXISTS stopping at the first row, so that the answer (0, 1 or 2:
 * not a count) costs the same with a million tasks waiting. What waits
 * in a paused queue is not outstanding. */
#define EMPTY(q)                                                               \
	"SELECT EXISTS (SELECT 1 FROM {p}task WHERE status = 1" q              \
	" AND {kinds:?2}) + EXISTS (SELECT 1 FROM {p}task WHERE "              \
	"status IN (0, 4)" q " AND {kinds:?2} AND (status = 4 OR "             \
	"run_at <= {now}) AND queue NOT IN (SELECT queue FROM "                \
	"{p}queue_limit WHERE paused = 1))"

/* The limit row needs no lock of its own here: a limited claim's
 * BEGIN IMMEDIATE holds SQLite's one write lock already (limits.c). */
static const char *const sqlite_sql[SKED_SQL__COUNT] = {
        [SKED_SQL_LIM_LOCK] =
                "SELECT concurrency, per_key, rate_n, rate_ms, "
                "rate_log, {nowms}, paused, fair FROM {p}queue_limit "
                "WHERE queue = ?1",
        /* one writer: nothing to order (done.c does not run it here) */
        [SKED_SQL_DEP_LOCK] = "SELECT id FROM {p}task WHERE id IN ({ids}) "
                              "AND status = 6",
        [SKED_SQL_EMPTY_ANY] = EMPTY(""),
        [SKED_SQL_EMPTY_Q] = EMPTY(" AND queue = ?1"),
};

const sked_dialect sked__dialect_sqlite = {
        .name = "sqlite",
        .now = NOWMS,
        .nowms = NOWMS,
        .now_plus = "(" NOWMS " + {})",
        .ts = "{}",
        .ms = "{}",
        .last_id = "SELECT last_insert_rowid()",
        .kinds_in = "({} IS NULL OR instr({}, ',' || kind || ',') > 0)",
        .ret = "",
        .begin = "BEGIN IMMEDIATE",
        .begin_claim = "BEGIN IMMEDIATE",
        .commit = "COMMIT",
        .rollback = "ROLLBACK",
        .migrate_lock = NULL,
        .migrate_unlock = NULL,
        .ddl_in_tx = 1,
        .schema = sked__schema_sqlite,
        .sql = sqlite_sql,
        .caps = SKED_CAP_RETURNING,
        .claim_one_statement = 1,
        .max_params = 999,
};
