/*
 * tz.h — IANA time zones read from the system tz database (TZif files),
 * and the two questions cron asks of them: what is the UTC offset at an
 * instant, and which instants show a given wall-clock time.
 *
 * Layer: pure time maths. sked__tz_load is the only function that does I/O
 * (it reads one TZif file); everything else is a pure function of a loaded
 * zone. We never touch the TZ environment variable or localtime(): sked is
 * multi-threaded. Choosing what a cron schedule does in a DST gap or
 * overlap is cron.c's business, not this file's.
 *
 * A loaded sked_tz is immutable: share it between threads freely.
 */
#ifndef SKED_TZ_H
#define SKED_TZ_H

#include <stddef.h>
#include <stdint.h>

typedef struct sked_tz sked_tz;

/* 1 when name is an acceptable zone name: 1..255 bytes of
 * [A-Za-z0-9_+/-], no leading '/', no "..". Says nothing about whether
 * the zone exists. */
int sked__tz_name_valid(const char *name);

/* Load zone name ("Europe/Berlin") from $TZDIR or /usr/share/zoneinfo.
 * "UTC" and "Etc/UTC" are built in and need no file. On failure returns
 * SKED_ETZ (or SKED_ENOMEM) and writes one line into err (may be NULL),
 * such as "unknown time zone 'Mars/Base'"; *out is then NULL.
 * Free the zone with sked__tz_free (which accepts NULL). */
int sked__tz_load(const char *name, sked_tz **out, char *err, size_t errlen)
        __attribute__((warn_unused_result));
void sked__tz_free(sked_tz *tz);

/* The name the zone was loaded by. Borrowed from tz. */
const char *sked__tz_name(const sked_tz *tz);

/* The UTC offset in seconds (east positive) in effect at utc_s. */
int sked__tz_offset_at(const sked_tz *tz, int64_t utc_s);

/* The UTC instants whose wall clock shows local_s (local wall-clock seconds
 * counted as if they were UTC). Returns 0 when local_s falls in a gap
 * (spring forward), 1 normally, 2 when it occurs twice (fall back); the
 * instants are written to out in increasing order. */
int sked__tz_local_to_utc(const sked_tz *tz, int64_t local_s, int64_t out[2]);

/* Transitions: instants where the offset (or only the abbreviation) may
 * change. next: the first transition strictly after utc_s; prev: the last
 * transition at or before utc_s. Return 1 and set *at, or 0 when there is
 * none (a fixed-offset zone, or before the first one). */
int sked__tz_next_transition(const sked_tz *tz, int64_t utc_s, int64_t *at);
int sked__tz_prev_transition(const sked_tz *tz, int64_t utc_s, int64_t *at);

#endif /* SKED_TZ_H */
