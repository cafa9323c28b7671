/*
 * cli.h — what the files of the `sked` program share.
 *
 * Folder cli/base/ (floor 9 of cli/'s, docs/design.md): the sked program,
 * a client of <sked.h> only (and of sked_cli.h, its helpers from libsked that are
 * not installed).
 *
 * Layer: the command-line program, a client of <sked.h> only (never of
 * anything under src/). main.c parses the global flags and dispatches;
 * config.c reads the INI file; out.c turns library status codes into
 * sysexits(3) codes and prints tables and JSON; each cmd_*.c implements
 * a family of commands. The scheduling itself is left to the library.
 */
#ifndef SKED_CLI_H
#define SKED_CLI_H

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <jansson.h>
#include <sked.h>
#include <sked_cli.h>

#define CLI_DEFAULT_URL "sqlite:sked.db"

/* One [handler.KIND] section of the config file, or one --handler flag. */
struct cli_handler {
	char *kind;
	char *command;      /* split on blanks into argv; no shell */
	int64_t timeout_ms; /* 0: the worker's default */
	int line;           /* where it was defined in the file; 0: a flag */
};

/* One on_end of the config file: [kind.NAME] (queue NULL) or
 * [queue.NAME] (kind NULL) on_end = URL (webhooks, docs/operations.md). */
struct cli_hook {
	char *kind, *queue, *url;
	int line;
};

/* One [schedule.NAME] section of the config file. Unset strings are NULL,
 * numbers 0; misfire and overlap are checked names or NULL. */
struct cli_schedule {
	char *name, *cron, *tz, *kind, *payload, *queue;
	char *misfire, *overlap;
	int priority, max_attempts;
	/* unique_key … unique_replace: `cron add --unique …`; scope -1 unset */
	char *unique_key;
	int unique_scope, unique_replace;
	int64_t unique_for_ms;
	int line;
};

/* One [queue.NAME] section of the config file: the limits as
 * sked_queue_set takes them (SKED_LIMIT_KEEP when not given, 0 for
 * "none"). */
struct cli_queue {
	char *name;
	int concurrency, per_key, rate_n;
	int64_t rate_ms;
	int fair; /* fair = on|off: 1 or 0; -1 when not given */
	int line;
};

/* The config file, as read. Unset strings are NULL, unset numbers 0 (which
 * the library reads as "its default"). */
struct cli_config {
	const char *path;
	char *database, *strategy, *prefix; /* [sked] */
	char *node_id, *queues;             /* [worker] */
	char *http;                         /* [worker] http = ADDR:PORT */
	int concurrency;
	int64_t lease_ms, poll_ms, grace_ms, timeout_ms;
	int64_t retry_base_ms, retry_max_ms;
	int prefetch;                 /* [worker] prefetch */
	int lanes;                    /* [worker] lanes (0: the default) */
	int max_connections;          /* [worker] max_connections (0: no cap) */
	int64_t lock_wait_warn_ms;    /* [worker] lock_wait_warn: -1 never */
	int64_t wait_db_ms;           /* [worker] wait_db: -1 forever */
	int wait_db_set;              /* wait_db was given */
	struct cli_handler *handlers; /* [handler.KIND] */
	size_t nhandlers;
	struct cli_schedule *schedules; /* [schedule.NAME] */
	size_t nschedules;
	struct cli_queue *queues_limits; /* [queue.NAME] */
	size_t nqueues_limits;
	struct cli_hook *hooks; /* [kind.NAME] and [queue.NAME] on_end */
	size_t nhooks;
	/* [retention] succeeded, dead, cancelled: ages, 0 = keep for ever;
	 * keep_set[i] says the file gave it (else SKED_KEEP_*) */
	int64_t keep_ms[3];
	int keep_set[3];
};

/* The state of one invocation. */
struct cli {
	const char *url;      /* resolved: flag, env, config, default */
	const char *strategy; /* resolved, or NULL for "auto" */
	const char *prefix;   /* from the config, or NULL */
	int json;             /* --json */
	struct cli_config cfg;
	sked *h; /* opened on demand by cli_open() */
};

/* Options every command accepts. */
#define CLI_OPT_HELP 'h'
#define CLI_OPT_JSON 0x100
#define CLI_COMMON_OPTIONS                                                     \
	{"help", no_argument, NULL, CLI_OPT_HELP},                             \
	{                                                                      \
		"json", no_argument, NULL, CLI_OPT_JSON                        \
	}

