/*
 * limits.h — cluster-wide limits of a queue: concurrency, per-key
 * concurrency and rate (docs/limits.md).
 *
 * Layer: the model, beside queue.c; it calls down into the claim seam
 * (claim.h) and the registry (dialect.h). Two files: limited.c claims
 * (sked__limits_claim, which take.c picks for a limited queue: it sends a
 * claim for a queue without limits to sked__claim unchanged and claims a
 * limited queue in one transaction that serialises on the queue's limit
 * row), with the pure parts it rests on (the rate's sliding window,
 * picking candidates under a per-key limit: tests/unit/test_limits.c);
 * limits.c sets, pauses and lists limits (the public sked_queue_*).
 */
#ifndef SKED_LIMITS_H
#define SKED_LIMITS_H

#include <stdint.h>

#include "claim/claim.h"
#include "util/buf.h"

struct sked;
struct sked_limits; /* the handle's view of which queues are limited */

/* How often a handle reads the list of limited queues again. */
#define SKED_LIMITS_REFRESH_MS 2000

/* Claim as sked__claim does, honouring every queue's limits: req->queue
 * set and limited: the limited claim; req->queue NULL (every queue):
 * each limited queue by the limited claim, then the rest by the plain
 * claim of every queue but the limited ones. A claim of a queue the
 * handle does not know to be limited is sked__claim's, unchanged. */
int sked__limits_claim(struct sked *h, const sked_claim_req *req,
                       sked_claimed **out, int *n)
        __attribute__((warn_unused_result));

/* 1 when req may take the plain claim path as it is: no queue it asks
 * for is limited, as far as h knows (refreshing that view when due).
 * For other claim paths (a fused finish and claim) that must leave
 * limited queues to sked__limits_claim. */
int sked__limits_plain(struct sked *h, const sked_claim_req *req);

void sked__limits_free(struct sked_limits *l);

/* The limits changed (limits.c): h reads its list again before its next
 * claim. */
void sked__limits_stale(struct sked *h);

/* ---- pure: the rate window ---- */

/* The rate's record is "T:C,T:C…", T the database's epoch ms of a claim
 * (ascending), C the tasks it started. Starts in the sliding window
 * (now - window_ms, now]: the sum of C over entries with T > now -
 * window_ms. A malformed record counts as full (n_max), so that a
 * damaged row can only slow a queue down. */
int sked__rate_used(const char *log, int64_t now_ms, int64_t window_ms,
                    int n_max);
/* The latest T of the record; INT64_MIN when it has none. */
int64_t sked__rate_last(const char *log);
/* The record after k more starts at t_ms: entries out of the window
 * (T <= now - window_ms) dropped, t_ms:k appended (merged with an entry
 * of the same T). */
void sked__rate_add(const char *log, int64_t now_ms, int64_t window_ms,
                    int64_t t_ms, int k, sked_buf *out);

/* Candidates in claim order with their keys (NULL: none): pick up to
 * want of them, so that no key ends with more than per_key running
 * (running[] counts, for the keys in keys[], what runs already; nkeys of
 * them). per_key 0: no per-key limit. Writes the picked indexes to
 * pick[] and returns how many. */
int sked__limits_pick(const char *const *cand_keys, int ncand, int want,
                      int per_key, const char *const *keys, const int *running,
                      int nkeys, int *pick);

/* ---- pure: the fair order (docs/limits.md, "Fair queues") ---- */

/* A fair claim's candidate: a due task of the queue, read key by key. */
typedef struct sked_fair_cand {
	int64_t id;
	char *key; /* NULL: no concurrency key (a group of its own) */
	int priority;
	int64_t run_at_ms;
	int weight; /* its key's turns a round (queue set --weight); 0: 1 */
	int round;  /* set by sked__fair_order */
	int wrap;   /* set by sked__fair_order: its key is not after `after`
	               (1), or its key is `after` still in its turn (-1) */
} sked_fair_cand;

/* Candidates c[0..n), grouped by key (NULL the same group) and in claim
 * order (priority descending, run_at, id) within each group: give each
 * its round, its place among the tasks of its key and priority (0 for
 * the first), and sort them by priority descending, round, then key in
 * turn: the keys after `after` (the key of the same handle's last pick,
 * "" for the group of no key, which sorts as ""; NULL: none) in key
 * order, then the others from the first; then run_at, id. Within a
 * priority, every key's first task comes before any key's second, and a
 * claim of one task takes the keys in turn. */
void sked__fair_order(sked_fair_cand *c, int n, const char *after);

/* The same with weights (schema 15): a key of weight w takes w turns a
 * round, one task a turn, so a round holds a key's first w tasks, the
 * next round the w after them, and so on. `used` is how many turns the
 * key `after` has had in its current turn of w (what sked__fair_used
 * said after the last claim): while used < w the key keeps its turn and
 * its next w - used tasks come first, so claims of one task at a time
 * still give a key of weight 3 three tasks for another key's one.
 * sked__fair_order is this with the turn of `after` over. */
void sked__fair_order_turns(sked_fair_cand *c, int n, const char *after,
                            int used);

/* After a claim that took c[pick[0]] … c[pick[npick - 1]] (in the fair
 * order): the turns the last key picked has had in its current turn,
 * counting on from `used` when it was `after`'s turn that went on. */
int sked__fair_used(const sked_fair_cand *c, const int *pick, int npick,
                    const char *after, int used);

#endif /* SKED_LIMITS_H */
