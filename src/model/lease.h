/*
 * lease.h — what a worker does with the tasks it holds, and its node row.
 *
 * Layer: the model, used by the worker. Renewing, listing and taking
 * back leases and the node rows are lease.c's; finishing a held task is
 * outcome.c's (outcome.h, included here for the worker's callers), and
 * the one claim entry point is take.c's (take.h).
 */
#ifndef SKED_LEASE_H
#define SKED_LEASE_H

#include <stdint.h>

#include "claim/claim.h"
#include "handle/internal.h"
#include "model/outcome.h"

/* Extend the leases of every task node_id holds to now + lease_ms, then
 * list the (id, attempt) pairs it still holds. *ids and *attempts are
 * malloc'd. A renewal the database rolled back as a deadlock, lock wait
 * timeout or busy database is tried again (bounded, as a finish is). Where
 * the dialect's SKED_SQL_RENEW skips rows another transaction holds and
 * answers how many (PostgreSQL), it is run again for them, up to 5 times
 * 10 to 40 ms apart; a row still locked then fails the renewal
 * (SKED_EBUSY), as waiting for it did. */
int sked__renew(sked *h, const char *node_id, int64_t lease_ms, int64_t **ids,
                int **attempts, int *n) __attribute__((warn_unused_result));

/* List the (id, attempt) pairs node_id holds, without renewing them.
 * *ids and *attempts are malloc'd (NULL when *n is 0). */
int sked__held(sked *h, const char *node_id, int64_t **ids, int **attempts,
               int *n) __attribute__((warn_unused_result));

/* Take back up to 100 tasks whose lease ran out (any node's): retry
 * them, or mark them dead when their attempts are spent; one run row
 * each. *taken counts them. */
int sked__reap(sked *h, int *taken) __attribute__((warn_unused_result));

/* Register this node (replacing a dead node of the same id; refusing a
 * live one with SKED_ESTATE), heartbeat it, remove it. */
int sked__node_register(sked *h, const char *node_id, int64_t lease_ms,
                        int slots) __attribute__((warn_unused_result));
/* unserved.c: what node_id serves, written once after it registers:
 * kinds and queues each ",a,b," or NULL for every one */
int sked__node_serves(sked *h, const char *node_id, const char *kinds,
                      const char *queues);
/* The heartbeat; where the database pushes wake-ups also the node's rank
 * among the live nodes that serve what it serves, and their number
 * (util/wake.h), else *rank and *of 0. */
int sked__node_beat(sked *h, const char *node_id, int busy, int *rank, int *of)
        __attribute__((warn_unused_result));
int sked__node_unregister(sked *h, const char *node_id);

/* Whether tasks are running, waiting to retry, or pending and due, in
 * queue (NULL: all), of kinds (",a,b,"; NULL: every kind): *count is 0
 * when none are, else positive (how many on most products; on SQLite 1
 * or 2, whose statement stops at the first running and the first
 * claimable row). */
int sked__outstanding(sked *h, const char *queue, const char *kinds,
                      int64_t *count) __attribute__((warn_unused_result));

#endif /* SKED_LEASE_H */
