/*
 * sked.h — the C API of libsked: the contract.
 *
 * One header declares the whole C API; a program includes it alone.
 * Beside it, sked_abi.h (installed too) adds what a binding in another
 * language needs instead of a C compiler: codes by name, struct sizes,
 * option objects with setters (docs/abi.md). What only sked's own
 * programs use (text helpers, the CLI's defaults) is in sked_cli.h,
 * which is not installed.
 *
 * Size: about 1,490 lines, one file on purpose. Its length is the
 * contract's: every call with who owns what, the errors it returns and
 * its thread safety, in sections by object (handle, tasks, waiting,
 * graphs, events, workers, cron, schedules, limits, locks,
 * operations). A user reads one header; splitting it would make them
 * hunt for the contract, and
 * the installed-header test compiles it alone as C99 and C++11.
 *
 * sked turns a relational database the user already runs (SQLite,
 * PostgreSQL, MySQL/MariaDB, anything behind ODBC) into a distributed task
 * scheduler. Any number of workers on any number of hosts share one task
 * table; the database's own row locks decide who runs what.
 *
 * Conventions used throughout this header:
 *  - Every function that can fail returns an int status: SKED_OK (0) or a
 *    negative SKED_E* code from the table below. sked_errname() and
 *    sked_strerror() name a code; sked_errmsg() on a handle gives the detail
 *    of its last failure (a server's SQLSTATE and message, the offending
 *    input), with passwords masked.
 *  - Errors any call may return besides those its comment names:
 *    SKED_EINVAL for a NULL handle or a NULL pointer the call needs
 *    (sked_errmsg() is not updated then); and, from a call that reaches
 *    the database, SKED_EUNAVAILABLE (the server cannot be reached or the
 *    connection was lost), SKED_EDB (the server refused a statement;
 *    sked_errmsg() has its SQLSTATE and message), SKED_EBUSY (a
 *    deadlock, lock wait timeout or busy database rolled the call back:
 *    nothing was written, try again), SKED_EREADONLY, SKED_EPERM (the
 *    database user lacks a right the statement needs), and SKED_ENOMEM.
 *  - Out parameters on failure: an array the call allocates (*out, with
 *    its count *n) is NULL and the count 0 after any failure, so freeing
 *    it is always safe; a struct the call fills (sked_info,
 *    sked_lock_state, the gauges, the metrics) is zeroed once the
 *    arguments are checked; a scalar
 *    (an id, a token, a time, a count) is written on success only and
 *    otherwise keeps its value. A function that does otherwise says so.
 *  - Lifetimes: a const char * a function returns is a static string
 *    unless its comment says otherwise. Strings inside a struct the
 *    library allocated live until that struct is freed. What the caller
 *    lends (names, payloads, argv, opts) is read during the call only,
 *    unless the comment says it is kept (sked_worker_new keeps h) or
 *    copied.
 *  - Borrowed inputs are const. Out parameters come last. Every _open/_new
 *    has a _close/_free that accepts NULL.
 *  - Times are int64 milliseconds since the Unix epoch, UTC, and always come
 *    from the database's clock, never the caller's.
 *  - Thread safety: a sked handle is one database connection. Use it from
 *    one thread at a time (or guard it). Separate handles are independent.
 *    sked_worker_stop() is the only function safe to call from a signal
 *    handler.
 */
#ifndef SKED_H
#define SKED_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SKED_VERSION        "0.1.0"
#define SKED_SCHEMA_VERSION 16
/* The binary interface this header describes: changes whenever a public
 * struct's layout, a function's signature or a code's number changes
 * (docs/abi.md). Compare with sked_abi_version() at run time. */
#define SKED_ABI_VERSION 4

#if defined(SKED_BUILDING) && defined(__GNUC__)
#define SKED_API __attribute__((visibility("default")))
#else
#define SKED_API
#endif

/* ------------------------------------------------------------------ */
/* Status codes. One table generates the enum, sked_errname() and     */
/* sked_strerror().                                                    */
/* ------------------------------------------------------------------ */

#define SKED_ERRNO_MAP(X)                                                      \
	X(ERROR, 1, "unspecified error")                                       \
	X(NOMEM, 2, "out of memory")                                           \
	X(INVAL, 3, "invalid argument")                                        \
	X(URL, 4, "malformed database URL")                                    \
	X(UNAVAILABLE, 5, "database unavailable")                              \
	X(DB, 6, "database error")                                             \
	X(SCHEMA, 7, "schema missing or at another version")                   \
	X(STRATEGY, 8, "claim strategy not supported by this database")        \
	X(NOTFOUND, 9, "not found")                                            \
	X(STATE, 10, "not allowed in the current state")                       \
	X(LOST, 11, "lease lost to another owner")                             \
	X(LOCKED, 12, "lock held by another owner")                            \
	X(TIMEOUT, 13, "timed out")                                            \
	X(IO, 14, "input/output error")                                        \
	X(TOOBIG, 15, "value too large")                                       \
	X(CRON, 16, "malformed cron expression")                               \
	X(TZ, 17, "unknown time zone")                                         \
	X(UNSUPPORTED, 18, "not supported by this build or database")          \
	X(READONLY, 19, "database is read-only")                               \
	X(BUSY, 20, "database busy or in conflict; try again")                 \
	X(PERM, 21, "permission denied by the database")                       \
	X(CONFIG, 22, "database missing or connection settings refused")

typedef enum sked_status_code {
	SKED_OK = 0,
#define SKED__ENUM(name, num, text) SKED_E##name = -(num),
	SKED_ERRNO_MAP(SKED__ENUM)
#undef SKED__ENUM
} sked_status_code;

/* "SKED_EDB" for SKED_EDB; "SKED_E?" for an unknown code. Static strings. */
SKED_API const char *sked_errname(int code);
/* A one-line description of a code. Static string. */
SKED_API const char *sked_strerror(int code);

/* ------------------------------------------------------------------ */
/* Versions (docs/abi.md)                                             */
/* ------------------------------------------------------------------ */

/* The library's version ("0.1.0"), as SKED_VERSION was when it was built.
 * Static string. */
SKED_API const char *sked_version(void);
/* SKED_ABI_VERSION as the library was built. */
SKED_API int sked_abi_version(void);
/* SKED_OK when abi (a caller's SKED_ABI_VERSION) is the library's;
 * SKED_EUNSUPPORTED otherwise: the caller was built for other layouts. */
SKED_API int sked_abi_check(int abi);

/* ------------------------------------------------------------------ */
/* Logging                                                            */
/* ------------------------------------------------------------------ */

enum {
	SKED_LOG_ERROR = 0,
	SKED_LOG_WARN = 1,
	SKED_LOG_INFO = 2,
	SKED_LOG_DEBUG = 3
};

/* Receives every log line sked writes (already formatted, no newline).
 * Called from any sked thread; must be thread safe. */
typedef void (*sked_log_fn)(int level, const char *line, void *userdata);

/* Replace the process-wide log sink (NULL restores the default: stderr)
 * and the threshold (lines above it are dropped). The default threshold
 * is SKED_LOG_INFO, or the value of SKED_LOG (error|warn|info|debug). */
SKED_API void sked_set_log(sked_log_fn fn, void *userdata, int threshold);

/* Write one line through sked's log (the sink, threshold and format
 * above), for programs built on sked that want their lines beside it. */
