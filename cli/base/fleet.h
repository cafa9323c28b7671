/*
 * fleet.h — a fleet of `sked worker` processes started from this binary:
 * what `sked demo` and `sked bench` use to play several hosts on one.
 *
 * Layer: the command-line program, a client of sked.h only (and not even
 * of that: a fleet knows processes, not tasks). The caller builds each
 * worker's argv and environment; this file spawns it without a shell,
 * points its output where it is told, reaps it without blocking, and
 * stops the fleet (SIGTERM, then SIGKILL after a grace period). What a
 * worker does and what its exit means for the run is the caller's.
 */
#ifndef SKED_CLI_FLEET_H
#define SKED_CLI_FLEET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cli_fleet_proc {
	pid_t pid;  /* 0: not running */
	int status; /* wait status of its last exit */
	int ok;     /* every exit so far was 0 */
};

struct cli_fleet {
	const char *what; /* "demo", "bench": opens the lines printed */
	int report;       /* 1: print a line for each worker that failed */
	struct cli_fleet_proc *p;
	size_t n;   /* slots in use: p[0] .. p[n - 1] */
	size_t cap; /* slots allocated */
};

/* cap slots, all empty. 0, or ENOMEM. Free with cli_fleet_free (which
 * neither signals nor reaps). */
int cli_fleet_init(struct cli_fleet *f, const char *what, size_t cap);
void cli_fleet_free(struct cli_fleet *f);

/* Start exe with argv (NULL-terminated; borrowed) and env (NULL: ours)
 * in slot i (< cap; an empty one). With log_path, stdin is /dev/null and
 * stdout and stderr are appended to log_path; without, stdin is ours and
 * stdout goes to our stderr (so that our stdout stays one document).
 * Returns 0 or an errno value (nothing is printed); the pid is in
 * f->p[i].pid. */
int cli_fleet_spawn(struct cli_fleet *f, size_t i, const char *exe,
                    const char *const *argv, char *const *env,
                    const char *log_path);

/* Reap the workers that have exited (block: wait for every one). A
 * worker that did not exit 0 clears its ok, sets *failed (may be NULL)
 * and, with f->report, is named on stderr. Returns how many still run. */
int cli_fleet_reap(struct cli_fleet *f, int block, int *failed);

/* Send sig to every running worker. */
void cli_fleet_signal(const struct cli_fleet *f, int sig);

/* SIGTERM every worker, wait up to grace_ms for them to leave, then
 * SIGKILL and reap the rest (their ok is cleared). */
void cli_fleet_stop(struct cli_fleet *f, int64_t grace_ms);

/* 1 when every worker's exits were all 0 so far. */
int cli_fleet_all_ok(const struct cli_fleet *f);

#endif /* SKED_CLI_FLEET_H */
