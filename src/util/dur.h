/*
 * dur.h — durations as people write them: "500ms", "30s", "1h30m".
 *
 * Layer: util (pure, no I/O, no clock). Callers decide what a duration
 * means (a lease, a delay, a timeout); this module only reads and writes it.
 */
#ifndef SKED_UTIL_DUR_H
#define SKED_UTIL_DUR_H

#include <stddef.h>
#include <stdint.h>

/* Parse s, a sum of terms NUMBER UNIT with UNIT one of ms, s, m, h, d
 * ("500ms", "1h30m", "1m30s"), into *ms. A bare number, an empty string,
 * a sign, an unknown unit, or a value beyond int64 milliseconds is
 * SKED_EINVAL (and *ms is left alone). */
int sked__dur_parse(const char *s, int64_t *ms)
        __attribute__((warn_unused_result));

/* Write ms as the shortest sum of units ("1h30m", "500ms", "0s"); a
 * negative ms gets a leading '-'. 32 bytes always suffice; a shorter buf
 * is truncated (and still NUL-terminated when len > 0). */
void sked__dur_format(int64_t ms, char *buf, size_t len);

#endif /* SKED_UTIL_DUR_H */