typedef int (*cli_cmd_fn)(struct cli *c, int argc, char **argv);

/* ---- open.c ---- */

/* Open c->h (once) on the resolved URL, creating or upgrading the schema
 * when needed. Returns 0, or a sysexits code after printing one line. */
int cli_open(struct cli *c);
/* The same for a command that only reads or steers what exists (list,
 * show, stats, nodes, cancel, retry, cron ls/rm/pause/resume): it
 * never creates a database nor its schema. A sqlite: file that does not
 * exist is EX_NOINPUT; a database without the current schema is
 * sked_open's SKED_ESCHEMA (EX_CONFIG). */
int cli_open_existing(struct cli *c);
/* cli_open_existing for `info`: a database whose schema is missing or at
 * another version opens all the same, with *schema_ok 0. */
int cli_open_info(struct cli *c, int *schema_ok);
/* cli_open for a daemon: while the database is unavailable
 * (SKED_EUNAVAILABLE), say so once and retry with backoff (0.5 s doubling
 * to 30 s) for wait_ms (-1: forever; 0: fail at once). */
int cli_open_wait(struct cli *c, int64_t wait_ms);

/* ---- help.c ---- */

enum { CLI_CMD_HIDDEN = 1, CLI_CMD_NOCONFIG = 2 };

/* One entry of main.c's command table. */
struct cli_cmd {
	const char *name;
	cli_cmd_fn fn;             /* NULL: not available yet */
	const struct cli_cmd *sub; /* subcommands, ended by a NULL name */
	const char *usage;         /* what follows "sked " */
	const char *summary;       /* one line for the command list */
	const char *details;       /* the flags, for `sked help COMMAND` */
	unsigned flags;
};

/* The table whose text cli_help prints (main.c gives it once, at start). */
void cli_help_table(const struct cli_cmd *commands);
/* The entry of table named name, or NULL. */
const struct cli_cmd *cli_cmd_find(const struct cli_cmd *table,
                                   const char *name);
/* Every command with its summary; one command's usage and flags. */
void cli_help_overview(FILE *f);
void cli_help_one(FILE *f, const struct cli_cmd *t);
/* Print the usage of a command ("enqueue", "cron next") to f. */
void cli_help(FILE *f, const char *name);

/* ---- out.c ---- */

/* "sked: " + message + newline on stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* With --log-format json (or SKED_LOG_FORMAT=json), cli_err writes its
 * line through sked's log, as a JSON object at level error whose error
 * key is the message, like every other line on stderr. */
void cli_err_json(int on);
/* The sysexits(3) code for a library status code. */
int cli_exit_code(int rc);
/* Report a library failure: "sked: WHAT: DETAIL", where DETAIL is
 * sked_errmsg(h) when there is a handle and it says something, else the
 * code's description. Returns cli_exit_code(rc). */
