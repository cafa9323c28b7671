/*
 * dialect.h — what to say to each database product: SQL text as data.
 *
 * Folder src/dialect/ (floor 1, docs/design.md): what a database product
 * is and what to say to it: detect.c (product, version, strategy),
 * dialect.c (the SQL registry and its renderer), a file per product.
 * Data and pure functions; calls only util/.
 *
 * Layer: the dialect seam, beside the driver seam and below the model. A
 * dialect is a table of SQL texts plus a few expressions (the database
 * clock, time arithmetic) and capability flags. Dialect files are data:
 * they call nothing of sked's (not the handle core, not the model); the
 * model and the claim strategies call down into this layer.
 *
 * The registry's rules:
 *
 *  1. Every statement sked runs is named here, in enum sked_sql, and has
 *     its text in dialect.c (generic) or in a dialect file (override). No
 *     statement text lives in the model: sched.c, lock.c, gauges.c, queue.c,
 *     outcome.c, lease.c and the strategies run texts by id (sked__q) or
 *     assemble one from registry fragments (sked__sql_fill).
 *  2. The generic text is the SQL SQLite, PostgreSQL and MySQL share; a
 *     dialect overrides only what its product says differently. A
 *     statement only some products can say (PostgreSQL's unnest arrays,
 *     SQL Server's multi-row OUTPUT insert) has no generic text; the
 *     capability flag that makes the model use it (SKED_CAP_*) is the
 *     promise that the dialect gives it (sked__sql_needed).
 *  3. Texts are tables indexed by designated initializers; the statement
 *     id is also the driver's prepared-statement cache slot, so nothing
 *     is numbered by hand (a _Static_assert keeps the ids within the
 *     drivers' cache).
 *  4. The renderer knows every {token}: it refuses an unknown one (or an
 *     unclosed '{'), never passing it to the server. tests/unit/
 *     test_dialect.c renders every statement of every dialect.
 *  5. Fast paths are model code chosen by capability flags, never hooks
 *     in a dialect.
 *
 * Texts are templates, rendered once per handle by sked__dialect_render:
 *
 *   {p}        the table prefix (validated: [a-z_][a-z0-9_]{0,30})
 *   {now}      the database clock, as a timestamp column value
 *   {nowms}    the database clock, as int64 ms since the epoch
 *   {now+X}    the clock plus X milliseconds (X is a parameter marker)
 *              (a dialect's format may name its argument any number of
 *              times)
 *   {ts:X}     X (a parameter marker holding epoch ms) as a timestamp
 *   {ms:C}     column C read back as epoch ms (NULL stays NULL)
 *   {ret}      " RETURNING id" where the dialect has it, else ""
 *   {lim:X}    a row limit of X after ORDER BY (" LIMIT X" unless the
 *              dialect says otherwise)
 *   {kinds:X}  a condition: X is NULL, or the list X (",a,b,") names the
 *              row's kind (claims ask only for kinds the worker runs)
 *
 * Four tokens survive rendering and are filled per call by
 * sked__sql_fill, because they depend on how many values a call binds:
 *
 *   {arg}      the marker of the next parameter (in filter fragments)
 *   {ids}      n markers "?k,?k+1,…" (a claim's locked ids)
 *   {rows}     n rows "(?k, 0), (?k+1, 1), …" (a multi-row insert)
 *   {rows7}    n rows of seven values as a derived table: "SELECT ?k AS
 *              c1, …, ?k+6 AS c7 UNION ALL SELECT ?k+7, …" (a batch of
 *              run rows where there are no array parameters)
 *   {rows8}    the same with eight values (c8: an ended task's result)
 *   {rows7t}   {rows7} and {rows8} with each value cast to its column's
 *   {rows8t}   type and FROM DUAL after each row (Oracle)
 *
 * Parameters are written '?N' (1-based, SQLite's own form); drivers whose
 * server wants something else rewrite the markers (db.h).
 */
#ifndef SKED_DIALECT_H
#define SKED_DIALECT_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* A versioned schema step: sql/<dialect>/NNN_*.sql, embedded at build
 * time (cmake/embed_sql.cmake); model/schema.c applies them. */
typedef struct sked_schema_step {
	int version;     /* 0 ends the list */
	const char *sql; /* template text of the whole step */
} sked_schema_step;

