/*
 * dialect/postgresql.c — SQL for PostgreSQL (12 or newer).
 *
 * Layer: a dialect (see dialect.h). Times are timestamptz read from the
 * server's now() (fixed for a transaction, so every row a statement
 * touches sees one instant); templates turn them into epoch milliseconds
 * and back with exact interval arithmetic. What differs from the generic
 * texts:
 *
 *   claim         one round trip: a MATERIALIZED CTE selects the batch in
 *                 claim order with FOR UPDATE SKIP LOCKED and feeds
 *                 UPDATE … FROM … RETURNING. The CTE is evaluated once, so
 *                 the update can never take more than the limit (a bare
 *                 IN (SELECT … LIMIT n) may be re-run by the planner).
 *   arrays        SKED_CAP_ARRAYS: SKED_SQL_FINISH_ARRAYS finishes n
 *                 outcomes in one statement (arrays unnested, the task
 *                 updates, each guarded by id, owner, attempt, running,
 *                 and the run rows written by data-modifying CTEs);
 *                 SKED_SQL_ENQ_ARRAYS enqueues n tasks in one INSERT …
 *                 SELECT FROM unnest(…), ids in input order, one
 *                 pg_notify for the whole statement. The model builds
 *                 the array literals (util/pgarray.c) and runs them
 *                 (lease.c, queue.c).
 *   wake-up       LISTEN/NOTIFY on a channel named after the prefix.
 *   migration     a transaction-scoped advisory lock keyed by the prefix
 *                 (different prefixes never wait for each other), taken
 *                 first in the migration's transaction.
 *
 * Row locks: a claim locks only the rows it returns (skipping rows
 * others hold); the array finish locks the finished task rows in the order
 * of the plan's join, all within one statement.
 */
#include "dialect.h"

#define MS_OF(x)                                                               \
	"(timestamptz 'epoch' + " x "::bigint * interval '1 millisecond')"

#define CLAIM_HEAD                                                             \
	"WITH c AS MATERIALIZED (SELECT id FROM {p}task "                      \
	"WHERE status IN (0, 4) AND run_at <= now() "
#define CLAIM_TAIL                                                             \
	"ORDER BY priority DESC, run_at, id LIMIT ?3 FOR UPDATE SKIP LOCKED) " \
	"UPDATE {p}task t SET status = 1, node_id = ?1, "                      \
	"lease_until = {now+?2}, started_at = now(), "                         \
	"attempts = t.attempts + 1, version = t.version + 1, "                 \
	"updated_at = now() FROM c WHERE t.id = c.id "                         \
	"RETURNING t.id, t.queue, t.kind, t.payload, t.attempts, "             \
	"t.max_attempts, {ms:t.started_at}"

/* Outstanding work counted through the partial indexes (running rows,
 * claimable rows) rather than the generic OR, which scans every finished
 * row: --until-empty asks this after each batch. */
#define EMPTY(q)                                                               \
	"SELECT (SELECT COUNT(*) FROM {p}task WHERE status = 1" q              \
	" AND {kinds:?2}) + (SELECT COUNT(*) FROM {p}task WHERE "              \
	"status IN (0, 4)" q " AND {kinds:?2} AND (status = 4 OR "             \
	"run_at <= now()))"

/* ?1 ids, ?2 attempts, ?3 new status, ?4 started ms, ?5 retry delay ms,
 * ?6 exit codes, ?7 errors, ?8 output tails, ?9 outcome names, ?10 node.
 * Status 0 is a release (a started attempt stopped at shutdown: it keeps
 * its number and costs no retry), 4 a retry, 2 and 3
 * end the task. A row the guard rejects is late: recorded, not applied. */
static const char finish_arrays[] =
        "WITH o AS MATERIALIZED (SELECT * FROM unnest(?1::bigint[], "
        "?2::int[], ?3::int[], ?4::bigint[], ?5::bigint[], ?6::int[], "
        "?7::text[], ?8::text[], ?9::text[]) WITH ORDINALITY AS o(id, "
        "attempt, st, started_ms, delay_ms, exit_code, error, output, "
        "outcome, ord)), "
        "u AS (UPDATE {p}task t SET status = o.st, "
        "max_attempts = CASE WHEN o.st = 0 THEN t.max_attempts + 1 "
        "ELSE t.max_attempts END, "
        "run_at = CASE o.st WHEN 4 THEN {now+o.delay_ms} WHEN 0 THEN now() "
        "ELSE t.run_at END, "
        "finished_at = CASE WHEN o.st IN (2, 3) THEN now() "
        "ELSE t.finished_at END, "
        "last_error = CASE WHEN o.st IN (3, 4) THEN o.error "
        "ELSE t.last_error END, "
        "lease_until = NULL, updated_at = now(), version = t.version + 1 "
        "FROM o WHERE t.id = o.id AND t.node_id = ?10 "
        "AND t.attempts = o.attempt AND t.status = 1 RETURNING t.id), "
        "r AS (INSERT INTO {p}run (task_id, attempt, node_id, started_at, "
        "finished_at, outcome, exit_code, error, output) "
        "SELECT o.id, o.attempt, ?10, {ts:o.started_ms}, now(), "
        "CASE WHEN u.id IS NULL THEN 'late' ELSE o.outcome END, o.exit_code, "
        "CASE WHEN u.id IS NULL THEN 'late ' || o.outcome || "
        "' result, not applied (lease lost)' || coalesce(': ' || o.error, '') "
        "ELSE o.error END, o.output "
        "FROM o LEFT JOIN u ON u.id = o.id ORDER BY o.ord) "
        "SELECT o.ord, CASE WHEN u.id IS NULL THEN 0 ELSE 1 END "
        "FROM o LEFT JOIN u ON u.id = o.id ORDER BY o.ord";