SKED_API void sked_log(int level, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* "text" (the default) or "json": one JSON object per line with time,
 * level, pid, node, and task_id and attempt when the line is about a
 * task (SKED_LOG_FORMAT sets it too). SKED_EINVAL for another name. */
SKED_API int sked_set_log_format(const char *format);
/* The node id JSON lines carry (a worker sets its own); NULL clears. */
SKED_API void sked_set_log_node(const char *node);
/* SKED_LOG_* for "error", "warn", "info", "debug"; -1 when unknown. */
SKED_API int sked_log_level_from_name(const char *name);

/* ------------------------------------------------------------------ */
/* Handle                                                             */
/* ------------------------------------------------------------------ */

typedef struct sked sked;

typedef struct sked_options {
	/* "auto" or NULL: pick from the server's product and version.
	 * Otherwise "skip-locked", "readpast", "optimistic" or "sqlite";
	 * one the database cannot honour makes sked_open fail with
	 * SKED_ESTRATEGY. */
	const char *strategy;
	/* Table prefix, default "sked_". Must match [a-z_][a-z0-9_]{0,30}. */
	const char *prefix;
	/* 1: create or upgrade the schema on open when needed.
	 * 0: fail with SKED_ESCHEMA unless the schema is current. */
	int migrate;
} sked_options;

/* Connect to url (see below) and check the schema.
 * URLs: "sqlite:PATH", "postgres://…", "postgresql://…", "mysql://…",
 * "mariadb://…", "odbc:CONNECTION-STRING". opts may be NULL (defaults).
 * *out is set even on failure (unless SKED_ENOMEM, when it is NULL) so
 * that sked_errmsg() can tell what went wrong; always sked_close() it.
 * Errors: SKED_EURL (no URL, or a malformed one), SKED_EUNSUPPORTED (this
 * build has no driver for the scheme, or the server is too old),
 * SKED_EINVAL (a bad prefix or strategy name), SKED_EUNAVAILABLE,
 * SKED_ESTRATEGY (the strategy asked for cannot work on this database),
 * SKED_ESCHEMA (migrate is 0 and the schema is missing or old, or the
 * database's schema is newer than this build), SKED_EDB. After
 * SKED_ESCHEMA, sked_get_info() still works on *out (the version found is
 * its schema_version, 0 when there is none); nothing else does. */
SKED_API int sked_open(const char *url, const sked_options *opts, sked **out);
SKED_API void sked_close(sked *h);

/* Wrap a connection the application already holds, so that tasks are
 * enqueued inside the application's own transaction and commit or roll
 * back with its data. driver names the kind of native connection:
 * "libpq" (a PGconn *), "mariadb" (a MYSQL *), "sqlite" (a sqlite3 *).
 * The handle never begins, commits, rolls back or closes that connection:
 * the application's transaction decides. Enqueue, inspect and steer
 * tasks with it; do not run a worker on it. sked_close() leaves the
 * native connection open. The schema must already exist (`sked init`, or
 * sked_migrate on a handle of its own): a borrowed handle never migrates,
 * whatever opts->migrate says, and on a database without the schema it
 * fails with SKED_ESCHEMA (on PostgreSQL that failed read also aborts the
 * application's transaction). SKED_EUNSUPPORTED when the driver is not
 * built or cannot wrap. Not thread safe beyond the native connection's
 * rules. */
SKED_API int sked_open_borrowed(const char *driver, void *native,
                                const sked_options *opts, sked **out);

/* The detail of the last failure on h: one line, passwords masked.
 * Borrowed: valid until the next call on h or sked_close(h). Never NULL
 * ("out of memory" for a NULL h). */
SKED_API const char *sked_errmsg(const sked *h);

/* Create or upgrade the schema. Idempotent, safe when several processes
 * run it at once. SKED_ESCHEMA when the database's schema is newer than
 * this build knows; SKED_EREADONLY on a read-only database. */
SKED_API int sked_migrate(sked *h);

typedef struct sked_info {
	char driver[16];  /* "sqlite", "libpq", "mariadb", "odbc" */
	char dialect[16]; /* "sqlite", "postgresql", "mysql", "sqlserver", … */
	char product[64];    /* as the server names itself */
	char version[64];    /* as the server reports it */
	char strategy[16];   /* the claim strategy in use */
	char reason[512];    /* why that strategy was chosen */
	char url[512];       /* the URL, password masked */
	int schema_version;  /* found in the database; 0 if none */
	int schema_expected; /* SKED_SCHEMA_VERSION */
} sked_info;

/* What was detected and chosen, and why: read from the handle, no
 * database call. SKED_EINVAL; SKED_ESTATE on a handle whose open failed
 * before a strategy was chosen (it works after SKED_ESCHEMA). */
SKED_API int sked_get_info(sked *h, sked_info *out);

/* ------------------------------------------------------------------ */
/* Tasks                                                              */
/* ------------------------------------------------------------------ */

typedef enum sked_task_status {
	SKED_PENDING = 0,   /* waiting for its run-at time and a worker */
	SKED_RUNNING = 1,   /* leased by a node */
	SKED_SUCCEEDED = 2, /* finished: its handler succeeded */
	SKED_DEAD = 3,      /* finished: its attempts are spent */
	SKED_RETRY = 4,     /* failed an attempt; waiting to run again */
	SKED_CANCELLED = 5, /* finished: cancelled by a user, or by a parent
	                       that ended dead or cancelled */
	SKED_BLOCKED = 6    /* waiting for its parents to end (claims never
	                       see it; docs/workflows.md) */
} sked_task_status;

/* "pending", "running", …; "?" for an unknown value. Static string. */
SKED_API const char *sked_status_name(int status);
/* The inverse of sked_status_name; -1 when unknown. */
SKED_API int sked_status_parse(const char *name);

#define SKED_DEFAULT_QUEUE        "default"
#define SKED_DEFAULT_MAX_ATTEMPTS 5
#define SKED_MAX_PAYLOAD          (1024 * 1024) /* bytes */
#define SKED_MAX_NAME             128 /* queue, kind, unique key, node id */
/* The one bound on times and durations, on every database: a time sked
 * stores lies from 1970-01-01 to 9999-12-31T23:59:59.999Z (MySQL's
 * DATETIME ends there), and a duration it is given (a delay, --in, a
 * lease, a timeout) is at most 100 years of 365.25 days. Beyond them an
 * enqueue is SKED_EINVAL and the command line exits 65. */
#define SKED_TIME_MAX_MS     253402300799999LL
#define SKED_DURATION_MAX_MS (36525LL * 24 * 3600 * 1000)
/* The bounds on workflows (docs/security.md): a task has at most
 * SKED_MAX_PARENTS parents (after ids, as given), and one enqueue writes
 * at most SKED_MAX_EDGES edges (tasks x parents), so one call cannot hold
 * the database for long; beyond, SKED_EINVAL and nothing written. */
#define SKED_MAX_PARENTS 1000
#define SKED_MAX_EDGES   100000

typedef struct sked_enqueue_opts {
	const char *queue;      /* NULL: "default" */
	int priority;           /* higher runs first; default 0 */
	int64_t run_at_ms;      /* absolute time; 0: use delay_ms; at most
	                      SKED_TIME_MAX_MS */
	int64_t delay_ms;       /* database now + delay; 0: now; at most
	                      SKED_DURATION_MAX_MS */
	int max_attempts;       /* 0: SKED_DEFAULT_MAX_ATTEMPTS */
	const char *unique_key; /* NULL: none; else an existing key returns
	                           the existing task */
	/* NULL: none; else the task counts against its queue's per-key
	 * limit for this key (sked_queue_set, docs/limits.md): 1 to
	 * SKED_MAX_NAME bytes */
	const char *concurrency_key;
	/* Parents (docs/workflows.md): the task is SKED_BLOCKED until each
	 * of these n_after tasks has ended; each must exist (SKED_EINVAL
	 * otherwise, nothing written). on_parent_failure: what a parent
	 * that ends dead or cancelled does to it. */
	const int64_t *after;
	size_t n_after;
	int on_parent_failure; /* SKED_PARENT_CANCEL (0) or _IGNORE */
	/* NULL: none; else a W3C trace context, "VV-TRACEID-PARENTID-FF"
	 * (55 characters of lowercase hex: version 2, trace id 32, parent
	 * id 16, flags 2; version ff and all-zero ids are invalid) that the
	 * task keeps and its handler receives (TRACEPARENT, docs/handlers.md).
	 * Anything else is SKED_EINVAL. */
	const char *traceparent;
	/* How long unique_key holds (docs/unique.md); set with unique_key
	 * only (SKED_EINVAL otherwise):
	 *   SKED_UNIQUE_LIVE (0)  while the task is live: pending, retrying,
	 *                         running or blocked; an ended task frees it
	 *   SKED_UNIQUE_PENDING   until the task first starts
	 *   SKED_UNIQUE_PERIOD    for unique_for_ms from the holder's enqueue,
	 *                         whatever becomes of it
	 * An enqueue whose key is held returns the holder (*existed_out 1).
	 * unique_for_ms: 1 ms to SKED_DURATION_MAX_MS; set, it makes the
	 * scope SKED_UNIQUE_PERIOD (which needs it). unique_replace (live and pending scopes): a
	 * holder that has not started (or waits to retry, in the live scope)
	 * takes this enqueue's payload and run-at instead (debounce;
	 * *existed_out SKED_ENQ_REPLACED); a running holder is returned as
	 * it is (live) or does not hold the key (pending). */
	int unique_scope;
	int64_t unique_for_ms;
	int unique_replace;
	/* 0: none; else the task's own timeout, 1 ms to SKED_DURATION_MAX_MS:
	 * its handler is stopped after the shorter of this and its kind's
	 * (the worker's --timeout or the handler's own), as a kind's
	 * timeout stops it (docs/handlers.md). */
	int64_t timeout_ms;
} sked_enqueue_opts;

#define SKED_UNIQUE_LIVE    0
#define SKED_UNIQUE_PENDING 1
#define SKED_UNIQUE_PERIOD  2

/* *existed_out of sked_enqueue */
#define SKED_ENQ_NEW      0 /* a new task */
#define SKED_ENQ_EXISTED  1 /* the key's holder, unchanged */
#define SKED_ENQ_REPLACED 2 /* the key's holder, given the new payload */

#define SKED_PARENT_CANCEL 0 /* cancel this task and what waits on it */
#define SKED_PARENT_IGNORE 1 /* count the parent as ended */

/* Enqueue one task. kind and queue are names: [A-Za-z0-9_.:-], 1 to
 * SKED_MAX_NAME bytes, starting with a letter or digit. payload may be
 * NULL (empty); at most SKED_MAX_PAYLOAD bytes (SKED_ETOOBIG) of text:
 * a zero byte in it is SKED_EINVAL on every database.
 * *id_out gets the task id; *existed_out (may be NULL) is
 * SKED_ENQ_EXISTED (1) when unique_key is held by a task (its scope:
 * unique_scope), whose id is returned, SKED_ENQ_REPLACED (2) when that
 * task took this payload and run-at (unique_replace), and 0 otherwise,
 * failures included. Race-free: of concurrent enqueuers of one key,
 * on every database and claim strategy, one makes the task. SKED_EINVAL (with a one-line
 * sked_errmsg()) for a bad name, unique key or max_attempts. */
SKED_API int sked_enqueue(sked *h, const char *kind, const char *payload,
                          size_t payload_len, const sked_enqueue_opts *opts,
                          int64_t *id_out, int *existed_out);

/* Enqueue n tasks of one kind in one transaction: all or none.
 * payloads[i] of lens[i] bytes (lens may be NULL for NUL-terminated).
 * opts->unique_key must be NULL. ids_out has room for n ids. Errors as
 * for sked_enqueue; on failure no task was made and what ids_out holds
 * is unspecified. */
SKED_API int sked_enqueue_many(sked *h, const char *kind, size_t n,
                               const char *const *payloads, const size_t *lens,
                               const sked_enqueue_opts *opts, int64_t *ids_out);

/* A workflow in one call (docs/workflows.md, "A graph in one
 * transaction"): n tasks of any kinds, each waiting for others of the
 * same graph (after_index, indexes into the array) and/or for tasks that
 * exist already (opts.after, ids). */
typedef struct sked_graph_task {
	/* how messages name it ("task 'fetch'"); NULL: by its index */
	const char *name;
	const char *kind;    /* a name, as for sked_enqueue */
	const char *payload; /* NULL: empty; text, as for sked_enqueue */
	size_t payload_len;
	/* parents in this graph: indexes into the tasks array, each not
	 * this task's own; repeats count once */
	const size_t *after_index;
	size_t n_after_index;
	/* NULL: every default; else the task's options as for
	 * sked_enqueue: queue, priority, run-at or delay, max attempts,
	 * concurrency key, trace context, timeout, on_parent_failure, and
	 * after/n_after for parents that exist already. unique_key (and
	 * its scope) must be unset: SKED_EINVAL. A pointer, so that a
	 * binding fills this struct and points at an option object
	 * (sked_enqueue_opts_new, docs/abi.md) without knowing its layout */
	const sked_enqueue_opts *opts;
} sked_graph_task;

/* The bounds on one graph (docs/security.md), on top of each task's own
 * (SKED_MAX_PAYLOAD, SKED_MAX_PARENTS counting both kinds of parents)
 * and SKED_MAX_EDGES for the whole graph's edges: at most
 * SKED_MAX_GRAPH_TASKS tasks and SKED_MAX_GRAPH_BYTES of payloads. */
#define SKED_MAX_GRAPH_TASKS 10000
#define SKED_MAX_GRAPH_BYTES (64 * 1024 * 1024)

/* Enqueue the n tasks of a graph in one transaction: all or none. The
 * tasks are inserted parents first; each with parents is blocked until
 * they end, exactly as sked_enqueue with opts->after makes it. ids_out
 * (room for n) gets tasks[i]'s id at i. Everything is checked before
 * the database is touched: a bad name or option, a unique key, an
 * after_index out of range or naming the task itself, a cycle (the
 * message names a task on it), too many parents, edges, tasks or
 * payload bytes are SKED_EINVAL (SKED_ETOOBIG for a payload over
 * SKED_MAX_PAYLOAD) with a one-line sked_errmsg() naming the task, and
 * nothing written. An existing parent that is missing is SKED_EINVAL
 * too, found inside the transaction, which then rolls back; so does any
 * database failure midway (SKED_EDB …). n 0 is SKED_OK and does nothing.
 * On failure what ids_out holds is unspecified. On a borrowed handle
 * (sked_open_borrowed) the application's transaction holds it all, and
 * after a failure found in the database (a missing parent, SKED_EDB)
 * the application must roll that transaction back: what was written
 * before it is in it. The
 * tasks array and what it points to are borrowed for the call only. Not
 * thread safe on one handle, as every call. */
SKED_API int sked_enqueue_graph(sked *h, const sked_graph_task *tasks, size_t n,
                                int64_t *ids_out);

typedef struct sked_task {
	int64_t id;
	char *queue;
	char *kind;
	char *payload; /* NUL-terminated; payload_len excludes the NUL */
	size_t payload_len;
	int status; /* sked_task_status */
	int priority;
	int64_t run_at_ms;
	int attempts;
	int max_attempts;
	char *node_id; /* owner while running, last runner after; or NULL */
	int64_t lease_until_ms;                      /* 0: none */
	char *unique_key;                            /* or NULL */
	char *schedule_name;                         /* or NULL */
	int64_t fire_time_ms;                        /* 0: none */
	char *last_error;                            /* or NULL */
	int64_t created_ms, updated_ms, finished_ms; /* finished: 0 if not */
	/* what the handler of the attempt that ended it left (at most
	 * SKED_RESULT_MAX bytes of UTF-8), or NULL; filled by
	 * sked_task_get only (sked_task_list leaves it NULL) */
	char *result;
	char *traceparent; /* its W3C trace context, or NULL */
} sked_task;

/* Fetch one task. SKED_ENOTFOUND when there is none. Free with
 * sked_tasks_free(*out, 1); its strings live until then. *out is NULL
 * on failure. */
SKED_API int sked_task_get(sked *h, int64_t id, sked_task **out);

/* What a running task is doing now (docs/handlers.md, "Progress"; schema
 * 12): the node that runs it, when its running attempt started, how long
 * ago by the database's clock, and its handler's latest report as the
 * worker stored it with its last lease renewal (NULL: none yet in this
 * attempt). SKED_ENOTFOUND when task id is not running. Free the strings
 * with sked_task_live_clear. */
typedef struct sked_task_live {
	char *node_id;       /* or NULL */
	int64_t started_ms;  /* 0: unknown */
	int64_t elapsed_ms;  /* since started_ms */
	char *progress;      /* at most SKED_PROGRESS_MAX bytes, or NULL */
	int64_t progress_ms; /* when it was stored; 0: none */
} sked_task_live;
SKED_API int sked_task_live_get(sked *h, int64_t id, sked_task_live *out);
SKED_API void sked_task_live_clear(sked_task_live *live);

/* Waiting for tasks to end (sked wait; docs/cli.md). sked_wait returns
 * SKED_OK once each of the n tasks ids has ended (succeeded, dead or
 * cancelled; read them with sked_task_get), SKED_ETIMEOUT when timeout_ms
 * passed first (< 0: no bound; 0: look once), SKED_ENOTFOUND (*bad_id,
 * may be NULL) for an id of no task, SKED_EINVAL for n = 0 or more than
 * SKED_WAIT_MAX ids. *nended (may be NULL) is how many had ended.
 * PostgreSQL wakes the waiter with a NOTIFY sent by the transaction that
 * ends a task the waiter marked (schema step 11): no polling, and nothing
 * on the hot path when nobody waits; elsewhere (and behind a transaction
 * pooler) it reads the tasks with a back-off from SKED_WAIT_POLL_MIN_MS
 * doubling to SKED_WAIT_POLL_MAX_MS (SQLite: woken early by a commit).
 * The handle is busy meanwhile: one thread at a time, as always. */
#define SKED_WAIT_MAX         1000
#define SKED_WAIT_POLL_MIN_MS 25
#define SKED_WAIT_POLL_MAX_MS 1000
SKED_API int sked_wait(sked *h, const int64_t *ids, size_t n,
                       int64_t timeout_ms, size_t *nended, int64_t *bad_id);
/* The same for the first of them to end: SKED_OK with *ended_id; also
 * SKED_ETIMEOUT as soon as wake_fd (>= 0; never read) turns readable,
 * so that a thread serving several waiters can add one. */
SKED_API int sked_wait_any(sked *h, const int64_t *ids, size_t n,
                           int64_t timeout_ms, int wake_fd, int64_t *ended_id);

/* The events feed (sked events, GET /api/events; docs/operations.md,
 * "Events"): task ends read from {p}task_done, the attempts that did not
 * end their task from {p}run, starts from the running rows; nothing is
 * written for it. An event's position is its time in ms by the
 * database's clock (at_ms); a read returns the events after position
 * after (0: from the oldest kept; < 0: from now) up to the settled
 * horizon, the database's now less settle_ms, in order of time, whole
 * milliseconds at a time (a page may pass limit by the events of its
 * last millisecond), and *next, the position to read on from: every
 * event at or before it has been returned. Nothing is missed if each
 * transaction that ends a task commits within settle_ms of its
 * timestamp; starts are seen only for attempts still running at the
 * read. Free with sked_events_free(*out, *n). */
enum {
	SKED_EVENT_START = 1,   /* an attempt began (status running) */
	SKED_EVENT_ATTEMPT = 2, /* an attempt ended, the task did not */
	SKED_EVENT_END = 3      /* the task ended */
};
typedef struct sked_event {
	int64_t at_ms; /* its position: the start's or the end's time */
	int type;      /* SKED_EVENT_* */
	int64_t id;    /* the task */
	char *kind, *queue;
	int status;    /* the task's: ended (end), running (start), or the
	                  status it has now (attempt; -1: gone) */
	char *outcome; /* the attempt's (succeeded, failed, lease-expired,
	                  released, late, timeout…), or NULL */
	int attempt;
	char *node_id;                   /* or NULL */
	int64_t started_ms, finished_ms; /* 0: none */
	/* previews of at most SKED_EVENT_PREVIEW bytes (whole UTF-8
	 * characters), or NULL */
	char *error, *result;
} sked_event;
typedef struct sked_event_filter {
	const char *kind, *queue; /* NULL: any */
	int64_t settle_ms;        /* <= 0: SKED_EVENTS_SETTLE_MS */
} sked_event_filter;
#define SKED_EVENTS_SETTLE_MS 2000
#define SKED_EVENT_PREVIEW    200
#define SKED_EVENTS_MAX       10000
SKED_API int sked_events_read(sked *h, int64_t after,
                              const sked_event_filter *f, size_t limit,
                              sked_event **out, size_t *n, int64_t *next);
SKED_API void sked_events_free(sked_event *e, size_t n);

typedef struct sked_list_filter {
	int status;          /* -1: any */
	const char *queue;   /* NULL: any */
	const char *kind;    /* NULL: any */
	int limit;           /* 0: 100 */
	int64_t before_id;   /* 0: newest first from the top; else ids < this */
	const char *node_id; /* NULL: any; else tasks it runs or ran last */
	int64_t created_after_ms, created_before_ms; /* 0: no bound */
} sked_list_filter;

/* Tasks, newest first. *out is an array of *n tasks (NULL when 0); free
 * with sked_tasks_free. SKED_EINVAL for a queue or kind that is not a
 * name. */
SKED_API int sked_task_list(sked *h, const sked_list_filter *f, sked_task **out,
                            size_t *n);
SKED_API void sked_tasks_free(sked_task *tasks, size_t n);

/* Cancel a pending, retrying or running task (a running one is stopped by
 * its worker at the next lease renewal; its result is not applied).
 * SKED_ENOTFOUND; SKED_ESTATE when it has already finished. */
SKED_API int sked_cancel(sked *h, int64_t id);

/* Run a dead or cancelled task (or a waiting one) again now, with one more
 * attempt allowed if its attempts are spent. SKED_ESTATE when it is
 * running or succeeded. */
SKED_API int sked_retry(sked *h, int64_t id);

/* Graphs (docs/workflows.md, "Mending a graph"). sked_cancel_graph:
 * sked_cancel, and *with (freed with free(); NULL when none) the *n
 * tasks its end cancelled with it (its blocked children that asked for
 * "cancel", theirs, …), in the order they ended. sked_retry_graph: retry
 * a dead or cancelled task together with the sub-graph its end
 * cancelled (each cancelled child naming it as the parent that stopped
 * it, theirs, …), in one transaction: the task is pending again (or
 * blocked, while a parent of its own has not succeeded), the others
 * blocked with the count of their parents still to succeed; *ids (free())
 * lists the *n tasks retried, the task first. SKED_ESTATE when the task
 * is not dead or cancelled. */
SKED_API int sked_cancel_graph(sked *h, int64_t id, int64_t **with, size_t *n);
SKED_API int sked_retry_graph(sked *h, int64_t id, int64_t **ids, size_t *n);

/* One attempt at a task. */
typedef struct sked_run {
	int64_t id; /* 0: the attempt that ended the task, recorded on its
	               ended row (schema 5); it is listed last */
	int64_t task_id;
	int attempt;
	char *node_id;
	int64_t started_ms, finished_ms;
	char *outcome; /* "succeeded", "failed", "lease-expired", "late", … */
	int exit_code; /* -1: none (a C handler, or killed by a signal) */
	char *error;   /* or NULL */
	char *output;  /* bounded tail of stdout+stderr, or NULL */
} sked_run;

/* The attempts at one task, oldest first. Free with sked_runs_free. A
 * task never run, or no such task: SKED_OK with *n 0. */
SKED_API int sked_runs_get(sked *h, int64_t task_id, sked_run **out, size_t *n);
SKED_API void sked_runs_free(sked_run *runs, size_t n);

typedef struct sked_queue_stats {
	char queue[SKED_MAX_NAME + 1];
	int64_t count[7]; /* indexed by sked_task_status */
	int64_t due;      /* pending or retrying and due now */
} sked_queue_stats;

/* Counts of tasks per queue and status, in queue order: live ones
 * (pending, running, waiting to retry) and ended ones (succeeded, dead,
 * cancelled, counted from an index of {p}task_done, never its rows;
 * docs/design.md, "Ended tasks"). A queue appears while it has a task in
 * either table. Free *out with free(). */
SKED_API int sked_stats(sked *h, sked_queue_stats **out, size_t *n);

/* A task's parents and children (docs/workflows.md), ids in ascending
 * order; each array (NULL when empty) is freed with free(). An edge
 * goes when retention removes either end. */
SKED_API int sked_task_deps(sked *h, int64_t id, int64_t **parents,
                            size_t *nparents, int64_t **children,
                            size_t *nchildren);

/* A task's workflow as a picture needs it (the dashboard's task page):
 * the task, its ancestors and its descendants, breadth-first, at most
 * max_nodes of them (1 to SKED_GRAPH_MAX), with the edges between them.
 * Read by id lists: two statements per layer and two at the end, never
 * one per task. more: tasks known to be linked but left out (at least
 * that many; what lies beyond them was not read). A pruned task keeps
 * status -1 and kind NULL. Free with sked_task_graph_free. */
#define SKED_GRAPH_MAX 1000
typedef struct sked_graph_node {
	int64_t id;
	int status; /* sked_task_status, or -1: pruned */
	char *kind;
} sked_graph_node;
typedef struct sked_task_graph {
	sked_graph_node *nodes; /* nodes[0] is the task asked for */
	size_t n;
	int64_t (*edges)[2]; /* parent, child: both among nodes */
	size_t nedges;
	size_t more;
} sked_task_graph;
SKED_API int sked_task_graph_get(sked *h, int64_t id, size_t max_nodes,
                                 sked_task_graph *out);
SKED_API void sked_task_graph_free(sked_task_graph *g);
/* The status and kind of n tasks (at most SKED_GRAPH_MAX) in one
 * statement: out[i] for ids[i] (status -1, kind NULL: no such task).
 * Free the kinds with sked_task_states_clear. */
SKED_API int sked_task_states(sked *h, const int64_t *ids, size_t n,
                              sked_graph_node *out);
SKED_API void sked_task_states_clear(sked_graph_node *nodes, size_t n);

typedef struct sked_node {
	char *id;
	char *host;
	int pid;
	int64_t started_ms, heartbeat_ms;
	char *strategy;
	char *version;
	int alive;       /* heartbeat younger than 3 × its interval */
	int64_t running; /* tasks it holds now: leased to it (running) */
	int slots;       /* its handler slots (concurrency); 0: not recorded */
	int64_t busy;    /* of those, in a handler at its last heartbeat; the
	                    rest (running - busy) are held ahead of its free
	                    threads (docs/design.md, "Prefetch") */
} sked_node;

/* The cluster lock the elected leader of the cluster's chores holds
 * (docs/design.md, "The leader"); its owner is the leader's node id and
 * its token grows with every new leader (sked_lock_get). */
#define SKED_LEADER_LOCK "sked-leader"

/* Every node row, live or not (alive tells). Free with sked_nodes_free;
 * the strings live until then. */
SKED_API int sked_nodes(sked *h, sked_node **out, size_t *n);
SKED_API void sked_nodes_free(sked_node *nodes, size_t n);

/* Due work no live node serves (docs/operations.md, "Why work waits"):
 * one row per queue and kind with due tasks (pending or retry, run-at
 * passed, the queue not paused) that no live node has both a handler and
 * the queue for. Nodes record what they serve when they register (a node
 * of a sked before schema 11 counts as serving everything). *out is NULL
 * when *n is 0; at most 1000 rows, most due first. */
typedef struct sked_unserved {
	char queue[SKED_MAX_NAME + 1];
	char kind[SKED_MAX_NAME + 1];
	int64_t due;           /* tasks due */
	int64_t oldest_due_ms; /* how long the oldest of them has been due */
} sked_unserved;
SKED_API int sked_unserved_get(sked *h, sked_unserved **out, size_t *n);
SKED_API void sked_unserved_free(sked_unserved *u);

/* The database's clock, now, into *now_ms. */
SKED_API int sked_now(sked *h, int64_t *now_ms);

/* ------------------------------------------------------------------ */
/* Workers                                                            */
/* ------------------------------------------------------------------ */

typedef struct sked_worker sked_worker;
typedef struct sked_job sked_job; /* a claimed task, as a handler sees it */

/* A C handler. Return 0 for success; anything else fails the attempt
 * (retried with backoff until max_attempts). Called on a pool thread.
 * Long handlers should poll sked_job_cancelled() and return early when it
 * becomes true: the worker is shutting down or could not renew the lease. */
typedef int (*sked_handler_fn)(sked_job *job, void *userdata);

/* A handler's view of its task. The sked_job * it is given, and every
 * string these return, are valid only until the handler returns: copy
 * what must outlive it. Each job is the handler's own; these are safe on
 * its thread. sked_job_payload never returns NULL ("" for none); *len
 * (may be NULL) gets its size. */
SKED_API int64_t sked_job_id(const sked_job *job);
SKED_API const char *sked_job_kind(const sked_job *job);
SKED_API const char *sked_job_queue(const sked_job *job);
SKED_API const char *sked_job_payload(const sked_job *job, size_t *len);
SKED_API int sked_job_attempt(const sked_job *job);
SKED_API int sked_job_max_attempts(const sked_job *job);
SKED_API int sked_job_cancelled(const sked_job *job);
/* The task's W3C trace context (enqueued with one), or NULL. */
SKED_API const char *sked_job_traceparent(const sked_job *job);
/* Record why the attempt failed (kept in the run record; copied, at most
 * 1 KiB). */
SKED_API void sked_job_set_error(sked_job *job, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
/* The same with a plain message, no format: for bindings, which cannot
 * call a variadic function safely. NULL clears the error. */
SKED_API void sked_job_set_error_msg(sked_job *job, const char *msg);
/* This attempt's failure is final: no retry, whatever max_attempts says;
 * the task is dead when the handler returns non-zero (its error starts
 * "no retry (the handler said so)"). For input that can never work. */
SKED_API void sked_job_give_up(sked_job *job);
/* Retry this failed attempt after ms instead of the backoff (at most the
 * worker's retry_max_ms). The attempt still counts. */
SKED_API void sked_job_set_retry_in(sked_job *job, int64_t ms);
/* A program handler that exits with this status (EX_DATAERR: its input is
 * wrong) gives up the same way: no retry. */
#define SKED_EXIT_NO_RETRY 65

/* The most a result may hold: 64 KiB. */
#define SKED_RESULT_MAX 65536
/* Leave a result: len bytes of text (copied; invalid UTF-8 is replaced
 * when it is recorded), kept on the task's record when this attempt
 * ends the task (sked show, sked_task.result) and handed to the
 * handlers of its dependents. A later call replaces it; NULL clears it.
 * More than SKED_RESULT_MAX bytes fails the attempt with an error
 * naming the size. SKED_OK, SKED_EINVAL (no job), SKED_ENOMEM. */
SKED_API int sked_job_set_result(sked_job *job, const char *text, size_t len);

/* The most a progress report may hold: 1 KiB. */
#define SKED_PROGRESS_MAX 1024
/* Report how far this attempt has got (docs/handlers.md, "Progress"):
 * value is 1 to SKED_PROGRESS_MAX bytes of UTF-8 text without NUL, JSON
 * or plain ("42", "{\"done\": 3, \"of\": 10}", "copying"). Cheap: the
 * latest report is kept in memory and written with the worker's next
 * lease renewal (never a write per report); a later call replaces it, and
 * a report made as the attempt ends may never be stored. SKED_OK, or
 * SKED_EINVAL (no job, a NULL, empty, too long or invalid value: the
 * previous report stands), SKED_ENOMEM. Any thread may call it while the
 * handler runs. */
SKED_API int sked_job_set_progress(sked_job *job, const char *value);

/* The parents of a task that waited for others (sked_enqueue_opts's
 * after), as the handler of each attempt sees them: their number, then
 * parent i's id, kind and result (NULL: it left none, it was pruned,
 * or its result was cut) in id order; *kind and *result may be NULL to
 * skip them. A task without parents has 0. SKED_EINVAL for i out of
 * range. The parents' results handed to one task total at most
 * SKED_PARENTS_RESULTS_MAX bytes of their JSON: the results past it (in
 * id order) are left out, their entries marked "cut": true in the
 * JSON. */
#define SKED_PARENTS_RESULTS_MAX (1024 * 1024)
SKED_API size_t sked_job_parent_count(const sked_job *job);
SKED_API int sked_job_parent(const sked_job *job, size_t i, int64_t *id,
                             const char **kind, const char **result);
/* The same as one JSON array [{"id", "kind", "result"}, …] ("[]" for a
 * task without parents): what pipe: and program handlers get. */
SKED_API const char *sked_job_parents_json(const sked_job *job);

typedef struct sked_worker_options {
	const char *node_id;   /* NULL: HOST-PID-RANDOM */
	const char *queues;    /* "Q[:N],…": queues to serve, N = at most N
	                          slots for Q; NULL: every queue */
	int concurrency;       /* slots (threads); 0: 4 */
	int64_t lease_ms;      /* 0: 30 s */
	int64_t poll_ms;       /* idle poll interval; 0: 1 s */
	int64_t grace_ms;      /* on stop, how long running tasks may finish;
	                          0: 30 s */
	int64_t retry_base_ms; /* backoff base; 0: 1 s */
	int64_t retry_max_ms;  /* backoff cap; 0: 1 h */
	int until_empty;       /* return once nothing is due or running */
	int64_t timeout_ms;    /* default handler timeout; 0: none */
	int prefetch;          /* tasks claimed ahead of free threads and
	                          queued locally (their leases are renewed
	                          while they wait). 0: adaptive; N: N
	                          ahead; SKED_PREFETCH_OFF: claim only for
	                          free threads. Adaptive means: nothing ahead
	                          once a claim comes back short (the queue is
	                          drained, so idle nodes get the work), and
	                          never more than 1000 or than this worker
	                          starts in 100 ms or in a quarter of a
	                          lease. */
	/* the lock-wait watchdog: a wait of this worker on one of sked's
	 * own rows (a schedule, a cluster lock, a queue limit) longer than
	 * this is logged once, with who holds the row where the database
	 * can tell, and counted (sked_worker_metrics.lock_waits); 0: 5 s,
	 * negative: never */
	int64_t lock_wait_warn_ms;
} sked_worker_options;

/* sked_worker_options.prefetch: claim only for free threads */
#define SKED_PREFETCH_OFF (-1)

/* A worker on h's database. The worker claims through h, and
 * sked_worker_run() opens more connections of its own to the same
 * database with the same options: one for lease renewal and the node's
 * heartbeat (at the start: two in all at idle), and, only while work
 * needs them, the finisher's (recording results), the lanes'
 * (sked_worker_set_lanes: two by default, while there is a backlog) and
 * the pruner's (sked_worker_set_max_connections caps them). h is
 * borrowed: it must outlive the worker and must not be used
 * elsewhere while sked_worker_run() runs. SKED_EINVAL (with a one-line
 * sked_errmsg(h)) for a bad node id, queue list or option; *out is NULL
 * on failure. */
SKED_API int sked_worker_new(sked *h, const sked_worker_options *opts,
                             sked_worker **out);
/* Free a worker that is not running (sked_worker_run has returned, or was
 * never called). Accepts NULL. h is left open. */
SKED_API void sked_worker_free(sked_worker *w);

/* Map a kind to a C handler. SKED_EINVAL for a kind that is not a name
 * or already has a handler. userdata is passed as given. */
SKED_API int sked_worker_handle(sked_worker *w, const char *kind,
                                sked_handler_fn fn, void *userdata);

/* Map a kind to a program: argv[0] is run with posix_spawn semantics (no
 * shell; a name without '/' is searched in PATH), the payload on stdin and
 * SKED_TASK_ID, SKED_TASK_KIND, SKED_TASK_QUEUE, SKED_TASK_ATTEMPT in its
 * environment. Exit 0 is success. timeout_ms (0: the worker's default)
 * kills it. argv is copied. SKED_EINVAL for a kind that is not a name or
 * already has a handler, or an empty argv. */
SKED_API int sked_worker_handle_program(sked_worker *w, const char *kind,
                                        const char *const *argv,
                                        int64_t timeout_ms);

/* Map a kind to long-lived pipe: handler processes, shared by the
 * worker's pool threads: argv is started when a task of the kind finds
 * no process with room (one task at a time each, or as many as the
 * window its hello announces), and gets one task per line on stdin and
 * answers one result per line on stdout, matched by id, as JSON
 * (docs/handlers.md). A process that dies or writes what is not JSON
 * fails the attempts it has in flight and is started again; timeout_ms
 * (0: the worker's default) bounds each task. argv is copied. */
SKED_API int sked_worker_handle_pipe(sked_worker *w, const char *kind,
                                     const char *const *argv,
                                     int64_t timeout_ms);

/* Map a kind to an HTTP endpoint: each task is a POST of its payload to
 * url (http:// or https://), with Sked-Task-Id, -Kind, -Queue, -Attempt,
 * -Max-Attempts and -Fencing headers, over a connection each pool thread
 * keeps. 2xx is success; 429 or 503 with Retry-After retries after that
 * delay; anything else fails the attempt with the status. The
 * Authorization header comes from SKED_HTTP_AUTHORIZATION_<KIND> or
 * SKED_HTTP_AUTHORIZATION in the worker's environment. timeout_ms (0: the
 * worker's default) bounds each request. SKED_EUNSUPPORTED when sked was
 * built without libcurl. */
SKED_API int sked_worker_handle_http(sked_worker *w, const char *kind,
                                     const char *url, int64_t timeout_ms);

/* Webhooks (docs/operations.md "Webhooks"): every end of a task of kind
 * (queue NULL) or in queue (kind NULL) is POSTed to url (http:// or
 * https://) as JSON, signed with SKED_HOOK_SECRET from the environment
 * (Sked-Signature: t=UNIX,v1=HEX, the HMAC-SHA256 of "UNIX." and the
 * body), at least once: the leader enqueues one task of kind sked.hook
 * per end, in the ended task's queue, and this worker (which now serves
 * sked.hook) POSTs it with the HTTP handlers' rules. A kind's url beats
 * its queue's. SKED_EINVAL for a bad name or URL or no secret;
 * SKED_EUNSUPPORTED without libcurl. */
SKED_API int sked_worker_hook(sked_worker *w, const char *kind,
                              const char *queue, const char *url);

/* Run until stopped (or, with until_empty, until nothing is due or
 * running). Registers the node, claims, runs, finishes, renews leases,
 * takes back expired leases of other nodes. First checks that the
 * database user holds every right a worker needs (SELECT, INSERT, UPDATE,
 * DELETE on the tables, SELECT on meta; not on SQLite): SKED_EPERM naming
 * the missing ones, before anything is written. Returns SKED_OK after a
 * clean stop; otherwise the failure that stopped it (registering the node,
 * opening its connections, or, with until_empty, a database that stayed
 * unreachable), with sked_errmsg(h) on the worker's h. */
SKED_API int sked_worker_run(sked_worker *w);

/* Ask a running worker to stop: stop claiming, let running tasks finish
 * within grace_ms, then give back what is left. immediate != 0 gives
 * back at once. Async-signal-safe. */
SKED_API void sked_worker_stop(sked_worker *w, int immediate);

typedef struct sked_worker_counters {
	int64_t claimed, succeeded, failed, dead, lost, late, released;
} sked_worker_counters;
/* A snapshot of the counters. Thread safe: may be called from any thread
 * while sked_worker_run runs. */
SKED_API void sked_worker_get_counters(sked_worker *w,
                                       sked_worker_counters *out);
/* The node id, valid until sked_worker_free(w). */
SKED_API const char *sked_worker_node_id(const sked_worker *w);

/* ------------------------------------------------------------------ */
/* Cron (pure time maths: no clock, no I/O but reading the tz database) */
/* ------------------------------------------------------------------ */

/* Check a cron expression (5 fields, or 6 with leading seconds, or an
 * @alias) and an IANA time zone name (NULL: "UTC"). On failure err (may
 * be NULL with errlen 0) gets one line naming the field and the problem,
 * always NUL-terminated. SKED_ECRON or SKED_ETZ. */
SKED_API int sked_cron_check(const char *expr, const char *tz, char *err,
                             size_t errlen);

/* The next count fire instants strictly after after_ms, in order, into
 * out_ms. Returns SKED_OK, SKED_ECRON, SKED_ETZ (err as for
 * sked_cron_check), or SKED_ENOTFOUND when the expression never fires
 * within the search horizon (a 30th of February); on failure what out_ms
 * holds is unspecified. */
SKED_API int sked_cron_next(const char *expr, const char *tz, int64_t after_ms,
                            size_t count, int64_t *out_ms, char *err,
                            size_t errlen);

/* ------------------------------------------------------------------ */
/* Schedules: named cron schedules that enqueue one task per fire time, */
/* exactly once across the cluster (docs/schedules.md)                 */
/* ------------------------------------------------------------------ */

/* What a worker does about fire times missed while no worker ran. */
typedef enum sked_misfire {
	SKED_MISFIRE_FIRE_ONCE = 0, /* one task for the latest missed fire */
	SKED_MISFIRE_FIRE_ALL = 1,  /* one task per missed fire, the latest
	                               SKED_MAX_CATCHUP of them */
	SKED_MISFIRE_SKIP = 2       /* none: continue after now */
} sked_misfire;

/* What a fire does while the schedule's previous task is unfinished. */
typedef enum sked_overlap {
	SKED_OVERLAP_ALLOW = 0, /* enqueue anyway */
	SKED_OVERLAP_SKIP = 1   /* enqueue nothing for this fire */
} sked_overlap;

#define SKED_MAX_CATCHUP 100

typedef struct sked_schedule_opts {
	const char *tz;      /* IANA zone of the expression; NULL: "UTC" */
	const char *payload; /* NULL: empty */
	size_t payload_len;  /* 0 with a payload: strlen(payload) */
	const char *queue;   /* NULL: "default" */
	int priority;
	int max_attempts; /* 0: SKED_DEFAULT_MAX_ATTEMPTS */
	int misfire;      /* sked_misfire */
	int overlap;      /* sked_overlap */
} sked_schedule_opts;

/* Add the schedule name, or replace its definition. name and kind are
 * names as for tasks; expr is checked with the cron engine and the zone
 * loaded, so a bad one fails here with SKED_ECRON or SKED_ETZ and a
 * one-line sked_errmsg(). A new schedule first fires after the database's
 * now. Replacing keeps the paused state, and keeps the pending next fire
 * when the expression and zone are unchanged (so a worker that re-declares
 * its schedules at start does not lose a missed fire); an identical
 * definition writes nothing. *created_out (may be NULL) is 1 when the
 * schedule is new, and 0 otherwise, failures included. Safe when several
 * processes do it at once. */
SKED_API int sked_schedule_put(sked *h, const char *name, const char *expr,
                               const char *kind, const sked_schedule_opts *opts,
                               int *created_out);
/* Remove, pause (no fires until resumed) or resume a schedule. Tasks it
 * already made are left alone. Resuming continues from the first fire
 * after now: fires missed while paused are not misfires. SKED_ENOTFOUND
 * when there is no such schedule. */
SKED_API int sked_schedule_remove(sked *h, const char *name);
SKED_API int sked_schedule_pause(sked *h, const char *name);
SKED_API int sked_schedule_resume(sked *h, const char *name);

typedef struct sked_schedule {
	char *name, *expr, *tz, *kind, *payload, *queue;
	size_t payload_len;
	int priority, max_attempts, misfire, overlap;
	int enabled;
	int64_t next_fire_ms; /* 0: none */
	int64_t last_fire_ms; /* the latest fire that made a task; 0: none */
} sked_schedule;

/* Every schedule, by name. Free with sked_schedules_free; the strings
 * live until then. */
SKED_API int sked_schedule_list(sked *h, sked_schedule **out, size_t *n);
SKED_API void sked_schedules_free(sked_schedule *s, size_t n);

/* Fire what is due now (the database's now): what every worker does
 * between claims. For applications that enqueue from schedules without
 * running sked_worker_run. *fired (may be NULL) gets the number of tasks
 * made; *next_ms (may be NULL) the database time of the earliest next
 * fire of an enabled schedule (0: none). On failure *fired still counts
 * the tasks made before it (they stay made). */
SKED_API int sked_schedule_tick(sked *h, int *fired, int64_t *next_ms);

/* Enqueue the task of schedule name now, whatever its cron expression
 * says and whether it is paused or not: one new task per call, with the
 * schedule's kind, payload, queue, priority and max_attempts, its
 * schedule name, and as fire time the database's now moved off a whole
 * second (cron fires are on whole seconds, so a manual run never takes a
 * cron fire's place in the unique (schedule, fire time) index, nor a
 * cron fire its). It ignores the overlap policy and leaves next and last
 * fire as they are. One transaction. *id_out (may be NULL) gets the new
 * task's id. A run whose millisecond a task of the schedule holds
 * already (runs in quick succession) goes on after the latest fire time
 * taken. SKED_ENOTFOUND when there is no such schedule; SKED_EBUSY when
 * racing runs took the fire time five times in a row: try again. */
SKED_API int sked_schedule_run(sked *h, const char *name, int64_t *id_out);

/* A schedule's unique key (docs/schedules.md, "Unique keys"; schema 15).
 * sked_schedule_put_unique is sked_schedule_put with the unique options
 * of u (only unique_key, unique_scope, unique_for_ms and unique_replace
 * are read; NULL or a NULL key: none): each fire, and each
 * sked_schedule_run, then enqueues its task as sked_enqueue would with
 * them. A fire whose key is held is skipped (counted as an overlap skip),
 * or with unique_replace moves the waiting holder's run-at to now and
 * gives it the schedule's payload; a sked_schedule_run whose key is held
 * makes nothing and sets *id_out to the holder's id (as sked_enqueue
 * answers). sked_schedule_put defines a schedule
 * with no unique key. Errors as sked_schedule_put, and SKED_EINVAL for
 * unique options sked_enqueue would refuse. */
SKED_API int sked_schedule_put_unique(sked *h, const char *name,
                                      const char *expr, const char *kind,
                                      const sked_schedule_opts *opts,
                                      const sked_enqueue_opts *u,
                                      int *created_out);

typedef struct sked_schedule_unique {
	char *name;     /* the schedule */
	char *key;      /* its unique key */
	int scope;      /* SKED_UNIQUE_LIVE, _PENDING or _PERIOD */
	int replace;    /* 1: a fire debounces the waiting holder */
	int64_t for_ms; /* the period (SKED_UNIQUE_PERIOD), else 0 */
} sked_schedule_unique;

/* The schedules that have a unique key, by name (a schedule without
 * one is not listed). Free with sked_schedule_uniques_free. */
SKED_API int sked_schedule_uniques(sked *h, sked_schedule_unique **out,
                                   size_t *n);
SKED_API void sked_schedule_uniques_free(sked_schedule_unique *u, size_t n);

/* "fire-once", "fire-all", "skip" / "allow", "skip"; and back (-1 when
 * unknown). Static strings; "?" for an unknown value. */
SKED_API const char *sked_misfire_name(int misfire);
SKED_API int sked_misfire_parse(const char *s);
SKED_API const char *sked_overlap_name(int overlap);
SKED_API int sked_overlap_parse(const char *s);

/* ------------------------------------------------------------------ */
/* Cluster-wide limits of a queue (docs/limits.md)                      */
/* ------------------------------------------------------------------ */

/* For sked_queue_set: leave that limit as it is. */
#define SKED_LIMIT_KEEP (-1)

/* Set the limits of queue, across every worker of the cluster:
 * concurrency (at most that many of its tasks running at once), per_key
 * (at most that many running per concurrency key) and rate_n starts in
 * any window of rate_window_ms. Each is SKED_LIMIT_KEEP, 0 (no such
 * limit) or a number from 1 (concurrency and per_key: up to 1000000;
 * rate_n: up to 100000, over 1 ms to 1 day). rate_window_ms is read only
 * when rate_n > 0. A queue left with no limit is unlimited again. One
 * transaction; workers see a new limit at once on a queue that was
 * limited already, and within 2 s on one that was not. SKED_EINVAL (with
 * a one-line sked_errmsg()) for a bad name or number. */
SKED_API int sked_queue_set(sked *h, const char *queue, int concurrency,
                            int per_key, int rate_n, int64_t rate_window_ms);

typedef struct sked_queue_info {
	char *queue;
	int limited;     /* 1: the queue has a limit (concurrency, per key or
	                    rate) */
	int concurrency; /* 0: no such limit */
	int per_key;     /* 0: no such limit */
	int rate_n;      /* 0: no such limit */
	int64_t rate_window_ms;
	int running;      /* its tasks running now, across the cluster */
	int keys_running; /* distinct concurrency keys among them */
	int keys_full;    /* keys with per_key of them running */
	int rate_used;    /* starts in the last rate_window_ms */
	int paused;       /* 1: paused (sked_queue_pause) */
	int fair;         /* 1: fair across its concurrency keys
	                     (sked_queue_set_fair) */
} sked_queue_info;

/* The limited queues, the paused ones, the fair ones and the queues with
 * running tasks,
 * by name. *out is an array of *n (NULL when 0); free with
 * sked_queue_info_free. */
SKED_API int sked_queue_list(sked *h, sked_queue_info **out, size_t *n);
SKED_API void sked_queue_info_free(sked_queue_info *q, size_t n);

/* Pause queue across the cluster (paused 1), or resume it (0): while it
 * is paused no worker claims its tasks; tasks running when it is paused
 * finish normally, and enqueueing into it goes on. Workers see a pause
 * within SKED_QUEUE_PAUSE_BOUND_MS (the interval at which they read the
 * queues' limits again; at once where they claim the queue through its
 * limit row), and a resume within the same bound. Tasks a worker had
 * claimed ahead (prefetch) before it saw the pause still run. Pausing a
 * paused queue, or resuming one that is not, changes nothing. SKED_EINVAL
 * for a bad queue name. */
#define SKED_QUEUE_PAUSE_BOUND_MS 2000
SKED_API int sked_queue_pause(sked *h, const char *queue, int paused);

/* Make queue fair across its concurrency keys (fair 1), or not (0):
 * a claim of a fair queue takes its tasks round-robin across the keys
 * they were enqueued with (tasks without a key are one more key), so
 * that one key's backlog delays another key's first task by about one
 * batch (docs/limits.md, "Fair queues"). Within a priority, a claim's
 * batch takes the first task of each key before the second of any.
 * It holds with the queue's limits, and workers see it as they see a
 * pause (within SKED_QUEUE_PAUSE_BOUND_MS). SKED_EINVAL for a bad queue
 * name. */
SKED_API int sked_queue_set_fair(sked *h, const char *queue, int fair);

/* Give key a weight in fair queue (docs/limits.md, "Fair queues";
 * schema 15): a key of weight N takes N turns a round of the fair claim,
 * one task a turn, against one for a key without a weight. weight 1 to
 * SKED_MAX_WEIGHT; 1 removes the key's weight. At most
 * SKED_MAX_WEIGHTED_KEYS keys of a queue have one (SKED_ETOOBIG past
 * that). The weight is kept whether or not the queue is fair now, and
 * workers see it as they see a pause (within SKED_QUEUE_PAUSE_BOUND_MS).
 * SKED_EINVAL for a bad queue name, key or weight. */
#define SKED_MAX_WEIGHT        100
#define SKED_MAX_WEIGHTED_KEYS 10000
SKED_API int sked_queue_set_weight(sked *h, const char *queue, const char *key,
                                   int weight);

typedef struct sked_queue_weight {
	char *queue, *key;
	int weight; /* 2 to SKED_MAX_WEIGHT */
} sked_queue_weight;

/* Every key weight, by queue and key (queue NULL), or queue's. Free with
 * sked_queue_weights_free. */
SKED_API int sked_queue_weights(sked *h, const char *queue,
                                sked_queue_weight **out, size_t *n);
SKED_API void sked_queue_weights_free(sked_queue_weight *w, size_t n);

/* "N/DURATION" (a rate limit: "100/1m", "20/1s"): N from 1 to 100000,
 * DURATION a sum of NUMBER UNIT (ms, s, m, h, d: "1m", "1h30m"), 1 ms
 * to 1 day. SKED_EINVAL on anything else. */
SKED_API int sked_parse_rate(const char *s, int *n, int64_t *window_ms);

/* ------------------------------------------------------------------ */
/* Cluster locks: named leases in a table, with fencing tokens          */
/* (docs/locks.md)                                                     */
/* ------------------------------------------------------------------ */

typedef struct sked_lock_opts {
	/* acquire: when held elsewhere, keep trying this long; 0: once */
	int64_t wait_ms;
	/* hold the lock at least this long after acquiring it, even when
	 * released earlier (the table keeps no options: pass the same opts
	 * to sked_lock_release) */
	int64_t at_least_ms;
} sked_lock_opts;

/* Take lock name for owner (a name, e.g. host-pid) until the database's
 * now + ttl_ms. *token_out gets the fencing token: larger than that of
 * every earlier acquisition of this lock, by anyone. SKED_ELOCKED when
 * another owner holds it (after waiting opts->wait_ms); sked_errmsg()
 * names the holder and until when. An owner that holds the lock already
 * takes it again with a new token. opts may be NULL. SKED_EINVAL (one
 * line in sked_errmsg()) for a name or owner that is not a name, or a
 * ttl_ms or wait outside 1 ms to a year. */
SKED_API int sked_lock_acquire(sked *h, const char *name, const char *owner,
                               int64_t ttl_ms, const sked_lock_opts *opts,
                               int64_t *token_out);
/* Push the expiry to now + ttl_ms. SKED_ELOST when owner no longer holds
 * the lock with that token (it expired, or someone else took it). */
SKED_API int sked_lock_extend(sked *h, const char *name, const char *owner,
                              int64_t token, int64_t ttl_ms);
/* Give the lock up (or, with opts->at_least_ms, keep it until acquired +
 * at_least). SKED_ELOST as for extend, except that an expired lock no one
 * took since is released quietly. */
SKED_API int sked_lock_release(sked *h, const char *name, const char *owner,
                               int64_t token, const sked_lock_opts *opts);

typedef struct sked_lock_state {
	char owner[SKED_MAX_NAME + 1];         /* "" when free */
	int64_t locked_at_ms, locked_until_ms; /* 0: never */
	int64_t token;  /* of the latest acquisition; 0: never taken */
	int64_t now_ms; /* the database's now when read */
	int held;       /* owner set and locked_until > now */
} sked_lock_state;

/* Read a lock. SKED_ENOTFOUND when it was never taken; SKED_EINVAL for
 * a name that is not a name. */
SKED_API int sked_lock_get(sked *h, const char *name, sked_lock_state *out);

/* How sked_lock_run holds its lock and runs its program. */
typedef struct sked_lock_run_opts {
	/* The owner name; NULL: HOST-PID-RANDOM. */
	const char *owner;
	/* The lease, renewed every ttl_ms / 3; at least 1000 ms. */
	int64_t ttl_ms;
	/* wait_ms and at_least_ms as for sked_lock_acquire/_release. */
	sked_lock_opts lock;
	/* > 2: a descriptor (a pipe's read end, say) on which each byte is a
	 * signal number to pass on to the program's process group, so that
	 * a caller's signal handler can forward SIGTERM with one write().
	 * While the lock is still being waited for, a byte there ends the
	 * wait instead (SKED_ELOCKED). Otherwise: nothing is forwarded. */
	int forward_fd;
} sked_lock_run_opts;

/* How the program of sked_lock_run ended. */
typedef struct sked_lock_run_result {
	int64_t token;   /* the fencing token it ran with; 0: not taken */
	int spawned;     /* 1: the program started */
	int spawn_errno; /* when it did not: why (ENOENT: no such program) */
	int exited;      /* 1: it exited, with exit_code (0..255) */
	int exit_code;
	int signaled; /* 1: a signal signo killed it */
	int signo;
	/* 1: renewals failed until the lease could run out, and the program
	 * was killed (SIGKILL to its group) a fifth of ttl_ms (at least
	 * 200 ms) before it could have; the lock was then released. Also 1
	 * when the lease guard process died and the program was stopped
	 * because nothing could have killed it in time. */
	int expired;
	/* 1: a renewal found the lock taken over (SKED_ELOST) and the
	 * program was killed at once; the lock was not released. */
	int lost;
	/* The release after the program ended: SKED_OK, or its failure
	 * (sked_errmsg() has the detail; the lock then expires by itself at
	 * its TTL). SKED_OK when there was nothing to release (lost). */
	int release_rc;
	/* One line: why the program could not start, or how it ended
	 * ("exit status 3", "killed by signal 9 (Killed)"); "" for exit 0. */
	char error[256];
} sked_lock_run_result;

/* Take lock name (waiting opts->lock.wait_ms while it is held
 * elsewhere), run argv[0] with argv (no shell; a name without '/' is
 * searched in PATH) while holding it, and give it up when the program
 * ends. The program runs in a process group of its own with the
 * caller's stdin, stdout and stderr and no other descriptor, the
 * caller's environment plus SKED_LOCK_NAME and SKED_FENCING_TOKEN, and
 * dies with the calling thread's process (PR_SET_PDEATHSIG). While it
 * runs, the lease is renewed every ttl/3; a lease guard process kills
 * the program's group when no renewal has succeeded for so long that
 * the lease could run out, even while the caller is stuck in a database
 * call or the whole process is stopped. When the program ends, what is
 * left of its group is killed.
 *
 * Returns SKED_OK when the program ran, however it ended: *out says how.
 * SKED_ELOCKED: held elsewhere (sked_errmsg() names the holder and until
 * when); the program did not run. SKED_EINVAL: a bad name, owner,
 * ttl_ms or argv. SKED_EIO: the program could not be started
 * (out->spawned 0, out->spawn_errno and out->error say why; the lock was
 * released), or no lease guard or thread could be started. Otherwise
 * the status of sked_lock_acquire. *out is always filled (zeroed on an
 * early failure). Blocks for the program's whole life and uses h all the
 * while: not from a signal handler, and h not from another thread
 * meanwhile. The caller must not reap children it did not start. */
SKED_API int sked_lock_run(sked *h, const char *name, const char *const *argv,
                           const sked_lock_run_opts *opts,
                           sked_lock_run_result *out);

/* ------------------------------------------------------------------ */
/* Operations: what metrics, health probes and the dashboard read      */
/* (src/model/gauges.c, docs/operations.md)                           */
/* ------------------------------------------------------------------ */

/* The live part of one queue: tasks not yet ended. */
typedef struct sked_queue_gauge {
	char queue[SKED_MAX_NAME + 1];
	int64_t pending;  /* status pending, due or not */
	int64_t retrying; /* status retry (waiting before the next attempt) */
	int64_t running;
	int64_t due;               /* pending or retrying with run_at <= now */
	int64_t oldest_due_age_ms; /* now - run_at of the oldest due task;
	                              0 when none is due */
	int64_t blocked;           /* waiting for parents (docs/workflows.md) */
} sked_queue_gauge;

typedef struct sked_cluster_gauges {
	sked_queue_gauge *queues; /* by queue name; free with free() */
	size_t nqueues;
	int64_t nodes, nodes_alive; /* node rows; heartbeat within a lease */
	int64_t now_ms;             /* the database's now */
	int64_t locks, locks_held;  /* lock rows; held by an owner now */
	int64_t schedules, schedules_paused;
} sked_cluster_gauges;

/* One statement: counts of unfinished tasks per queue, the oldest due
 * task's age, and the nodes. It reads only rows that are not ended (the
 * partial indexes of claimable and running tasks where the product has
 * them), so its cost does not grow with finished work. Free with
 * sked_cluster_gauges_free (NULL-safe). */
SKED_API int sked_cluster_gauges_get(sked *h, sked_cluster_gauges *out);
SKED_API void sked_cluster_gauges_free(sked_cluster_gauges *g);

/* What this process did since it started, across its handles: schedule
 * fires (tasks made by schedules), fires skipped because the schedule's
 * previous task was unfinished (overlap skip) or its unique key was held,
 * lock acquisitions that
 * succeeded and that found the lock held elsewhere. Thread safe. */
typedef struct sked_process_counters {
	int64_t schedule_fires, lock_acquisitions, lock_busy;
	int64_t schedule_skips;
	/* schedules this process found past fire times they had missed
	 * (downtime), handled by their misfire policy (one per misfire) */
	int64_t schedule_misfires;
} sked_process_counters;
SKED_API void sked_process_counters_get(sked_process_counters *out);

/* Finished attempts per minute over the last minutes (at most 120),
 * newest minute last: ok[i] succeeded, failed[i] failed (any other
 * outcome but given back). Exact for the window, counted per minute and
 * outcome by the database: the attempts that ended tasks from a range of
 * {p}task_done's (status, finished_at) index, and the run rows newest
 * first by id, 20000 a statement, until a whole chunk finished more than
 * five minutes before the window; so the cost follows the attempts in
 * the window, not the history. ok and failed have room for minutes
 * entries, zeroed first; SKED_EINVAL for minutes outside 1..120. */
SKED_API int sked_throughput(sked *h, int minutes, int64_t *ok,
                             int64_t *failed);

/* The id of the task with this unique key; SKED_ENOTFOUND if none. */
SKED_API int sked_task_find_unique(sked *h, const char *key, int64_t *id);

/* Retry (or cancel) many tasks in one transaction: each id as
 * sked_retry (sked_cancel) would, skipping those whose state does not
 * allow it. *done (may be NULL) gets how many changed. */
SKED_API int sked_retry_ids(sked *h, const int64_t *ids, size_t n,
                            int64_t *done);
SKED_API int sked_cancel_ids(sked *h, const int64_t *ids, size_t n,
                             int64_t *done);

/* Retry every task matching f (status dead, retry or cancelled; queue,
 * kind, node and creation bounds as in sked_task_list), or cancel every
 * one (status pending, running or retry), in one statement. f->limit and
 * f->before_id are ignored.
 * SKED_EINVAL for another status. */
SKED_API int sked_retry_where(sked *h, const sked_list_filter *f,
                              int64_t *done);
SKED_API int sked_cancel_where(sked *h, const sked_list_filter *f,
                               int64_t *done);

/* How many tasks match f (status -1: any; queue, kind, node and
 * creation bounds as in sked_task_list) into *n: what sked_retry_where
 * or sked_cancel_where would look at. f->limit and f->before_id are
 * ignored. One COUNT per status, on the table that status lives in.
 * SKED_EINVAL for an unknown status or a queue or kind that is not a
 * name. */
SKED_API int sked_task_count(sked *h, const sked_list_filter *f, int64_t *n);

/* Remove node rows whose heartbeat is older than older_than_ms and that
 * hold no running task. *removed may be NULL. */
SKED_API int sked_nodes_prune(sked *h, int64_t older_than_ms, int64_t *removed);
/* A worker prunes nodes dead for longer than this, once a minute. */
#define SKED_NODE_PRUNE_MS (24LL * 3600 * 1000)

/* Retention: remove ended tasks (status SKED_SUCCEEDED, SKED_DEAD or
 * SKED_CANCELLED; -1: all three) that finished more than older_than_ms
 * ago (the database's clock), with their runs. Works in batches of 500,
 * each its own short transaction, until none is left or max_tasks are
 * gone (0: no bound). *removed (may be NULL) counts the tasks removed,
 * also on failure (the batches before it stay removed). A removed task's
 * unique key can be used again. SKED_EINVAL for another status or a
 * negative age. */
SKED_API int sked_prune(sked *h, int status, int64_t older_than_ms,
                        int64_t max_tasks, int64_t *removed);

/* The worker's own pruner: when any age is > 0, a thread of the worker
 * (on a connection of its own) removes ended tasks older than their
 * status's age, one node of the cluster at a time (the cluster lock
 * "sked-prune"), about once a minute and until it has caught up. 0 keeps
 * that status for ever. Call before sked_worker_run. */
SKED_API int sked_worker_set_retention(sked_worker *w, int64_t succeeded_ms,
                                       int64_t dead_ms, int64_t cancelled_ms);
/* Lanes: while a worker has a backlog (its last claim came back full)
 * on one queue without a cluster-wide limit, it keeps up to `lanes`
 * claims in flight at once, each on a connection of its own (on
 * PostgreSQL each one also records the outcomes the pool has completed),
 * so that the server's cores work in parallel. 1: one claim at a time,
 * on the worker's own connection; 0: the default, 2. SQLite always uses
 * one (its single write lock would only be fought over), as does a
 * worker of several queues. A worker with lanes >= 2 opens that many
 * connections more than the three of sked_worker_new's note. Call
 * before sked_worker_run; SKED_EINVAL outside 0-64. */
SKED_API int sked_worker_set_lanes(sked_worker *w, int lanes);
/* Connections: at most n at once for this worker, h's included (0, the
 * default: no cap). An idle worker holds two: h (it claims, and listens
 * for new tasks on PostgreSQL) and the heartbeat's (leases and the node
 * row, never queued behind a claim). The finisher's, the lanes' and the
 * pruner's open when work needs them, share what the cap leaves (n - 2),
 * and close once unused for 10 s; when none can be had the worker goes on
 * without (h records outcomes, claims are one at a time). A connection
 * the database refuses is the same: logged once, tried again with
 * back-off; only h itself is needed. Call before sked_worker_run;
 * SKED_EINVAL unless 0 or 2-1000. */
SKED_API int sked_worker_set_max_connections(sked_worker *w, int n);

typedef struct sked_lock_row {
	char *name;
	char *owner; /* NULL when free */
	int64_t locked_at_ms, locked_until_ms, token;
	int held; /* owner set and locked_until > now */
} sked_lock_row;

/* Every cluster lock, by name. Free with sked_lock_rows_free; the strings
 * live until then. */
SKED_API int sked_lock_list(sked *h, sked_lock_row **out, size_t *n);
SKED_API void sked_lock_rows_free(sked_lock_row *l, size_t n);

/* A histogram of durations with fixed bounds (seconds):
 * sked_hist_bound(i) for i < SKED_HIST_BUCKETS; bucket[i] counts the
 * observations <= that bound and > the one before (not cumulative); the
 * last slot counts the rest. */
#define SKED_HIST_BUCKETS 14
typedef struct sked_hist {
	int64_t bucket[SKED_HIST_BUCKETS + 1];
	int64_t count;
	double sum_s;
} sked_hist;
/* The bound of bucket i; 1e300 for an i out of range. */
SKED_API double sked_hist_bound(int i);

typedef struct sked_worker_kind_metrics {
	char kind[SKED_MAX_NAME + 1];
	int64_t succeeded, failed, dead, late, released;
	sked_hist handler; /* how long handlers of this kind ran */
} sked_worker_kind_metrics;

typedef struct sked_worker_metrics {
	sked_worker_counters c;
	int slots;       /* concurrency */
	int busy;        /* handlers running */
	int held;        /* tasks claimed and waiting for a free thread:
	                    held ahead (docs/design.md, "Prefetch") */
	int unrecorded;  /* results waiting to be recorded */
	sked_hist claim; /* claim statements (each batch) */
	int64_t claim_errors, renewals, renewal_errors, finish_errors;
	int running; /* sked_worker_run is under way, registered */
	/* ms since the claim loop, the heartbeat (a successful renewal) and
	 * the finisher last made progress; the finisher counts as making
	 * progress while it has nothing to record. -1: not started. */
	int64_t loop_age_ms, beat_age_ms, finish_age_ms;
	int64_t lease_ms, poll_ms;
	sked_worker_kind_metrics *kinds; /* one per handler; free with
	                                    sked_worker_metrics_free */
	size_t nkinds;
	/* new connections after a lost one, by connection (SKED_CONN_*):
	 * made, and tried in vain */
	int64_t reconnects[4], reconnect_failures[4];
	/* waits on sked's own rows longer than lock_wait_warn_ms, by row
	 * (SKED_WAIT_*), one per wait */
	int64_t lock_waits[3];
} sked_worker_metrics;
/* The rows a worker may wait on (sked_worker_metrics.lock_waits). */
enum { SKED_WAIT_SCHEDULE, SKED_WAIT_LOCK, SKED_WAIT_QUEUE_LIMIT };
enum {
	SKED_CONN_CLAIMS,
	SKED_CONN_FINISHES,
	SKED_CONN_LEASES,
	SKED_CONN_PRUNER
};

/* A snapshot of the worker's own numbers. Thread safe: may be called from
 * any thread while sked_worker_run runs. */
SKED_API int sked_worker_get_metrics(sked_worker *w, sked_worker_metrics *out);
SKED_API void sked_worker_metrics_free(sked_worker_metrics *m);

/* ------------------------------------------------------------------ */
/* Names                                                              */
/* ------------------------------------------------------------------ */

/* 1 when s is a valid name (queue, kind, node, lock, schedule:
 * [A-Za-z0-9][A-Za-z0-9_.:-]*, at most SKED_MAX_NAME bytes), else 0. */
SKED_API int sked_name_valid(const char *s);

#ifdef __cplusplus
}
#endif
#endif /* SKED_H */