extern const struct sked_schema_step sked__schema_sqlite[];
extern const struct sked_schema_step sked__schema_postgresql[];
extern const struct sked_schema_step sked__schema_mysql[];
extern const struct sked_schema_step sked__schema_sqlserver[];
extern const struct sked_schema_step sked__schema_oracle[];

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
	/* where the database pushes wake-ups (PostgreSQL): the beat, and
	 * the node's rank among the live nodes that serve what it serves,
	 * and their number (util/wake.h); NULL elsewhere */
	SKED_SQL_NODE_BEAT_RANK,
	/* ?1 node, ?2 lease ms: extend the node's running leases; may
	 * answer one row, the number of its running rows it skipped because
	 * another transaction held them (PostgreSQL), to be renewed again */
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
	SKED_SQL_OPT_CLAIM,   /* node ?1, lease ?2, id ?3, version ?4 */
	SKED_SQL_CLAIMED_GET, /* id ?1, node ?2 */
	SKED_SQL_NODE_EXPIRE, /* node ?1: end a previous incarnation's leases */
	/* the skip-locked three steps for a whole batch: {ids} stands for the
	 * id markers ?3, ?4, … and is filled per call (node ?1, lease ?2) */
	SKED_SQL_IDS_CLAIM,
	SKED_SQL_IDS_GET,
	/* sked_task_list: the head, then filter fragments (each binds the
	 * next parameter, {arg}), then the tail with the limit */
	SKED_SQL_LIST_HEAD,
	SKED_SQL_AND_STATUS,
	SKED_SQL_AND_QUEUE,
	SKED_SQL_AND_KIND,
	SKED_SQL_AND_BEFORE_ID,
	SKED_SQL_AND_NODE,
	SKED_SQL_AND_CREATED_FROM,
	SKED_SQL_AND_CREATED_BEFORE,
	SKED_SQL_LIST_TAIL,
	/* bulk retry by filter: status ?1, then the fragments */
	SKED_SQL_RETRY_WHERE,
	/* schedules (sched.c) */
	SKED_SQL_SCHED_EARLIEST,
	SKED_SQL_SCHED_DUE,
	SKED_SQL_SCHED_CLAIM,
	SKED_SQL_SCHED_LAST_FIRE,
	SKED_SQL_SCHED_TASK,
	SKED_SQL_SCHED_TASK_UNIQUE,
	SKED_SQL_SCHED_ACTIVE,
	/* the live task of schedule ?1's fire ?2 (sked_schedule_run) */
	SKED_SQL_SCHED_FIRE_ID,
	/* the latest fire time, in ms, of schedule ?1's live or ended tasks
	 * at or after ?2 (0 when none): where a manual run goes on */
	SKED_SQL_SCHED_FIRE_MAX,
	SKED_SQL_SCHED_FIRE_MAX_DONE,
	SKED_SQL_SCHED_DEF,
	SKED_SQL_SCHED_INSERT,
	SKED_SQL_SCHED_UPDATE_KEEP,
	SKED_SQL_SCHED_UPDATE_NEXT,
	SKED_SQL_SCHED_DELETE,
	SKED_SQL_SCHED_PAUSE,
	SKED_SQL_SCHED_RESUME,
	SKED_SQL_SCHED_LIST,
	SKED_SQL_SCHED_DISABLE,
	/* cluster locks (lock.c) */
	SKED_SQL_LOCK_TAKE,
	SKED_SQL_LOCK_TOKEN,
	SKED_SQL_LOCK_PEEK,
	SKED_SQL_LOCK_INSERT,
	SKED_SQL_LOCK_EXTEND,
	SKED_SQL_LOCK_HELD,
	SKED_SQL_LOCK_HOLD,
	SKED_SQL_LOCK_FREE,
	SKED_SQL_LOCK_GET,
	SKED_SQL_LOCK_LIST,
	/* what operators read (gauges.c) */
	SKED_SQL_GAUGES,
	/* runs and the attempts ended rows record, counted per minute
	 * and outcome (gauges.c, sked_throughput) */
	SKED_SQL_RUNS_WINDOW,
	SKED_SQL_DONE_WINDOW,
	SKED_SQL_NODES_PRUNE,
	/* retention (retention.c): ended tasks of status ?1 finished before now +
	 * ?2 ms (negative), ?3 at a time; then their runs and themselves */
	SKED_SQL_PRUNE_PICK,
	SKED_SQL_PRUNE_RUNS,
	SKED_SQL_PRUNE_TASKS,
	/* ended tasks leave the hot table (schema 4): the rows of {ids}
	 * (from ?1) that have ended are copied to {p}task_done, then
	 * deleted from {p}task, in the transaction that ended them */
	SKED_SQL_DONE_COPY,
	SKED_SQL_DONE_DROP,
	/* the same, answering (id, status, dependents) of the rows it
	 * removes, where the product can (SKED_CAP_RETURNING): a parent's
	 * end is then found without a read of its own (done.c) */
	SKED_SQL_DONE_DROP_RET,
	/* the same copy for tasks that a finish ended (schema 5): {rows8}
	 * from ?1, (id, attempt, started ms, outcome, exit code, error,
	 * output, result) each, so that the ended row is the record of the attempt
	 * that ended it and no run row is written for it */
	SKED_SQL_DONE_COPY_RUN,
	/* reading and steering across the move (queue.c, bulk.c, sched.c):
	 * an ended task's unique key ?1, or schedule fire (?1, ?2), in
	 * {p}task_done; a live task's unique key ?1 */
	SKED_SQL_DONE_UNIQUE,
	SKED_SQL_DONE_FIRE,
	SKED_SQL_LIVE_UNIQUE,
	/* the task ?1 this transaction has just inserted, taken out again
	 * where the transaction is the application's (a borrowed handle) */
	SKED_SQL_ENQ_UNDO,
	/* a list of ended tasks (the status filter says so), or of both
	 * tables: head, the filters, middle, the same filters, tail */
	SKED_SQL_LIST_DONE_HEAD,
	SKED_SQL_LIST_BOTH_HEAD,
	SKED_SQL_LIST_BOTH_MID,
	SKED_SQL_LIST_BOTH_TAIL,
	/* bulk steering in batches: ids of status ?1 (then the filter
	 * fragments and SKED_SQL_LIST_TAIL) in {p}task or {p}task_done */
	SKED_SQL_PICK_LIVE,
	SKED_SQL_PICK_DONE,
	/* how many tasks of status ?1 (then the filter fragments) in
	 * {p}task or {p}task_done (sked_task_count) */
	SKED_SQL_COUNT_LIVE,
	SKED_SQL_COUNT_DONE,
	SKED_SQL_CANCEL_IDS, /* status ?1, {ids} from ?2 */
	/* retry of ended tasks {ids} (from ?1): lock their {p}task_done
	 * rows, copy them back into {p}task as pending (same ids), drop them */
	SKED_SQL_RETRY_LOCK,
	/* the attempt an ended row records becomes a run row before the
	 * row goes back (schema 5) */
	SKED_SQL_RETRY_RUNS,
	SKED_SQL_RETRY_BACK,
	SKED_SQL_RETRY_DROP,
	/* a retried task waits for its parents again (queue.c): the live
	 * parents of the retried {ids}, locked one by one in id order
	 * through SKED_SQL_DEP_LIVE; then, once they are back, each retried
	 * child's open parents (child id, count: a live parent, or under
	 * "cancel" one that ended dead or cancelled) and the child ?1 set
	 * blocked with ?2 open parents; the cancelled children of ?1 that
	 * its end cancelled (error ?2 or ?3), for retry with dependents */
	SKED_SQL_RETRY_PARENTS,
	SKED_SQL_RETRY_OPEN,
	SKED_SQL_RETRY_BLOCK,
	SKED_SQL_RETRY_CASCADE,
	/* dependencies (model/deps.c): the ended parents among {ids};
	 * a parent ?1's blocked children released (all, or those that
	 * ignore a failed parent), cancelled (error ?2) and listed; at
	 * enqueue, ?2 more dependents on a live or ended parent ?1, its
	 * ended status, an edge (?1 parent, ?2 child), a child ?1 set to
	 * status ?2 with ?3 open parents and policy ?4, or cancelled at
	 * once (error ?2); a task's parents and children (?1) for show;
	 * prune keeps a parent whose children live, and drops the edges
	 * of the tasks {ids} it removes (as child, as parent) */
	SKED_SQL_DEP_ENDED,
	/* the blocked children of the ended parents {ids} (a plain read),
	 * then those children {ids} locked in ascending id order: every
	 * ending transaction takes its children's row locks in one global
	 * order, so two of them never wait on each other (done.c) */
	SKED_SQL_DEP_KIDS,
	SKED_SQL_DEP_LOCK,
	/* SKED_SQL_DEP_RELEASE(_IGN) over the parent's children {ids}, read
	 * by SKED_SQL_DEP_KIDS: where an UPDATE with a subquery would scan
	 * and lock rows that are not its children (MySQL) */
	SKED_SQL_DEP_RELEASE_IDS,
	SKED_SQL_DEP_RELEASE_IDS_IGN,
	SKED_SQL_DEP_RELEASE,
	SKED_SQL_DEP_RELEASE_IGN,
	SKED_SQL_DEP_CANCEL,
	SKED_SQL_DEP_CANCELLED,
	SKED_SQL_DEP_LIVE,
	SKED_SQL_DEP_DONE,
	SKED_SQL_DEP_DONE_STATUS,
	SKED_SQL_DEP_EDGE,
	SKED_SQL_DEP_BLOCK,
	SKED_SQL_DEP_PRECANCEL,
	SKED_SQL_DEP_PARENTS,
	SKED_SQL_DEP_CHILDREN,
	/* the parents of the claimed children {ids} (from ?1): (child id,
	 * parent id, parent kind, parent result) by child then parent;
	 * only for tasks that had parents (worker/parents.c) */
	SKED_SQL_DEP_RESULTS,
	/* the same for several children, with the results of at most 1024
	 * characters (4 KiB of UTF-8); a 1 in the fifth column marks a
	 * longer one, left out, to be read alone (worker/parents.c) */
	SKED_SQL_DEP_RESULTS_SMALL,
	SKED_SQL_PRUNE_DEPS_C,
	SKED_SQL_PRUNE_DEPS_P,
	/* SKED_CAP_ARRAYS (no generic text): n outcomes or n tasks in one
	 * statement over unnested array parameters (outcome.c, enqueue.c) */
	SKED_SQL_FINISH_ARRAYS,
	SKED_SQL_ENQ_ARRAYS,
	/* SKED_CAP_FUSED (no generic text): a busy worker's steady state in
	 * one round trip: SKED_SQL_FINISH_ARRAYS's ?1-?10, then lease ms
	 * ?11, limit ?12, kinds ?13, queue ?14 (the _Q form). Rows: the
	 * claimed tasks as CLAIMED_COLS with tag 1 in an eighth column, and
	 * per outcome (position, applied, …, tag 0) (outcome.c) */
	SKED_SQL_FINISH_CLAIM_ANY,
	SKED_SQL_FINISH_CLAIM_Q,
	/* SKED_CAP_BATCH_FINISH: a batch of successes in a fixed number of
	 * statements where there are no arrays (outcome.c): lock the rows of
	 * {ids} (from ?2) node ?1 still runs, answering (id, attempts);
	 * mark the rows of {ids} (from ?1) succeeded; insert one run row per
	 * {rows7} (from ?2: task id, attempt, started ms, outcome, exit
	 * code, error, output), node ?1 */
	/* SKED_CAP_VACUUM (no generic text): vacuum the hot table, skipping
	 * it when another vacuum holds it (worker/heartbeat.c) */
	SKED_SQL_HOT_VACUUM,
	SKED_SQL_FIN_LOCK,
	SKED_SQL_FIN_OK_IDS,
	SKED_SQL_RUN_ROWS,
	/* SKED_CAP_INSERT_ROWS (no generic text): n tasks in one INSERT …
	 * OUTPUT over {rows} (enqueue.c); run-in-ms and run-at forms */
	SKED_SQL_ENQ_ROWS_IN,
	SKED_SQL_ENQ_ROWS_AT,
	/* SKED_CAP_WAIT_HOLDER (no generic text): the lock-wait watchdog
	 * (worker/waits.c). BACKEND_ID: this connection's id on the server,
	 * one int column. BLOCKERS: who holds what the connection ?1 waits
	 * for, a row per holder: its id, the program's name, the client's
	 * address, its state, its user (text, '' when unknown).
	 * BLOCKERS_PS is the same on MySQL 8, which moved lock waits to the
	 * performance schema (BLOCKERS there reads MariaDB's
	 * information_schema) */
	SKED_SQL_BACKEND_ID,
	SKED_SQL_BLOCKERS,
	SKED_SQL_BLOCKERS_PS,
	/* SKED_CAP_APP_NAME (no generic text): name this session ?1 in the
	 * server's own views (PostgreSQL's application_name) */
	SKED_SQL_APP_NAME,
	/* SKED_CAP_GENERIC_PLANS (no generic text): this session plans each
	 * prepared statement once, not on every execution (PostgreSQL's
	 * plan_cache_mode, from version 12), and compiles none (jit off,
	 * from 11) */
	SKED_SQL_GENERIC_PLANS,
	/* cluster-wide limits of a queue (limits.c, limited.c,
	 * docs/limits.md) */
	/* the limited queues' names, paused, and fair without limits */
	SKED_SQL_LIM_QUEUES,
	/* a limited claim, in one transaction: lock the queue's limit row
	 * (queue ?1), count its running tasks by concurrency key (queue ?1),
	 * read candidates (claim params: node ?1, lease ?2, limit ?3, queue
	 * ?4, kinds ?5; the _KEY form skips keys with ?6 or more running),
	 * claim the chosen {ids} (from ?4; node ?1, lease ?2, start ms ?3)
	 * if still due, read them back ({ids} from ?3),
	 * write the rate window (queue ?1, log ?2) */
	SKED_SQL_LIM_LOCK,
	SKED_SQL_LIM_RUNNING,
	SKED_SQL_LIM_CAND,
	SKED_SQL_LIM_CAND_KEY,
	SKED_SQL_LIM_CLAIM,
	SKED_SQL_LIM_GET,
	SKED_SQL_LIM_RATE,
	/* sked_queue_set: queue ?1, concurrency ?2, per key ?3, rate ?4 per
	 * ?5 ms (NULL: off); sked_queue_list: the rows, and the running
	 * tasks by queue and key */
	SKED_SQL_LIM_INSERT,
	SKED_SQL_LIM_UPDATE,
	SKED_SQL_LIM_DELETE,
	SKED_SQL_LIM_LIST,
	SKED_SQL_LIM_USE,
	/* sked_queue_pause: queue ?1's paused flag to ?2 (its row exists),
	 * or a row for it, paused, with no limit */
	SKED_SQL_LIM_PAUSE,
	SKED_SQL_LIM_INSERT_PAUSED,
	/* a claim of any queue but the limited ones (a worker serving every
	 * queue while some are limited): the _ANY forms plus "queue NOT IN
	 * the limit table", read at claim time */
	SKED_SQL_CLAIM_XQ,
	SKED_SQL_CAND_XQ,
	SKED_SQL_LOCK_XQ,
	/* unique scopes (enqueue.c, schema 10): the task ?1 that holds key
	 * ?1 now by its scope (live, or not yet started); a period's key row
	 * ?1 upserted for task ?2 until now + ?3 ms, taken over only when
	 * its period is over, and read back; the key rows whose period is
	 * over, removed (retention); the waiting holder ?1 given payload ?2
	 * and run-at now + ?3 ms (_IN) or at ?3 ms (_AT) */
	SKED_SQL_UNIQUE_HELD,
	SKED_SQL_UNIQUE_FOR_PUT,
	SKED_SQL_UNIQUE_FOR_GET,
	SKED_SQL_UNIQUE_FOR_PRUNE,
	SKED_SQL_UNIQUE_REPLACE_IN,
	SKED_SQL_UNIQUE_REPLACE_AT,
	/* progress (schema 12, worker/progress.c, model/live.c): the
	 * report ?4 of task ?1's attempt ?2 run by node ?3, stored with the
	 * lease renewal; a running task's node, start, report, its time
	 * and the database's now (id ?1) */
	SKED_SQL_PROGRESS_PUT,
	SKED_SQL_TASK_LIVE,
	/* fair queues (limited.c, schema 13, docs/limits.md): queue ?1's
	 * fair flag to ?2 (its row exists), or a row for it, fair, with no
	 * limit; in a fair claim, the first key (in key order) with waiting
	 * tasks in queue ?1, or the first after ?2; the due candidates of
	 * key ?6 (or of no key) in claim order, with their priority and
	 * run_at in ms (claim params: limit ?3, queue ?4, kinds ?5) */
	SKED_SQL_LIM_FAIR,
	SKED_SQL_LIM_INSERT_FAIR,
	SKED_SQL_FAIR_KEY_FIRST,
	SKED_SQL_FAIR_KEY_NEXT,
	SKED_SQL_FAIR_CAND,
	SKED_SQL_FAIR_CAND_NULL,
	/* a fair queue without limits, claimed without its limit row's
	 * lock where the strategy is skip-locked and the product says LIMIT
	 * (PostgreSQL, MySQL, MariaDB): the row read without a lock, and the
	 * candidates locked as they are read, skipping rows another claim
	 * holds */
	SKED_SQL_LIM_PEEK,
	SKED_SQL_FAIR_CAND_SKIP,
	SKED_SQL_FAIR_CAND_NULL_SKIP,
	/* a fair queue's key weights (limits.c, schema 15): every fair
	 * queue's (queue, key, weight), for the handle's list; queue ?1's
	 * key ?2 removed, or given weight ?3; how many keys queue ?1 weighs;
	 * all rows by queue and key */
	SKED_SQL_FAIR_WEIGHTS,
	SKED_SQL_WEIGHT_DEL,
	SKED_SQL_WEIGHT_PUT,
	SKED_SQL_WEIGHT_COUNT,
	SKED_SQL_WEIGHT_LIST,
	/* SKED_CAP_INSERT_RETURNING (no generic text): SKED_SQL_DONE_COPY
	 * and SKED_SQL_DONE_COPY_RUN answering (id, status, dependents) of
	 * the rows they insert: the ended parents among them are then known
	 * without a read of their own (done.c, sked__drop_copied) */
	SKED_SQL_DONE_COPY_RET,
	SKED_SQL_DONE_COPY_RUN_RET,
	SKED_SQL__COUNT
} sked_sql;

