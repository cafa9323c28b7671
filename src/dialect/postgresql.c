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
 *                 (outcome.c, enqueue.c).
 *   wake-up       LISTEN/NOTIFY on a channel named after the prefix.
 *   migration     a transaction-scoped advisory lock keyed by the prefix
 *                 (different prefixes never wait for each other), taken
 *                 first in the migration's transaction.
 *
 * Plans: the hot table's statistics are always stale (its rows come and
 * go by the thousand between two ANALYZEs, and a node's id is never among
 * the common values), so the planner believes a node runs about one task.
 * Left to itself it then drives a batch finish from the node's index and
 * rescans the outcomes once per running task, and joins a claimed batch
 * by hashing the whole table. The texts therefore name the rows by id
 * (t.id = ANY (…): primary-key lookups, one per row) and write the
 * running check as "t.status + 0 = 1", which no partial index's
 * predicate matches.
 *
 * Row locks: a claim locks only the rows it returns (skipping rows
 * others hold); the array finish locks the finished task rows in the order
 * of the plan's join, all within one statement.
 */
#include "dialect/dialect.h"

#define MS_OF(x)                                                               \
	"(timestamptz 'epoch' + " x "::bigint * interval '1 millisecond')"

/* The priorities of the claimable rows (status 0 and 4), highest first,
 * each found by one descent of the (queue,) priority index: PQ is "" or
 * " AND queue = ?N". The last row is a NULL, which matches nothing. */
#define PRIORITIES(pq)                                                         \
	"WITH RECURSIVE pr(p) AS ((SELECT priority FROM {p}task WHERE "        \
	"status IN (0, 4)" pq " ORDER BY priority DESC LIMIT 1) UNION ALL "    \
	"SELECT (SELECT priority FROM {p}task WHERE status IN (0, 4)" pq       \
	" AND priority < pr.p ORDER BY priority DESC LIMIT 1) FROM pr WHERE "  \
	"pr.p IS NOT NULL) "
/* The ids of at most LIM due rows in claim order (priority, then run_at,
 * then id), locked, skipping rows others hold; F filters them further.
 *
 * Not one scan in (priority DESC, run_at, id) order: its run_at <= now()
 * bounds nothing while priority is not fixed, so a scan that finds fewer
 * due rows than LIM (every claim of a worker that keeps up, the last of a
 * drain) read on through every task waiting for later, 0.3-0.7 s beside
 * 10,000,000 of them (docs/postgresql.md, "Tasks waiting for later").
 *
 * Instead pr walks the priorities of the claimable rows, highest first,
 * one index descent each, and each is scanned with priority = p, which
 * run_at <= now() bounds. The walk stops early on two counts, so that
 * many distinct priorities cost no more than the single scan did:
 *   n  the due rows of the priorities above p, each counted up to LIM
 *      (only when a lower priority exists): once LIM are due above, no
 *      lower priority can be claimed, and the walk stops;
 *   d  the depth: after WALK_MAX priorities, what lies below the last
 *      one is claimed by the single scan (r), as before this walk.
 * A priority scanned locks at most LIM rows; those beyond the first LIM
 * in claim order are unlocked when the statement's transaction ends. The
 * count does not skip rows other claims hold, so a claim racing another
 * for the same few due rows may come back short, never out of order. */
#define WALK_MAX "32"
#define WALK(pq, f, lim)                                                       \
	"WITH RECURSIVE pr(p, n, d) AS ((SELECT priority, 0::bigint, 1 FROM "  \
	"{p}task WHERE status IN (0, 4)" pq " ORDER BY priority DESC LIMIT "   \
	"1) UNION ALL SELECT q.np, CASE WHEN q.np IS NULL THEN pr.n ELSE "     \
	"pr.n + (SELECT count(*) FROM (SELECT 1 FROM {p}task WHERE status IN " \
	"(0, 4) AND priority = pr.p AND run_at <= now()" pq f " LIMIT " lim    \
	") z) END, pr.d + 1 FROM pr CROSS JOIN LATERAL (SELECT (SELECT "       \
	"priority FROM {p}task WHERE status IN (0, 4)" pq " AND priority < "   \
	"pr.p ORDER BY priority DESC LIMIT 1) AS np) q WHERE pr.p IS NOT "     \
	"NULL AND pr.n < " lim " AND pr.d < " WALK_MAX ") "
