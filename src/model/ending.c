/*
 * ending.c — what each end of an attempt writes (see ending.h).
 *
 * Layer: the model, below outcome.c (a batch of outcomes) and lease.c
 * (a lease taken back writes a run row too). One table, endings[], says
 * what varies between the ends of an attempt; sked__finish_one writes
 * one of them the rows way.
 */
#include "model/ending.h"

#include <stdio.h>

enum { END_OK, END_RETRY, END_DEAD, END_RELEASE, END_GIVE_BACK };

static const sked_ending endings[] = {
        [END_OK] = {.sql = SKED_SQL_FINISH_OK,
                    .status = SKED_SUCCEEDED,
                    .outcome = SKED_OUTCOME_SUCCEEDED,
                    .ends = 1,
                    .records = 1},
        [END_RETRY] = {.sql = SKED_SQL_FINISH_RETRY,
                       .status = SKED_RETRY,
                       .outcome = SKED_OUTCOME_FAILED,
                       .delay = 1,
                       .error = 1,
                       .records = 1},
        [END_DEAD] = {.sql = SKED_SQL_FINISH_DEAD,
                      .status = SKED_DEAD,
                      .outcome = SKED_OUTCOME_FAILED,
                      .error = 1,
                      .ends = 1,
                      .records = 1},
        [END_RELEASE] = {.sql = SKED_SQL_RELEASE,
                         .status = SKED_PENDING,
                         .outcome = SKED_OUTCOME_RELEASED,
                         .records = 1},
        /* an attempt that never reached a handler: its number is given
         * back, no run row (the outcome names what the arrays way would
         * say; it never gets one) */
        [END_GIVE_BACK] = {.sql = SKED_SQL_GIVE_BACK,
                           .status = SKED_PENDING,
                           .outcome = SKED_OUTCOME_RELEASED},
};

const sked_ending *
sked__ending_of(const sked_outcome *o)
{
	switch (o->what) {
	case SKED_FIN_OK:
		return &endings[END_OK];
	case SKED_FIN_RELEASE:
		return &endings[END_RELEASE];
	case SKED_FIN_UNSTARTED:
		return &endings[END_GIVE_BACK];
	default:
		return &endings[o->attempt >= o->max_attempts ? END_DEAD
		                                              : END_RETRY];
	}
}

/* The error of a late run row: the result came after the lease was
 * lost, and is kept as a record only. */
void
sked__late_error(char err[600], const char *outcome, const char *error)
{
	snprintf(err, 600, "late %s result, not applied (lease lost)%s%s",
	         outcome, error ? ": " : "", error ? error : "");
}

int
sked__run_insert(sked *h, int64_t id, int attempt, const char *node,
                 int64_t started_ms, const char *outcome, int exit_code,
                 const char *error, const char *output)
{
	sked_val p[8] = {
	        SKED_INTV(id),
	        SKED_INTV(attempt),
	        SKED_TEXTV(node),
	        SKED_INTV(started_ms),
	        SKED_TEXTV(outcome),
	        exit_code >= 0 ? SKED_INTV(exit_code) : SKED_NULLV,
	        SKED_TEXTV(error),
	        SKED_TEXTV(output),
	};
	return sked__q(h, SKED_SQL_RUN_INSERT, p, 8, NULL);
}

/* One outcome the rows way: its ending's update, then its run row (a
 * late one when the update changed nothing: someone else owns this
 * attempt now, its lease expired and taken back or the task cancelled). */
int
sked__finish_one(sked *h, const char *node, sked_outcome *o)
{
	const sked_ending *e = sked__ending_of(o);
	sked_val p[5] = {SKED_INTV(o->id), SKED_TEXTV(node),
	                 SKED_INTV(o->attempt)};
	int np = 3;
	if (e->delay)
		p[np++] = SKED_INTV(o->retry_delay_ms);
	if (e->error)
		p[np++] = SKED_TEXTV(o->error);
	int rc = sked__q(h, e->sql, p, np, NULL);
	if (rc != SKED_OK)
		return rc;
	o->applied = sked__affected(h) == 1;
	o->dead = o->applied && e->status == SKED_DEAD;
	if (!e->records)
		return SKED_OK;
	if (!o->applied) {
		char err[600];
		sked__late_error(err, e->outcome, o->error);
		return sked__run_insert(h, o->id, o->attempt, node,
		                        o->started_ms, SKED_OUTCOME_LATE,
		                        o->exit_code, err, o->output);
	}
	if (e->ends)
		return SKED_OK;
	return sked__run_insert(h, o->id, o->attempt, node, o->started_ms,
	                        e->outcome, o->exit_code, o->error, o->output);
}
