/*
 * enqueue.h — the steps of an enqueue (enqueue.c) that another way of
 * enqueueing repeats inside its own transaction: a graph's tasks
 * (graph.c) are checked and inserted one by one as sked_enqueue's are.
 *
 * Layer: the model (floor 6), for graph.c.
 */
#ifndef SKED_MODEL_ENQUEUE_H
#define SKED_MODEL_ENQUEUE_H

#include "handle/internal.h"

/* A task's kind, payload and options as sked_enqueue checks them (not
 * its parents: deps.h), before any database call; one line on h. */
int sked__enqueue_check(sked *h, const char *kind, const char *payload,
                        size_t payload_len, const sked_enqueue_opts *o);
/* Insert one pending task in the caller's transaction (no unique key,
 * no parents: the caller links them, deps.h); *id gets its id. */
int sked__enqueue_insert(sked *h, const char *kind, const char *payload,
                         size_t payload_len, const sked_enqueue_opts *o,
                         int64_t *id);

#endif /* SKED_MODEL_ENQUEUE_H */