/* ?1 queue, ?2 kind, ?3 payloads, ?4 priority, ?5 run at ms (or NULL),
 * ?6 delay ms, ?7 max attempts. Ids are drawn from the identity's
 * sequence before the insert so that they can be returned in input
 * order; the data-modifying CTE runs to completion whether or not it is
 * read. One pg_notify for the whole statement, delivered at commit. */
static const char enq_arrays[] =
        "WITH p AS MATERIALIZED (SELECT nextval('{p}task_id_seq'::regclass) "
        "AS id, x.payload, x.ord FROM unnest(?3::text[]) WITH ORDINALITY "
        "AS x(payload, ord)), "
        "i AS (INSERT INTO {p}task (id, queue, kind, payload, status, "
        "priority, run_at, attempts, max_attempts, version, created_at, "
        "updated_at) SELECT p.id, ?1, ?2, p.payload, 0, ?4, "
        "coalesce({ts:?5}, {now+?6}), 0, ?7, 0, now(), now() FROM p "
        "ORDER BY p.ord), "
        "n AS MATERIALIZED (SELECT pg_notify('{p}task', '') AS x) "
        "SELECT p.id FROM p CROSS JOIN n ORDER BY p.ord";

static const char *const pg_sql[SKED_SQL__COUNT] = {
        [SKED_SQL_CLAIM_ANY] = CLAIM_HEAD "AND {kinds:?5} " CLAIM_TAIL,
        [SKED_SQL_CLAIM_Q] =
                CLAIM_HEAD "AND queue = ?4 AND {kinds:?5} " CLAIM_TAIL,
        [SKED_SQL_EMPTY_ANY] = EMPTY(""),
        [SKED_SQL_EMPTY_Q] = EMPTY(" AND queue = ?1"),
        /* every queue but the limited ones (limits.c) */
        [SKED_SQL_CLAIM_XQ] =
                CLAIM_HEAD "AND {kinds:?5} AND queue NOT IN (SELECT queue FROM "
                           "{p}queue_limit) " CLAIM_TAIL,
        [SKED_SQL_FINISH_ARRAYS] = finish_arrays,
        [SKED_SQL_ENQ_ARRAYS] = enq_arrays,
        [SKED_SQL_BACKEND_ID] = "SELECT pg_backend_pid()",
        /* pg_blocking_pids: the sessions holding (or queued ahead for)
         * the lock the waiting one wants */
        [SKED_SQL_BLOCKERS] =
                "SELECT a.pid, coalesce(a.application_name, ''), "
                "coalesce(host(a.client_addr) || ':' || a.client_port, "
                "'local'), coalesce(a.state, ''), coalesce(a.usename, '') "
                "FROM pg_stat_activity a WHERE a.pid = ANY "
                "(pg_blocking_pids(CAST(?1 AS integer))) ORDER BY a.pid",
        [SKED_SQL_APP_NAME] =
                "SELECT set_config('application_name', ?1, false)",
};

const sked_dialect sked__dialect_postgresql = {
        .name = "postgresql",
        .now = "now()",
        .nowms = "(floor(extract(epoch FROM now()) * 1000))::bigint",
        .now_plus = "(now() + {}::bigint * interval '1 millisecond')",
        .ts = MS_OF("{}"),
        .ms = "(floor(extract(epoch FROM {}) * 1000))::bigint",
        .ret = " RETURNING id",
        .limit = NULL,
        .kinds_in = "({}::text IS NULL OR "
                    "position(',' || kind || ',' in {}::text) > 0)",
        .begin = "BEGIN",
        .begin_claim = "BEGIN",
        .commit = "COMMIT",
        .rollback = "ROLLBACK",
        /* two int4 keys: sked's migrations, then this prefix; held by the
         * migration's transaction (schema.c), so it needs no unlock and
         * works behind a transaction pooler */
        .migrate_lock =
                "SELECT pg_advisory_xact_lock(hashtext('sked:migrate'), "
                "hashtext('{p}'))",
        .migrate_unlock = NULL,
        .ddl_in_tx = 1,
        .session_init = NULL,
        .listen = "LISTEN {p}task",
        .notify = "NOTIFY {p}task",
        .schema = sked__schema_postgresql,
        .sql = pg_sql,
        .caps = SKED_CAP_RETURNING | SKED_CAP_SKIP_LOCKED | SKED_CAP_NOTIFY |
                SKED_CAP_ARRAYS | SKED_CAP_WAIT_HOLDER | SKED_CAP_APP_NAME,
        .claim_one_statement = 1,
        .max_params = 65535,
};
