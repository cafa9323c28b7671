/*
 * sked_cli.h — what only sked's own programs take from libsked besides
 * the C API: durations, times and URLs as text, and the retention
 * defaults of `sked worker` and `sked prune`. Not installed.
 *
 * Layer: include/, beside sked.h (open to every floor). The functions
 * are defined in src/util/ (dur.c, timefmt.c, url.c), which the library
 * uses for its own messages too. They were declared in sked.h until ABI
 * 4 and stay exported from libsked.so.4, since within one ABI functions
 * are only added (docs/abi.md); no installed header declares them, so a
 * program outside this tree has no business calling them.
 */
#ifndef SKED_CLI_HELPERS_H
#define SKED_CLI_HELPERS_H

#include "sked.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How long the CLI keeps ended tasks by default (--keep-*): the worker's
 * pruner (sked_worker_set_retention) and `sked prune`. */
#define SKED_KEEP_SUCCEEDED_MS (7LL * 24 * 3600 * 1000)  /* a week */
#define SKED_KEEP_DEAD_MS      (30LL * 24 * 3600 * 1000) /* a month */
#define SKED_KEEP_CANCELLED_MS (30LL * 24 * 3600 * 1000)

/* "500ms", "30s", "10m", "2h", "1d", and sums such as "1h30m".
 * SKED_EINVAL on anything else (including a bare number). */
SKED_API int sked_parse_duration(const char *s, int64_t *ms);
/* ISO-8601: "2026-03-08T07:30:00Z", fractions, "+01:00" offsets,
 * "2026-03-08 07:30:00" (UTC), "2026-03-08" (midnight UTC). */
SKED_API int sked_parse_time(const char *s, int64_t *ms);
/* "2026-03-08T07:30:00.123Z": always with milliseconds, ".000" on a
 * whole second, so every time has one shape. buf needs 32 bytes.
 * Returns buf. */
SKED_API char *sked_format_time(int64_t ms, char *buf, size_t len);
/* "1h30m", "500ms". buf needs 32 bytes. Returns buf. */
SKED_API char *sked_format_duration(int64_t ms, char *buf, size_t len);
/* Copy url into buf with any password masked as "***". Returns buf. */
SKED_API char *sked_redact_url(const char *url, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* SKED_CLI_HELPERS_H */
