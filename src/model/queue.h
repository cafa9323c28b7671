/*
 * queue.h — what queue.c (reading and steering tasks) lends the other
 * model files: the filter a task list and a bulk change share, steering
 * inside the caller's transaction, the first id a statement answers.
 *
 * Layer: the model (floor 6). The public forms are sked.h's (sked_list,
 * sked_cancel, sked_retry, ...).
 */
#ifndef SKED_MODEL_QUEUE_H
#define SKED_MODEL_QUEUE_H

#include "handle/internal.h"
#include "util/buf.h"

/* The filter fragments a task list and a bulk change share (queue, kind,
 * node, creation window), appended to sql with their values bound after
 * p[*np]; p needs room for five more. */
void sked__filter_fill(sked *h, const sked_list_filter *f, sked_buf *sql,
                       sked_val *p, int *np);

/* Steering inside the caller's transaction (the bulk forms share them).
 * Cancel one live task and move it to {p}task_done; retry one task (a
 * waiting one in place, an ended one back from {p}task_done); move ended
 * tasks ids back as pending. *changed: the tasks changed. A unique index
 * refusing a retry (SKED_DBE_UNIQUE) is explained, after the rollback,
 * by sked__retry_refused. */
int sked__cancel_in_tx(sked *h, int64_t id, int64_t *changed);
int sked__retry_in_tx(sked *h, int64_t id, int64_t *changed);
int sked__retry_back(sked *h, const int64_t *ids, int n, int64_t *changed);
int sked__retry_refused(sked *h, int64_t id);

/* The first id that statement stmt (parameters p) answers into *id; 0
 * when it answers no row (enqueue.c's unique keys share it). */
int sked__one_id(sked *h, sked_sql stmt, const sked_val *p, int np,
                 int64_t *id);

#endif /* SKED_MODEL_QUEUE_H */
