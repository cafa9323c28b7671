/*
 * lock.h — named cluster locks: leases in a table with fencing tokens.
 *
 * Layer: the model. The public API is in sked.h (sked_lock_*); this
 * header only names the module for the house rule that every .c includes
 * its own header first. Running a program under a lock (renewing the
 * lease while it runs, stopping it when the lease could be lost) is
 * lock_run.c's (sked_lock_run).
 */
#ifndef SKED_LOCK_H
#define SKED_LOCK_H

#include "handle/internal.h"

/* Retry pauses while waiting for a held lock, in ms. */
#define SKED__LOCK_WAIT_MIN_MS 50
#define SKED__LOCK_WAIT_MAX_MS 1000

/* The longest lease and the longest wait accepted: a year. */
#define SKED__LOCK_MAX_MS (366LL * 24 * 3600 * 1000)

#endif /* SKED_LOCK_H */
