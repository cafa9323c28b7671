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
 * Newlines in the message become spaces; long messages are truncated.
 * Thread safe; preserves errno. Must not be called from inside a sink. */
void sked__log(int level, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* 1 when a line at level would be written: test it before building an
 * expensive message. Thread safe. */
int sked__log_enabled(int level);

/* The level's name ("error", "warn", "info", "debug"), or NULL. */
const char *sked__log_level_name(int level);

/* The inverse: SKED_LOG_* for a name (case-insensitive), -1 if unknown. */
int sked__log_level_parse(const char *name);

#endif /* SKED_UTIL_LOG_H */