/* One chunk of the runs newest first (?1: ids below it, ?2: how many),
 * counted per minute of finished_at and outcome, with the chunk's least
 * id and newest finish (gauges.c, sked_throughput). DIV is integer
 * division, which is '/' on integers but in MySQL. */
#define SKED__RUNS_WINDOW(DIV)                                                 \
	"SELECT f " DIV " 60000, o, COUNT(*), MIN(id), MAX(f) FROM (SELECT "   \
	"id, {ms:finished_at} AS f, outcome AS o FROM {p}run WHERE id < ?1 "   \
	"ORDER BY id DESC{lim:?2}) c GROUP BY f " DIV " 60000, o"
/* The attempts that ended tasks, recorded on their ended rows (schema
 * 5), finished since ?1 (epoch ms), counted per minute and outcome: two
 * ranges of {p}task_done's (status, finished_at) index */
#define SKED__DONE_WINDOW(DIV)                                                 \
	"SELECT f " DIV " 60000, o, COUNT(*) FROM (SELECT {ms:finished_at} "   \
	"AS f, outcome AS o FROM {p}task_done WHERE status IN (2, 3) AND "     \
	"finished_at >= {ts:?1} AND outcome IS NOT NULL) d GROUP BY f " DIV    \
	" 60000, o"

/* SKED_SQL_RETRY_BACK's generic text, which SQL Server's wraps in SET
 * IDENTITY_INSERT (an explicit id into an identity column): the ended
 * tasks {ids} go back into {p}task as pending, due now, with the same id
 * and one more attempt allowed when they have used theirs */
