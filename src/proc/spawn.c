/*
 * spawn.c — starting a child: its environment, the PATH search, the
 * pipes, and the child's side between fork and exec.
 *
 * Layer: src/proc/ (floor 1; spawn.h). Linux-specific on purpose: process
 * groups, PR_SET_PDEATHSIG, close_range and pidfd are what make "a
 * handler never outlives its worker" and "it inherits no descriptor of
 * ours" hold; where close_range or pidfd is missing we fall back to a
 * close loop and to polling (exec.c). Everything the child needs is
 * built here before fork, in the parent (envp, the candidate paths, the
 * pipes, all O_CLOEXEC and above fd 2); the child itself makes only
 * async-signal-safe calls. Forking under the registry lock is
 * children.c's; feeding, watching and reaping are exec.c's and
 * resident.c's.
 */
#include "proc/spawn.h"
#include "proc/exec.h"

#include "sked.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

extern char **environ;

/* ------------------------------------------------------------------ */
/* Small helpers.                                                     */
/* ------------------------------------------------------------------ */

const char *
sked__spawn_strerror(int err, char *buf, size_t len)
{
	return strerror_r(err, buf, len);
}

void
sked__spawn_close(int *fd)
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

int
sked__spawn_pipe(int p[2])
{
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	if (above_stdio(&p[0]) < 0 || above_stdio(&p[1]) < 0) {
		int e = errno;
		sked__spawn_close(&p[0]);
		sked__spawn_close(&p[1]);
		errno = e;
		return -1;
	}
	return 0;
}

void
sked__spawn_nonblock(int fd)
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
	        "SKED_HOOK_SECRET", /* webhooks' signing key */
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

int
sked__spawn_envp(const char *const *extra, int scrub, char ***out)
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
int
sked__spawn_paths(const char *prog, char *const *envp, char ***out)
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

static void __attribute__((noreturn)) child_fail(int err_w, int stage, int err)
{
	struct sked_child_report rep = {stage, err};
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

void
sked__spawn_child(const struct sked_child_args *a)
{
	/* Our own process group, so a timeout or cancel reaches the whole
	 * tree the handler starts. The parent also calls setpgid (race). */
	if (setpgid(0, 0) < 0)
		child_fail(a->err_w, SKED__STAGE_SETUP, errno);

	/* Die with the worker. If it died before prctl took effect we have
	 * been reparented already: getppid tells. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		child_fail(a->err_w, SKED__STAGE_SETUP, errno);
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
		child_fail(a->err_w, SKED__STAGE_SETUP, errno);

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
	child_fail(a->err_w, SKED__STAGE_EXEC, err);
}

/* ------------------------------------------------------------------ */
/* After fork, in the parent.                                         */
/* ------------------------------------------------------------------ */

int
sked__spawn_fd_limit(void)
{
	struct rlimit rl;
	int max_fd = 65535;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)max_fd)
		max_fd = (int)rl.rlim_cur;
	return max_fd;
}

int
sked__spawn_failed(int report_fd, struct sked_child_report *rep)
{
	ssize_t got;
	do
		got = read(report_fd, rep, sizeof(*rep));
	while (got < 0 && errno == EINTR);
	return got == (ssize_t)sizeof(*rep);
}

int
sked__spawn_pidfd(pid_t pid)
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