#define DUE_IDS(pq, f, lim)                                                    \
	WALK(pq, f, lim)                                                       \
	"SELECT id FROM (SELECT x.id, pr.p AS pri, x.run_at FROM pr CROSS "    \
	"JOIN LATERAL (SELECT id, run_at FROM {p}task WHERE status IN (0, 4) " \
	"AND priority = pr.p AND run_at <= now()" pq f " ORDER BY run_at, id " \
	"LIMIT " lim " FOR UPDATE SKIP LOCKED) x WHERE pr.n < " lim " UNION "  \
	"ALL SELECT id, priority, run_at FROM (SELECT id, priority, run_at "   \
	"FROM {p}task WHERE status IN (0, 4) AND priority < (SELECT p FROM "   \
	"pr WHERE d = " WALK_MAX ") AND run_at <= now()" pq f " ORDER BY "     \
	"priority DESC, run_at, id LIMIT " lim " FOR UPDATE SKIP LOCKED) r) "  \
	"due ORDER BY pri DESC, run_at, id LIMIT " lim

/* The batch is claimed by id, so its rows are sorted back into claim
 * order: the worker starts them in the order it reads them. */
#define CLAIM(due)                                                             \
	"WITH c AS MATERIALIZED (" due "), "                                   \
	"u AS (UPDATE {p}task t SET status = 1, node_id = ?1, "                \
	"lease_until = {now+?2}, started_at = now(), "                         \
	"attempts = t.attempts + 1, version = t.version + 1, "                 \
	"updated_at = now() WHERE t.id = ANY (ARRAY(SELECT id FROM c)) "       \
	"RETURNING t.id, t.queue, t.kind, t.payload, t.attempts, "             \
	"t.max_attempts, t.started_at, t.priority, t.run_at, "                 \
	"t.open_parents, t.traceparent, t.timeout_ms) "                        \
	"SELECT id, queue, kind, payload, attempts, max_attempts, "            \
	"{ms:started_at}, open_parents, traceparent, timeout_ms FROM u "       \
	"ORDER BY priority DESC, run_at, id"

/* Whether any work is outstanding (1) or none (0): a running row, or a
 * claimable one that is due or waiting to retry, found through the
 * partial indexes a priority at a time (as DUE_IDS) and not counted:
 * --until-empty asks this after each batch, and a count, or a plan
 * drawn from statistics in which one queue holds every row, read the
 * whole table beside a backlog (1.3 s at 10,000,000 tasks waiting for
 * later). What waits in a paused queue is not outstanding. */
#define EMPTY(q, prio)                                                         \
	"SELECT CASE WHEN EXISTS (SELECT 1 FROM {p}task WHERE status = 1" q    \
	" AND {kinds:?2}) OR EXISTS (" prio "SELECT 1 FROM pr CROSS JOIN "     \
	"LATERAL (SELECT 1 FROM {p}task WHERE status IN (0, 4) AND "           \
	"priority = pr.p" q " AND {kinds:?2} AND (status = 4 OR "              \
	"run_at <= now()) AND queue NOT IN (SELECT queue FROM "                \
	"{p}queue_limit WHERE paused = 1) ORDER BY run_at, id LIMIT 1) x) "    \
	"THEN 1 ELSE 0 END"

/* ?1 ids, ?2 attempts, ?3 new status, ?4 started ms, ?5 retry delay ms,
 * ?6 exit codes, ?7 errors, ?8 output tails, ?9 outcome names, ?10 node,
 * ?11 the ids of the successes, ?12 the ids of the others. The model
 * sends the outcomes sorted by id, then attempt (model/outcome.c).
 * Status 2 and 3 end the task: its row leaves {p}task (ok, gone) for
 * {p}task_done (m) in this statement, with the attempt that ended it;
 * run rows (r) only for the others and for late results. 4 is a retry and 0 a release (a
 * started attempt stopped at shutdown: it keeps its number and costs no
 * retry): those rows are updated in place (u). A row the guard (owner,
 * attempt, running) rejects is late: recorded, not applied. Each row is
 * touched by one CTE only, as PostgreSQL requires of data-modifying
 * CTEs.
 *
 * No CTE joins the outcomes to the table: with the estimates below the
 * planner would rescan the outcomes once per row. A row found by id
 * reads its outcome by position (POS): ?1 is sorted, so width_bucket
 * finds it by binary search (an id twice in a batch, two attempts of one
 * task, gives the later attempt's place, the only one the row can
 * match). A linear search per row (array_position, or a text key
 * 'id:attempt' = ANY) cost 8 % of the server's time in a drain at 300
 * outcomes a batch. */