/* every column a task keeps when it ends and moves to {p}task_done (the
 * move's statements, generic and MySQL's) */
#define SKED__DONE_COLS                                                        \
	"id, queue, kind, payload, status, priority, run_at, attempts, "       \
	"max_attempts, node_id, lease_until, started_at, version, "            \
	"unique_key, schedule_name, fire_time, last_error, created_at, "       \
	"updated_at, finished_at, concurrency_key, dependents, "               \
	"on_parent_failure, traceparent, result"

/* DONE_COLS but the result read from task t, with the attempt's start
 * from v (the {rows8} of SKED_SQL_DONE_COPY_RUN, whose c8 is the
 * result) */
#define SKED__DONE_T_COLS                                                      \
	"t.id, t.queue, t.kind, t.payload, t.status, t.priority, t.run_at, "   \
	"t.attempts, t.max_attempts, t.node_id, t.lease_until, {ts:v.c3}, "    \
	"t.version, t.unique_key, t.schedule_name, t.fire_time, "              \
	"t.last_error, t.created_at, t.updated_at, t.finished_at, "            \
	"t.concurrency_key, t.dependents, t.on_parent_failure, "               \
	"t.traceparent"

#define SKED__RETRY_BACK                                                       \
	"INSERT INTO {p}task (id, queue, kind, payload, status, priority, "    \
	"run_at, attempts, max_attempts, node_id, lease_until, started_at, "   \
	"version, unique_key, schedule_name, fire_time, last_error, "          \
	"created_at, updated_at, finished_at, concurrency_key, dependents, "   \
	"on_parent_failure, open_parents, traceparent) SELECT id, "            \
	"queue, kind, payload, 0, priority, {now}, attempts, CASE WHEN "       \
	"attempts >= max_attempts THEN attempts + 1 ELSE max_attempts END, "   \
	"node_id, NULL, started_at, version + 1, unique_key, schedule_name, "  \
	"fire_time, last_error, created_at, {now}, NULL, concurrency_key, "    \
	"dependents, on_parent_failure, CASE WHEN EXISTS (SELECT 1 FROM "      \
	"{p}task_dep e WHERE e.child_id = {p}task_done.id) THEN -1 ELSE 0 "    \
	"END, traceparent "                                                    \
	"FROM {p}task_done "                                                   \
	"WHERE id IN ({ids}) AND status IN (3, 5)"

