/*
 * exec.c — spawn a handler program, feed it, watch it, reap it.
 *
 * Layer: worker execution (see exec.h). Linux-specific on purpose: process
 * groups, PR_SET_PDEATHSIG, pidfd and close_range are what make "a handler
 * never outlives its worker" and "no zombies" hold; where pidfd or
 * close_range is missing we fall back to polling and a close loop.
 *
 * How one run goes (steps 1 and 2 are spawn.c's and children.c's):
 *   1. In the parent, before fork: validate, build envp and the list of
 *      paths to try (the PATH search), make the pipes (all O_CLOEXEC, all
 *      moved above fd 2), block every signal so the child cannot run one of
 *      our handlers before it resets them.
 *   2. fork, holding the registry lock so sked__exec_kill_all() never misses
 *      a child that exists. The child only makes async-signal-safe calls:
 *      setpgid, PDEATHSIG + getppid check, reset dispositions and mask,
 *      dup2 the pipes onto 0/1/2, close every other fd but the error pipe,
 *      execve each candidate. A failed exec writes {stage, errno} into the
 *      CLOEXEC error pipe; EOF on it means the exec happened.
 *   3. The parent polls: output (read into a ring), stdin (write the
 *      payload, non-blocking), cancel_fd, and the child's pidfd, with the
 *      timeout and kill deadlines as the poll timeout.
 *   4. When the child has exited (seen with WNOWAIT, so its pid, which is
 *      also its process group id, is still reserved) it leaves the registry,
 *      its group gets SIGKILL (grandchildren), and only then is it reaped.
 *
 * It leaves the argv and environment to the worker, and the meaning of the
 * result to the caller. Long-lived programs (pipe: handlers) are
 * resident.c's; the registry and the orphan sweep children.c's.
 */
#include "proc/exec.h"
#include "proc/guard.h"
#include "proc/spawn.h"
#include "util/clock.h"

#include "sked.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum {
	DEFAULT_GRACE_MS = 2000,
	DEFAULT_TAIL_MAX = 4096,
	/* After the child exits, how long to keep reading output that a
	 * survivor outside its group might still hold open. */
	DRAIN_MS = 500,
	/* Poll tick when the kernel has no pidfd_open. */
	NO_PIDFD_TICK_MS = 20,
	CHUNK = 16384,
};

static const char *
sigstr(int sig)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 32)
	const char *s = sigdescr_np(sig);
	return s ? s : "unknown signal";
#else
	return strsignal(sig);
#endif
}

/* ------------------------------------------------------------------ */
/* The output tail: a ring of the last cap bytes.                      */
/* ------------------------------------------------------------------ */

struct tail {
	char *buf;
	size_t cap;   /* > 0 */
	size_t head;  /* where the next byte goes */
	size_t total; /* bytes ever pushed */
};

static void
tail_push(struct tail *t, const char *p, size_t n)
{
	t->total += n;
	if (n >= t->cap) {
		memcpy(t->buf, p + n - t->cap, t->cap);
		t->head = 0;
		return;
	}
	size_t first = t->cap - t->head;
	if (first > n)
		first = n;
	memcpy(t->buf + t->head, p, first);
	memcpy(t->buf, p + first, n - first);
	t->head = (t->head + n) % t->cap;
}

/* Linearise into a fresh NUL-terminated string; NULL when nothing was
 * written (or on ENOMEM: the tail is best effort, the run is not). */
static char *
tail_take(const struct tail *t, size_t *len_out)
{
	*len_out = 0;
	if (t->total == 0)
		return NULL;
	int cut = t->total > t->cap;
	size_t have = cut ? t->cap : t->total;
	size_t start = cut ? t->head : 0; /* oldest byte in the ring */

	/* A cut tail should not open in the middle of a UTF-8 sequence. */
	size_t skip = 0;
	while (cut && skip < 3 && skip < have &&
	       ((unsigned char)t->buf[(start + skip) % t->cap] & 0xC0) == 0x80)
		skip++;
	start = (start + skip) % t->cap;
	have -= skip;

	size_t mlen = cut ? strlen(SKED__EXEC_TRUNCATED) : 0;
	char *s = malloc(mlen + have + 1);
	if (!s)
		return NULL;
	memcpy(s, SKED__EXEC_TRUNCATED, mlen);
	size_t first = t->cap - start;
	if (first > have)
		first = have;
	memcpy(s + mlen, t->buf + start, first);
	memcpy(s + mlen + first, t->buf, have - first);
	s[mlen + have] = '\0';
	*len_out = mlen + have;
	return s;
}

