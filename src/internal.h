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

#endif /* SKED_INTERNAL_H */
