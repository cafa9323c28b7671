/*
 * guard.h — the lease guard: a deadline for handler programs that holds
 * even while the worker process itself cannot run.
 *
 * Layer: the worker's execution side, beside exec.h (no SQL, no tasks,
 * only the monotonic clock, which every process on a host shares). The
 * worker's own watchdog stops a handler before its lease can run out,
 * but the watchdog is a thread of the worker: when the worker process is
 * frozen (SIGSTOP, a debugger, a throttled or swapped-out process) it
 * stops too, and the handler would go on running after its lease ended
 * and another node had started the task again.
 *
 * The guard is a small process forked by the worker. It shares one page
 * of memory with it: a slot per pool thread holding the process group of
 * the handler program that thread runs and that program's deadline. The
 * worker moves a deadline forward each time a renewal succeeds; the
 * guard kills the process group with SIGKILL once the clock passes the
 * deadline, whatever the worker is doing. It leaves its parent's process
 * group (a Ctrl-Z or a group SIGSTOP of the worker does not stop it),
 * ignores the signals a terminal or a supervisor sends, closes every
 * inherited descriptor, and dies with the worker (PR_SET_PDEATHSIG).
 *
 * What it cannot cover: a whole host (or container) frozen past the
 * deadline stops the guard as well; callback handlers run inside the
 * worker and freeze with it. Handlers fence their own writes with the
 * attempt number for those cases (docs/design.md).
 */
#ifndef SKED_GUARD_H
#define SKED_GUARD_H

#include <stdint.h>
#include <sys/types.h>

typedef struct sked_guard sked_guard;

/* Fork the guard with nslots slots. SKED_OK, SKED_ENOMEM or SKED_EIO (no
 * process could be started). Call it from a thread that lives as long as
 * the guard is needed: the guard dies when that thread ends. */
int sked__guard_start(int nslots, sked_guard **out)
        __attribute__((warn_unused_result));

/* Ask the guard to end, reap it, and free *g. Accepts NULL. */
void sked__guard_stop(sked_guard *g);

/* Set the deadline of a slot, in CLOCK_MONOTONIC milliseconds (0: none).
 * With raise_only, a deadline earlier than the slot's is ignored. Thread
 * safe per slot when callers serialise on the slot's owner. */
void sked__guard_deadline(sked_guard *g, int slot, int64_t deadline_ms,
                          int raise_only);

/* Called by exec.c and children.c: the program of this slot runs as process group pgid
 * (arm), or is about to be reaped (disarm: the pid stays reserved until
 * then, so the guard never kills a recycled pid). */
/* 1 when pid is a guard process of this process's (the orphan sweep of
 * children.c leaves it alone). Lock-free. */
int sked__guard_owns(pid_t pid);

void sked__guard_arm(sked_guard *g, int slot, pid_t pgid);
void sked__guard_disarm(sked_guard *g, int slot);

/* 1 when the guard killed the program armed in slot at its deadline. */
int sked__guard_fired(const sked_guard *g, int slot);

/* 1 while the guard process runs. */
int sked__guard_alive(const sked_guard *g);

#endif /* SKED_GUARD_H */