/* ------------------------------------------------------------------ */
/* The parent's watch loop.                                            */
/* ------------------------------------------------------------------ */

struct watch {
	const sked_exec_spec *spec;
	sked_exec_result *res;
	struct sked_child *reg;
	pid_t pid;
	int pidfd;  /* -1 when the kernel has none */
	int in_fd;  /* our end of the child's stdin, -1 once closed */
	int out_fd; /* our end of its output, -1 at EOF */
	size_t in_off;
	struct tail tail;
	int64_t grace_ms;
	int64_t deadline; /* timeout, or INT64_MAX */
	int64_t kill_at;  /* SIGKILL time once stopping, or INT64_MAX */
	int stopping;     /* SIGTERM sent (timeout or cancel) */
	int exited;       /* reaped */
	int64_t drain_until;
	int sigpipe_was_pending;
	int forward_fd; /* spec->forward_fd; -1 once it stops answering */
};

static void
stop_child(struct watch *w, int64_t now)
{
	if (w->stopping)
		return;
	w->stopping = 1;
	kill(-w->pid, SIGTERM);
	w->kill_at = now + w->grace_ms;
}

/* A write to a closed pipe raises SIGPIPE unless the process ignores it.
 * We block it in this thread for the loop and discard the one we caused,
 * so correctness does not hang on the worker's SIG_IGN. */
static void
eat_sigpipe(const struct watch *w)
{
	if (w->sigpipe_was_pending)
		return;
	sigset_t pipe_set;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	struct timespec zero = {0, 0};
	while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
		;
}

