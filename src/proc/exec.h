/*
 * exec.h — run one handler program for one task attempt.
 *
 * Folder src/proc/ (floor 1, docs/design.md): handler programs as
 * processes: running one to completion (exec.c) or keeping one for many
 * tasks (resident.c), starting a child (spawn.c, spawn.h), the registry
 * of running children and the orphan sweep (children.c), and the lease
 * guard that kills one at its deadline (guard.c). No database.
 *
 * Layer: the worker's execution side, below the pool and beside it (no SQL,
 * no tasks, no clock but the monotonic one). The worker maps a task kind to
 * an argv from its own config and calls sked__exec_run() on a pool thread;
 * this module spawns the program without a shell, feeds the payload to its
 * stdin, keeps a bounded tail of its combined stdout+stderr, enforces the
 * timeout and the worker's cancel signal, and always reaps the child and
 * kills what is left of its process group.
 *
 * It leaves to others: choosing the argv and the environment entries
 * (SKED_TASK_ID, SKED_TASK_KIND, SKED_TASK_QUEUE, SKED_TASK_ATTEMPT are built
 * by the worker), deciding what a result means for the task, recording the
 * run, and ignoring SIGPIPE process-wide (advised, not required).
 *
 * Process requirements: nothing else in the process may reap children it
 * did not spawn (no waitpid(-1) loops, SIGCHLD not set to SIG_IGN), or a
 * handler's exit status is lost.
 */
#ifndef SKED_EXEC_H
#define SKED_EXEC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct sked_exec_spec {
	/* The program and its arguments, NULL-terminated; argv[0] is the
	 * program. A name without '/' is looked up in the PATH of the child's
	 * environment (the inherited one unless env_extra sets PATH). Borrowed
	 * for the duration of the call. */
	const char *const *argv;
	/* Extra "NAME=value" entries, NULL-terminated, or NULL. They replace
	 * inherited entries of the same name. Borrowed. */
	const char *const *env_extra;
	/* 1: leave sked's secrets out of the inherited environment (the
	 * database URL, HTTP credentials, PGPASSWORD, MYSQL_PWD: see
	 * sked__exec_secret), except those SKED_HANDLER_ENV names. */
	int scrub_env;
	/* Bytes written to the child's stdin, then stdin is closed. A child
	 * that stops reading early is not an error. May be NULL when
	 * input_len is 0. Borrowed. */
	const char *input;
	size_t input_len;
	/* SIGTERM the process group after this long, SIGKILL it kill_grace_ms
	 * later. 0: no timeout. */
	int64_t timeout_ms;
	/* 0: 2000. */
	int64_t kill_grace_ms;
	/* Bytes of combined output kept (the last ones). 0: 4096. */
	size_t tail_max;
	/* When this fd becomes readable, stop the child as on a timeout. The
	 * fd is only polled, never read, so one eventfd may stop many
	 * handlers at once. -1: none. */
	int cancel_fd;
	/* The lease guard (guard.h) and the slot this run uses in it, or
	 * NULL: the program's process group is armed there while it runs,
	 * and disarmed before it is reaped. */
	struct sked_guard *guard;
	int guard_slot;
	/* 1: the program keeps the caller's stdin, stdout and stderr (input
	 * must be empty; no output tail is kept). 0: the pipes above. */
	int inherit_stdio;
	/* > 2: each byte read from this fd is a signal number to pass on to
	 * the program's process group while it runs (the fd is read, so
	 * give each run its own). Otherwise none. */
	int forward_fd;
} sked_exec_spec;

typedef struct sked_exec_result {
	int spawned;   /* 0: the program could not be started (see error) */
	int exited;    /* 1: it exited normally; exit_code is valid */
	int exit_code; /* 0..255 */
	int signaled;  /* 1: it was killed by signal signo */
	int signo;
	int timed_out;   /* 1: sked stopped it because timeout_ms passed */
	int cancelled;   /* 1: sked stopped it because cancel_fd fired */
	int64_t wall_ms; /* from spawn to reap, monotonic */
	/* The tail of stdout+stderr as one stream, malloc'd and NUL-terminated
	 * (it may also contain NUL bytes: use output_len), or NULL when the
	 * program wrote nothing. When more than tail_max bytes were written,
	 * it starts with SKED__EXEC_TRUNCATED followed by (at most) the last
	 * tail_max bytes. Freed by sked__exec_result_free(). */
	char *output;
	size_t output_len;
	/* One line for a person: "" only for a clean exit 0 that was neither
	 * timed out nor cancelled; otherwise e.g. "exit status 3",
	 * "killed by signal 9 (Killed)", "timed out after 2s", "cancelled",
	 * "cannot run 'nosuch': No such file or directory". */
	char error[256];
	/* When spawned is 0: the errno of the failure (ENOENT: no such
	 * program; EACCES: not executable); else 0. */
	int spawn_errno;
} sked_exec_result;

