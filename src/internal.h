/*
 * internal.h — what a model file includes: the handle core and the seams
 * below it.
 *
 * Layer: the model (queue.c, lease.c, sched.c, lock.c, ops.c, schema.c,
 * the claim strategies) and the worker. The handle itself and every
 * operation on it are in handle.h; this header only gathers them.
 */
#ifndef SKED_INTERNAL_H
#define SKED_INTERNAL_H

#include "handle.h"
#include "util/buf.h"

/* queue.c: the filter fragments a task list and a bulk change share
 * (queue, kind, node, creation window), appended to sql with their
 * values bound after p[*np]; p needs room for five more. */
void sked__filter_fill(sked *h, const sked_list_filter *f, sked_buf *sql,
                       sked_val *p, int *np);

#endif /* SKED_INTERNAL_H */
