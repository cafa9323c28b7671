/*
 * exec.c — spawn a handler program, feed it, watch it, reap it.
 *
 * Size: spawning, feeding, watching and reaping share one
 * process registry and its lock; the subreaper sweep would move out with
 * a header for that registry (issue 27).
 *
 * Layer: worker execution (see exec.h). Linux-specific on purpose: process
 * groups, PR_SET_PDEATHSIG, pidfd and close_range are what make "a handler
 * never outlives its worker" and "no zombies" hold; where pidfd or
 * close_range is missing we fall back to polling and a close loop.
 *
 * How one run goes:
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
 * result to the caller.
 */
#include "proc/exec.h"
#include "proc/guard.h"
#include "util/clock.h"

#include "sked.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

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

/* ------------------------------------------------------------------ */
/* Registry of running children (their process group ids).            */
/* ------------------------------------------------------------------ */

struct running {
	pid_t pgid;
	int reaping; /* being reaped: no more signals to its number */
	struct running *prev, *next;
};

/* reg_lock guards reg_head and reg_count. It is a leaf lock: nothing else
 * is taken while holding it. It is held across fork() so that a child is
 * registered before anyone could want to kill it; the child never touches
 * it. An entry is removed before its child is reaped, so a pid number sent
 * a signal under this lock always still belongs to our child. */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct running *reg_head;
static size_t reg_count;

static void
reg_add_locked(struct running *r)
{
	r->reaping = 0;
	r->prev = NULL;
	r->next = reg_head;
	if (reg_head)
		reg_head->prev = r;
	reg_head = r;
	reg_count++;
}

static void
reg_remove(struct running *r)
{
	pthread_mutex_lock(&reg_lock);
	if (r->prev)
		r->prev->next = r->next;
	else
		reg_head = r->next;
	if (r->next)
		r->next->prev = r->prev;
	reg_count--;
	pthread_mutex_unlock(&reg_lock);
	r->prev = r->next = NULL;
}

/* r's child is about to be reaped: kill_all leaves its number alone from
 * now on, while a sweep still knows it for ours */
static void
reg_retire(struct running *r)
{
	pthread_mutex_lock(&reg_lock);
	r->reaping = 1;
	pthread_mutex_unlock(&reg_lock);
}

/* Orphans. A handler's child that leaves its process group (setsid())
 * escapes the group kill. When the process is a child subreaper
 * (PR_SET_CHILD_SUBREAPER, which `sked worker` sets), such an orphan is
 * reparented to it when its own parent exits, and a sweep after each
 * handler ends kills and reaps every child that is not a registered
 * handler. Without it, orphans go to init as before. */
enum { ORPHANS_MAX = 256 };

static int
registered_locked(pid_t pid)
{
	for (struct running *r = reg_head; r; r = r->next)
		if (r->pgid == pid)
			return 1;
	return sked__guard_owns(pid); /* the lease guard is no orphan */
}

/* the children of this process that are not registered, from every
 * thread's /proc children list */
static size_t
orphans_locked(pid_t *out, size_t max)
{
	char path[64];
	size_t n = 0;
	struct dirent *de;
	DIR *dir = opendir("/proc/self/task");

	if (!dir)
		return 0;
	while ((de = readdir(dir)) && n < max) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%.20s/children",
		         de->d_name);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		long pid;
		while (n < max && fscanf(f, "%ld", &pid) == 1)
			if (pid > 0 && !registered_locked((pid_t)pid))
				out[n++] = (pid_t)pid;
		fclose(f);
	}
	closedir(dir);
	return n;
}

void
sked__exec_sweep_orphans(void)
{
	pid_t o[ORPHANS_MAX];
	size_t n;
	int on = 0;

	/* asked each time: the flag may be set after the first handler, and
	 * one prctl costs less than the fork it follows */
	if (prctl(PR_GET_CHILD_SUBREAPER, &on) != 0 || !on)
		return;
	pthread_mutex_lock(&reg_lock);
	n = orphans_locked(o, ORPHANS_MAX);
	for (size_t i = 0; i < n; i++)
		kill(o[i], SIGKILL);
	pthread_mutex_unlock(&reg_lock);
	for (size_t i = 0; i < n; i++) {
		pid_t r;
		do
			r = waitpid(o[i], NULL, 0);
		while (r < 0 && errno == EINTR);
	}
}