static void
feed_input(struct watch *w)
{
	const sked_exec_spec *s = w->spec;
	while (w->in_fd >= 0 && w->in_off < s->input_len) {
		size_t n = s->input_len - w->in_off;
		if (n > CHUNK * 4)
			n = CHUNK * 4;
		ssize_t k = write(w->in_fd, s->input + w->in_off, n);
		if (k > 0) {
			w->in_off += (size_t)k;
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		/* EPIPE: the child does not read its stdin; not an error.
		 * Anything else: give up on stdin likewise. */
		if (k < 0 && errno == EPIPE)
			eat_sigpipe(w);
		sked__spawn_close(&w->in_fd);
		return;
	}
	sked__spawn_close(&w->in_fd); /* all written: EOF for the child */
}

/* 0 ok, -1 read error (errno). Reads until EAGAIN or EOF. */
static int
drain_output(struct watch *w)
{
	char buf[CHUNK];
	while (w->out_fd >= 0) {
		ssize_t k = read(w->out_fd, buf, sizeof(buf));
		if (k > 0) {
			tail_push(&w->tail, buf, (size_t)k);
			continue;
		}
		if (k == 0) {
			sked__spawn_close(&w->out_fd);
			return 0;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		return -1;
	}
	return 0;
}

/* Has the child exited? If so: out of the registry, SIGKILL to what is
 * left of its group (the zombie still holds the group id, so the number
 * cannot have been reused), then reap. Returns 1 when reaped. */
static int
try_reap(struct watch *w, int block)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	int flags = WEXITED | WNOWAIT | (block ? 0 : WNOHANG);
	int r;
	do
		r = waitid(P_PID, (id_t)w->pid, &si, flags);
	while (r < 0 && errno == EINTR);
	if (r == 0 && si.si_pid == 0)
		return 0; /* still running */

	/* a zombie holds its pid: disarm while no one else can have it */
	if (w->spec->guard)
		sked__guard_disarm(w->spec->guard, w->spec->guard_slot);
	sked__child_retire(w->reg);
	kill(-w->pid, SIGKILL);

	int st = 0;
	pid_t p;
	do
		p = waitpid(w->pid, &st, 0);
	while (p < 0 && errno == EINTR);
	sked__child_remove(w->reg);
	sked__exec_sweep_orphans();
	sked_exec_result *res = w->res;
	if (p == w->pid && WIFEXITED(st)) {
		res->exited = 1;
		res->exit_code = WEXITSTATUS(st);
	} else if (p == w->pid && WIFSIGNALED(st)) {
		res->signaled = 1;
		res->signo = WTERMSIG(st);
	}
	/* p < 0 (ECHILD): someone else reaped it; the status is lost and
	 * the result says neither exited nor signaled. */
	w->exited = 1;
	sked__spawn_close(&w->in_fd);
	return 1;
}

/* Pass on to the child's group the signal numbers waiting on forward_fd
 * (the child is not reaped yet, so its group id is still its own). At
 * EOF or on an error, stop reading it. */
static void
forward_signals(struct watch *w)
{
	unsigned char sig[16];
	ssize_t k = read(w->forward_fd, sig, sizeof sig);
	if (k <= 0) {
		if (k == 0 || (errno != EINTR && errno != EAGAIN))
			w->forward_fd = -1;
		return;
	}
	for (ssize_t i = 0; i < k; i++)
		if (sig[i] > 0 && sig[i] < NSIG)
			kill(-w->pid, sig[i]);
}

static int64_t
min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* 0, or -1 with errno when polling itself failed. */
static int
watch_loop(struct watch *w)
{
	const sked_exec_spec *s = w->spec;
	int cancel_fd = s->cancel_fd;

	for (;;) {
		int64_t now = sked__mono_ms();
		if (!w->exited) {
			if (!w->stopping && now >= w->deadline) {
				w->res->timed_out = 1;
				stop_child(w, now);
			}
			if (w->stopping && now >= w->kill_at) {
				kill(-w->pid, SIGKILL);
				w->kill_at = INT64_MAX;
			}
		}
		if (w->exited && (w->out_fd < 0 || now >= w->drain_until))
			return 0;

		struct pollfd pf[5];
		int n = 0, i_out = -1, i_in = -1, i_cancel = -1, i_pid = -1;
		int i_fwd = -1;
		if (w->out_fd >= 0) {
			pf[n] = (struct pollfd){w->out_fd, POLLIN, 0};
			i_out = n++;
		}
		if (w->in_fd >= 0) {
			pf[n] = (struct pollfd){w->in_fd, POLLOUT, 0};
			i_in = n++;
		}
		if (!w->exited && !w->stopping && cancel_fd >= 0) {
			pf[n] = (struct pollfd){cancel_fd, POLLIN, 0};
			i_cancel = n++;
		}
		if (!w->exited && w->pidfd >= 0) {
			pf[n] = (struct pollfd){w->pidfd, POLLIN, 0};
			i_pid = n++;
		}
		if (!w->exited && w->forward_fd > 2) {
			pf[n] = (struct pollfd){w->forward_fd, POLLIN, 0};
			i_fwd = n++;
		}

		int64_t until = INT64_MAX;
		if (w->exited) {
			until = w->drain_until;
		} else {
			if (!w->stopping)
				until = min64(until, w->deadline);
			until = min64(until, w->kill_at);
			if (w->pidfd < 0)
				until = min64(until, now + NO_PIDFD_TICK_MS);
		}
		int wait_ms = -1;
		if (until != INT64_MAX)
			wait_ms = until <= now ? 0
			                       : (int)min64(until - now, 60000);

		int r = poll(pf, (nfds_t)n, wait_ms);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (i_out >= 0 && pf[i_out].revents && drain_output(w) < 0)
			return -1;
		if (i_in >= 0 && pf[i_in].revents)
			feed_input(w);
		if (i_fwd >= 0 && pf[i_fwd].revents)
			forward_signals(w);
		if (i_cancel >= 0 && pf[i_cancel].revents) {
			w->res->cancelled = 1;
			stop_child(w, sked__mono_ms());
		}
		if (!w->exited && (w->pidfd < 0 || pf[i_pid].revents)) {
			if (try_reap(w, 0)) {
				/* A survivor outside the group may hold the
				 * pipe; read what comes soon, then stop. */
				w->drain_until = sked__mono_ms() + DRAIN_MS;
			}
		}
	}
}

/* ------------------------------------------------------------------ */
/* Messages.                                                           */
/* ------------------------------------------------------------------ */

static void
format_duration(char *buf, size_t len, int64_t ms)
{
	if (ms % 1000 == 0)
		snprintf(buf, len, "%llds", (long long)(ms / 1000));
	else
		snprintf(buf, len, "%lldms", (long long)ms);
}

static void
describe(sked_exec_result *res, const sked_exec_spec *spec)
{
	char d[32];
	if (res->timed_out) {
		format_duration(d, sizeof(d), spec->timeout_ms);
		snprintf(res->error, sizeof(res->error), "timed out after %s",
		         d);
	} else if (res->cancelled) {
		snprintf(res->error, sizeof(res->error), "cancelled");
	} else if (res->exited && res->exit_code == 0) {
		res->error[0] = '\0';
	} else if (res->exited) {
		snprintf(res->error, sizeof(res->error), "exit status %d",
		         res->exit_code);
	} else if (res->signaled) {
		snprintf(res->error, sizeof(res->error),
		         "killed by signal %d (%s)", res->signo,
		         sigstr(res->signo));
	} else {
		snprintf(res->error, sizeof(res->error),
		         "exit status unknown (reaped elsewhere)");
	}
}

static void
spawn_error(sked_exec_result *res, const char *prog, const char *what, int err)
{
	char eb[128];
	res->spawn_errno = err;
	snprintf(res->error, sizeof(res->error), "cannot run '%.120s': %s%s%s",
	         prog, what ? what : "", what ? ": " : "",
	         sked__spawn_strerror(err, eb, sizeof(eb)));
}

/* ------------------------------------------------------------------ */
/* The entry point.                                                   */
/* ------------------------------------------------------------------ */

int
sked__exec_run(const sked_exec_spec *spec, sked_exec_result *res)
{
	if (!res)
		return SKED_EINVAL;
	memset(res, 0, sizeof(*res));
	if (!spec || !spec->argv || !spec->argv[0] || !spec->argv[0][0] ||
	    spec->timeout_ms < 0 || spec->kill_grace_ms < 0 ||
	    (spec->input_len > 0 && !spec->input) ||
	    (spec->inherit_stdio && spec->input_len > 0)) {
		snprintf(res->error, sizeof(res->error),
		         "invalid handler spec");
		return SKED_EINVAL;
	}
	const char *prog = spec->argv[0];

	char **envp = NULL, **cands = NULL;
	int in_p[2] = {-1, -1}, out_p[2] = {-1, -1}, err_p[2] = {-1, -1};
	struct watch w;
	memset(&w, 0, sizeof(w));
	w.spec = spec;
	w.res = res;
	w.pidfd = -1;
	w.in_fd = w.out_fd = -1;
	w.forward_fd = spec->forward_fd;
	w.tail.cap = spec->tail_max ? spec->tail_max : DEFAULT_TAIL_MAX;
	w.grace_ms =
	        spec->kill_grace_ms ? spec->kill_grace_ms : DEFAULT_GRACE_MS;

	int rc = sked__spawn_envp(spec->env_extra, spec->scrub_env, &envp);
	if (rc != SKED_OK) {
		snprintf(res->error, sizeof(res->error),
		         rc == SKED_EINVAL
		                 ? "invalid environment entry (want NAME=value)"
		                 : "out of memory");
		return rc;
	}
	rc = sked__spawn_paths(prog, envp, &cands);
	if (rc == SKED_OK && !(w.tail.buf = malloc(w.tail.cap)))
		rc = SKED_ENOMEM;
	if (rc != SKED_OK) {
		snprintf(res->error, sizeof(res->error), "out of memory");
		goto out;
	}

	if ((!spec->inherit_stdio &&
	     (sked__spawn_pipe(in_p) < 0 || sked__spawn_pipe(out_p) < 0)) ||
	    sked__spawn_pipe(err_p) < 0) {
		spawn_error(res, prog, "pipe", errno);
		rc = SKED_EIO;
		goto out;
	}

	struct sked_child_args ca = {
	        .candidates = cands,
	        .argv = (char *const *)spec->argv,
	        .envp = envp,
	        .parent = getpid(),
	        .in_r = in_p[0],
	        .out_w = out_p[1],
	        .err_w = err_p[1],
	        .stderr_w = -1,
	        .max_fd = sked__spawn_fd_limit(),
	};

	/* Block everything so that no handler of ours runs in the child
	 * before it resets dispositions; the child unblocks after. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);

	struct sked_child reg = {0};
	w.reg = &reg;
	int64_t t0 = sked__mono_ms();
	pid_t pid = sked__child_fork(&ca, &reg, spec);
	int fork_err = errno;

	/* For the rest of the run SIGPIPE stays blocked in this thread (see
	 * eat_sigpipe); everything else goes back as it was. */
	sigset_t loop_mask = old, pending;
	sigaddset(&loop_mask, SIGPIPE);
	pthread_sigmask(SIG_SETMASK, &loop_mask, NULL);
	sigemptyset(&pending);
	sigpending(&pending);
	w.sigpipe_was_pending = sigismember(&pending, SIGPIPE) == 1;

	if (pid < 0) {
		spawn_error(res, prog, "fork", fork_err);
		rc = SKED_EIO;
		goto out_mask;
	}
	w.pid = pid;
	sked__spawn_close(&in_p[0]);
	sked__spawn_close(&out_p[1]);
	sked__spawn_close(&err_p[1]);

	/* A report: exec did not happen, and the child exits. */
	struct sked_child_report rep;
	if (sked__spawn_failed(err_p[0], &rep)) {
		try_reap(&w, 1);
		spawn_error(res, prog,
		            rep.stage == SKED__STAGE_EXEC ? NULL
		                                          : "setting up child",
		            rep.err);
		/* The status is our own _exit(127): not the program's. */
		res->exited = res->exit_code = 0;
		res->signaled = res->signo = 0;
		res->wall_ms = sked__mono_ms() - t0;
		rc = SKED_EIO;
		goto out_mask;
	}
	res->spawned = 1;
	w.pidfd = sked__spawn_pidfd(pid);
	w.in_fd = in_p[1];
	in_p[1] = -1;
	w.out_fd = out_p[0];
	out_p[0] = -1;
	if (w.in_fd >= 0)
		sked__spawn_nonblock(w.in_fd);
	if (w.out_fd >= 0)
		sked__spawn_nonblock(w.out_fd);
	if (spec->input_len == 0)
		sked__spawn_close(&w.in_fd);
	w.deadline = spec->timeout_ms ? t0 + spec->timeout_ms : INT64_MAX;
	w.kill_at = INT64_MAX;

	if (watch_loop(&w) < 0) {
		int e = errno;
		if (!w.exited) {
			kill(-pid, SIGKILL);
			try_reap(&w, 1);
		}
		char eb[128];
		snprintf(res->error, sizeof(res->error),
		         "lost track of '%.120s': %s", prog,
		         sked__spawn_strerror(e, eb, sizeof(eb)));
		rc = SKED_EIO;
	} else {
		describe(res, spec);
		rc = SKED_OK;
	}
	res->wall_ms = sked__mono_ms() - t0;
	res->output = tail_take(&w.tail, &res->output_len);

out_mask:
	pthread_sigmask(SIG_SETMASK, &old, NULL);
out:
	sked__spawn_close(&w.pidfd);
	sked__spawn_close(&w.in_fd);
	sked__spawn_close(&w.out_fd);
	for (int i = 0; i < 2; i++) {
		sked__spawn_close(&in_p[i]);
		sked__spawn_close(&out_p[i]);
		sked__spawn_close(&err_p[i]);
	}
	free(w.tail.buf);
	free(cands);
	free(envp);
	return rc;
}

void
sked__exec_result_free(sked_exec_result *res)
{
	if (!res)
		return;
	free(res->output);
	res->output = NULL;
	res->output_len = 0;
}
