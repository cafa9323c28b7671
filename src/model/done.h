/*
 * done.h — ended tasks leave {p}task for {p}task_done (done.c), telling
 * their dependents on the way.
 *
 * Layer: the model (floor 6), for every model file that ends or steers
 * tasks (ending.h includes it for outcome.c and lease.c).
 */
#ifndef SKED_MODEL_DONE_H
#define SKED_MODEL_DONE_H

#include "handle/internal.h"

/* Move the ended tasks among ids (n of them) from {p}task to
 * {p}task_done; run inside the transaction that ended them. Live ids are
 * left alone. */
int sked__move_done(sked *h, const int64_t *ids, int n);
/* The ended tasks among ids tell their dependents (docs/workflows.md),
 * inside the ending transaction, before the rows leave {p}task. */
int sked__deps_ended(sked *h, const int64_t *ids, int n);
/* The ended rows among ids (values p, n of them) leave {p}task, their
 * dependents told, in the caller's transaction */
int sked__drop_ended(sked *h, const int64_t *ids, const sked_val *p, int n);
/* The same after a copy that answered (id, status, dependents) of the
 * rows it copied (SKED_CAP_INSERT_RETURNING): copied says which of them
 * are parents, so nothing is read for it. */
int sked__drop_copied(sked *h, const int64_t *ids, const sked_val *p, int n,
                      const sked_res *copied);
/* While h->cascade.on, the ids of the tasks a parent's end cancelled with
 * it are appended to h->cascade (sked_cancel_graph). */
int sked__cascade_add(sked *h, const int64_t *ids, int n);

#endif /* SKED_MODEL_DONE_H */