void
sked__exec_kill_all(int sig)
{
	pthread_mutex_lock(&reg_lock);
	for (struct running *r = reg_head; r; r = r->next)
		/* a child just forked may not have made its group yet
		 * (setpgid is its first call): then it is signalled itself,
		 * or it would run on, out of reach (caught by test_kill_all
		 * under TSan) */
		if (!r->reaping && kill(-r->pgid, sig) != 0 && errno == ESRCH)
			kill(r->pgid, sig);
	pthread_mutex_unlock(&reg_lock);
}

size_t
sked__exec_running(void)
{
	pthread_mutex_lock(&reg_lock);
	size_t n = reg_count;
	pthread_mutex_unlock(&reg_lock);
	return n;
}

/* ------------------------------------------------------------------ */
/* Small helpers.                                                      */
/* ------------------------------------------------------------------ */

/* strerror that is safe from many threads (GNU strerror_r). */
static const char *
errstr(int err, char *buf, size_t len)
{
	return strerror_r(err, buf, len);
}

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

static void
close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

/* Move fd above 2 (keeping O_CLOEXEC) so that dup2 onto 0/1/2 in the child
 * can never clobber another of our pipe ends. */
static int
above_stdio(int *fd)
{
	if (*fd > 2)
		return 0;
	int nfd = fcntl(*fd, F_DUPFD_CLOEXEC, 3);
	if (nfd < 0)
		return -1;
	close(*fd);
	*fd = nfd;
	return 0;
}

static int
make_pipe(int p[2])
{
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	if (above_stdio(&p[0]) < 0 || above_stdio(&p[1]) < 0) {
		int e = errno;
		close_fd(&p[0]);
		close_fd(&p[1]);
		errno = e;
		return -1;
	}
	return 0;
}

static void
set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static size_t
name_len(const char *entry)
{
	const char *eq = strchr(entry, '=');
	return eq ? (size_t)(eq - entry) : strlen(entry);
}

/* ------------------------------------------------------------------ */
/* Building envp and the exec candidates in the parent.               */
/* ------------------------------------------------------------------ */

static int
name_in_list(const char *name, size_t len, const char *list)
{
	while (list && *list) {
		size_t l = strcspn(list, ", ");
		if (l == len && memcmp(list, name, len) == 0)
			return 1;
		list += l;
		list += strspn(list, ", ");
	}
	return 0;
}

int
sked__exec_secret(const char *entry)
{
	static const char *const names[] = {
	        "SKED_DATABASE_URL",
	        "SKED_DASHBOARD_AUTH",
	        "SKED_METRICS_TOKEN",
	        "SKED_HTTP_AUTHORIZATION",
	        "PGPASSWORD",
	        "MYSQL_PWD",
	        /* not a secret, but the worker's own trace context, which
	         * is no task's: a task's comes in env_extra */
	        "TRACEPARENT",
	};
	static const char prefix[] = "SKED_HTTP_AUTHORIZATION_";
	size_t len = name_len(entry);
	int secret = len > sizeof prefix - 1 &&
	             memcmp(entry, prefix, sizeof prefix - 1) == 0;

	for (size_t i = 0; !secret && i < sizeof names / sizeof names[0]; i++)
		secret = strlen(names[i]) == len &&
		         memcmp(entry, names[i], len) == 0;
	return secret && !name_in_list(entry, len, getenv("SKED_HANDLER_ENV"));
}

/* envp: inherited entries whose name env_extra does not set (and, with
 * scrub, that hold no secret of sked's), then env_extra. The strings are
 * borrowed; only the array is allocated. */
static int
build_envp(const char *const *extra, int scrub, char ***out)
{
	size_t ninh = 0, nextra = 0;
	for (char **e = environ; e && *e; e++)
		ninh++;
	for (const char *const *x = extra; x && *x; x++) {
		const char *eq = strchr(*x, '=');
		if (!eq || eq == *x)
			return SKED_EINVAL;
		nextra++;
	}
	char **envp = calloc(ninh + nextra + 1, sizeof(*envp));
	if (!envp)
		return SKED_ENOMEM;
	size_t n = 0;
	for (char **e = environ; e && *e; e++) {
		size_t len = name_len(*e);
		int replaced = scrub && sked__exec_secret(*e);
		for (const char *const *x = extra; x && *x && !replaced; x++)
			replaced =
			        name_len(*x) == len && memcmp(*x, *e, len) == 0;
		if (!replaced)
			envp[n++] = *e;
	}
	/* A later duplicate in env_extra wins over an earlier one: skip
	 * entries whose name appears again further on. */
	for (const char *const *x = extra; x && *x; x++) {
		size_t len = name_len(*x);
		int later = 0;
		for (const char *const *y = x + 1; *y && !later; y++)
			later = name_len(*y) == len && memcmp(*x, *y, len) == 0;
		if (!later)
			envp[n++] = (char *)*x;
	}
	envp[n] = NULL;
	*out = envp;
	return SKED_OK;
}

