/*
 * dialect.c — the generic SQL texts, and which of them a dialect needs.
 *
 * Size: most of it one table: the generic texts in statement order (the
 * registry's rule, dialect.h), which reads best whole. The template
 * renderer is render.c's.
 *
 * Layer: dialect seam (see dialect.h). The texts below are the SQL that
 * SQLite, PostgreSQL and MySQL/MariaDB share; a dialect file in
 * src/dialect/ overrides a text only where its product differs.
 *
 * Row locks, for the reader who wants to know what each statement holds:
 * every statement here touches rows of one table only, except the
 * schema migration (dialect's migrate lock, then {p}meta, then DDL). A
 * claim locks the task rows it returns; finishing locks the one task row,
 * then inserts its run row. No statement locks two task rows in an order
 * that another statement reverses, so claims and finishes cannot deadlock
 * on each other.
 */
#include "dialect/dialect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dialect/detect.h"
#include "sked.h"
#include "util/buf.h"
#include "util/log.h"

#define TASK_COLS                                                              \
	"id, queue, kind, payload, status, priority, {ms:run_at}, attempts, "  \
	"max_attempts, node_id, {ms:lease_until}, unique_key, "                \
	"schedule_name, {ms:fire_time}, last_error, {ms:created_at}, "         \
	"{ms:updated_at}, {ms:finished_at}, traceparent"

#define DONE_COLS   SKED__DONE_COLS
#define DONE_T_COLS SKED__DONE_T_COLS

/* the columns TASK_COLS reads, as they are (a list of both tables) */
#define RAW_COLS                                                               \
	"id, queue, kind, payload, status, priority, run_at, attempts, "       \
	"max_attempts, node_id, lease_until, unique_key, schedule_name, "      \
	"fire_time, last_error, created_at, updated_at, finished_at, "         \
	"traceparent"

/* the last two columns: open_parents, below 0 for a task that had
 * parents (the worker reads their results for it; docs/workflows.md),
 * and the trace context, which rides along the claim's row read (NULL
 * for most) */
#define CLAIMED_COLS                                                           \
	"id, queue, kind, payload, attempts, max_attempts, {ms:started_at}, "  \
	"open_parents, traceparent, timeout_ms"

#define CLAIM_SET                                                              \
	"status = 1, node_id = ?1, lease_until = {now+?2}, "                   \
	"started_at = {now}, attempts = attempts + 1, version = version + 1, " \
	"updated_at = {now}"

#define DUE "status IN (0, 4) AND run_at <= {now}"

/* a parent ?1's blocked children count it ended; the one whose last open
 * parent this was becomes pending, with open_parents -1: it had parents,
 * which its claim tells the worker */
#define DEP_RELEASE(and)                                                       \
	"UPDATE {p}task SET status = CASE WHEN open_parents <= 1 THEN 0 "      \
	"ELSE 6 END, updated_at = {now}, version = version + 1, "              \
	"open_parents = CASE WHEN open_parents <= 1 THEN -1 ELSE "             \
	"open_parents - 1 END WHERE status = 6" and                            \
	        " AND id IN "                                                  \
	        "(SELECT child_id FROM {p}task_dep WHERE parent_id = ?1)"
/* the same over the parent's children {ids} (from ?1), read before;
 * tbl names the table (MySQL: through its primary key) */
#define DEP_RELEASE_IDS(tbl, and)                                              \
	"UPDATE " tbl " SET status = CASE WHEN open_parents <= 1 THEN 0 "      \
	"ELSE 6 END, updated_at = {now}, version = version + 1, "              \
	"open_parents = CASE WHEN open_parents <= 1 THEN -1 ELSE "             \
	"open_parents - 1 END WHERE status = 6" and                            \
	        " AND id IN ({ids})"
/* an ended task whose children have not all ended is kept */
#define KEEP_PARENTS                                                           \
	" AND (dependents = 0 OR NOT EXISTS (SELECT 1 FROM {p}task_dep e "     \
	"JOIN {p}task c ON c.id = e.child_id WHERE e.parent_id = "             \
	"{p}task_done.id))"
#define CLAIM_ORDER " ORDER BY priority DESC, run_at, id"

/* a limit row: the limits (NULL: off), the rate window's record, and
 * the database clock */
#define LIM_COLS                                                               \
	"concurrency, per_key, rate_n, rate_ms, rate_log, {nowms}, paused, "   \
	"fair"
/* a task whose concurrency key (if any) has fewer than ?6 running */
#define KEY_NOT_FULL                                                           \
	"(concurrency_key IS NULL OR concurrency_key NOT IN (SELECT "          \
	"r.concurrency_key FROM {p}task r WHERE r.status = 1 AND "             \
	"r.queue = ?4 AND r.concurrency_key IS NOT NULL GROUP BY "             \
	"r.concurrency_key HAVING COUNT(*) >= ?6))"
/* any queue but the limited ones, as the limit table says at claim time */
#define NOT_LIMITED " AND queue NOT IN (SELECT queue FROM {p}queue_limit)"
/* a task of a queue that is not paused (sked queue pause) */
#define NOT_PAUSED                                                             \
	"queue NOT IN (SELECT queue FROM {p}queue_limit WHERE paused = 1)"

/* a live task that holds its unique key ?1 by its scope (schema 10):
 * the predicate of the unique index {p}task_unique_held, word for word,
 * so that PostgreSQL and SQLite find the holder by that index */
#define HELD                                                                   \
	"unique_key = ?1 AND unique_key IS NOT NULL AND (unique_scope IS "     \
	"NULL OR (unique_scope = 1 AND attempts = 0))"

/* debounce (--unique-replace): the holder ?1, while it waits and still
 * holds its key, takes the new payload ?2 and run-at */
#define REPLACE(at)                                                            \
	"UPDATE {p}task SET payload = ?2, run_at = " at ", updated_at = "      \
	"{now}, version = version + 1 WHERE id = ?1 AND status IN (0, 4, 6) "  \
	"AND (unique_scope IS NULL OR attempts = 0)"

#define DEF_COLS                                                               \
	"cron, tz, kind, payload, queue, priority, max_attempts, misfire, "    \
	"overlap"

/* a schedule's unique key (schema 15): key, scope, period, replace */
#define UNIQ_COLS "unique_key, unique_scope, unique_for_ms, unique_replace"
#define UNIQ_SET                                                               \
	"unique_key = ?11, unique_scope = ?12, unique_for_ms = ?13, "          \
	"unique_replace = ?14, "

#define ENQ_COLS                                                               \
	"INSERT INTO {p}task (queue, kind, payload, status, priority, "        \
	"run_at, attempts, max_attempts, version, unique_key, created_at, "    \
	"updated_at, concurrency_key, traceparent, unique_scope, timeout_ms) " \
	"VALUES (?1, ?2, ?3, 0, ?4, "

/* The cluster gauges' rows: (queue, status, count, due, oldest run_at ms,
 * now ms); status 1 rows come from the running index; status -1 is the
 * node row (count, alive), -2 the lock row (count, held), -3 the schedule
 * row (count, paused). Each task branch's WHERE matches one partial
 * index's predicate exactly; the other tables are small. */
