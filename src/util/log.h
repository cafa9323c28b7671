/*
 * log.h — the library's one logging call.
 *
 * Layer: util. Formats a line and hands it to the sink set with the public
 * sked_set_log (default: one line on stderr). What deserves a log line,
 * and masking passwords before they reach one, is the caller's business
 * (see sked__url_redact).
 */
#ifndef SKED_UTIL_LOG_H
#define SKED_UTIL_LOG_H

/* Log one line at level (SKED_LOG_ERROR .. SKED_LOG_DEBUG) when the
 * threshold lets it through. The line reads
 *   2026-11-29T19:43:11.123Z sked[PID] warn: message
 * or, in the JSON form, one object with time, level, pid, node (a
 * worker's), the facts (below; an error line's message is its error
 * unless a fact says otherwise) and msg.
 * Newlines in the message become spaces; long messages are truncated.
 * Thread safe; preserves errno. Must not be called from inside a sink. */
void sked__log(int level, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* The facts of a line about a task. In the JSON form (--log-format json)
 * each one that is set is a key of the line's object: task_id, attempt,
 * kind, queue, outcome (succeeded, failed, dead, lost, late, released…),
 * duration_ms, error. The text form is the message alone, which should
 * say them in words too. */
typedef struct sked__log_facts {
	long long task_id; /* 0: none */
	int attempt;       /* 0: none */
	const char *kind;  /* NULL: none, and so on */
	const char *queue;
	const char *outcome;
	long long duration_ms; /* < 0: none */
	const char *error;
} sked__log_facts;
#define SKED__LOG_FACTS_NONE                                                   \
	{                                                                      \
		0, 0, NULL, NULL, NULL, -1, NULL                               \
	}

/* sked__log with the facts f (may be NULL: then a message that starts
 * "task N attempt A" gives task_id and attempt, as for sked__log). */
void sked__log_task(int level, const sked__log_facts *f, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* 1 when a line at level would be written: test it before building an
 * expensive message. Thread safe. */
int sked__log_enabled(int level);

/* The level's name ("error", "warn", "info", "debug"), or NULL. */
const char *sked__log_level_name(int level);

/* The inverse: SKED_LOG_* for a name (case-insensitive), -1 if unknown. */
int sked__log_level_parse(const char *name);

#endif /* SKED_UTIL_LOG_H */