/* The paths execve will try, in order, as execvp would: the name itself
 * when it holds a '/', otherwise each PATH directory (an empty one meaning
 * the current directory). One allocation: the pointer array followed by
 * the strings. */
static int
build_candidates(const char *prog, char *const *envp, char ***out)
{
	if (strchr(prog, '/')) {
		size_t len = strlen(prog) + 1;
		char **c = malloc(2 * sizeof(*c) + len);
		if (!c)
			return SKED_ENOMEM;
		c[0] = memcpy((char *)(c + 2), prog, len);
		c[1] = NULL;
		*out = c;
		return SKED_OK;
	}
	const char *path = "/usr/local/bin:/usr/bin:/bin";
	for (char *const *e = envp; *e; e++)
		if (strncmp(*e, "PATH=", 5) == 0)
			path = *e + 5;

	size_t ndirs = 1, plen = strlen(path), nlen = strlen(prog);
	for (const char *p = path; *p; p++)
		ndirs += *p == ':';
	/* each candidate: dir (or "."), '/', name, NUL */
	size_t bytes = (ndirs + 1) * sizeof(char *) + plen + ndirs * (nlen + 3);
	char **c = malloc(bytes);
	if (!c)
		return SKED_ENOMEM;
	char *s = (char *)(c + ndirs + 1);
	size_t i = 0;
	for (const char *p = path;; i++) {
		const char *end = strchr(p, ':');
		size_t dlen = end ? (size_t)(end - p) : strlen(p);
		c[i] = s;
		if (dlen == 0)
			*s++ = '.';
		memcpy(s, p, dlen);
		s += dlen;
		*s++ = '/';
		memcpy(s, prog, nlen + 1);
		s += nlen + 1;
		if (!end)
			break;
		p = end + 1;
	}
	c[i + 1] = NULL;
	*out = c;
	return SKED_OK;
}

/* ------------------------------------------------------------------ */
/* The child, between fork and exec: async-signal-safe calls only.    */
/* ------------------------------------------------------------------ */

enum child_stage {
	STAGE_EXEC = 0,
	STAGE_SETUP = 1,
};

struct child_report {
	int stage;
	int err;
};

struct child_args {
	char **candidates;
	char *const *argv;
	char **envp;
	pid_t parent;
	int in_r, out_w, err_w;
	int stderr_w; /* its stderr apart from stdout, or -1: with stdout */
	int max_fd;   /* for the close loop when close_range is missing */
};

static void __attribute__((noreturn)) child_fail(int err_w, int stage, int err)
{
	struct child_report rep = {stage, err};
	ssize_t w;
	do
		w = write(err_w, &rep, sizeof(rep));
	while (w < 0 && errno == EINTR);
	_exit(127);
}

static int
close_span(unsigned lo, unsigned hi, int max_fd)
{
	if (lo > hi)
		return 0;
#ifdef SYS_close_range
	if (syscall(SYS_close_range, lo, hi, 0) == 0)
		return 0;
#endif
	for (unsigned fd = lo; fd <= hi && fd <= (unsigned)max_fd; fd++)
		close((int)fd);
	return 0;
}

