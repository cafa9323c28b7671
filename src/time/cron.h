/*
 * cron.h — cron expressions: parse once, then ask for the next fire
 * instant after a given time in a given zone.
 *
 * Folder src/time/ (floor 1, docs/design.md): pure time maths: the tz
 * database (tz.c), cron expressions (cron.c), fire times (fire.c). No
 * database, no threads; calls only util/.
 *
 * Layer: pure time maths. Nothing here reads a clock or does I/O: `after`
 * and the zone come in as arguments (the scheduler passes the database's
 * now). Storing schedules and claiming fires is sched.c's business. The
 * syntax and the daylight-saving policy are documented in docs/cron.md.
 *
 * A parsed sked_cron is immutable: share it between threads freely.
 */
#ifndef SKED_CRON_H
#define SKED_CRON_H

#include <stddef.h>
#include <stdint.h>

#include "time/tz.h"

typedef struct sked_cron sked_cron;

/* How far sked__cron_next looks before giving up. */
#define SKED_CRON_HORIZON_YEARS 100

/* Parse expr: 5 fields (minute hour day-of-month month day-of-week), 6
 * with a leading seconds field, or an @alias. On failure returns
 * SKED_ECRON (or SKED_ENOMEM), *out is NULL and err (may be NULL) gets one
 * line naming the field and the problem, e.g.
 * "day of month: 32 is out of range 1-31". Free with sked__cron_free
 * (accepts NULL). */
int sked__cron_parse(const char *expr, sked_cron **out, char *err,
                     size_t errlen) __attribute__((warn_unused_result));
void sked__cron_free(sked_cron *c);

/* 1 when the expression has a seconds field (6 fields), else 0. */
int sked__cron_has_seconds(const sked_cron *c);

/* The first fire instant strictly after after_ms (UTC milliseconds), the
 * expression read as wall-clock time in tz (NULL: UTC), into *next_ms
 * (always a whole second). SKED_ENOTFOUND when there is none within
 * SKED_CRON_HORIZON_YEARS; SKED_EINVAL when after_ms is beyond any
 * sensible calendar (|after_ms| > about 300,000 years). */
int sked__cron_next(const sked_cron *c, const sked_tz *tz, int64_t after_ms,
                    int64_t *next_ms) __attribute__((warn_unused_result));

#endif /* SKED_CRON_H */