#define POS "width_bucket(t.id, ?1::bigint[])"
/* A parent (dependents > 0) that succeeds ends here like any task, and
 * its children are released in this statement (RELEASE below). One that
 * ends dead does not: its failure cancels a sub-graph, which the model
 * does on the generic path (model/done.c). gone skips it; d names the
 * outcomes that would have ended a task the statement's snapshot shows
 * this node running but that no CTE applied (such a parent, or, rarely,
 * a row taken back between the snapshot and its lock): the model
 * finishes those again on the generic path, which applies or records
 * them as late. APPLIED answers 1 applied, 2 deferred so, 0 late. */
#define DEFERRED                                                               \
	"d AS (SELECT o.id FROM o WHERE o.st IN (2, 3) AND NOT EXISTS "        \
	"(SELECT 1 FROM a WHERE a.id = o.id) AND EXISTS (SELECT 1 FROM "       \
	"{p}task t WHERE t.id = o.id AND t.node_id = ?10 AND "                 \
	"t.status + 0 = 1 AND t.attempts = o.attempt)), "
#define APPLIED                                                                \
	"CASE WHEN a.id IS NOT NULL THEN 1 WHEN o.id IN (SELECT id FROM d) "   \
	"THEN 2 ELSE 0 END"
#define FINISH_COLS                                                            \
	"id, queue, kind, payload, status, priority, run_at, attempts, "       \
	"max_attempts, node_id, lease_until, started_at, version, "            \
	"unique_key, schedule_name, fire_time, last_error, created_at, "       \
	"updated_at, finished_at, concurrency_key, dependents, "               \
	"on_parent_failure, result, traceparent"
/* An ended task's row for {p}task_done, from the rows a CTE (x) took
 * out of {p}task and the outcome (o) that ended it: the attempt's start,
 * outcome, exit code, error and output ride on the row (schema 5), so
 * no run row is written for it; and its result, from ?13 (NULL, not an
 * array, when no outcome of the batch has one). */
#define ENDED(st, err, x)                                                      \
	"SELECT x.id, x.queue, x.kind, x.payload, " st ", x.priority, "        \
	"x.run_at, x.attempts, x.max_attempts, x.node_id, "                    \
	"NULL::timestamptz, {ts:o.started_ms}, x.version + 1, x.unique_key, "  \
	"x.schedule_name, x.fire_time, " err ", x.created_at, now(), now(), "  \
	"x.concurrency_key, x.dependents, x.on_parent_failure, "               \
	"(?13::text[])[o.ord::int], x.traceparent, "                           \
	"o.outcome, o.exit_code, o.error, o.output FROM " x                    \
	" x JOIN o ON o.id = x.id AND o.attempt = x.attempts"
