/*
 * internal.h — what a model file includes: the handle core and the seams
 * below it.
 *
 * Layer: the handle (floor 4), for the model, the claim strategies and
 * the worker. The handle itself and every operation on it are in
 * handle.h; this header only gathers them. What a model file lends
 * another is declared in the model's own headers (model/queue.h,
 * model/done.h, model/deps.h), never here: a header declares nothing of
 * a floor above its own (build/layers).
 */
#ifndef SKED_INTERNAL_H
#define SKED_INTERNAL_H

#include "handle/handle.h"
#include "util/buf.h"

#endif /* SKED_INTERNAL_H */