static void __attribute__((noreturn)) child_main(const struct child_args *a)
{
	/* Our own process group, so a timeout or cancel reaches the whole
	 * tree the handler starts. The parent also calls setpgid (race). */
	if (setpgid(0, 0) < 0)
		child_fail(a->err_w, STAGE_SETUP, errno);

	/* Die with the worker. If it died before prctl took effect we have
	 * been reparented already: getppid tells. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		child_fail(a->err_w, STAGE_SETUP, errno);
	if (getppid() != a->parent)
		_exit(127);

	/* exec keeps ignored dispositions (the worker ignores SIGPIPE):
	 * reset all of them. Then unblock everything the parent blocked. */
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		if (sigaction(sig, &dfl, NULL) == 0)
			continue;
#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
		/* libc refuses the real-time signals it keeps for itself
		 * (32, 33), but an ignored one is inherited across exec all
		 * the same: reset it with the kernel's own call. This
		 * layout of struct sigaction is the kernel's on these
		 * architectures. */
		struct {
			void *handler;
			unsigned long flags;
			void *restorer;
			unsigned long mask;
		} k;
		memset(&k, 0, sizeof k);
		syscall(SYS_rt_sigaction, sig, &k, NULL, sizeof k.mask);
#endif
	}
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	if (a->in_r < 0) /* inherit_stdio: 0, 1 and 2 stay the caller's */
		goto other_fds;
	/* All pipe ends are above 2 (above_stdio), so these cannot clobber
	 * each other; dup2 clears O_CLOEXEC on the copies. */
	if (dup2(a->in_r, 0) < 0 || dup2(a->out_w, 1) < 0 ||
	    dup2(a->stderr_w >= 0 ? a->stderr_w : a->out_w, 2) < 0)
		child_fail(a->err_w, STAGE_SETUP, errno);

other_fds:
	/* Every other fd goes, except the error pipe (CLOEXEC: exec closes
	 * it, which the parent reads as success). Fds other threads opened
	 * without O_CLOEXEC would otherwise leak into the handler. */
	close_span(3, (unsigned)a->err_w - 1, a->max_fd);
	close_span((unsigned)a->err_w + 1, ~0U, a->max_fd);

	/* The PATH search, as execvp does it: go on past "not here", remember
	 * "here but not allowed", stop at anything else. Never fall back to
	 * a shell on ENOEXEC. */
	int err = ENOENT, eacces = 0;
	for (char **c = a->candidates; *c; c++) {
		execve(*c, a->argv, a->envp);
		err = errno;
		if (err == EACCES)
			eacces = 1;
		else if (err != ENOENT && err != ENOTDIR && err != ESTALE &&
		         err != ELOOP && err != ENAMETOOLONG && err != ENODEV &&
		         err != ETIMEDOUT)
			break;
	}
	if (eacces && (err == ENOENT || err == ENOTDIR))
		err = EACCES;
	child_fail(a->err_w, STAGE_EXEC, err);
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
	struct running *reg;
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
		close_fd(&w->in_fd);
		return;
	}
	close_fd(&w->in_fd); /* all written: EOF for the child */
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
			close_fd(&w->out_fd);
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
	reg_retire(w->reg);
	kill(-w->pid, SIGKILL);

	int st = 0;
	pid_t p;
	do
		p = waitpid(w->pid, &st, 0);
	while (p < 0 && errno == EINTR);
	reg_remove(w->reg);
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
	close_fd(&w->in_fd);
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
	         errstr(err, eb, sizeof(eb)));
}

/* ------------------------------------------------------------------ */
/* The entry point.                                                    */
/* ------------------------------------------------------------------ */

/* ---- the steps every spawn shares ---- */

/* The highest fd the child's close loop goes to (without close_range). */
static int
fd_limit(void)
{
	struct rlimit rl;
	int max_fd = 65535;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)max_fd)
		max_fd = (int)rl.rlim_cur;
	return max_fd;
}

/* fork into child_main, holding the registry lock so that
 * sked__exec_kill_all never misses a child that exists; the child is
 * registered (and armed in the lease guard) before the lock goes. The
 * caller has blocked every signal. Returns the pid, or -1 with errno. */
static pid_t
fork_registered(const struct child_args *ca, struct running *reg,
                const sked_exec_spec *spec)
{
	pthread_mutex_lock(&reg_lock);
	pid_t pid = fork();
	if (pid == 0)
		child_main(ca);
	int fork_err = errno;
	if (pid > 0) {
		reg->pgid = pid;
		reg_add_locked(reg);
		if (spec->guard)
			sked__guard_arm(spec->guard, spec->guard_slot, pid);
	}
	pthread_mutex_unlock(&reg_lock);
	setpgid(pid, pid); /* also done by the child; whoever is first */
	errno = fork_err;
	return pid;
}

/* Whether the child reported a failure before exec (*rep says which);
 * EOF on the report pipe means exec happened. */