#define FINISH_CTES                                                            \
	"o AS MATERIALIZED (SELECT * FROM unnest(?1::bigint[], "               \
	"?2::int[], ?3::int[], ?4::bigint[], ?5::bigint[], ?6::int[], "        \
	"?7::text[], ?8::text[], ?9::text[]) WITH ORDINALITY AS o(id, "        \
	"attempt, st, started_ms, delay_ms, exit_code, error, output, "        \
	"outcome, ord)), "                                                     \
	"ok AS (DELETE FROM {p}task t WHERE t.id = ANY (?11::bigint[]) "       \
	"AND t.node_id = ?10 AND t.status + 0 = 1 "                            \
	"AND t.attempts = (?2::int[])[" POS "] "                               \
	"AND (?3::int[])[" POS "] = 2 RETURNING t.*), "                        \
	"gone AS (DELETE FROM {p}task t WHERE t.id = ANY (?12::bigint[]) "     \
	"AND t.node_id = ?10 AND t.status + 0 = 1 "                            \
	"AND t.attempts = (?2::int[])[" POS "] "                               \
	"AND (?3::int[])[" POS "] = 3 AND t.dependents = 0 RETURNING t.*), "   \
	"m AS (INSERT INTO {p}task_done (" FINISH_COLS ", outcome, "           \
	"exit_code, error, output) " ENDED(                                    \
	        "2", "x.last_error",                                           \
	        "ok") " UNION ALL " ENDED("3", "o.error",                      \
	                                  "gone") "), "                        \
	                                          "u AS (UPDATE {p}task t "    \
	                                          "SET status = "              \
	                                          "(?3::int[])[" POS "], "     \
	                                          "max_attempts = CASE WHEN "  \
	                                          "(?3::int[])[" POS "] = 0 "  \
	                                          "THEN t.max_attempts + 1 "   \
	                                          "ELSE t.max_attempts END, "  \
	                                          "run_at = CASE "             \
	                                          "(?3::int[])[" POS "] "      \
	                                          "WHEN 4 THEN "               \
	                                          "{now+(?5::bigint[])[" POS   \
	                                          "]} ELSE now() END, "        \
	                                          "last_error = CASE WHEN "    \
	                                          "(?3::int[])[" POS "] = 4 "  \
	                                          "THEN (?7::text[])[" POS     \
	                                          "] ELSE t.last_error END, "  \
	                                          "lease_until = NULL, "       \
	                                          "updated_at = now(), "       \
	                                          "version = t.version + 1 "   \
	                                          "WHERE t.id = ANY "          \
	                                          "(?12::bigint[]) AND "       \
	                                          "t.node_id = ?10 "           \
	                                          "AND t.status + 0 = 1 AND "  \
	                                          "t.attempts = "              \
	                                          "(?2::int[])[" POS "] "      \
	                                          "AND (?3::int[])[" POS       \
	                                          "] IN (0, 4) RETURNING "     \
	                                          "t.id, t.attempts), "        \
	                                          "a AS (SELECT id, "          \
	                                          "attempts, "                 \
	                                          "1 AS ended FROM ok UNION "  \
	                                          "ALL SELECT id, attempts, "  \
	                                          "1 FROM gone UNION ALL "     \
	                                          "SELECT id, attempts, 0 "    \
	                                          "FROM u), " DEFERRED         \
	                                          "r AS (INSERT INTO {p}run "  \
	                                          "(task_id, attempt, "        \
	                                          "node_id, started_at, "      \
	                                          "finished_at, outcome, "     \
	                                          "exit_code, error, output) " \
	                                          "SELECT o.id, o.attempt, "   \
	                                          "?10, {ts:o.started_ms}, "   \
	                                          "now(), "                    \
	                                          "CASE WHEN a.id IS NULL "    \
	                                          "THEN 'late' ELSE "          \
	                                          "o.outcome END, "            \
	                                          "o.exit_code, "              \
	                                          "CASE WHEN a.id IS NULL "    \
	                                          "THEN 'late ' || o.outcome " \
	                                          "|| "                        \
	                                          "' result, not applied "     \
	                                          "(lease lost)' || "          \
	                                          "coalesce(': ' || o.error, " \
	                                          "'') ELSE o.error END, "     \
	                                          "o.output "                  \
	                                          "FROM o LEFT JOIN a ON "     \
	                                          "a.id = o.id AND "           \
	                                          "a.attempts = "              \
	                                          "o.attempt WHERE a.ended "   \
	                                          "IS DISTINCT FROM 1 AND "    \
	                                          "o.id NOT IN (SELECT id "    \
	                                          "FROM d) "                   \
	                                          "ORDER BY o.ord)"

/* The children of the parents that succeeded in this statement (ok):
 * k counts, per blocked child, its parents that ended here; lk locks
 * those children in ascending id order before any is updated (the one
 * lock order every ending transaction keeps, docs/workflows.md: parents
 * that share children queue, never deadlock), reading each as it is
 * once locked; rel then takes the k.n parents off each, and a child
 * with none left becomes pending (open_parents -1: it had parents). A
 * batch without parents reads an empty k and touches nothing. HANDED
 * says which released children this statement claims itself (none,
 * below; FINISH_CLAIM hands some to the worker). w wakes the workers
 * for the rest, one payload (util/wake.h) for the statement, delivered
 * at commit; the final SELECT's filter makes it run. */
#define RELEASE_LOCK                                                           \
	"k AS (SELECT e.child_id AS id, count(*) AS n FROM {p}task_dep e "     \
	"WHERE e.parent_id = ANY (ARRAY(SELECT id FROM ok WHERE "              \
	"dependents > 0)) GROUP BY e.child_id), "                              \
	"lk AS MATERIALIZED (SELECT c.id, c.open_parents <= k.n AS free, "     \
	"c.queue, c.kind, c.priority, c.run_at FROM {p}task c JOIN k ON "      \
	"k.id = c.id WHERE c.id = ANY (ARRAY(SELECT id FROM k)) AND "          \
	"c.status = 6 ORDER BY c.id FOR UPDATE OF c), "