/* capability flags */
#define SKED_CAP_RETURNING   0x01 /* UPDATE … RETURNING */
#define SKED_CAP_SKIP_LOCKED 0x02 /* FOR UPDATE SKIP LOCKED */
#define SKED_CAP_READPAST    0x04 /* WITH (UPDLOCK, READPAST, ROWLOCK) */
#define SKED_CAP_NOTIFY      0x08 /* LISTEN/NOTIFY */
/* array parameters ('{…}' literals, unnest): finishing a batch and
 * enqueueing many in one round trip each (PostgreSQL) */
#define SKED_CAP_ARRAYS 0x10
/* INSERT … OUTPUT inserted.id SELECT … FROM (VALUES {rows}) ORDER BY:
 * enqueueing many in chunks under max_params (SQL Server) */
#define SKED_CAP_INSERT_ROWS 0x20
/* the server names a connection's id and who blocks it:
 * SKED_SQL_BACKEND_ID, SKED_SQL_BLOCKERS (and BLOCKERS_PS on mysql) */
#define SKED_CAP_WAIT_HOLDER 0x40
/* SKED_SQL_APP_NAME: a session can be named after it connected */
#define SKED_CAP_APP_NAME 0x80
/* SKED_SQL_FINISH_CLAIM_*: record a batch of outcomes and claim the next
 * batch in one statement (PostgreSQL's data-modifying CTEs) */