static int
child_failed(int report_fd, struct child_report *rep)
{
	ssize_t got;
	do
		got = read(report_fd, rep, sizeof(*rep));
	while (got < 0 && errno == EINTR);
	return got == (ssize_t)sizeof(*rep);
}

static int
open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd >= 0)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
#else
	(void)pid;
	return -1;
#endif
}

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

	int rc = build_envp(spec->env_extra, spec->scrub_env, &envp);
	if (rc != SKED_OK) {
		snprintf(res->error, sizeof(res->error),
		         rc == SKED_EINVAL
		                 ? "invalid environment entry (want NAME=value)"
		                 : "out of memory");
		return rc;
	}
	rc = build_candidates(prog, envp, &cands);
	if (rc == SKED_OK && !(w.tail.buf = malloc(w.tail.cap)))
		rc = SKED_ENOMEM;
	if (rc != SKED_OK) {
		snprintf(res->error, sizeof(res->error), "out of memory");
		goto out;
	}

	if ((!spec->inherit_stdio &&
	     (make_pipe(in_p) < 0 || make_pipe(out_p) < 0)) ||
	    make_pipe(err_p) < 0) {
		spawn_error(res, prog, "pipe", errno);
		rc = SKED_EIO;
		goto out;
	}

	struct child_args ca = {
	        .candidates = cands,
	        .argv = (char *const *)spec->argv,
	        .envp = envp,
	        .parent = getpid(),
	        .in_r = in_p[0],
	        .out_w = out_p[1],
	        .err_w = err_p[1],
	        .stderr_w = -1,
	        .max_fd = fd_limit(),
	};

	/* Block everything so that no handler of ours runs in the child
	 * before it resets dispositions; the child unblocks after. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);

	struct running reg = {0};
	w.reg = &reg;
	int64_t t0 = sked__mono_ms();
	pid_t pid = fork_registered(&ca, &reg, spec);
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
	close_fd(&in_p[0]);
	close_fd(&out_p[1]);
	close_fd(&err_p[1]);

	/* A report: exec did not happen, and the child exits. */
	struct child_report rep;
	if (child_failed(err_p[0], &rep)) {
		try_reap(&w, 1);
		spawn_error(res, prog,
		            rep.stage == STAGE_EXEC ? NULL : "setting up child",
		            rep.err);
		/* The status is our own _exit(127): not the program's. */
		res->exited = res->exit_code = 0;
		res->signaled = res->signo = 0;
		res->wall_ms = sked__mono_ms() - t0;
		rc = SKED_EIO;
		goto out_mask;
	}
	res->spawned = 1;
	w.pidfd = open_pidfd(pid);
	w.in_fd = in_p[1];
	in_p[1] = -1;
	w.out_fd = out_p[0];
	out_p[0] = -1;
	if (w.in_fd >= 0)
		set_nonblock(w.in_fd);
	if (w.out_fd >= 0)
		set_nonblock(w.out_fd);
	if (spec->input_len == 0)
		close_fd(&w.in_fd);
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
		         errstr(e, eb, sizeof(eb)));
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
	close_fd(&w.pidfd);
	close_fd(&w.in_fd);
	close_fd(&w.out_fd);
	for (int i = 0; i < 2; i++) {
		close_fd(&in_p[i]);
		close_fd(&out_p[i]);
		close_fd(&err_p[i]);
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

/* ------------------------------------------------------------------ */
/* Long-lived programs (pipe: handlers).                               */
/* ------------------------------------------------------------------ */

struct sked_exec_proc {
	pid_t pid; /* also its process group */
	int in_fd, out_fd, err_fd, pidfd;
	struct running reg;
	int reaped;
	int status;
};

int
sked__exec_spawn(const sked_exec_spec *spec, sked_exec_proc **out, char *err,
                 size_t errlen)
{
	*out = NULL;
	if (!spec || !spec->argv || !spec->argv[0] || !spec->argv[0][0]) {
		snprintf(err, errlen, "invalid handler spec");
		return SKED_EINVAL;
	}
	const char *prog = spec->argv[0];
	char **envp = NULL, **cands = NULL;
	int in_p[2] = {-1, -1}, out_p[2] = {-1, -1}, err_p[2] = {-1, -1},
	    se_p[2] = {-1, -1};
	sked_exec_proc *p = calloc(1, sizeof *p);
	int rc = p ? build_envp(spec->env_extra, spec->scrub_env, &envp)
	           : SKED_ENOMEM;
	if (rc == SKED_OK)
		rc = build_candidates(prog, envp, &cands);
	if (rc != SKED_OK) {
		snprintf(err, errlen,
		         rc == SKED_EINVAL ? "invalid environment entry"
		                           : "out of memory");
		goto fail;
	}
	if (make_pipe(in_p) < 0 || make_pipe(out_p) < 0 ||
	    make_pipe(err_p) < 0 || make_pipe(se_p) < 0) {
		snprintf(err, errlen, "cannot run '%.200s': pipe: %s", prog,
		         strerror(errno));
		rc = SKED_EIO;
		goto fail;
	}
	struct child_args ca = {
	        .candidates = cands,
	        .argv = (char *const *)spec->argv,
	        .envp = envp,
	        .parent = getpid(),
	        .in_r = in_p[0],
	        .out_w = out_p[1],
	        .err_w = err_p[1],
	        .stderr_w = se_p[1],
	        .max_fd = fd_limit(),
	};
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	sked_exec_spec plain = {.argv = spec->argv}; /* no guard slot */
	pid_t pid = fork_registered(&ca, &p->reg, &plain);
	int fork_err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		snprintf(err, errlen, "cannot run '%.200s': fork: %s", prog,
		         strerror(fork_err));
		rc = SKED_EIO;
		goto fail;
	}
	p->pid = pid;
	close_fd(&in_p[0]);
	close_fd(&out_p[1]);
	close_fd(&err_p[1]);
	close_fd(&se_p[1]);
	struct child_report rep;
	if (child_failed(err_p[0], &rep)) {
		char eb[128];
		snprintf(err, errlen, "cannot run '%.200s': %s", prog,
		         errstr(rep.err, eb, sizeof eb));
		rc = SKED_EIO;
		goto fail;
	}
	p->pidfd = open_pidfd(pid);
	p->in_fd = in_p[1];
	p->out_fd = out_p[0];
	p->err_fd = se_p[0];
	in_p[1] = out_p[0] = se_p[0] = -1;
	set_nonblock(p->in_fd);
	set_nonblock(p->out_fd);
	set_nonblock(p->err_fd);
	close_fd(&err_p[0]);
	free(cands);
	free(envp);
	*out = p;
	return SKED_OK;
fail:
	for (int i = 0; i < 2; i++) {
		close_fd(&in_p[i]);
		close_fd(&out_p[i]);
		close_fd(&err_p[i]);
		close_fd(&se_p[i]);
	}
	if (p && p->pid > 0)
		sked__exec_proc_stop(p);
	else
		free(p);
	free(cands);
	free(envp);
	return rc;
}