#define RELEASE_SET(status, claim)                                             \
	"rel AS (UPDATE {p}task t SET status = CASE " status " WHEN "          \
	"t.open_parents <= k.n THEN 0 ELSE 6 END, open_parents = CASE WHEN "   \
	"t.open_parents <= k.n THEN -1 ELSE t.open_parents - k.n END, " claim  \
	"version = t.version + 1, updated_at = now() "
/* the handed children (ho) are claimed as cl claims */
#define HANDED "ho.id IS NOT NULL"
#define RELEASE_HAND                                                           \
	RELEASE_SET("WHEN " HANDED " THEN 1",                                  \
	            "node_id = CASE WHEN " HANDED " THEN ?10 ELSE t.node_id "  \
	            "END, lease_until = CASE WHEN " HANDED " THEN "            \
	            "{now+?14} ELSE t.lease_until END, started_at = CASE "     \
	            "WHEN " HANDED " THEN now() ELSE t.started_at END, "       \
	            "attempts = t.attempts + CASE WHEN " HANDED " THEN 1 "     \
	            "ELSE 0 END, ")                                            \
	"FROM k LEFT JOIN ho ON ho.id = k.id "
#define RELEASE_WAKE                                                           \
	"WHERE k.id = t.id AND t.id = ANY (ARRAY(SELECT id FROM lk)) AND "     \
	"t.status = 6 RETURNING t.id, t.status, t.queue, t.kind, t.payload, "  \
	"t.attempts, t.max_attempts, t.started_at, t.priority, t.run_at, "     \
	"t.open_parents, t.traceparent, t.timeout_ms), "                       \
	"w AS MATERIALIZED (SELECT pg_notify('{p}task', 'w1 ' || "             \
	"(min(id) % 4294967296) || ' ' || count(*) || ' 0 - -') FROM rel "     \
	"WHERE status = 0 HAVING count(*) > 0) "
#define RELEASE_RAN " WHERE (SELECT count(*) FROM w) >= 0"

/* the finish alone: no claim, so nothing is handed */
static const char finish_arrays[] =
        "WITH " FINISH_CTES ", " RELEASE_LOCK RELEASE_SET(
                "", "") "FROM k " RELEASE_WAKE "SELECT o.ord, " APPLIED
                        " FROM o LEFT JOIN a ON a.id = o.id AND "
                        "a.attempts = o.attempt" RELEASE_RAN " ORDER BY o.ord";

/* The steady state of a busy worker in one round trip and one commit:
 * FINISH_CTES record the last batch's outcomes (?1-?13) while c and cl
 * claim the next batch (lease ?14 ms, limit ?15, kinds ?16, queue ?17).
 * The claim reads the statement's snapshot, in which every task being
 * finished is still running, so no row is touched by two CTEs. A limit
 * of 0 only finishes. Children the outcomes release were blocked in
 * that snapshot, so cl cannot see them: the slots cl leaves free are
 * handed the released children that match the claim (ho, in claim
 * order), claimed by rel itself, so a chain link costs one round trip.
 * Claimed rows come first, in claim order (the worker starts them in
 * the order it reads them). */
#define FINISH_CLAIM(q, due)                                                   \
	"WITH " FINISH_CTES ", c AS MATERIALIZED (" due "), "                  \
	"cl AS (UPDATE {p}task t SET status = 1, node_id = ?10, "              \
	"lease_until = {now+?14}, started_at = now(), "                        \
	"attempts = t.attempts + 1, version = t.version + 1, "                 \
	"updated_at = now() WHERE t.id = ANY (ARRAY(SELECT id FROM c)) "       \
	"RETURNING t.id, "                                                     \
	"t.queue, t.kind, t.payload, t.attempts, t.max_attempts, "             \
	"t.started_at, t.priority, t.run_at, t.open_parents, t.traceparent, "  \
	"t.timeout_ms), " RELEASE_LOCK                                         \
	"ho AS MATERIALIZED (SELECT id FROM lk WHERE free AND run_at <= "      \
	"now()" q " AND {kinds:?16} ORDER BY priority DESC, run_at, id LIMIT " \
	"greatest(?15 - (SELECT count(*) FROM c), 0)), " RELEASE_HAND          \
	        RELEASE_WAKE                                                   \
	"SELECT cl.id, cl.queue, cl.kind, cl.payload, cl.attempts, "           \
	"cl.max_attempts, {ms:cl.started_at}, 1, cl.priority, "                \
	"{ms:cl.run_at}, cl.open_parents, cl.traceparent, cl.timeout_ms FROM " \
	"cl UNION ALL "                                                        \
	"SELECT id, queue, kind, payload, attempts, max_attempts, "            \
	"{ms:started_at}, 1, priority, {ms:run_at}, open_parents, "            \
	"traceparent, timeout_ms FROM rel WHERE status = 1 UNION ALL "         \
	"SELECT o.ord, NULL, NULL, NULL, " APPLIED ", NULL, NULL, 0, NULL, "   \
	"NULL, 0, NULL, NULL FROM o LEFT JOIN a "                              \
	"ON a.id = o.id AND a.attempts = o.attempt" RELEASE_RAN                \
	" ORDER BY 8 DESC, 9 DESC, 10, 1"