int cli_fail(const sked *h, int rc, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* A usage error: prints the line, then a hint; returns EX_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
/* Report getopt_long()'s '?' or ':' for command cmd; returns EX_USAGE. */
int cli_opt_error(const char *cmd, int ch, char **argv);

/* Strict parsers for flag values: on failure they print
 * "sked: FLAG: 'VALUE' is not …" and return EX_USAGE; else 0. */
int cli_parse_prefetch(const char *flag, const char *s, int *out);
int cli_parse_int(const char *flag, const char *s, long long min, long long max,
                  long long *out);
int cli_parse_duration(const char *flag, const char *s, int64_t *ms);
int cli_parse_time(const char *flag, const char *s, int64_t *ms);
/* A positive task id given as a positional argument. */
int cli_parse_id(const char *cmd, const char *s, int64_t *id);

/* Time as ISO-8601 UTC with milliseconds, always ("….000Z" for a whole
 * second), or "-" for 0. buf needs 32 bytes. */
const char *cli_time(int64_t ms, char *buf, size_t len);
/* The same in whole seconds, "2026-03-08T07:30:00Z": cron fire instants. */
const char *cli_time_sec(int64_t ms, char *buf, size_t len);
/* 1 when a failed write went to a pipe its reader closed (errno EPIPE,
 * now or at an earlier call): a normal end for a listing, reported by
 * nothing. */
int cli_broken_pipe(void);

/* JSON values: a time (null for 0), a string (null for NULL; bytes that are
 * not UTF-8 become U+FFFD). cli_json_print writes v to stdout, one
 * document and a newline, and releases it; returns 0 or EX_IOERR. */
json_t *cli_json_time(int64_t ms);
/* How long the oldest due task has waited: null for 0, none due, where
 * the text form says "-" (`stats`, GET /api/stats). */
json_t *cli_json_due_age(int64_t ms);
json_t *cli_json_str(const char *s, size_t len);
json_t *cli_json_cstr(const char *s);
/* A task's result (docs/workflows.md): valid JSON as that value, other
 * text as a string, NULL as null. */
json_t *cli_json_result(const char *s);
int cli_json_print(json_t *v);

/* A text table: add rows of ncols strings, print with aligned columns. */
struct cli_table;
struct cli_table *cli_table_new(size_t ncols, const char *const *headers);
void cli_table_add(struct cli_table *t, const char *const *cells);
void cli_table_print(const struct cli_table *t, FILE *f);
void cli_table_free(struct cli_table *t);

/* Read a whole file ("-": stdin) of at most max bytes; *len gets the
 * size. Returns 0, EX_NOINPUT when it cannot be read, or EX_DATAERR when
 * it is bigger than max (the line printed gives its size, or a bound). The
 * buffer grows with the input; CLI_READ_UNBOUNDED: no limit but memory.
 * *out is NUL-terminated; free it. */
#define CLI_READ_UNBOUNDED (SIZE_MAX / 2)
int cli_read_file(const char *flag, const char *path, size_t max, char **out,
                  size_t *len);

/* Parse only the common flags (--help, --json) of command cmd and expect
 * exactly nargs positional arguments (what names them in the usage
 * error). Returns -1 to go on, else an exit code. */
int cli_simple_args(struct cli *c, const char *cmd, int argc, char **argv,
                    int nargs, const char *what);

/* Split a command on spaces and tabs into a NULL-terminated argv (no
 * quoting, no shell). Free with cli_argv_free. NULL when empty or out of
 * memory (errno tells which: 0 empty, ENOMEM). */
char **cli_split_argv(const char *command);
void cli_argv_free(char **argv);

/* CLOCK_MONOTONIC, for intervals and deadlines (every process on the
 * host shares it), in nanoseconds and milliseconds. */
static inline int64_t
cli_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int64_t
cli_mono_ms(void)
{
	return cli_mono_ns() / 1000000;
}

/* Sleep that long, going on after a signal handler ran. */
static inline void
cli_sleep_ns(int64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000),
	                      (long)(ns % 1000000000)};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static inline void
cli_sleep_ms(int64_t ms)
{
	cli_sleep_ns(ms * 1000000);
}

/* ---- values.c ---- */

/* --prefetch / [worker] prefetch: auto (0), off or 0 (SKED_PREFETCH_OFF),
 * or N up to 10000 (adaptive, at most N); -1 for anything else */
int cli_prefetch_value(const char *s, int *out);

/* Whether a secret a user chose (a bearer token, a password) is too weak
 * to guard anything: shorter than min_len bytes, a byte that a header
 * cannot carry (control characters, blanks), or fewer than min_distinct
 * different bytes ("aaaaaaaa", eight spaces). NULL when it will do, else
 * why not, a phrase for "…: the token is <phrase>". */
const char *cli_secret_weak(const char *s, size_t min_len, int min_distinct);

/* --on-parent-failure, and on_parent_failure in the JSON API and a
 * graph file: "cancel" or "ignore" into *out (SKED_PARENT_*); -1 for
 * anything else */
int cli_parent_failure_value(const char *s, int *out);

/* run_at in the JSON API and a graph file: an ISO-8601 time that names
 * its zone (Z or an offset after the time of day), as --at must, into
 * *ms; -1 for anything else */
int cli_zoned_time_value(const char *s, int64_t *ms);

/* ---- config.c ---- */

/* Read the INI file at path into cfg. Returns 0, or EX_CONFIG after
 * printing "sked: FILE:LINE: problem". */
int cli_config_load(const char *path, struct cli_config *cfg);
void cli_config_free(struct cli_config *cfg);

#endif /* SKED_CLI_H */
