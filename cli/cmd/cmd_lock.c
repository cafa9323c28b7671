/*
 * cmd_lock.c — `sked lock run NAME --ttl D [--wait D] [--at-least D]
 * [--exit-zero-if-locked] -- PROGRAM [ARG…]`: run a program only while
 * holding a cluster lock.
 *
 * Layer: the command-line program, a client of sked.h only. Holding the
 * lock while the program runs is the library's sked_lock_run(): the
 * lease renewed every ttl/3, the program run by the library's runner
 * (no shell, its own process group, PR_SET_PDEATHSIG, SKED_LOCK_NAME and
 * SKED_FENCING_TOKEN in its environment) and killed by the lease guard
 * before the lease could run out. This file parses the command, forwards
 * SIGTERM, SIGINT and SIGHUP to the program (one byte per signal on a
 * pipe the library reads) and turns the outcome into an exit code:
 *
 *   - the program's status (128 + N when killed by signal N);
 *   - held elsewhere: one line, 75 (0 with --exit-zero-if-locked);
 *   - killed because the lock could not be renewed in time, or was taken
 *     over: one line, 70;
 *   - PROGRAM not found: 127; not executable: 126.
 */
#include "cmd/cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#define LOCK_MIN_TTL_MS 1000

static volatile sig_atomic_t g_signal;
static int g_forward_w = -1;

/* Note the signal and pass it on: sked_lock_run sends each byte on the
 * pipe to the program's process group. */
static void
on_signal(int sig)
{
	int e = errno;
	unsigned char b = (unsigned char)sig;

	g_signal = sig;
	if (write(g_forward_w, &b, 1) < 0) {
		/* a full pipe holds signals enough */
	}
	errno = e;
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

static void
forward_signals(int on)
{
	static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
	size_t i;

	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		install(sigs[i], on ? on_signal : SIG_DFL);
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
	sked_lock_run_opts ro;
	sked_lock_run_result res;
	const char *name;
	char **prog;
	int64_t ttl = 0;
	int ch, ex, rc, dd, i, zero = 0, fwd[2];

	memset(&ro, 0, sizeof ro);
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
			                             &ro.lock.wait_ms)) != 0)
				return ex;
			break;
		case O_ATLEAST:
			if ((ex = cli_parse_duration("--at-least", optarg,
			                             &ro.lock.at_least_ms)) !=
			    0)
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
	ro.ttl_ms = ttl;
	if ((ex = cli_open(c)) != 0)
		return ex;

	if (pipe2(fwd, O_CLOEXEC | O_NONBLOCK) != 0) {
		cli_err("lock run: cannot make a pipe: %s", strerror(errno));
		return EX_OSERR;
	}
	g_forward_w = fwd[1];
	ro.forward_fd = fwd[0];
	forward_signals(1);
	fflush(NULL);
	rc = sked_lock_run(c->h, name, (const char *const *)prog, &ro, &res);
	forward_signals(0);
	close(fwd[0]);
	close(fwd[1]);
	g_forward_w = -1;

	if (rc == SKED_ELOCKED && g_signal) {
		/* stopped while waiting for the lock: die of it, as before
		 * the program would have been ours to pass it on to */
		raise(g_signal);
		return 128 + g_signal;
	}
	if (rc == SKED_ELOCKED) {
		cli_err("lock run: %s", sked_errmsg(c->h));
		return zero ? EX_OK : EX_TEMPFAIL;
	}
	if (rc == SKED_EIO && res.token != 0 && res.spawn_errno != 0) {
		cli_err("lock run: %s", res.error);
		return res.spawn_errno == ENOENT ? 127 : 126;
	}
	if (rc != SKED_OK && res.token != 0)
		return cli_fail(c->h, rc, "lock run: lock %s", name);
	if (rc != SKED_OK)
		return cli_fail(c->h, rc, "lock run: cannot take lock %s",
		                name);
	if (res.expired || res.lost)
		cli_err("lock run: lock %s could not be renewed in time%s: "
		        "'%s' was killed so that it never runs without the "
		        "lock",
		        name, res.lost ? " (taken over)" : "", prog[0]);
	if (res.release_rc != SKED_OK)
		cli_err("lock run: cannot release lock %s (it expires by "
		        "itself): %s",
		        name, sked_errmsg(c->h));
	if (res.expired || res.lost)
		return EX_SOFTWARE;
	if (res.exited)
		return res.exit_code;
	if (res.signaled)
		return 128 + res.signo;
	return EX_SOFTWARE;
}