#define GAUGES                                                                 \
	"SELECT queue, status, COUNT(*), "                                     \
	"SUM(CASE WHEN run_at <= {now} THEN 1 ELSE 0 END), "                   \
	"{ms:MIN(run_at)}, {nowms} FROM {p}task WHERE status IN (0, 4) "       \
	"GROUP BY queue, status "                                              \
	"UNION ALL SELECT queue, 1, COUNT(*), 0, NULL, {nowms} FROM {p}task "  \
	"WHERE status = 1 GROUP BY queue "                                     \
	"UNION ALL SELECT queue, 6, COUNT(*), 0, NULL, {nowms} FROM {p}task "  \
	"WHERE status = 6 GROUP BY queue "                                     \
	"UNION ALL SELECT NULL, -1, COUNT(*), SUM(CASE WHEN {nowms} - "        \
	"{ms:heartbeat} < lease_ms THEN 1 ELSE 0 END), NULL, {nowms} "         \
	"FROM {p}node "                                                        \
	"UNION ALL SELECT NULL, -2, COUNT(*), SUM(CASE WHEN owner IS NOT "     \
	"NULL AND locked_until > {now} THEN 1 ELSE 0 END), NULL, {nowms} "     \
	"FROM {p}lock "                                                        \
	"UNION ALL SELECT NULL, -3, COUNT(*), SUM(CASE WHEN enabled = 0 THEN " \
	"1 ELSE 0 END), NULL, {nowms} FROM {p}schedule"

