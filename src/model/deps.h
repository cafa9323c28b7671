/*
 * deps.h — tasks that wait for others (deps.c, docs/workflows.md): an
 * enqueue's parents checked, counted and locked, each child linked to
 * them.
 *
 * Layer: the model (floor 6), for enqueue.c.
 */
#ifndef SKED_MODEL_DEPS_H
#define SKED_MODEL_DEPS_H

#include "handle/internal.h"

int sked__deps_check(sked *h, const sked_enqueue_opts *o);
/* qsort's order of int64_t values: parents and children are locked in
 * ascending id order (docs/workflows.md) */
int sked__cmp_i64(const void *a, const void *b);
/* Count nchild more dependents on parent id, in the enqueue's
 * transaction (a live parent's row is locked by it): *st -1 while it is
 * live, else the status it ended with. SKED_EINVAL when there is no such
 * task. */
int sked__deps_count(sked *h, int64_t id, size_t nchild, int *st);
/* The parents of o, checked, counted and locked (*uniq to free). */
int sked__deps_parents(sked *h, const sked_enqueue_opts *o, size_t nchild,
                       int64_t **uniq, int *nuniq, int *open, int64_t *bad,
                       int *bad_st);
int sked__deps_link(sked *h, int64_t child, const int64_t *parents, int n,
                    int open, int policy, int64_t bad, int bad_st,
                    int *pending);

#endif /* SKED_MODEL_DEPS_H */
