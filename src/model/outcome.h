/*
 * outcome.h — recording the end of attempts (outcome.c): one finish, its
 * variants as data.
 *
 * Layer: the model, used by the worker (through lease.h) and take.c.
 * Every operation on a held task is a conditional update on (id, owner
 * node, attempt, status running): a node whose lease was taken over
 * changes nothing, and its late result is recorded as a run with outcome
 * "late", not applied.
 */
#ifndef SKED_OUTCOME_H
#define SKED_OUTCOME_H

#include <stdint.h>

#include "claim/claim.h"
#include "handle/internal.h"

/* The end of one attempt, as the worker hands it to sked__finish. */
typedef struct sked_outcome {
	int64_t id;
	int attempt, max_attempts;
	int64_t started_ms;
	/* OK, FAIL: the handler's verdict. RELEASE: a handler that was
	 * started and then stopped by a shutdown gives the task back; the
	 * attempt keeps its number (its run row is "released") and the
	 * retry budget grows by one, so a release costs no retry.
	 * UNSTARTED: the attempt never reached a handler (prefetched at a
	 * shutdown, a claim whose reply was lost): the task goes back with
	 * its attempt returned and no run row, since nothing ran. */
	enum {
		SKED_FIN_OK,
		SKED_FIN_FAIL,
		SKED_FIN_RELEASE,
		SKED_FIN_UNSTARTED
	} what;
	int64_t retry_delay_ms; /* SKED_FIN_FAIL with attempts left */
	int exit_code;          /* -1: none */
	const char *error;      /* or NULL */
	const char *output;     /* or NULL */
	const char *result;     /* what the handler left (or NULL): kept on the
	                       ended row when this attempt ends the task */
	/* set by sked__finish: */
	int applied;  /* 0: the lease was lost; recorded as late */
	int dead;     /* the task is dead now */
	int deferred; /* an array finish left it to the generic path */
	int recorded; /* this outcome is in the database; after a failed
	                 sked__finish only the others are to be tried again */
} sked_outcome;

/* The longest retry delay recorded (366 days): a larger one, whoever
 * asked for it, is recorded as this, so that every engine's time
 * arithmetic stays in range. */
#define SKED_RETRY_DELAY_MAX_MS (366LL * 24 * 3600 * 1000)

/* The error recorded for an attempt whose own values the database
 * refused even after sked__text_clean (see sked__finish). */
#define SKED_REFUSED_ERROR                                                     \
	"the database refused this attempt's values; recorded as failed "      \
	"without its error, output and result (see the worker's log)"

/* Record n outcomes in one transaction (task updates and run rows), or,
 * when the database refuses a value in the batch (SKED_DBE_DATA), in
 * halves until the refused outcome is alone: that one is recorded as a
 * failed attempt with SKED_REFUSED_ERROR and no output, so one bad value
 * never holds back the others. Retry delays are bounded by
 * SKED_RETRY_DELAY_MAX_MS first. On failure, o[i].recorded tells what
 * was recorded all the same. */
int sked__finish(sked *h, const char *node_id, sked_outcome *o, int n)
        __attribute__((warn_unused_result));

/* Record n outcomes (n may be 0) and claim up to req->limit tasks (which
 * may be 0): in one statement or transaction where the handle fuses
 * (sked__finish_fuses), else sked__finish then sked__claim. On failure the outcomes are to be tried
 * again and, as after any failed claim, tasks may be held with no job
 * (the statement may have committed); *out holds what was claimed if
 * anything was read back (free with sked__claimed_free). */
int sked__finish_claim(sked *h, const char *node_id, sked_outcome *o, int n,
                       const sked_claim_req *req, sked_claimed **out, int *nout)
        __attribute__((warn_unused_result));

/* 1 when outcomes and the next claim can go in one round trip on h:
 * one statement where the dialect has SKED_CAP_FUSED and the claims are
 * skip-locked ones anyway (PostgreSQL), one IMMEDIATE transaction on
 * SQLite's own strategy. */
int sked__finish_fuses(const sked *h);

#endif /* SKED_OUTCOME_H */