int
sked__exec_proc_fd(const sked_exec_proc *p, int which)
{
	switch (which) {
	case 0:
		return p->in_fd;
	case 1:
		return p->out_fd;
	case 2:
		return p->err_fd;
	default:
		return p->pidfd;
	}
}

pid_t
sked__exec_proc_pid(const sked_exec_proc *p)
{
	return p->pid;
}

int
sked__exec_proc_exited(sked_exec_proc *p, int *status)
{
	if (p->reaped) {
		*status = p->status;
		return 1;
	}
	siginfo_t si;
	memset(&si, 0, sizeof si);
	int r;
	do
		r = waitid(P_PID, (id_t)p->pid, &si,
		           WEXITED | WNOHANG | WNOWAIT);
	while (r < 0 && errno == EINTR);
	if (r == 0 && si.si_pid == 0)
		return 0;
	return 1; /* exited (still a zombie until stopped); status later */
}

void
sked__exec_proc_stop(sked_exec_proc *p)
{
	if (!p)
		return;
	if (!p->reaped && p->pid > 0) {
		reg_retire(&p->reg);
		kill(-p->pid, SIGKILL);
		kill(p->pid, SIGKILL);
		int st = 0;
		pid_t r;
		do
			r = waitpid(p->pid, &st, 0);
		while (r < 0 && errno == EINTR);
		reg_remove(&p->reg);
		sked__exec_sweep_orphans();
		p->status = st;
		p->reaped = 1;
	}
	close_fd(&p->in_fd);
	close_fd(&p->out_fd);
	close_fd(&p->err_fd);
	close_fd(&p->pidfd);
	free(p);
}