static const char *const generic[SKED_SQL__COUNT] = {
        [SKED_SQL_NOW] = "SELECT {nowms}",
        [SKED_SQL_META_GET] =
                "SELECT value FROM {p}meta WHERE name = 'schema_version'",
        [SKED_SQL_META_CREATE] = "CREATE TABLE IF NOT EXISTS {p}meta ("
                                 "name VARCHAR(64) PRIMARY KEY, "
                                 "value VARCHAR(255) NOT NULL)",
        [SKED_SQL_META_DEL] = "DELETE FROM {p}meta WHERE name = ?1",
        [SKED_SQL_META_PUT] =
                "INSERT INTO {p}meta (name, value) VALUES (?1, ?2)",
        [SKED_SQL_ENQ_IN] = ENQ_COLS
        "{now+?5}, 0, ?6, 0, ?7, {now}, {now}, ?8, ?9, ?10, ?11){ret}",
        [SKED_SQL_ENQ_AT] = ENQ_COLS
        "{ts:?5}, 0, ?6, 0, ?7, {now}, {now}, ?8, ?9, ?10, ?11){ret}",
        /* a task is in {p}task while live, in {p}task_done once ended:
         * one statement reads both, so it sees the task on one side of a
         * move (a statement's snapshot, or the move's row locks) */
        [SKED_SQL_UNIQUE_GET] =
                "SELECT id FROM {p}task WHERE unique_key = ?1 UNION ALL "
                "SELECT id FROM {p}task_done WHERE unique_key = ?1 ORDER BY 1 "
                "DESC",
        /* with the result (lists leave it out: up to 64 KiB a task) */
        [SKED_SQL_TASK_GET] =
                "SELECT " TASK_COLS ", result FROM {p}task WHERE id = ?1 "
                "UNION ALL SELECT " TASK_COLS ", result FROM {p}task_done "
                "WHERE id = ?1",
        [SKED_SQL_TASK_STATUS] =
                "SELECT status FROM {p}task WHERE id = ?1 UNION ALL "
                "SELECT status FROM {p}task_done WHERE id = ?1",
        /* the run rows, then the attempt that ended the task when its
         * ended row records it (schema 5; run id 0); sked_runs_get puts
         * that one last */
        [SKED_SQL_RUNS_GET] =
                "SELECT id, task_id, attempt, node_id, {ms:started_at}, "
                "{ms:finished_at}, outcome, exit_code, error, output "
                "FROM {p}run WHERE task_id = ?1 UNION ALL SELECT 0, id, "
                "attempts, node_id, {ms:started_at}, {ms:finished_at}, "
                "outcome, exit_code, error, output FROM {p}task_done "
                "WHERE id = ?1 AND outcome IS NOT NULL ORDER BY 1",
        [SKED_SQL_CANCEL] =
                "UPDATE {p}task SET status = 5, finished_at = {now}, "
                "lease_until = NULL, updated_at = {now}, version = version + 1 "
                "WHERE id = ?1 AND status IN (0, 1, 4, 6)",
        [SKED_SQL_RETRY] =
                "UPDATE {p}task SET status = 0, run_at = {now}, "
                "max_attempts = CASE WHEN attempts >= max_attempts "
                "THEN attempts + 1 ELSE max_attempts END, finished_at = NULL, "
                "lease_until = NULL, updated_at = {now}, version = version + 1 "
                "WHERE id = ?1 AND status IN (0, 3, 4, 5)",
        /* tasks per queue and status: live ones from the hot table,
         * ended ones from {p}task_done's (queue, status) index alone */
        [SKED_SQL_STATS] =
                "SELECT queue, status, COUNT(*), SUM(CASE WHEN " DUE
                " THEN 1 ELSE 0 END) FROM {p}task GROUP BY queue, status "
                "UNION ALL SELECT queue, status, COUNT(*), 0 FROM "
                "{p}task_done GROUP BY queue, status ORDER BY 1, 2",
        [SKED_SQL_NODES] =
                "SELECT n.id, n.host, n.pid, {ms:n.started_at}, "
                "{ms:n.heartbeat}, n.lease_ms, n.strategy, n.version, {nowms}, "
                "(SELECT COUNT(*) FROM {p}task t WHERE t.node_id = n.id "
                "AND t.status = 1), n.slots, n.busy FROM {p}node n "
                "ORDER BY n.started_at, n.id",
        [SKED_SQL_NODE_INSERT] =
                "INSERT INTO {p}node (id, host, pid, started_at, heartbeat, "
                "lease_ms, strategy, version, slots) VALUES (?1, ?2, ?3, "
                "{now}, {now}, ?4, ?5, ?6, ?7)",
        [SKED_SQL_NODE_GET] =
                "SELECT host, pid, {nowms} - {ms:heartbeat}, lease_ms "
                "FROM {p}node WHERE id = ?1",
        [SKED_SQL_NODE_DELETE] = "DELETE FROM {p}node WHERE id = ?1",
        [SKED_SQL_NODE_BEAT] =
                "UPDATE {p}node SET heartbeat = {now}, busy = ?2 WHERE id = ?1",
        [SKED_SQL_RENEW] =
                "UPDATE {p}task SET lease_until = {now+?2} WHERE node_id = ?1 "
                "AND status = 1 AND lease_until >= {now}",
        /* a row whose lease ran out is not held, even before a reaper
         * takes it back: SKED_SQL_RENEW does not extend it, so listing
         * it would make the worker believe a lease it no longer has */
        [SKED_SQL_HELD] = "SELECT id, attempts FROM {p}task WHERE node_id = ?1 "
                          "AND status = 1 AND lease_until >= {now}",
        [SKED_SQL_REAP_SELECT] =
                "SELECT id, attempts, node_id, {ms:started_at} FROM {p}task "
                "WHERE status = 1 AND lease_until < {now} "
                "ORDER BY lease_until{lim:100}",
        [SKED_SQL_REAP] =
                "UPDATE {p}task SET status = CASE WHEN attempts >= "
                "max_attempts "
                "THEN 3 ELSE 4 END, finished_at = CASE WHEN attempts >= "
                "max_attempts THEN {now} ELSE NULL END, run_at = {now}, "
                "lease_until = NULL, last_error = ?3, updated_at = {now}, "
                "version = version + 1 WHERE id = ?1 AND attempts = ?2 "
                "AND status = 1 AND lease_until < {now}",
        [SKED_SQL_FINISH_OK] =
                "UPDATE {p}task SET status = 2, lease_until = NULL, "
                "finished_at = {now}, updated_at = {now}, version = version + "
                "1 "
                "WHERE id = ?1 AND node_id = ?2 AND attempts = ?3 AND status = "
                "1",
        [SKED_SQL_FINISH_RETRY] =
                "UPDATE {p}task SET status = 4, lease_until = NULL, "
                "run_at = {now+?4}, last_error = ?5, updated_at = {now}, "
                "version = version + 1 "
                "WHERE id = ?1 AND node_id = ?2 AND attempts = ?3 AND status = "
                "1",
        [SKED_SQL_FINISH_DEAD] =
                "UPDATE {p}task SET status = 3, lease_until = NULL, "
                "finished_at = {now}, last_error = ?4, updated_at = {now}, "
                "version = version + 1 "
                "WHERE id = ?1 AND node_id = ?2 AND attempts = ?3 AND status = "
                "1",
        /* a started attempt stopped by a shutdown: it keeps its number
         * (one run row per attempt) and costs no retry */
        [SKED_SQL_RELEASE] =
                "UPDATE {p}task SET status = 0, "
                "max_attempts = max_attempts + 1, "
                "run_at = {now}, lease_until = NULL, updated_at = {now}, "
                "version = version + 1 "
                "WHERE id = ?1 AND node_id = ?2 AND attempts = ?3 AND status = "
                "1",
        /* an attempt that never reached a handler: its number goes back */
        [SKED_SQL_GIVE_BACK] =
                "UPDATE {p}task SET status = 0, attempts = attempts - 1, "
                "run_at = {now}, lease_until = NULL, updated_at = {now}, "
                "version = version + 1 "
                "WHERE id = ?1 AND node_id = ?2 AND attempts = ?3 AND status = "
                "1",
        [SKED_SQL_RUN_INSERT] =
                "INSERT INTO {p}run (task_id, attempt, node_id, started_at, "
                "finished_at, outcome, exit_code, error, output) VALUES "
                "(?1, ?2, ?3, {ts:?4}, {now}, ?5, ?6, ?7, ?8)",
        /* ?1 queue (the _Q form), ?2 the kinds the worker runs; what
         * waits in a paused queue is not outstanding */
        [SKED_SQL_EMPTY_ANY] =
                "SELECT COUNT(*) FROM {p}task WHERE {kinds:?2} AND "
                "(status = 1 OR ((status = 4 OR (status = 0 AND run_at <= "
                "{now})) AND " NOT_PAUSED "))",
        [SKED_SQL_EMPTY_Q] =
                "SELECT COUNT(*) FROM {p}task WHERE queue = ?1 AND "
                "{kinds:?2} AND "
                "(status = 1 OR ((status = 4 OR (status = 0 AND run_at <= "
                "{now})) AND " NOT_PAUSED "))",
        /* SQLite's own claim: one writer at a time, so the IN (subquery
         * LIMIT n) cannot take more than n rows here. Other products
         * override these two. */
        [SKED_SQL_CLAIM_ANY] =
                "UPDATE {p}task SET " CLAIM_SET
                " WHERE id IN (SELECT id FROM {p}task WHERE {kinds:?5} AND " DUE
                        CLAIM_ORDER " LIMIT ?3) RETURNING " CLAIMED_COLS,
        [SKED_SQL_CLAIM_Q] = "UPDATE {p}task SET " CLAIM_SET
                             " WHERE id IN (SELECT id FROM {p}task WHERE "
                             "queue = ?4 AND {kinds:?5} AND " DUE CLAIM_ORDER
                             " LIMIT ?3) RETURNING " CLAIMED_COLS,
        [SKED_SQL_CAND_ANY] =
                "SELECT id, version FROM {p}task WHERE {kinds:?5} AND " DUE
                        CLAIM_ORDER "{lim:?3}",
        [SKED_SQL_CAND_Q] = "SELECT id, version FROM {p}task WHERE queue = ?4 "
                            "AND {kinds:?5} AND " DUE CLAIM_ORDER "{lim:?3}",
        [SKED_SQL_LOCK_ANY] =
                "SELECT id FROM {p}task WHERE {kinds:?5} AND " DUE CLAIM_ORDER
                " LIMIT ?3 FOR UPDATE SKIP LOCKED",
        [SKED_SQL_LOCK_Q] =
                "SELECT id FROM {p}task WHERE queue = ?4 AND {kinds:?5} "
                "AND " DUE CLAIM_ORDER " LIMIT ?3 FOR UPDATE SKIP LOCKED",
        [SKED_SQL_OPT_CLAIM] = "UPDATE {p}task SET " CLAIM_SET
                               " WHERE id = ?3 AND version = ?4 AND " DUE,
        [SKED_SQL_IDS_CLAIM] =
                "UPDATE {p}task SET " CLAIM_SET " WHERE id IN ({ids})",
        [SKED_SQL_IDS_GET] = "SELECT " CLAIMED_COLS " FROM {p}task WHERE id IN "
                             "({ids}) AND node_id = ?1 AND status = 1",
        [SKED_SQL_NODE_EXPIRE] =
                "UPDATE {p}task SET lease_until = {now+?2} WHERE node_id = ?1 "
                "AND status = 1",
        [SKED_SQL_CLAIMED_GET] =
                "SELECT " CLAIMED_COLS " FROM {p}task "
                "WHERE id = ?1 AND node_id = ?2 AND status = 1",

        /* ---- task lists: a head, filter fragments, a tail ---- */
        [SKED_SQL_LIST_HEAD] = "SELECT " TASK_COLS " FROM {p}task WHERE 1 = 1",
        [SKED_SQL_AND_STATUS] = " AND status = {arg}",
        [SKED_SQL_AND_QUEUE] = " AND queue = {arg}",
        [SKED_SQL_AND_KIND] = " AND kind = {arg}",
        [SKED_SQL_AND_BEFORE_ID] = " AND id < {arg}",
        [SKED_SQL_AND_NODE] = " AND node_id = {arg}",
        [SKED_SQL_AND_CREATED_FROM] = " AND created_at >= {ts:{arg}}",
        [SKED_SQL_AND_CREATED_BEFORE] = " AND created_at < {ts:{arg}}",
        [SKED_SQL_LIST_TAIL] = " ORDER BY id DESC{lim:{arg}}",
        /* the same transition as SKED_SQL_RETRY, for every task of
         * status ?1 that the fragments after it match */
        [SKED_SQL_RETRY_WHERE] =
                "UPDATE {p}task SET status = 0, run_at = {now}, "
                "max_attempts = CASE WHEN attempts >= max_attempts THEN "
                "attempts + 1 ELSE max_attempts END, finished_at = NULL, "
                "lease_until = NULL, updated_at = {now}, version = version + "
                "1 WHERE status = ?1",

        /* ---- schedules (sched.c) ---- */
        [SKED_SQL_SCHED_EARLIEST] = "SELECT MIN({ms:next_fire}), {nowms} FROM "
                                    "{p}schedule WHERE enabled = 1",
        [SKED_SQL_SCHED_DUE] =
                "SELECT name, " DEF_COLS ", {ms:next_fire}, version, "
                "{nowms}, " UNIQ_COLS " FROM {p}schedule WHERE enabled = 1 AND "
                "next_fire <= {now} ORDER BY next_fire{lim:?1}",
        /* the tick's claim of a schedule's fires: one conditional write */
        [SKED_SQL_SCHED_CLAIM] =
                "UPDATE {p}schedule SET next_fire = {ts:?3}, "
                "version = version + 1, updated_at = {now} "
                "WHERE name = ?1 AND version = ?2 AND enabled = 1",
        [SKED_SQL_SCHED_LAST_FIRE] =
                "UPDATE {p}schedule SET last_fire = {ts:?2} WHERE name = ?1",
        [SKED_SQL_SCHED_TASK] = "INSERT INTO {p}task (queue, kind, payload, "
                                "status, priority, run_at, attempts, "
                                "max_attempts, version, schedule_name, "
                                "fire_time, created_at, updated_at) VALUES "
                                "(?1, ?2, ?3, 0, ?4, {now}, 0, ?5, 0, ?6, "
                                "{ts:?7}, {now}, {now})",
        /* a fire with the schedule's unique key ?8, its scope ?9 (NULL:
         * live) as sked_enqueue writes them (enqueue.c) */
        [SKED_SQL_SCHED_TASK_UNIQUE] =
                "INSERT INTO {p}task (queue, kind, payload, status, "
                "priority, run_at, attempts, max_attempts, version, "
                "schedule_name, fire_time, created_at, updated_at, "
                "unique_key, unique_scope) VALUES (?1, ?2, ?3, 0, ?4, "
                "{now}, 0, ?5, 0, ?6, {ts:?7}, {now}, {now}, ?8, ?9)",
        [SKED_SQL_SCHED_ACTIVE] = "SELECT id FROM {p}task WHERE "
                                  "schedule_name = ?1 AND status IN "
                                  "(0, 1, 4) ORDER BY id{lim:1}",
        [SKED_SQL_SCHED_FIRE_ID] = "SELECT id FROM {p}task WHERE "
                                   "schedule_name = ?1 AND fire_time = "
                                   "{ts:?2}",
        [SKED_SQL_SCHED_FIRE_MAX] =
                "SELECT COALESCE(MAX({ms:fire_time}), 0) FROM {p}task WHERE "
                "schedule_name = ?1 AND fire_time >= {ts:?2}",
        [SKED_SQL_SCHED_FIRE_MAX_DONE] =
                "SELECT COALESCE(MAX({ms:fire_time}), 0) FROM {p}task_done "
                "WHERE schedule_name = ?1 AND fire_time >= {ts:?2}",
        [SKED_SQL_SCHED_DEF] = "SELECT " DEF_COLS ", version, " UNIQ_COLS
                               " FROM {p}schedule WHERE name = ?1",
        [SKED_SQL_SCHED_INSERT] = "INSERT INTO {p}schedule (name, " DEF_COLS
                                  ", " UNIQ_COLS ", enabled, next_fire, "
                                  "last_fire, version, created_at, "
                                  "updated_at) VALUES (?1, ?2, ?3, ?4, ?5, "
                                  "?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
                                  "1, {ts:?15}, NULL, 0, {now}, {now})",
        [SKED_SQL_SCHED_UPDATE_KEEP] =
                "UPDATE {p}schedule SET cron = ?2, tz = ?3, "
                "kind = ?4, payload = ?5, queue = ?6, "
                "priority = ?7, max_attempts = ?8, "
                "misfire = ?9, overlap = ?10, " UNIQ_SET
                "version = version + 1, updated_at = {now} "
                "WHERE name = ?1 AND version = ?15",
        [SKED_SQL_SCHED_UPDATE_NEXT] =
                "UPDATE {p}schedule SET cron = ?2, tz = ?3, "
                "kind = ?4, payload = ?5, queue = ?6, "
                "priority = ?7, max_attempts = ?8, "
                "misfire = ?9, overlap = ?10, " UNIQ_SET
                "next_fire = {ts:?16}, "
                "version = version + 1, updated_at = {now} "
                "WHERE name = ?1 AND version = ?15",
        [SKED_SQL_SCHED_DELETE] = "DELETE FROM {p}schedule WHERE name = ?1",
        [SKED_SQL_SCHED_PAUSE] = "UPDATE {p}schedule SET enabled = 0, "
                                 "version = version + 1, updated_at = {now} "
                                 "WHERE name = ?1",
        [SKED_SQL_SCHED_RESUME] =
                "UPDATE {p}schedule SET enabled = 1, "
                "next_fire = {ts:?2}, version = version + 1, "
                "updated_at = {now} "
                "WHERE name = ?1 AND version = ?3 AND enabled = 0",
        [SKED_SQL_SCHED_LIST] = "SELECT name, " DEF_COLS ", enabled, "
                                "{ms:next_fire}, {ms:last_fire}, " UNIQ_COLS
                                " FROM {p}schedule ORDER BY name",
        [SKED_SQL_SCHED_DISABLE] = "UPDATE {p}schedule SET enabled = 0, "
                                   "version = version + 1, updated_at = {now} "
                                   "WHERE name = ?1 AND version = ?2",

        /* ---- cluster locks (lock.c) ---- */
        [SKED_SQL_LOCK_TAKE] =
                "UPDATE {p}lock SET owner = ?2, locked_at = {now}, "
                "locked_until = {now+?3}, "
                "fencing_token = fencing_token + 1 WHERE name = ?1 AND "
                "(owner IS NULL OR locked_until < {now} OR owner = ?2)",
        [SKED_SQL_LOCK_TOKEN] =
                "SELECT fencing_token FROM {p}lock WHERE name = ?1 "
                "AND owner = ?2",
        [SKED_SQL_LOCK_PEEK] = "SELECT owner, {ms:locked_until} FROM {p}lock "
                               "WHERE name = ?1",
        [SKED_SQL_LOCK_INSERT] =
                "INSERT INTO {p}lock (name, owner, locked_at, "
                "locked_until, fencing_token) VALUES (?1, ?2, {now}, "
                "{now+?3}, 1)",
        [SKED_SQL_LOCK_EXTEND] =
                "UPDATE {p}lock SET locked_until = {now+?4} "
                "WHERE name = ?1 AND owner = ?2 AND fencing_token = ?3 "
                "AND locked_until >= {now}",
        [SKED_SQL_LOCK_HELD] =
                "SELECT {ms:locked_at}, {nowms} FROM {p}lock WHERE "
                "name = ?1 AND owner = ?2 AND fencing_token = ?3",
        [SKED_SQL_LOCK_HOLD] = "UPDATE {p}lock SET locked_until = {ts:?4} "
                               "WHERE name = ?1 AND owner = ?2 AND "
                               "fencing_token = ?3",
        [SKED_SQL_LOCK_FREE] = "UPDATE {p}lock SET owner = NULL, "
                               "locked_until = {now} WHERE name = ?1 AND "
                               "owner = ?2 AND fencing_token = ?3",
        [SKED_SQL_LOCK_GET] =
                "SELECT owner, {ms:locked_at}, {ms:locked_until}, "
                "fencing_token, {nowms} FROM {p}lock WHERE name = ?1",
        [SKED_SQL_LOCK_LIST] = "SELECT name, owner, {ms:locked_at}, "
                               "{ms:locked_until}, fencing_token, {nowms} "
                               "FROM {p}lock ORDER BY name",

        /* ---- what operators read and steer (gauges.c, nodes.c) ---- */
        [SKED_SQL_GAUGES] = GAUGES,
        [SKED_SQL_RUNS_WINDOW] = SKED__RUNS_WINDOW("/"),
        [SKED_SQL_DONE_WINDOW] = SKED__DONE_WINDOW("/"),
        [SKED_SQL_NODES_PRUNE] =
                "DELETE FROM {p}node WHERE heartbeat < {now+?1} "
                "AND NOT EXISTS (SELECT 1 FROM {p}task t WHERE "
                "t.node_id = {p}node.id AND t.status = 1)",
        [SKED_SQL_PRUNE_PICK] =
                "SELECT id FROM {p}task_done WHERE status = ?1 AND "
                "finished_at < {now+?2}" KEEP_PARENTS
                " ORDER BY finished_at{lim:?3}",
        /* after SKED_SQL_PRUNE_TASKS: the runs of the picked tasks that
         * are gone from both tables (one retried meanwhile keeps them) */
        [SKED_SQL_PRUNE_RUNS] =
                "DELETE FROM {p}run WHERE task_id IN ({ids}) AND NOT EXISTS "
                "(SELECT 1 FROM {p}task t WHERE t.id = {p}run.task_id) AND "
                "NOT EXISTS (SELECT 1 FROM {p}task_done d WHERE d.id = "
                "{p}run.task_id)",
        [SKED_SQL_PRUNE_TASKS] = "DELETE FROM {p}task_done WHERE id IN "
                                 "({ids}) AND status IN (2, 3, 5)" KEEP_PARENTS,
        [SKED_SQL_FIN_LOCK] = "SELECT id, attempts FROM {p}task WHERE id IN "
                              "({ids}) AND node_id = ?1 AND status = 1 "
                              "FOR UPDATE",
        [SKED_SQL_FIN_OK_IDS] =
                "UPDATE {p}task SET status = 2, lease_until = NULL, "
                "finished_at = {now}, updated_at = {now}, "
                "version = version + 1 WHERE id IN ({ids}) AND status = 1",
        [SKED_SQL_RUN_ROWS] =
                "INSERT INTO {p}run (task_id, attempt, node_id, started_at, "
                "finished_at, outcome, exit_code, error, output) SELECT "
                "v.c1, v.c2, ?1, {ts:v.c3}, {now}, v.c4, v.c5, v.c6, v.c7 "
                "FROM ({rows7}) v",
        /* "status + 0": found by primary key only. Offered an index on
         * status (MySQL's task_lease), InnoDB may scan it instead and
         * wait on rows another session holds, far from these */
        [SKED_SQL_DONE_COPY] =
                "INSERT INTO {p}task_done (" DONE_COLS ") SELECT " DONE_COLS
                " FROM {p}task WHERE id IN ({ids}) AND status + 0 IN (2, 3, "
                "5)",
        [SKED_SQL_DONE_COPY_RUN] =
                "INSERT INTO {p}task_done (" DONE_COLS ", outcome, exit_code, "
                "error, output) SELECT " DONE_T_COLS ", v.c8, v.c4, v.c5, "
                "v.c6, v.c7 FROM ({rows8}) v JOIN {p}task t ON t.id = v.c1 AND "
                "t.attempts = v.c2 WHERE t.status + 0 IN (2, 3)",
        [SKED_SQL_DONE_DROP] = "DELETE FROM {p}task WHERE id IN ({ids}) "
                               "AND status + 0 IN (2, 3, 5)",
        [SKED_SQL_DONE_DROP_RET] =
                "DELETE FROM {p}task WHERE id IN ({ids}) AND status + 0 IN "
                "(2, 3, 5) RETURNING id, status, dependents",
        [SKED_SQL_DONE_UNIQUE] =
                "SELECT id FROM {p}task_done WHERE unique_key = ?1",
        [SKED_SQL_DONE_FIRE] = "SELECT id FROM {p}task_done WHERE "
                               "schedule_name = ?1 AND fire_time = {ts:?2}",
        [SKED_SQL_LIVE_UNIQUE] = "SELECT id FROM {p}task WHERE " HELD,
        [SKED_SQL_ENQ_UNDO] =
                "DELETE FROM {p}task WHERE id = ?1 AND status = 0",
        [SKED_SQL_LIST_DONE_HEAD] =
                "SELECT " TASK_COLS " FROM {p}task_done WHERE 1 = 1",
        /* each table's newest rows by its primary key, then the newest of
         * both: the same cost as one table's list */
        [SKED_SQL_LIST_BOTH_HEAD] =
                "SELECT " TASK_COLS " FROM (SELECT * FROM (SELECT " RAW_COLS
                " FROM {p}task WHERE 1 = 1",
        [SKED_SQL_LIST_BOTH_MID] = " ORDER BY id DESC{lim:{arg}}) a UNION ALL "
                                   "SELECT * FROM (SELECT " RAW_COLS
                                   " FROM {p}task_done WHERE 1 = 1",
        [SKED_SQL_LIST_BOTH_TAIL] = " ORDER BY id DESC{lim:{arg}}) b) t "
                                    "ORDER BY id DESC{lim:{arg}}",
        [SKED_SQL_PICK_LIVE] = "SELECT id FROM {p}task WHERE status = ?1",
        [SKED_SQL_PICK_DONE] = "SELECT id FROM {p}task_done WHERE status = ?1",
        [SKED_SQL_COUNT_LIVE] =
                "SELECT COUNT(*) FROM {p}task WHERE status = ?1",
        [SKED_SQL_COUNT_DONE] =
                "SELECT COUNT(*) FROM {p}task_done WHERE status = ?1",
        [SKED_SQL_CANCEL_IDS] =
                "UPDATE {p}task SET status = 5, finished_at = {now}, "
                "lease_until = NULL, updated_at = {now}, version = version + "
                "1 WHERE status = ?1 AND id IN ({ids})",
        [SKED_SQL_RETRY_LOCK] = "UPDATE {p}task_done SET version = version + 1 "
                                "WHERE id IN ({ids}) AND status IN (3, 5)",
        [SKED_SQL_RETRY_RUNS] =
                "INSERT INTO {p}run (task_id, attempt, node_id, started_at, "
                "finished_at, outcome, exit_code, error, output) SELECT id, "
                "attempts, node_id, started_at, finished_at, outcome, "
                "exit_code, error, output FROM {p}task_done WHERE id IN "
                "({ids}) AND status IN (3, 5) AND outcome IS NOT NULL",
        [SKED_SQL_RETRY_BACK] = SKED__RETRY_BACK,
        [SKED_SQL_RETRY_PARENTS] =
                "SELECT DISTINCT e.parent_id FROM {p}task_dep e JOIN "
                "{p}task t ON t.id = e.parent_id WHERE e.child_id IN ({ids}) "
                "ORDER BY e.parent_id",
        [SKED_SQL_RETRY_OPEN] =
                "SELECT e.child_id, COUNT(*) FROM {p}task_dep e JOIN "
                "{p}task c ON c.id = e.child_id LEFT JOIN {p}task_done d ON "
                "d.id = e.parent_id WHERE e.child_id IN ({ids}) AND "
                "(EXISTS (SELECT 1 FROM {p}task l WHERE l.id = e.parent_id) "
                "OR (c.on_parent_failure = 0 AND d.status IN (3, 5))) "
                "GROUP BY e.child_id",
        [SKED_SQL_RETRY_BLOCK] =
                "UPDATE {p}task SET status = 6, open_parents = ?2 WHERE id = "
                "?1 AND status = 0",
        [SKED_SQL_RETRY_CASCADE] =
                "SELECT d.id FROM {p}task_dep e JOIN {p}task_done d ON d.id = "
                "e.child_id WHERE e.parent_id = ?1 AND d.status = 5 AND "
                "d.last_error IN (?2, ?3) ORDER BY d.id",
        [SKED_SQL_DEP_ENDED] = "SELECT id, status FROM {p}task WHERE id IN "
                               "({ids}) AND dependents <> 0 AND status IN "
                               "(2, 3, 5)",
        [SKED_SQL_DEP_KIDS] =
                "SELECT k.parent_id, k.child_id FROM {p}task_dep k JOIN "
                "{p}task c ON c.id = k.child_id WHERE k.parent_id IN ({ids}) "
                "AND c.status = 6 ORDER BY k.parent_id, k.child_id",
        [SKED_SQL_DEP_RELEASE_IDS] = DEP_RELEASE_IDS("{p}task", ""),
        [SKED_SQL_DEP_RELEASE_IDS_IGN] =
                DEP_RELEASE_IDS("{p}task", " AND on_parent_failure = 1"),
        [SKED_SQL_DEP_LOCK] = "SELECT id FROM {p}task WHERE id IN ({ids}) AND "
                              "status = 6 ORDER BY id FOR UPDATE",
        /* status before open_parents: MySQL assigns left to right, from
         * the values already assigned */
        [SKED_SQL_DEP_RELEASE] = DEP_RELEASE(""),
        [SKED_SQL_DEP_RELEASE_IGN] = DEP_RELEASE(" AND on_parent_failure = 1"),
        [SKED_SQL_DEP_CANCEL] =
                "UPDATE {p}task SET status = 5, finished_at = {now}, "
                "last_error = ?2, updated_at = {now}, version = version + 1 "
                "WHERE status = 6 AND on_parent_failure = 0 AND id IN "
                "(SELECT child_id FROM {p}task_dep WHERE parent_id = ?1)",
        [SKED_SQL_DEP_CANCELLED] =
                "SELECT id FROM {p}task WHERE status = 5 AND id IN (SELECT "
                "child_id FROM {p}task_dep WHERE parent_id = ?1)",
        [SKED_SQL_DEP_LIVE] = "UPDATE {p}task SET dependents = dependents + "
                              "?2 WHERE id = ?1",
        [SKED_SQL_DEP_DONE] = "UPDATE {p}task_done SET dependents = "
                              "dependents + ?2 WHERE id = ?1",
        [SKED_SQL_DEP_DONE_STATUS] =
                "SELECT status FROM {p}task_done WHERE id = ?1",
        [SKED_SQL_DEP_EDGE] = "INSERT INTO {p}task_dep (parent_id, child_id) "
                              "VALUES (?1, ?2)",
        /* open_parents -1: pending at once, and it had parents */
        [SKED_SQL_DEP_BLOCK] = "UPDATE {p}task SET status = ?2, open_parents "
                               "= CASE WHEN ?3 = 0 THEN -1 ELSE ?3 END, "
                               "on_parent_failure = ?4 WHERE id = ?1",
        [SKED_SQL_DEP_PRECANCEL] =
                "UPDATE {p}task SET status = 5, finished_at = {now}, "
                "last_error = ?2, updated_at = {now} WHERE id = ?1",
        [SKED_SQL_DEP_PARENTS] = "SELECT parent_id FROM {p}task_dep WHERE "
                                 "child_id = ?1 ORDER BY parent_id",
        [SKED_SQL_DEP_CHILDREN] = "SELECT child_id FROM {p}task_dep WHERE "
                                  "parent_id = ?1 ORDER BY child_id",
        /* each parent read by its primary key (scalar subqueries): a
         * join let planners hash the whole live or ended table */
        [SKED_SQL_DEP_RESULTS] =
                "SELECT e.child_id, e.parent_id, COALESCE((SELECT d.kind "
                "FROM {p}task_done d WHERE d.id = e.parent_id), (SELECT "
                "t.kind FROM {p}task t WHERE t.id = e.parent_id)), (SELECT "
                "d.result FROM {p}task_done d WHERE d.id = e.parent_id) "
                "FROM {p}task_dep e WHERE e.child_id IN ({ids}) ORDER BY "
                "e.child_id, e.parent_id",
        [SKED_SQL_DEP_RESULTS_SMALL] =
                "SELECT e.child_id, e.parent_id, COALESCE((SELECT d.kind "
                "FROM {p}task_done d WHERE d.id = e.parent_id), (SELECT "
                "t.kind FROM {p}task t WHERE t.id = e.parent_id)), (SELECT "
                "CASE WHEN {len:d.result} <= 1024 THEN d.result END FROM "
                "{p}task_done d WHERE d.id = e.parent_id), COALESCE((SELECT "
                "CASE WHEN {len:d.result} > 1024 THEN 1 ELSE 0 END FROM "
                "{p}task_done d WHERE d.id = e.parent_id), 0) FROM "
                "{p}task_dep e WHERE e.child_id IN ({ids}) ORDER BY "
                "e.child_id, e.parent_id",
        [SKED_SQL_PRUNE_DEPS_C] =
                "DELETE FROM {p}task_dep WHERE child_id IN ({ids}) AND NOT "
                "EXISTS (SELECT 1 FROM {p}task_done d WHERE d.id = "
                "{p}task_dep.child_id)",
        [SKED_SQL_PRUNE_DEPS_P] =
                "DELETE FROM {p}task_dep WHERE parent_id IN ({ids}) AND NOT "
                "EXISTS (SELECT 1 FROM {p}task_done d WHERE d.id = "
                "{p}task_dep.parent_id)",
        [SKED_SQL_RETRY_DROP] = "DELETE FROM {p}task_done WHERE id IN ({ids}) "
                                "AND status IN (3, 5)",
        /* SKED_SQL_FINISH_ARRAYS, SKED_SQL_ENQ_ARRAYS, SKED_SQL_ENQ_ROWS_*:
         * no generic text (dialect/postgresql.c, dialect/sqlserver.c);
         * nor SKED_SQL_BACKEND_ID, SKED_SQL_BLOCKERS*, SKED_SQL_APP_NAME,
         * SKED_SQL_GENERIC_PLANS:
         * every server's views are its own (SQLite has none) */

        /* ---- cluster-wide limits of a queue (limits.c) ---- */
        [SKED_SQL_LIM_QUEUES] =
                "SELECT queue, paused, CASE WHEN fair <> 0 AND concurrency IS "
                "NULL AND per_key IS NULL AND rate_n IS NULL THEN 1 ELSE 0 "
                "END FROM {p}queue_limit ORDER BY queue",
        /* the row every limited claim of the queue serialises on */
        [SKED_SQL_LIM_LOCK] = "SELECT " LIM_COLS " FROM {p}queue_limit "
                              "WHERE queue = ?1 FOR UPDATE",
        [SKED_SQL_LIM_RUNNING] = "SELECT concurrency_key, COUNT(*) FROM "
                                 "{p}task WHERE status = 1 AND queue = ?1 "
                                 "GROUP BY concurrency_key",
        [SKED_SQL_LIM_CAND] =
                "SELECT id, concurrency_key FROM {p}task WHERE "
                "queue = ?4 AND {kinds:?5} AND " DUE CLAIM_ORDER "{lim:?3}",
        [SKED_SQL_LIM_CAND_KEY] =
                "SELECT id, concurrency_key FROM {p}task WHERE queue = ?4 "
                "AND {kinds:?5} AND " DUE " AND " KEY_NOT_FULL CLAIM_ORDER
                "{lim:?3}",
        /* the start is the instant the window was judged at (?3, ms) */
        [SKED_SQL_LIM_CLAIM] =
                "UPDATE {p}task SET status = 1, node_id = ?1, "
                "lease_until = {now+?2}, started_at = {ts:?3}, "
                "attempts = attempts + 1, version = version + 1, "
                "updated_at = {now} WHERE id IN ({ids}) AND " DUE,
        [SKED_SQL_LIM_GET] = "SELECT " CLAIMED_COLS " FROM {p}task WHERE id IN "
                             "({ids}) AND node_id = ?1 AND status = 1",
        [SKED_SQL_LIM_RATE] =
                "UPDATE {p}queue_limit SET rate_log = ?2 WHERE queue = ?1",
        [SKED_SQL_LIM_INSERT] =
                "INSERT INTO {p}queue_limit (queue, concurrency, per_key, "
                "rate_n, rate_ms, rate_log, updated_at) VALUES (?1, ?2, ?3, "
                "?4, ?5, NULL, {now})",
        [SKED_SQL_LIM_UPDATE] =
                "UPDATE {p}queue_limit SET concurrency = ?2, per_key = ?3, "
                "rate_n = ?4, rate_ms = ?5, updated_at = {now} "
                "WHERE queue = ?1",
        [SKED_SQL_LIM_DELETE] = "DELETE FROM {p}queue_limit WHERE queue = ?1",
        [SKED_SQL_LIM_LIST] = "SELECT queue, " LIM_COLS " FROM {p}queue_limit "
                              "ORDER BY queue",
        [SKED_SQL_LIM_USE] = "SELECT queue, concurrency_key, COUNT(*) FROM "
                             "{p}task WHERE status = 1 GROUP BY queue, "
                             "concurrency_key",
        [SKED_SQL_LIM_PAUSE] = "UPDATE {p}queue_limit SET paused = ?2, "
                               "updated_at = {now} WHERE queue = ?1",
        [SKED_SQL_LIM_INSERT_PAUSED] =
                "INSERT INTO {p}queue_limit (queue, paused, updated_at) "
                "VALUES (?1, 1, {now})",
        [SKED_SQL_CLAIM_XQ] =
                "UPDATE {p}task SET " CLAIM_SET
                " WHERE id IN (SELECT id FROM {p}task WHERE {kinds:?5} AND " DUE
                        NOT_LIMITED CLAIM_ORDER
                " LIMIT ?3) RETURNING " CLAIMED_COLS,
        [SKED_SQL_CAND_XQ] =
                "SELECT id, version FROM {p}task WHERE {kinds:?5} AND " DUE
                        NOT_LIMITED CLAIM_ORDER "{lim:?3}",
        [SKED_SQL_LOCK_XQ] =
                "SELECT id FROM {p}task WHERE {kinds:?5} AND " DUE NOT_LIMITED
                        CLAIM_ORDER " LIMIT ?3 FOR UPDATE SKIP LOCKED",
        [SKED_SQL_UNIQUE_HELD] = "SELECT id FROM {p}task WHERE " HELD,
        /* SQLite 3.24+ and PostgreSQL: one statement decides; a row
         * whose period is over is taken over, a held one is left */
        [SKED_SQL_UNIQUE_FOR_PUT] =
                "INSERT INTO {p}unique_for (unique_key, task_id, held_until) "
                "VALUES (?1, ?2, {now+?3}) ON CONFLICT (unique_key) DO "
                "UPDATE SET task_id = excluded.task_id, held_until = "
                "excluded.held_until WHERE {p}unique_for.held_until <= {now}",
        [SKED_SQL_UNIQUE_FOR_GET] =
                "SELECT task_id FROM {p}unique_for WHERE unique_key = ?1",
        [SKED_SQL_UNIQUE_FOR_PRUNE] =
                "DELETE FROM {p}unique_for WHERE held_until <= {now}",
        [SKED_SQL_UNIQUE_REPLACE_IN] = REPLACE("{now+?3}"),
        [SKED_SQL_UNIQUE_REPLACE_AT] = REPLACE("{ts:?3}"),
        [SKED_SQL_PROGRESS_PUT] =
                "UPDATE {p}task SET progress = ?4, progress_at = {now} "
                "WHERE id = ?1 AND attempts = ?2 AND node_id = ?3 "
                "AND status = 1",
        [SKED_SQL_TASK_LIVE] = "SELECT node_id, {ms:started_at}, progress, "
                               "{ms:progress_at}, {nowms} FROM {p}task "
                               "WHERE id = ?1 AND status = 1",
        [SKED_SQL_LIM_FAIR] = "UPDATE {p}queue_limit SET fair = ?2, "
                              "updated_at = {now} WHERE queue = ?1",
        [SKED_SQL_LIM_INSERT_FAIR] =
                "INSERT INTO {p}queue_limit (queue, fair, updated_at) "
                "VALUES (?1, 1, {now})",
        /* one probe each of {p}task_fair (schema 13): the keys in order,
         * never a key's rows */
        [SKED_SQL_FAIR_KEY_FIRST] =
                "SELECT concurrency_key FROM {p}task WHERE queue = ?1 AND "
                "status IN (0, 4) AND concurrency_key IS NOT NULL "
                "ORDER BY concurrency_key{lim:1}",
        [SKED_SQL_FAIR_KEY_NEXT] =
                "SELECT concurrency_key FROM {p}task WHERE queue = ?1 AND "
                "status IN (0, 4) AND concurrency_key > ?2 "
                "ORDER BY concurrency_key{lim:1}",
        /* the first ?3 of one key, through the same index */
        [SKED_SQL_FAIR_CAND] =
                "SELECT id, concurrency_key, priority, {ms:run_at} FROM "
                "{p}task WHERE queue = ?4 AND concurrency_key = ?6 AND "
                "{kinds:?5} AND " DUE CLAIM_ORDER "{lim:?3}",
        [SKED_SQL_FAIR_CAND_NULL] =
                "SELECT id, concurrency_key, priority, {ms:run_at} FROM "
                "{p}task WHERE queue = ?4 AND concurrency_key IS NULL AND "
                "{kinds:?5} AND " DUE CLAIM_ORDER "{lim:?3}",
        [SKED_SQL_LIM_PEEK] = "SELECT " LIM_COLS " FROM {p}queue_limit "
                              "WHERE queue = ?1",
        /* SKED_SQL_FAIR_CAND_SKIP, _NULL_SKIP: no generic text (dialect/
         * postgresql.c, dialect/mysql.c), only where rows are skipped */
        [SKED_SQL_FAIR_WEIGHTS] =
                "SELECT queue, concurrency_key, weight FROM {p}queue_weight "
                "WHERE queue IN (SELECT queue FROM {p}queue_limit WHERE "
                "fair <> 0)",
        [SKED_SQL_WEIGHT_DEL] = "DELETE FROM {p}queue_weight WHERE queue = "
                                "?1 AND concurrency_key = ?2",
        [SKED_SQL_WEIGHT_PUT] = "INSERT INTO {p}queue_weight (queue, "
                                "concurrency_key, weight) VALUES (?1, ?2, "
                                "?3)",
        [SKED_SQL_WEIGHT_COUNT] = "SELECT COUNT(*) FROM {p}queue_weight "
                                  "WHERE queue = ?1",
        [SKED_SQL_WEIGHT_LIST] = "SELECT queue, concurrency_key, weight "
                                 "FROM {p}queue_weight ORDER BY queue, "
                                 "concurrency_key",
};

