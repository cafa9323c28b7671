/*
 * wake.h — what a wake-up says, and whom it wakes (docs/design.md,
 * "Wake-ups").
 *
 * Layer: util (pure, no I/O). Where the database can push (PostgreSQL
 * NOTIFY), whatever makes tasks due says so on the channel {p}task with a
 * payload this file writes and reads:
 *
 *     w1 R N HOP QUEUE KIND
 *
 * R a number that places the window (the new task's id, or a random
 * number), N how many tasks became due (at least 1), HOP how many times
 * the wake-up was passed on, QUEUE and KIND the queue and kind of the
 * tasks, or "-" when they differ or are not known. Every listening worker
 * hears every payload, but only those it addresses claim: of the m live
 * workers that serve the same kinds and queues (its "group", ranked by
 * node id; the heartbeat reads a worker's rank k), the N + 1 from rank
 * R mod m on, so a lone task costs two claims per group whatever the
 * size of the fleet, and a burst of N reaches N + 1 workers. A payload
 * that is not this (an older sked, a NOTIFY by hand) wakes everyone.
 */
#ifndef SKED_UTIL_WAKE_H
#define SKED_UTIL_WAKE_H

#include <stddef.h>
#include <stdint.h>

#include "sked.h"

/* the longest payload: "w1", R, N, HOP and two names, with spaces */
#define SKED_WAKE_MAX (2 + 1 + 10 + 1 + 20 + 1 + 10 + 2 * (1 + SKED_MAX_NAME))
/* a wake-up is passed on at most this many times (and at most once round
 * the group): past it, the leader's poll and a slot that frees find the
 * task */
#define SKED_WAKE_HOPS 8
/* n for a wake-up that is for every worker of the group */
#define SKED_WAKE_ALL (1LL << 40)

typedef struct sked_wake {
	uint32_t r;                    /* places the window */
	int64_t n;                     /* tasks that became due, >= 1 */
	int hop;                       /* times passed on */
	char queue[SKED_MAX_NAME + 1]; /* "" when not said */
	char kind[SKED_MAX_NAME + 1];  /* "" when not said */
} sked_wake;

/* The payload of w into buf (SKED_WAKE_MAX + 1 bytes suffice). A queue or
 * kind that is not a valid name is written "-". Returns the length, or -1
 * when buf is too short. */
int sked__wake_format(char *buf, size_t len, const sked_wake *w);

/* Reads a payload. Returns 1 and fills *w when s is one; 0 when it is
 * not (the caller then wakes as if addressed). */
int sked__wake_parse(const char *s, sked_wake *w);

/* How many of a group of m workers a wake-up for n tasks addresses:
 * n + 1, at most m. */
int sked__wake_width(int64_t n, int m);

/* Where rank k of a group of m stands in w's window: 0 for its first,
 * 1 for the next, ...; -1 when outside it. m <= 0 (the rank not known
 * yet) stands every worker first. */
int sked__wake_place(const sked_wake *w, int k, int m);

/* The wake-up the first of a window passes on when it has no room: the
 * next window of the group, one hop further. Returns 0 when it goes no
 * further (SKED_WAKE_HOPS, or the group gone round). */
int sked__wake_next(const sked_wake *w, int m, sked_wake *next);

#endif /* SKED_UTIL_WAKE_H */