#define SKED_CAP_FUSED 0x100
/* SKED_SQL_FIN_LOCK (SELECT … FOR UPDATE), SKED_SQL_FIN_OK_IDS and
 * SKED_SQL_RUN_ROWS: successes finished a batch at a time (MySQL) */
#define SKED_CAP_BATCH_FINISH 0x200
/* SKED_SQL_HOT_VACUUM: the worker vacuums the hot table as it churns */
#define SKED_CAP_VACUUM 0x400
/* SKED_SQL_GENERIC_PLANS: a worker's session keeps one plan per prepared
 * statement (and compiles none: no JIT) */
#define SKED_CAP_GENERIC_PLANS 0x800
/* the skip-locked claim in three steps reads its rows while it locks
 * (MySQL, MariaDB): SKED_SQL_LOCK_* answer CLAIMED_COLS as the claim
 * leaves them (attempts + 1, started now), SKED_SQL_IDS_CLAIM binds that
 * start as ?3 and the ids from ?4, and no statement reads them back */
#define SKED_CAP_LOCK_READS 0x1000
/* INSERT … SELECT … RETURNING where UPDATE … RETURNING is missing
 * (MariaDB 10.5): SKED_SQL_DONE_COPY_RET, SKED_SQL_DONE_COPY_RUN_RET */
