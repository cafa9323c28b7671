/*
 * cmd_lock.c — `sked lock run NAME --ttl D [--wait D] [--at-least D]
 * [--exit-zero-if-locked] -- PROGRAM [ARG…]`: run a program only while
 * holding a cluster lock.
 *
 * Layer: the command-line program. The lock itself (acquire, extend,
 * release, fencing tokens, the database clock) is the library's
 * (sked_lock_*). This file runs the program and keeps the lease alive:
 *
 *   - PROGRAM is run with fork/execvp, never a shell, in a process group
 *     of its own, with PR_SET_PDEATHSIG so that it dies if sked dies
 *     (kill -9 included), and SKED_LOCK_NAME and SKED_FENCING_TOKEN in
 *     its environment.
 *   - The main thread renews the lease every ttl/3. A watchdog thread
 *     kills the program's process group when no renewal has succeeded for
 *     so long that the lease could run out (ttl minus a safety margin,
 *     measured from when the last good renewal began), even while the
 *     main thread is stuck in a database call. sked then exits 70.
 *   - When PROGRAM ends, what is left of its group is killed, the lock
 *     released (honouring --at-least) and sked exits with its status
 *     (128 + N when killed by signal N).
 *   - Held elsewhere: one line, exit 75 (0 with --exit-zero-if-locked).
 *   - SIGTERM, SIGINT, SIGHUP to sked are passed on to PROGRAM's group.
 */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#define LOCK_MIN_TTL_MS 1000
#define LOCK_POLL_MS    20

static volatile sig_atomic_t g_signal;

static void
on_signal(int sig)
{
	g_signal = sig;
}

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
sleep_ms(int64_t ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !g_signal)
		;
}

/* What the watchdog shares with the main thread. */
struct guard {
	pid_t pgid;
	int64_t ttl_ms, safety_ms;
	atomic_llong lease_ok_ms; /* monotonic: the last good renewal began */
	atomic_int stop;          /* 1: the program has ended */
	atomic_int killed;        /* 1: the watchdog killed the program */
};

static void *
watchdog(void *arg)
{
	struct guard *g = arg;

	while (!atomic_load(&g->stop)) {
		if (mono_ms() >=
		    atomic_load(&g->lease_ok_ms) + g->ttl_ms - g->safety_ms) {
			atomic_store(&g->killed, 1);
			kill(-g->pgid, SIGKILL);
			return NULL;
		}
		sleep_ms(LOCK_POLL_MS);
	}
	return NULL;
}

/* Take the lock, trying again while it is held until lo->wait_ms has
 * passed. *began gets when the successful try began: the lease is counted
 * from there, as the database's expiry can only be later. */
static int
acquire(sked *h, const char *name, const char *owner, int64_t ttl,
        const sked_lock_opts *lo, int64_t *token, int64_t *began)
{
	sked_lock_opts once = *lo;
	int64_t deadline = mono_ms() + lo->wait_ms, pause = 50, left;
	int rc;

	once.wait_ms = 0;
	for (;;) {
		*began = mono_ms();
		rc = sked_lock_acquire(h, name, owner, ttl, &once, token);
		if (rc != SKED_ELOCKED && rc != SKED_EBUSY)
			return rc;
		left = deadline - mono_ms();
		if (left <= 0 || g_signal)
			return rc;
		sleep_ms(pause < left ? pause : left);
		pause = pause * 2 > 1000 ? 1000 : pause * 2;
	}
}

static void
make_owner(char *buf, size_t len)
{
	char host[64] = "host";
	struct timespec ts;
	char *p;

	gethostname(host, sizeof host - 1);
	host[sizeof host - 1] = '\0';
	for (p = host; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyz"
		            "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-",
		            *p))
			*p = '-';
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(buf, len, "%s-%d-%04lx", host[0] == '-' ? "h" : host,
	         (int)getpid(),
	         (unsigned long)(ts.tv_nsec ^ getpid()) & 0xffff);
}

static int
install(int sig, void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL);
}

/* Best effort: a lock not released expires by itself at its TTL. */
static void
release_quietly(sked *h, const char *name, const char *owner, int64_t token,
                const sked_lock_opts *lo)
{
	if (sked_lock_release(h, name, owner, token, lo) != SKED_OK)
		cli_err("lock run: cannot release lock %s (it expires by "
		        "itself): %s",
		        name, sked_errmsg(h));
}

/* The child: its own group, dies with sked, the lock facts in its
 * environment, then the program. Never returns. */