/* The marker that opens a truncated output tail (UTF-8 ellipsis). */
#define SKED__EXEC_TRUNCATED "\xe2\x80\xa6[truncated]\n"

/*
 * Run spec->argv to completion. Blocks the calling thread until the child
 * has exited and been reaped. *res is always initialised (free it with
 * sked__exec_result_free()).
 *
 * Returns SKED_OK when the program ran, whatever its exit; SKED_EINVAL for a
 * bad spec (no argv[0], an env entry without '=', negative times, input
 * with inherit_stdio);
 * SKED_ENOMEM; SKED_EIO when it could not be started (program not found or
 * not executable, no fds or processes left) — res->spawned is 0 and
 * res->error says why — or, rarely, when waiting on a started child failed
 * (res->spawned is 1; the child was killed and reaped).
 *
 * Thread safe: any number of threads may run programs at once. The child
 * dies with SIGKILL if the calling thread's process dies (PR_SET_PDEATHSIG;
 * the kernel ties it to the spawning thread, which is blocked here for the
 * child's whole life).
 */
__attribute__((warn_unused_result)) int
sked__exec_run(const sked_exec_spec *spec, sked_exec_result *res);

/* Free res->output and clear it. Accepts NULL. */
void sked__exec_result_free(sked_exec_result *res);

/* Send sig to the process group of every program sked__exec_run() is running
 * right now (in any thread). Thread safe and cheap (one mutex, one kill per
 * child); not async-signal-safe: call it from a thread, not a handler. */
void sked__exec_kill_all(int sig);

/* When this process is a child subreaper (PR_SET_CHILD_SUBREAPER): kill
 * and reap every child of it that is not a running handler, such as a
 * handler's descendant that left its process group with setsid() and was
 * reparented here. Called after each handler ends; without the
 * subreaper flag it does nothing. */
void sked__exec_sweep_orphans(void);

/* How many programs are running right now. Thread safe. */
size_t sked__exec_running(void);

/*
 * Long-lived programs: a pipe: handler runs for many tasks. spawn starts
 * spec->argv as exec_run would (own process group, PDEATHSIG, dispositions
 * reset, no inherited fds, env_extra added) with its stdin, stdout and
 * stderr on three non-blocking pipes, and registers it for
 * sked__exec_kill_all. Only argv and env_extra of spec are used. On
 * failure err says why (one line) and *out stays NULL.
 */
typedef struct sked_exec_proc sked_exec_proc;
__attribute__((warn_unused_result)) int
sked__exec_spawn(const sked_exec_spec *spec, sked_exec_proc **out, char *err,
                 size_t errlen);
/* Our ends of its stdin (0), stdout (1), stderr (2), or its pidfd (3,
 * -1 when the kernel has none). */
int sked__exec_proc_fd(const sked_exec_proc *p, int which);
pid_t sked__exec_proc_pid(const sked_exec_proc *p);
/* 1 once it has exited (without reaping it). */
int sked__exec_proc_exited(sked_exec_proc *p, int *status);
/* SIGKILL its process group, reap it, close our ends, free p. */
void sked__exec_proc_stop(sked_exec_proc *p);

/* 1 when the environment entry (NAME=value, or NAME) holds one of sked's
 * secrets: SKED_DATABASE_URL, SKED_DASHBOARD_AUTH, SKED_METRICS_TOKEN,
 * SKED_HTTP_AUTHORIZATION and SKED_HTTP_AUTHORIZATION_*,
 * SKED_HOOK_SECRET, PGPASSWORD, MYSQL_PWD; and SKED_HANDLER_ENV (NAME,NAME,…) does not name it. */
int sked__exec_secret(const char *entry);

#endif /* SKED_EXEC_H */