/* ?1 queue, ?2 kind, ?3 payloads, ?4 priority, ?5 run at ms (or NULL),
 * ?6 delay ms, ?7 max attempts, ?8 the wake-up (util/wake.h). Ids are
 * drawn from the identity's sequence before the insert so that they can
 * be returned in input order; the data-modifying CTE runs to completion whether or not it is
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
        "n AS MATERIALIZED (SELECT pg_notify('{p}task', ?8) AS x) "
        "SELECT p.id FROM p CROSS JOIN n ORDER BY p.ord";

/* The heartbeat, and the node's place among the live nodes (a beat
 * within two of their leases) that serve the same kinds and queues,
 * ranked by id: how many come before it, and how many there are with it
 * (the wake-up's window, util/wake.h). RETURNING reads the others as they
 * were before this statement; the node itself is counted apart. */
#define NODE_ALIKE                                                             \
	"FROM {p}node o WHERE o.serves_kinds IS NOT DISTINCT FROM "            \
	"n.serves_kinds AND o.serves_queues IS NOT DISTINCT FROM "             \
	"n.serves_queues AND o.heartbeat >= now() - o.lease_ms * "             \
	"interval '2 milliseconds' AND o.id "
#define NODE_BEAT_RANK                                                         \
	"UPDATE {p}node n SET heartbeat = now(), busy = ?2 WHERE n.id = ?1 "   \
	"RETURNING (SELECT count(*) " NODE_ALIKE                               \
	"< n.id), (SELECT count(*) " NODE_ALIKE "<> n.id) + 1"

