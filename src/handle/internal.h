/*
 * internal.h — what a model file includes: the handle core and the seams
 * below it.
 *
 * Layer: the model (queue.c, enqueue.c, lease.c, sched.c, lock.c, admin.c, schema.c,
 * the claim strategies) and the worker. The handle itself and every
 * operation on it are in handle.h; this header only gathers them.
 */
#ifndef SKED_INTERNAL_H
#define SKED_INTERNAL_H

#include "handle/handle.h"
#include "util/buf.h"

/* queue.c: the filter fragments a task list and a bulk change share
 * (queue, kind, node, creation window), appended to sql with their
 * values bound after p[*np]; p needs room for five more. */
void sked__filter_fill(sked *h, const sked_list_filter *f, sked_buf *sql,
                       sked_val *p, int *np);

/* done.c: move the ended tasks among ids (n of them) from {p}task to
 * {p}task_done; run inside the transaction that ended them. Live ids are
 * left alone. */
int sked__move_done(sked *h, const int64_t *ids, int n);

/* done.c (docs/workflows.md): the ended tasks among ids tell their
 * dependents, inside the ending transaction, before the rows leave
 * {p}task. deps.c: an enqueue's parents checked, counted and locked
 * (sked__deps_parents, *uniq to free), and each child linked to them. */
int sked__deps_ended(sked *h, const int64_t *ids, int n);
/* done.c: the ended rows among ids (values p, n of them) leave {p}task,
 * their dependents told, in the caller's transaction */
int sked__drop_ended(sked *h, const int64_t *ids, const sked_val *p, int n);
int sked__deps_check(sked *h, const sked_enqueue_opts *o);
int sked__deps_parents(sked *h, const sked_enqueue_opts *o, size_t nchild,
                       int64_t **uniq, int *nuniq, int *open, int64_t *bad,
                       int *bad_st);
int sked__deps_link(sked *h, int64_t child, const int64_t *parents, int n,
                    int open, int policy, int64_t bad, int bad_st,
                    int *pending);
/* deps.c: qsort's order of int64_t values */
int sked__cmp_i64(const void *a, const void *b);
/* done.c: while h->cascade.on, the ids of the tasks a parent's end
 * cancelled with it are appended to h->cascade (sked_cancel_graph) */
int sked__cascade_add(sked *h, const int64_t *ids, int n);

/* queue.c: steering inside the caller's transaction (admin.c's bulk forms
 * share them). Cancel one live task and move it to {p}task_done; retry
 * one task (a waiting one in place, an ended one back from
 * {p}task_done); move ended tasks ids back as pending. *changed: the
 * tasks changed. A unique index refusing a retry (SKED_DBE_UNIQUE) is
 * explained, after the rollback, by sked__retry_refused. */
int sked__cancel_in_tx(sked *h, int64_t id, int64_t *changed);
int sked__retry_in_tx(sked *h, int64_t id, int64_t *changed);
int sked__retry_back(sked *h, const int64_t *ids, int n, int64_t *changed);
int sked__retry_refused(sked *h, int64_t id);

/* queue.c: the first id that statement stmt (parameters p) answers into
 * *id; 0 when it answers no row (enqueue.c's unique keys share it). */
int sked__one_id(sked *h, sked_sql stmt, const sked_val *p, int np,
                 int64_t *id);

#endif /* SKED_INTERNAL_H */