const char *
sked__sql_text(const sked_dialect *d, sked_sql id)
{
	if ((int)id < 0 || id >= SKED_SQL__COUNT)
		return NULL;
	return d->sql && d->sql[id] ? d->sql[id] : generic[id];
}

int
sked__sql_needed(const sked_dialect *d, sked_sql id)
{
	switch (id) {
	case SKED_SQL_FINISH_ARRAYS:
	case SKED_SQL_ENQ_ARRAYS:
		return (d->caps & SKED_CAP_ARRAYS) != 0;
	case SKED_SQL_ENQ_ROWS_IN:
	case SKED_SQL_ENQ_ROWS_AT:
		return (d->caps & SKED_CAP_INSERT_ROWS) != 0;
	case SKED_SQL_FINISH_CLAIM_ANY:
	case SKED_SQL_FINISH_CLAIM_Q:
		return (d->caps & SKED_CAP_FUSED) != 0;
	case SKED_SQL_FIN_LOCK:
		return (d->caps & SKED_CAP_BATCH_FINISH) != 0;
	case SKED_SQL_DONE_COPY_RET:
	case SKED_SQL_DONE_COPY_RUN_RET:
		return (d->caps & SKED_CAP_INSERT_RETURNING) != 0;
	case SKED_SQL_HOT_VACUUM:
		return (d->caps & SKED_CAP_VACUUM) != 0;
	case SKED_SQL_NODE_BEAT_RANK: /* the wake-ups' window */
		return d->notify != NULL;
	case SKED_SQL_BACKEND_ID:
	case SKED_SQL_BLOCKERS:
		return (d->caps & SKED_CAP_WAIT_HOLDER) != 0;
	case SKED_SQL_BLOCKERS_PS:
		/* MySQL 8's form: the mysql dialect serves both products */
		return (d->caps & SKED_CAP_WAIT_HOLDER) && d->sql &&
		       d->sql[SKED_SQL_BLOCKERS_PS];
	case SKED_SQL_APP_NAME:
		return (d->caps & SKED_CAP_APP_NAME) != 0;
	case SKED_SQL_GENERIC_PLANS:
		return (d->caps & SKED_CAP_GENERIC_PLANS) != 0;
	case SKED_SQL_CLAIM_ANY:
	case SKED_SQL_CLAIM_Q:
	case SKED_SQL_CLAIM_XQ:
		return d->claim_one_statement;
	case SKED_SQL_FAIR_CAND_SKIP:
	case SKED_SQL_FAIR_CAND_NULL_SKIP:
		/* the fair claim without the limit row's lock: where rows
		 * can be skipped and a limit is said " LIMIT n" */
		return (d->caps & SKED_CAP_SKIP_LOCKED) && !d->limit;
	case SKED_SQL_LOCK_ANY:
	case SKED_SQL_LOCK_Q:
	case SKED_SQL_LOCK_XQ:
	case SKED_SQL_IDS_CLAIM:
	case SKED_SQL_IDS_GET:
		/* skip-locked in three steps (claim/threestep.c) */
		return (d->caps & SKED_CAP_SKIP_LOCKED) &&
		       !d->claim_one_statement;
	default:
		return 1;
	}
}