#define SKED_CAP_INSERT_RETURNING 0x2000

typedef struct sked_dialect {
	const char *name;  /* "sqlite", "postgresql", "mysql", … */
	const char *now;   /* {now} */
	const char *nowms; /* {nowms} */
	/* formats: "{}" stands for the argument (once or twice) */
	const char *now_plus; /* {now+X} */
	const char *ts;       /* {ts:X} */
	const char *ms;       /* {ms:C} */
	const char *len;      /* {len:C}, characters (or bytes) of a text;
	                         NULL: "LENGTH({})" */
	const char *ret;      /* {ret} */
	const char *limit;    /* {lim:X}; NULL: " LIMIT {}" */
	/* {kinds:X}: true when X is NULL or names the row's kind; X is a
	 * list like ",email,resize," (names never hold a comma) */
	const char *kinds_in;
	/* the id the last INSERT on this session produced, for a dialect
	 * whose inserts return no row ({ret} empty) and a driver that does
	 * not know it (ODBC); NULL: not needed */
	const char *last_id;
	const char *begin;       /* a transaction that will write */
	const char *begin_claim; /* a claim's transaction (SQLite: IMMEDIATE) */
	const char *commit;
	const char *rollback;
	/* serialize schema migration across processes; may be NULL
	 * (then begin_claim must serialize, as SQLite's IMMEDIATE does) */
	const char *migrate_lock;
	const char *migrate_unlock;
	int ddl_in_tx; /* DDL is transactional */
	/* the native error of creating an index that exists (MySQL 1061),
	 * which a step run again may meet where DDL is not transactional;
	 * 0: none */
	int ddl_exists_error;
	int ddl_exists_error2; /* the same for a column (MySQL 1060) */
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
	/* SKED_CAP_INSERT_ROWS: the parameters the server counts for the
	 * shared part of SKED_SQL_ENQ_ROWS_* (a marker used twice counts
	 * twice); each row adds one */
	int rows_shared_params;
} sked_dialect;

