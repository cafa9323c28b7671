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

/* Until src/model/enqueue.c includes model/deps.h and model/queue.h
 * (it is being rewritten on another branch), the four functions it
 * borrows are declared here too: the one exception build/layers allows
 * (ALLOWED_UP in tests/build/t_layers.py); drop both together. */
int sked__deps_check(sked *h, const sked_enqueue_opts *o);
int sked__deps_parents(sked *h, const sked_enqueue_opts *o, size_t nchild,
                       int64_t **uniq, int *nuniq, int *open, int64_t *bad,
                       int *bad_st);
int sked__deps_link(sked *h, int64_t child, const int64_t *parents, int n,
                    int open, int policy, int64_t bad, int bad_st,
                    int *pending);
int sked__one_id(sked *h, sked_sql stmt, const sked_val *p, int np,
                 int64_t *id);

#endif /* SKED_INTERNAL_H */