static const char *const pg_sql[SKED_SQL__COUNT] = {
        [SKED_SQL_CLAIM_ANY] = CLAIM(DUE_IDS("", " AND {kinds:?5}", "?3")),
        [SKED_SQL_CLAIM_Q] =
                CLAIM(DUE_IDS(" AND queue = ?4", " AND {kinds:?5}", "?3")),
        [SKED_SQL_EMPTY_ANY] = EMPTY("", PRIORITIES("")),
        [SKED_SQL_EMPTY_Q] =
                EMPTY(" AND queue = ?1", PRIORITIES(" AND queue = ?1")),
        /* every queue but the limited ones (limited.c) */
        [SKED_SQL_CLAIM_XQ] =
                CLAIM(DUE_IDS("",
                              " AND {kinds:?5} AND queue NOT IN (SELECT "
                              "queue FROM {p}queue_limit)",
                              "?3")),
        [SKED_SQL_FINISH_ARRAYS] = finish_arrays,
        /* the generic path (a parent's end, deferred by the array
         * statement): {rows8}'s values reach PostgreSQL untyped (text) */
        [SKED_SQL_DONE_COPY_RUN] =
                "INSERT INTO {p}task_done (" SKED__DONE_COLS ", outcome, "
                "exit_code, error, output) SELECT " SKED__DONE_T_COLS
                ", v.c8, v.c4, v.c5::int, v.c6, v.c7 FROM ({rows8}) v JOIN "
                "{p}task t ON t.id = v.c1::bigint AND t.attempts = "
                "v.c2::int WHERE t.status + 0 IN (2, 3)",
        [SKED_SQL_ENQ_ARRAYS] = enq_arrays,
        [SKED_SQL_HOT_VACUUM] = "VACUUM (SKIP_LOCKED) {p}task",
        /* The renewal takes the node's running rows as it finds them
         * (the node index's order), while a batch finish of the same
         * node holds some of them and waits for others: each waited for
         * the other until the deadlock check (deadlock_timeout, 1 s by
         * default) rolled one back, a stall of the drain seen in the
         * server's log. So a row another transaction holds is skipped,
         * and the answer is how many were: the count reads the
         * statement's snapshot, which holds every running row whatever
         * its lock. Almost always the skipped row is the node's own
         * finish, about to end it; sked__renew tries again shortly for
         * the rest, and fails if some stay locked (model/lease.c). */
        [SKED_SQL_RENEW] =
                "WITH s AS (SELECT id FROM {p}task WHERE node_id = ?1 AND "
                "status = 1 AND lease_until >= now() FOR UPDATE SKIP "
                "LOCKED), u AS (UPDATE {p}task t SET lease_until = "
                "{now+?2} WHERE t.id = ANY (ARRAY(SELECT id FROM s)) "
                "RETURNING 1) SELECT (SELECT count(*) FROM {p}task WHERE "
                "node_id = ?1 AND status = 1 AND lease_until >= now()) - "
                "(SELECT count(*) FROM u)",
        [SKED_SQL_NODE_BEAT_RANK] = NODE_BEAT_RANK,
        [SKED_SQL_FINISH_CLAIM_ANY] =
                FINISH_CLAIM("", DUE_IDS("", " AND {kinds:?16}", "?15")),
        [SKED_SQL_FINISH_CLAIM_Q] = FINISH_CLAIM(
                " AND queue = ?17",
                DUE_IDS(" AND queue = ?17", " AND {kinds:?16}", "?15")),
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
        /* a fair claim's candidates, locked as read (limited.c) */
        [SKED_SQL_FAIR_CAND_SKIP] =
                "SELECT id, concurrency_key, priority, {ms:run_at} FROM "
                "{p}task WHERE queue = ?4 AND concurrency_key = ?6 AND "
                "{kinds:?5} AND status IN (0, 4) AND run_at <= {now} ORDER BY "
                "priority DESC, run_at, id"
                " LIMIT ?3 FOR UPDATE SKIP LOCKED",
        [SKED_SQL_FAIR_CAND_NULL_SKIP] =
                "SELECT id, concurrency_key, priority, {ms:run_at} FROM "
                "{p}task WHERE queue = ?4 AND concurrency_key IS NULL AND "
                "{kinds:?5} AND status IN (0, 4) AND run_at <= {now} ORDER BY "
                "priority DESC, run_at, id"
                " LIMIT ?3 FOR UPDATE SKIP LOCKED",
        /* Left to itself the server plans the finish and fused statements
         * (unnest of a batch's arrays, several data-modifying CTEs) anew
         * on every execution, about 1 ms each: a generic plan is as good
         * for them, as they look rows up by id. Versions before 12 have
         * no plan_cache_mode and keep their default.
         *
         * And no JIT (11 and newer): a generic plan's costs come from
         * the table's statistics, not from this batch, so beside a
         * backlog (10,000,000 tasks waiting for later in one queue) the
         * planner costs the fused statement at 167,000, over
         * jit_above_cost, and the server compiled it again on every
         * execution: 120 ms a statement for a few ms of work, a drain
         * at 200 tasks/s instead of 30,000 (docs/postgresql.md, "Tasks
         * waiting for later"). sked's statements each touch a batch of
         * rows found by index; none gains from compiling. */
        [SKED_SQL_GENERIC_PLANS] =
                "SELECT CASE WHEN current_setting('server_version_num')"
                "::int >= 120000 THEN set_config('plan_cache_mode', "
                "'force_generic_plan', false) END, CASE WHEN "
                "current_setting('server_version_num')::int >= 110000 "
                "THEN set_config('jit', 'off', false) END",
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
        .notify = "SELECT pg_notify('{p}task', ?1)",
        .schema = sked__schema_postgresql,
        .sql = pg_sql,
        .caps = SKED_CAP_RETURNING | SKED_CAP_SKIP_LOCKED | SKED_CAP_NOTIFY |
                SKED_CAP_ARRAYS | SKED_CAP_WAIT_HOLDER | SKED_CAP_APP_NAME |
                SKED_CAP_GENERIC_PLANS | SKED_CAP_FUSED | SKED_CAP_VACUUM,
        .claim_one_statement = 1,
        .max_params = 65535,
};
