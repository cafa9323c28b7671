/*
 * wake.h — telling listening workers that tasks became due (PostgreSQL
 * NOTIFY on {p}task; the payload and whom it wakes: util/wake.h).
 *
 * Layer: the model. Enqueues, a schedule's fire and a parent's end call
 * sked__wake in the transaction that made the tasks due (a NOTIFY is
 * delivered at commit); the worker passes a wake-up on with
 * sked__wake_send. Both are best effort where the caller says so: a
 * worker polls anyway, so a lost wake-up costs latency, not a task.
 */
#ifndef SKED_MODEL_WAKE_H
#define SKED_MODEL_WAKE_H

#include <stdint.h>

#include "handle/internal.h"
#include "util/wake.h"

/* Wake the workers n tasks of queue and kind (NULL: not one, or not
 * known) concern; r places the window (a task's id, or sked__wake_r()).
 * SKED_OK at once where the database cannot push. */
int sked__wake(sked *h, uint32_t r, int64_t n, const char *queue,
               const char *kind);

/* Send w as it is (a wake-up passed on). */
int sked__wake_send(sked *h, const sked_wake *w);

/* A number to place a window that no id places. */
uint32_t sked__wake_r(void);

#endif /* SKED_MODEL_WAKE_H */