extern const sked_dialect sked__dialect_sqlite;
extern const sked_dialect sked__dialect_postgresql;
extern const sked_dialect sked__dialect_mysql;
extern const sked_dialect sked__dialect_mariadb; /* mysql, 10.5+ */
extern const sked_dialect sked__dialect_sqlserver;
extern const sked_dialect sked__dialect_oracle;

/* The dialect for a product name as sked__decide reports it, or NULL. */
const sked_dialect *sked__dialect_for(int product);
/* The same for a server at version major.minor (0: not understood):
 * where a later version can say more (MariaDB 10.5's RETURNING), its
 * own variant of the product's dialect. */
const sked_dialect *sked__dialect_for_version(int product, int major,
                                              int minor);

/* Render every statement for prefix. out[i] are malloc'd (NULL where the
 * dialect has no text); free with sked__dialect_free_rendered. Returns
 * SKED_ENOMEM, or SKED_EINVAL for a template with a token the renderer
 * does not know, which err (may be NULL) names. */
int sked__dialect_render(const sked_dialect *d, const char *prefix,
                         char *out[SKED_SQL__COUNT], char *err, size_t errlen)
        __attribute__((warn_unused_result));
void sked__dialect_free_rendered(char *out[SKED_SQL__COUNT]);

/* For a driver that reads an unbound marker as NULL (native SQLite):
 * the batch statements whose list is only matched against (a row's id
 * IN the list, rows joined to the task table) take their list padded
 * with unbound markers to a few sizes ({ids+}, {rows8+}), so that a
 * drain prepares a handful of texts instead of one per batch size.
 * Returns SKED_ENOMEM or SKED_OK. */
int sked__dialect_pad(char *out[SKED_SQL__COUNT])
        __attribute__((warn_unused_result));

/* Render one template (schema steps, the migration lock, LISTEN):
 * malloc'd, or NULL when out of memory or when the template has an
 * unknown token (then logged as an error, with the token). */
char *sked__dialect_expand(const sked_dialect *d, const char *prefix,
                           const char *tmpl);

/* The text of statement id in d before rendering: the override, else the
 * generic text, else NULL. */
const char *sked__sql_text(const sked_dialect *d, sked_sql id);

/* Whether a handle on d may run statement id: the statements every
 * handle runs, plus those d's capability flags and claim shape call
 * for. A needed statement without text is a bug test_dialect.c finds. */
int sked__sql_needed(const sked_dialect *d, sked_sql id);

/* Append a rendered statement or fragment to b, filling its per-call
 * token ({arg}: ?first; {ids}: n markers from ?first; {rows}: n rows
 * (?first+i, i)). Out of memory sets b->oom. */
void sked__sql_fill(sked_buf *b, const char *rendered, int first, int n);

#endif /* SKED_DIALECT_H */