const sked_dialect *
sked__dialect_for(int product)
{
	switch (product) {
	case SKED_PROD_SQLITE:
		return &sked__dialect_sqlite;
#ifdef SKED_HAVE_DIALECT_PG
	case SKED_PROD_POSTGRESQL:
		return &sked__dialect_postgresql;
#endif
#ifdef SKED_HAVE_DIALECT_MYSQL
	case SKED_PROD_MYSQL:
	case SKED_PROD_MARIADB:
		return &sked__dialect_mysql;
#endif
#ifdef SKED_HAVE_DIALECT_MSSQL
	case SKED_PROD_SQLSERVER:
		return &sked__dialect_sqlserver;
#endif
#ifdef SKED_HAVE_DIALECT_ORACLE
	case SKED_PROD_ORACLE:
		return &sked__dialect_oracle;
#endif
	default:
		return NULL;
	}
}

const sked_dialect *
sked__dialect_for_version(int product, int major, int minor)
{
#ifdef SKED_HAVE_DIALECT_MYSQL
	/* MariaDB's INSERT … RETURNING (10.5); a version not understood
	 * (0) keeps the dialect MySQL shares */
	if (product == SKED_PROD_MARIADB &&
	    (major > 10 || (major == 10 && minor >= 5)))
		return &sked__dialect_mariadb;
#else
	(void)major;
	(void)minor;
#endif
	return sked__dialect_for(product);
}