static void
child(pid_t parent, const char *name, int64_t token, char **prog)
{
	char tok[32];
	sigset_t none;

	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent) /* sked died before the line above */
		_exit(127);
	install(SIGTERM, SIG_DFL);
	install(SIGINT, SIG_DFL);
	install(SIGHUP, SIG_DFL);
	install(SIGPIPE, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	snprintf(tok, sizeof tok, "%" PRId64, token);
	if (setenv("SKED_LOCK_NAME", name, 1) != 0 ||
	    setenv("SKED_FENCING_TOKEN", tok, 1) != 0)
		_exit(127);
	execvp(prog[0], prog);
	fprintf(stderr, "sked: lock run: cannot run '%s': %s\n", prog[0],
	        strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

int
cmd_lock_run(struct cli *c, int argc, char **argv)
{
	enum { O_TTL = 1, O_WAIT, O_ATLEAST, O_ZERO };
	static const struct option opts[] = {
	        {"ttl", required_argument, NULL, O_TTL},
	        {"wait", required_argument, NULL, O_WAIT},
	        {"at-least", required_argument, NULL, O_ATLEAST},
	        {"exit-zero-if-locked", no_argument, NULL, O_ZERO},
	        CLI_COMMON_OPTIONS,
	        {NULL, 0, NULL, 0},
	};
	sked_lock_opts lo;
	struct guard g;
	pthread_t wd;
	char owner[SKED_MAX_NAME + 1];
	const char *name;
	char **prog;
	int64_t ttl = 0, token = 0, began;
	int ch, ex, rc, dd, i, zero = 0, status = 0, lost = 0, failing = 0;
	pid_t pid, parent;

	memset(&lo, 0, sizeof lo);
	/* PROGRAM and its arguments are everything after "--": they are
	 * not ours to parse */
	for (dd = -1, i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			dd = i;
			break;
		}
	optind = 0;
	while ((ch = getopt_long(dd < 0 ? argc : dd, argv, ":h", opts, NULL)) !=
	       -1) {
		switch (ch) {
		case O_TTL:
			if ((ex = cli_parse_duration("--ttl", optarg, &ttl)) !=
			    0)
				return ex;
			break;
		case O_WAIT:
			if ((ex = cli_parse_duration("--wait", optarg,
			                             &lo.wait_ms)) != 0)
				return ex;
			break;
		case O_ATLEAST:
			if ((ex = cli_parse_duration("--at-least", optarg,
			                             &lo.at_least_ms)) != 0)
				return ex;
			break;
		case O_ZERO:
			zero = 1;
			break;
		case CLI_OPT_HELP:
			cli_help(stdout, "lock run");
			return EX_OK;
		case CLI_OPT_JSON:
			break;
		default:
			return cli_opt_error("lock run", ch, argv);
		}
	}
	if (dd < 0)
		return cli_usage("lock run", "put -- before the PROGRAM");
	if (dd + 1 >= argc)
		return cli_usage("lock run", "missing the PROGRAM after --");
	if (dd - optind != 1)
		return cli_usage("lock run", dd - optind < 1
		                                     ? "missing the lock NAME"
		                                     : "want one lock NAME "
		                                       "before --");
	if (ttl == 0)
		return cli_usage("lock run", "--ttl is required");
	if (ttl < LOCK_MIN_TTL_MS)
		return cli_usage("lock run", "--ttl must be at least 1s (it is "
		                             "renewed every ttl/3)");
	name = argv[optind];
	prog = argv + dd + 1;
	if ((ex = cli_open(c)) != 0)
		return ex;
	make_owner(owner, sizeof owner);

	rc = acquire(c->h, name, owner, ttl, &lo, &token, &began);
	if (rc == SKED_ELOCKED) {
		cli_err("lock run: %s", sked_errmsg(c->h));
		return zero ? EX_OK : EX_TEMPFAIL;
	}
	if (rc != SKED_OK)
		return cli_fail(c->h, rc, "lock run: cannot take lock %s",
		                name);

	install(SIGTERM, on_signal);
	install(SIGINT, on_signal);
	install(SIGHUP, on_signal);
	fflush(NULL);
	parent = getpid();
	pid = fork();
	if (pid == 0)
		child(parent, name, token, prog);
	if (pid < 0) {
		cli_err("lock run: cannot fork: %s", strerror(errno));
		release_quietly(c->h, name, owner, token, &lo);
		return EX_OSERR;
	}
	setpgid(pid, pid); /* either of us may win this race; both agree */

	memset(&g, 0, sizeof g);
	g.pgid = pid;
	g.ttl_ms = ttl;
	g.safety_ms = ttl / 5 < 200 ? 200 : ttl / 5;
	atomic_store(&g.lease_ok_ms, began);
	if (pthread_create(&wd, NULL, watchdog, &g) != 0) {
		cli_err("lock run: cannot start the watchdog thread");
		kill(-pid, SIGKILL);
		waitpid(pid, &status, 0);
		release_quietly(c->h, name, owner, token, &lo);
		return EX_OSERR;
	}

	int64_t next = began + ttl / 3;
	int forwarded = 0;
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid || (r < 0 && errno != EINTR))
			break;
		if (g_signal && forwarded != g_signal) {
			forwarded = g_signal;
			kill(-pid, forwarded);
		}
		int64_t now = mono_ms();
		if (now >= next && !atomic_load(&g.killed)) {
			int64_t t0 = now;
			rc = sked_lock_extend(c->h, name, owner, token, ttl);
			if (rc == SKED_OK) {
				atomic_store(&g.lease_ok_ms, t0);
				next = t0 + ttl / 3;
				if (failing)
					cli_err("lock run: lock %s renewed "
					        "again",
					        name);
				failing = 0;
			} else if (rc == SKED_ELOST) {
				/* someone else may hold it: stop now */
				lost = 1;
				kill(-pid, SIGKILL);
			} else {
				if (!failing)
					cli_err("lock run: cannot renew lock "
					        "%s yet: %s",
					        name, sked_errmsg(c->h));
				failing = 1;
				next = mono_ms() + 250;
			}
		}
		sleep_ms(LOCK_POLL_MS);
	}
	atomic_store(&g.stop, 1);
	pthread_join(wd, NULL);
	kill(-pid, SIGKILL); /* whatever the program left in its group */
	if (atomic_load(&g.killed) || lost) {
		cli_err("lock run: lock %s could not be renewed in time%s: "
		        "'%s' was killed so that it never runs without the "
		        "lock",
		        name, lost ? " (taken over)" : "", prog[0]);
		if (!lost) /* ours still, unless it expired meanwhile */
			release_quietly(c->h, name, owner, token, &lo);
		return EX_SOFTWARE;
	}
	release_quietly(c->h, name, owner, token, &lo);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return EX_SOFTWARE;
}
