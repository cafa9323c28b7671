/*
 * ending.h — what each end of an attempt writes: the table of endings,
 * and writing one (ending.c).
 *
 * Layer: the model, for outcome.c and lease.c only.
 */
#ifndef SKED_ENDING_H
#define SKED_ENDING_H

#include <stdint.h>

#include "handle/internal.h"
#include "model/done.h"
#include "model/outcome.h"

typedef struct sked_ending {
	sked_sql sql;        /* the conditional update (the rows way),
	                        guarded by id, owner node, attempt and
	                        status running */
	int status;          /* the status it leaves (the arrays way) */
	const char *outcome; /* its run row's outcome */
	int delay, error;    /* the update takes ?4 delay, ?5 error (or ?4
	                        error): see dialect.c */
	int ends;            /* the task ends: moved to the ended table,
	                        which carries the attempt (no run row) */
	int records;         /* a run row when applied, a late one when
	                        not; 0: nothing ran, nothing to record */
} sked_ending;

/* The ending of o: succeeded, failed with a retry, failed and dead
 * (attempts spent), released, or given back (never started). */
const sked_ending *sked__ending_of(const sked_outcome *o);

/* The error of a late run row: the result came after the lease was lost
 * and is kept as a record only. */
void sked__late_error(char err[600], const char *outcome, const char *error);

/* One outcome the rows way, inside the caller's transaction: its
 * ending's update, then its run row (a late one when the update changed
 * nothing). Sets o->applied and o->dead. */
int sked__finish_one(sked *h, const char *node, sked_outcome *o)
        __attribute__((warn_unused_result));

/* One run row (the run table's history of attempts). */
int sked__run_insert(sked *h, int64_t id, int attempt, const char *node,
                     int64_t started_ms, const char *outcome, int exit_code,
                     const char *error, const char *output)
        __attribute__((warn_unused_result));

#endif /* SKED_ENDING_H */
