/*
 * spawn.h — inside src/proc/: starting a child (spawn.c) and knowing it
 * for ours until it is reaped (children.c), the steps that running a
 * program to completion (exec.c) and starting a long-lived one
 * (resident.c) share.
 *
 * Layer: src/proc/ (floor 1), internal to the folder: the rest of sked
 * uses exec.h. No SQL, no tasks.
 */
#ifndef SKED_PROC_SPAWN_H
#define SKED_PROC_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

#include "proc/exec.h"

/* ---- children.c: the registry of running children ---- */

/* One registered child: a handler program, by its process group id
 * (its pid). Owned by the caller (on its stack, or in a long-lived
 * program's struct) from sked__child_fork until sked__child_remove. */
struct sked_child {
	pid_t pgid;
	int reaping; /* being reaped: no more signals to its number */
	struct sked_child *prev, *next;
};

struct sked_child_args;

/* fork into sked__spawn_child(ca), holding the registry lock so that
 * sked__exec_kill_all never misses a child that exists; the child is
 * registered in c (and armed in spec's lease guard, if any) before the
 * lock goes. The caller has blocked every signal. Returns the pid, or
 * -1 with errno. */
pid_t sked__child_fork(const struct sked_child_args *ca, struct sked_child *c,
                       const sked_exec_spec *spec);
/* c's child is about to be reaped: kill_all leaves its number alone from
 * now on, while a sweep still knows it for ours. */
void sked__child_retire(struct sked_child *c);
/* c's child is reaped: out of the registry. */
void sked__child_remove(struct sked_child *c);

/* ---- spawn.c: starting a child ---- */

enum sked_child_stage {
	SKED__STAGE_EXEC = 0,
	SKED__STAGE_SETUP = 1,
};

/* What the child writes on its report pipe when it fails before exec. */
struct sked_child_report {
	int stage;
	int err;
};

/* What the child needs between fork and exec, all prepared before fork
 * (the child makes async-signal-safe calls only). */
struct sked_child_args {
	char **candidates;
	char *const *argv;
	char **envp;
	pid_t parent;
	int in_r, out_w, err_w; /* in_r -1: inherit stdin, stdout, stderr */
	int stderr_w; /* its stderr apart from stdout, or -1: with stdout */
	int max_fd;   /* for the close loop when close_range is missing */
};

/* The child's side: process group, PDEATHSIG, dispositions and mask
 * reset, pipes onto 0/1/2, every other fd closed, then execve of each
 * candidate; a failure goes to the report pipe (err_w) and exits 127. */
void sked__spawn_child(const struct sked_child_args *a)
        __attribute__((noreturn));
/* envp: inherited entries whose name extra does not set (and, with
 * scrub, that hold no secret of sked's), then extra. The strings are
 * borrowed; only the array is allocated (free it). SKED_EINVAL for an
 * entry without '=', SKED_ENOMEM. */
int sked__spawn_envp(const char *const *extra, int scrub, char ***out);
/* The paths execve will try, in order, as execvp would (one allocation:
 * free it). SKED_ENOMEM. */
int sked__spawn_paths(const char *prog, char *const *envp, char ***out);
/* A CLOEXEC pipe with both ends above fd 2; -1 with errno. */
int sked__spawn_pipe(int p[2]);
/* close *fd if open, and set it to -1. */
void sked__spawn_close(int *fd);
void sked__spawn_nonblock(int fd);
/* The highest fd the child's close loop goes to (without close_range). */
int sked__spawn_fd_limit(void);
/* 1 when the child reported a failure before exec (*rep says which);
 * EOF on the report pipe means exec happened. */
int sked__spawn_failed(int report_fd, struct sked_child_report *rep);
/* A CLOEXEC pidfd for pid, or -1 when the kernel has none. */
int sked__spawn_pidfd(pid_t pid);
/* strerror that is safe from many threads (GNU strerror_r). */
const char *sked__spawn_strerror(int err, char *buf, size_t len);

#endif /* SKED_PROC_SPAWN_H */
