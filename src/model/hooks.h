/*
 * hooks.h — webhooks (on_end, docs/operations.md "Webhooks"): the
 * leader's turn that follows the events feed's task ends with a cursor
 * in {p}hook_cursor and enqueues one delivery task (kind sked.hook) per
 * end that a kind's or a queue's on_end names.
 *
 * Layer: the model (floor 6), for the worker's leader chore (worker.c).
 */
#ifndef SKED_MODEL_HOOKS_H
#define SKED_MODEL_HOOKS_H

#include "handle/internal.h"

/* the kind of the delivery tasks; its own ends make no webhook */
#define SKED_HOOK_KIND "sked.hook"

/* one on_end: a kind's (queue NULL) or a queue's (kind NULL) */
typedef struct sked_hook_rule {
	char *kind, *queue, *url;
} sked_hook_rule;

/* One turn: read the ends after the cursor (at most limit events), and
 * in one transaction move the cursor on (only if no other node moved it
 * since it was read: turn_id names this turn) and enqueue a delivery
 * for each end matched (a kind's rule before its queue's), in the
 * ended task's queue, payload {"url": URL, "event": {…}}. *made gets
 * how many were enqueued; *more (may be NULL) 1 when the page was full
 * (more may be there to read at once). The first turn ever starts at the
 * feed's now. */
int sked__hooks_turn(sked *h, const sked_hook_rule *rules, size_t n,
                     const char *turn_id, size_t limit, int *made, int *more);

#endif /* SKED_MODEL_HOOKS_H */
