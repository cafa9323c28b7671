/*
 * test_exec.c — unit tests for src/proc/exec.c with real processes.
 *
 * Layer: tests. Runs /bin/sh scripts (tests only: the module itself never
 * uses a shell), cat, true, false and sleep. The test process makes itself
 * a child subreaper so that orphaned grandchildren come back to it: that
 * lets a test check that a killed process is really gone (reaped) rather
 * than a zombie some container init never collects. It leaves the worker's
 * use of results to the worker's tests.
 */
#include "proc/exec.h"

#include "sked.h"
#include "util/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static char tmpdir[512];

static sked_exec_spec
spec_of(const char *const *argv)
{
	sked_exec_spec s;
	memset(&s, 0, sizeof(s));
	s.argv = argv;
	s.cancel_fd = -1;
	return s;
}

/* Run an sh script; fail the test unless it ran. */
static void
run_sh(const char *script, sked_exec_spec *s, sked_exec_result *r)
{
	const char *argv[] = {"/bin/sh", "-c", script, NULL};
	s->argv = argv;
	assert_int_equal(sked__exec_run(s, r), SKED_OK);
	assert_true(r->spawned);
	s->argv = NULL;
}

/* Wait up to ms for pid (our child, via subreaper) to die; returns its
 * wait status, or -1 if it is still alive. */
static int
reap_within(pid_t pid, int ms)
{
	int64_t until = sked__mono_ms() + ms;
	for (;;) {
		int st;
		pid_t p = waitpid(pid, &st, WNOHANG);
		if (p == pid)
			return st;
		if (p < 0 && errno == ECHILD)
			return kill(pid, 0) == 0 ? -1 : 0; /* not ours: gone? */
		if (sked__mono_ms() > until)
			return -1;
		usleep(10000);
	}
}

static pid_t
read_pid_file(const char *path, int ms)
{
	int64_t until = sked__mono_ms() + ms;
	while (sked__mono_ms() < until) {
		FILE *f = fopen(path, "r");
		if (f) {
			long v = 0;
			int ok = fscanf(f, "%ld", &v) == 1;
			fclose(f);
			if (ok && v > 0)
				return (pid_t)v;
		}
		usleep(10000);
	}
	return -1;
}

/* ------------------------------------------------------------------ */

static void
test_exit_codes(void **state)
{
	sked_exec_result r;
	const char *t[] = {"true", NULL}; /* found through PATH */
	sked_exec_spec s = spec_of(t);
	assert_int_equal(sked__exec_run(&s, &r), SKED_OK);
	assert_true(r.spawned);
	assert_true(r.exited);
	assert_int_equal(r.exit_code, 0);
	assert_false(r.signaled);
	assert_string_equal(r.error, "");
	assert_null(r.output);
	sked__exec_result_free(&r);

	const char *f[] = {"/bin/false", NULL};
	s = spec_of(f);
	assert_int_equal(sked__exec_run(&s, &r), SKED_OK);
	assert_true(r.exited);
	assert_int_equal(r.exit_code, 1);
	assert_string_equal(r.error, "exit status 1");
	sked__exec_result_free(&r);

	s = spec_of(NULL);
	run_sh("exit 3", &s, &r);
	assert_true(r.exited);
	assert_int_equal(r.exit_code, 3);
	assert_string_equal(r.error, "exit status 3");
	sked__exec_result_free(&r);
}

static void
test_argv_passed_verbatim(void **state)
{
	/* No shell: metacharacters reach the program as plain bytes. */
	const char *argv[] = {"/bin/sh",    "-c",  "printf '%s|' \"$@\"",
	                      "x",          "a b", "$HOME",
	                      "; rm -rf /", "*",   NULL};
	sked_exec_spec s = spec_of(argv);
	sked_exec_result r;
	assert_int_equal(sked__exec_run(&s, &r), SKED_OK);
	assert_string_equal(r.output, "a b|$HOME|; rm -rf /|*|");
	sked__exec_result_free(&r);
}

static void
test_small_payload_on_stdin(void **state)
{
	const char *argv[] = {"cat", NULL};
	sked_exec_spec s = spec_of(argv);
	static const char in[] = "hello\0world\n";
	s.input = in;
	s.input_len = sizeof(in) - 1;
	sked_exec_result r;
	assert_int_equal(sked__exec_run(&s, &r), SKED_OK);
	assert_int_equal(r.exit_code, 0);
	assert_int_equal(r.output_len, sizeof(in) - 1);
	assert_memory_equal(r.output, in, sizeof(in) - 1);
	assert_int_equal(r.output[r.output_len], '\0');
	sked__exec_result_free(&r);

	/* No input: stdin is at EOF at once (cat would hang otherwise). */
	s.input = NULL;
	s.input_len = 0;
	s.timeout_ms = 5000;
	assert_int_equal(sked__exec_run(&s, &r), SKED_OK);
	assert_false(r.timed_out);
	assert_true(r.exited);
	assert_null(r.output);
	sked__exec_result_free(&r);
}

static void
test_large_payload_byte_exact(void **state)
{
	size_t n = 1u << 20;
	char *in = malloc(n);
	assert_non_null(in);
	uint32_t x = 2463534242u;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		in[i] = (char)(x & 0xff);
	}

	sked_exec_spec s = spec_of(NULL);
	sked_exec_result r;
	s.input = in;
	s.input_len = n;
	run_sh("wc -c", &s, &r);
	assert_int_equal(r.exit_code, 0);
	assert_non_null(r.output);
	assert_int_equal(strtol(r.output, NULL, 10), (long)n);
	sked__exec_result_free(&r);

	/* cat echoes it back while we still write: both pipes full at once
	 * would deadlock a naive write-then-read. */
	const char *cat[] = {"/bin/cat", NULL};
	s.argv = cat;
	s.tail_max = n;
	assert_int_equal(sked__exec_run(&s, &r), SKED_OK);
	assert_int_equal(r.exit_code, 0);
	assert_int_equal(r.output_len, n);
	assert_memory_equal(r.output, in, n);
	sked__exec_result_free(&r);

	/* A smaller tail keeps exactly the last bytes. */
	s.tail_max = 1000;
	assert_int_equal(sked__exec_run(&s, &r), SKED_OK);
	size_t mlen = strlen(SKED__EXEC_TRUNCATED);
	assert_true(r.output_len <= mlen + 1000);
	assert_true(r.output_len >= mlen + 997);
	assert_memory_equal(r.output, SKED__EXEC_TRUNCATED, mlen);
	size_t kept = r.output_len - mlen;
	assert_memory_equal(r.output + mlen, in + n - kept, kept);
	sked__exec_result_free(&r);
	free(in);
}

static void
test_child_ignores_stdin_and_writes_a_lot(void **state)
{
	size_t n = 1u << 20;
	char *in = calloc(1, n);
	assert_non_null(in);
	sked_exec_spec s = spec_of(NULL);
	sked_exec_result r;
	s.input = in;
	s.input_len = n;
	s.timeout_ms = 20000;
	run_sh("exec 0</dev/null; head -c 3000000 /dev/zero | tr '\\0' x; "
	       "echo END",
	       &s, &r);
	assert_false(r.timed_out);
	assert_true(r.exited);
	assert_int_equal(r.exit_code, 0);
	assert_string_equal(r.error, "");
	size_t mlen = strlen(SKED__EXEC_TRUNCATED);
	assert_int_equal(r.output_len, mlen + 4096);
	assert_memory_equal(r.output, SKED__EXEC_TRUNCATED, mlen);
	assert_string_equal(r.output + r.output_len - 6, "xxEND\n");
	sked__exec_result_free(&r);
	free(in);
}

static void
test_output_tail_truncation(void **state)
{
	sked_exec_spec s = spec_of(NULL);
	sked_exec_result r;
	s.tail_max = 20;
	run_sh("i=0; while [ $i -lt 100 ]; do echo line$i; i=$((i+1)); done",
	       &s, &r);
	char want[64];
	snprintf(want, sizeof(want), "%sine97\nline98\nline99\n",
	         SKED__EXEC_TRUNCATED);
	assert_string_equal(r.output, want);
	assert_int_equal(r.output_len, strlen(want));
	sked__exec_result_free(&r);

	/* Exactly tail_max bytes: no marker. */
	s.tail_max = 6;
	run_sh("printf abcdef", &s, &r);
	assert_string_equal(r.output, "abcdef");
	sked__exec_result_free(&r);

	/* A cut does not start inside a UTF-8 sequence: "é" is C3 A9. */
	s.tail_max = 4;
	run_sh("printf 'xx\\303\\251abc'", &s, &r);
	snprintf(want, sizeof(want), "%sabc", SKED__EXEC_TRUNCATED);
	assert_string_equal(r.output, want);
	sked__exec_result_free(&r);
}

static void
test_stderr_combined(void **state)
{
	sked_exec_spec s = spec_of(NULL);
	sked_exec_result r;
	run_sh("echo out; echo err >&2; echo out2", &s, &r);
	assert_string_equal(r.output, "out\nerr\nout2\n");
	sked__exec_result_free(&r);
}

static void
test_environment(void **state)
{
	setenv("SKED_TEST_INHERITED", "yes", 1);
	setenv("SKED_TASK_KIND", "stale", 1);
	const char *env[] = {"SKED_TASK_ID=42",
	                     "SKED_TASK_KIND=email",
	                     "SKED_TASK_QUEUE=default",
	                     "SKED_TASK_ATTEMPT=2",
	                     "SKED_EMPTY=",
	                     NULL};
	sked_exec_spec s = spec_of(NULL);
	s.env_extra = env;
	sked_exec_result r;
	run_sh("printf '%s|%s|%s|%s|%s|%s|' \"$SKED_TASK_ID\" "
	       "\"$SKED_TASK_KIND\" \"$SKED_TASK_QUEUE\" "
	       "\"$SKED_TASK_ATTEMPT\" \"$SKED_TEST_INHERITED\" "
	       "\"${SKED_EMPTY-unset}\"; env | grep -c '^SKED_TASK_KIND='",
	       &s, &r);
	assert_string_equal(r.output, "42|email|default|2|yes||1\n");
	sked__exec_result_free(&r);
	unsetenv("SKED_TEST_INHERITED");
	unsetenv("SKED_TASK_KIND");

	/* PATH from env_extra drives the search. */
	const char *argv[] = {"true", NULL};
	const char *nopath[] = {"PATH=/nonexistent-sked-dir", NULL};
	s = spec_of(argv);
	s.env_extra = nopath;
	assert_int_equal(sked__exec_run(&s, &r), SKED_EIO);
	assert_false(r.spawned);
	assert_string_equal(r.error,
	                    "cannot run 'true': No such file or directory");
	sked__exec_result_free(&r);

	const char *bad[] = {"NOEQUALS", NULL};
	s.env_extra = bad;
	assert_int_equal(sked__exec_run(&s, &r), SKED_EINVAL);
	assert_false(r.spawned);
	assert_string_not_equal(r.error, "");
}

static void
test_signals_reset_for_child(void **state)
{
	/* We ignore SIGPIPE (as the worker does) and block SIGUSR1; the
	 * child must see default dispositions and an empty mask: SigIgn and
	 * SigBlk in /proc/self/status are all zero. */
	sigset_t usr1, old;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, &old);
	sked_exec_spec s = spec_of(NULL);
	sked_exec_result r;
	run_sh("grep -E '^Sig(Ign|Blk)' /proc/self/status", &s, &r);
	assert_string_equal(r.output, "SigBlk:\t0000000000000000\n"
	                              "SigIgn:\t0000000000000000\n");
	sked__exec_result_free(&r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void
test_fds_not_leaked(void **state)
{
	int leak = open("/dev/null", O_RDONLY); /* no O_CLOEXEC */
	assert_true(leak > 2);
	sked_exec_spec s = spec_of(NULL);
	sked_exec_result r;
	/* sh's own fds (not ls's: $$ is sh), listed without a pipeline so
	 * that sh opens none of its own: exactly stdin, stdout, stderr. */
	run_sh("ls -1 /proc/$$/fd", &s, &r);
	assert_string_equal(r.output, "0\n1\n2\n");
	sked__exec_result_free(&r);
	close(leak);
}

static void
test_program_not_found(void **state)
{
	sked_exec_result r;
	const char *a[] = {"sked-no-such-program-xyz", NULL};
	sked_exec_spec s = spec_of(a);
	assert_int_equal(sked__exec_run(&s, &r), SKED_EIO);
	assert_false(r.spawned);
	assert_false(r.exited);
	assert_string_equal(r.error, "cannot run 'sked-no-such-program-xyz': "
	                             "No such file or directory");
	sked__exec_result_free(&r);

	const char *b[] = {"/nonexistent/dir/prog", NULL};
	s = spec_of(b);
	assert_int_equal(sked__exec_run(&s, &r), SKED_EIO);
	assert_string_equal(r.error, "cannot run '/nonexistent/dir/prog': "
	                             "No such file or directory");

	/* A file that exists but is not executable. */
	char path[600];
	snprintf(path, sizeof(path), "%s/not-exec", tmpdir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("echo hi\n", f);
	fclose(f);
	const char *c[] = {path, NULL};
	s = spec_of(c);
	assert_int_equal(sked__exec_run(&s, &r), SKED_EIO);
	assert_false(r.spawned);
	assert_non_null(strstr(r.error, "Permission denied"));

	/* Executable but not a binary and no #!: no shell fallback. */
	chmod(path, 0755);
	assert_int_equal(sked__exec_run(&s, &r), SKED_EIO);
	assert_non_null(strstr(r.error, "Exec format error"));
	unlink(path);

	s = spec_of(NULL);
	assert_int_equal(sked__exec_run(&s, &r), SKED_EINVAL);
	const char *empty[] = {"", NULL};
	s = spec_of(empty);
	assert_int_equal(sked__exec_run(&s, &r), SKED_EINVAL);
}

static void
test_killed_by_signal(void **state)
{
	sked_exec_spec s = spec_of(NULL);
	sked_exec_result r;
	run_sh("echo bye; kill -9 $$", &s, &r);
	assert_false(r.exited);
	assert_true(r.signaled);
	assert_int_equal(r.signo, SIGKILL);
	assert_string_equal(r.error, "killed by signal 9 (Killed)");
	assert_string_equal(r.output, "bye\n");
	sked__exec_result_free(&r);
}

static void
test_timeout(void **state)
{
	const char *argv[] = {"sleep", "30", NULL};
	sked_exec_spec s = spec_of(argv);
	s.timeout_ms = 300;
	sked_exec_result r;
	int64_t t0 = sked__mono_ms();
	assert_int_equal(sked__exec_run(&s, &r), SKED_OK);
	int64_t took = sked__mono_ms() - t0;
	assert_true(took >= 290);
	assert_true(took < 1500);
	assert_true(r.timed_out);
	assert_false(r.cancelled);
	assert_true(r.signaled);
	assert_int_equal(r.signo, SIGTERM);
	assert_string_equal(r.error, "timed out after 300ms");
	sked__exec_result_free(&r);

	/* A child that ignores SIGTERM gets SIGKILL after the grace. */
	s = spec_of(NULL);
	s.timeout_ms = 1000;
	s.kill_grace_ms = 300;
	t0 = sked__mono_ms();
	run_sh("trap '' TERM; sleep 30 & echo $!; wait", &s, &r);
	took = sked__mono_ms() - t0;
	assert_true(took >= 1290);
	assert_true(took < 2500);
	assert_true(r.timed_out);
	assert_true(r.signaled);
	assert_int_equal(r.signo, SIGKILL);
	assert_string_equal(r.error, "timed out after 1s");
	/* The orphaned sleep came to us (subreaper): dead by SIGKILL. */
	pid_t gc = (pid_t)strtol(r.output, NULL, 10);
	assert_true(gc > 0);
	int st = reap_within(gc, 1000);
	assert_int_not_equal(st, -1);
	/* killed, and reaped either here or already by the orphan sweep
	 * (sked__exec_sweep_orphans: this process is a subreaper), which
	 * leaves it gone (0): a sleep 30 cannot have exited by itself */
	assert_true(st == 0 || (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL));
	sked__exec_result_free(&r);
}

struct poke {
	int fd;
	int delay_ms;
};

static void *
poke_later(void *arg)
{
	struct poke *p = arg;
	usleep((useconds_t)p->delay_ms * 1000);
	ssize_t w = write(p->fd, "x", 1);
	(void)w;
	return NULL;
}

static void
test_cancel_fd(void **state)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	struct poke pk = {p[1], 200};
	pthread_t th;
	/* the clock starts before the poker's sleep does: on a loaded
	 * machine the main thread may wait between the two */
	int64_t t0 = sked__mono_ms();
	assert_int_equal(pthread_create(&th, NULL, poke_later, &pk), 0);

	const char *argv[] = {"sleep", "30", NULL};
	sked_exec_spec s = spec_of(argv);
	s.cancel_fd = p[0];
	s.timeout_ms = 20000;
	sked_exec_result r;
	assert_int_equal(sked__exec_run(&s, &r), SKED_OK);
	int64_t took = sked__mono_ms() - t0;
	pthread_join(th, NULL);
	assert_true(took >= 190);
	assert_true(took < 1500);
	assert_true(r.cancelled);
	assert_false(r.timed_out);
	assert_true(r.signaled);
	assert_string_equal(r.error, "cancelled");
	sked__exec_result_free(&r);

	/* The fd is only polled, not read: it still holds the byte, so a
	 * second handler sharing it stops at once too. */
	char b;
	assert_int_equal(read(p[0], &b, 1), 1);
	close(p[0]);
	close(p[1]);
}

static void
test_group_killed_on_timeout(void **state)
{
	char pidf[600];
	snprintf(pidf, sizeof(pidf), "%s/grandchild.pid", tmpdir);
	unlink(pidf);
	const char *argv[] = {
	        "/bin/sh", "-c", "sleep 30 & echo $! > \"$1\"; wait",
	        "sh",      pidf, NULL};
	sked_exec_spec s = spec_of(argv);
	/* long enough for the shell to start its child and write the pid
	 * first: under ThreadSanitizer on a loaded machine 300 ms was not
	 * (a CI preview found no pid file) */
	s.timeout_ms = 2000;
	sked_exec_result r;
	assert_int_equal(sked__exec_run(&s, &r), SKED_OK);
	assert_true(r.timed_out);
	pid_t gc = read_pid_file(pidf, 100);
	assert_true(gc > 0);
	int st = reap_within(gc, 1000);
	assert_int_not_equal(st, -1);
	sked__exec_result_free(&r);
	unlink(pidf);
}

static void
test_grandchild_killed_after_exit(void **state)
{
	/* sh exits at once, leaving a background sleep that holds the output
	 * pipe. Without the group kill the run would last 30 s. */
	sked_exec_spec s = spec_of(NULL);
	sked_exec_result r;
	int64_t t0 = sked__mono_ms();
	run_sh("sleep 30 & echo $!; exit 0", &s, &r);
	assert_true(sked__mono_ms() - t0 < 1500);
	assert_true(r.exited);
	assert_int_equal(r.exit_code, 0);
	assert_non_null(r.output);
	pid_t gc = (pid_t)strtol(r.output, NULL, 10);
	assert_true(gc > 0);
	int st = reap_within(gc, 1000);
	assert_int_not_equal(st, -1);
	/* killed, and reaped either here or already by the orphan sweep
	 * (sked__exec_sweep_orphans: this process is a subreaper), which
	 * leaves it gone (0): a sleep 30 cannot have exited by itself */
	assert_true(st == 0 || (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL));
	sked__exec_result_free(&r);
}

struct bg_run {
	sked_exec_result r;
	int rc;
};

static void *
run_sleep(void *arg)
{
	struct bg_run *b = arg;
	const char *argv[] = {"sleep", "30", NULL};
	sked_exec_spec s = spec_of(argv);
	b->rc = sked__exec_run(&s, &b->r);
	return NULL;
}

static void
test_kill_all(void **state)
{
	enum { N = 3 };
	struct bg_run b[N];
	pthread_t th[N];
	assert_int_equal(sked__exec_running(), 0);
	for (int i = 0; i < N; i++)
		assert_int_equal(pthread_create(&th[i], NULL, run_sleep, &b[i]),
		                 0);
	int64_t until = sked__mono_ms() + 2000;
	while (sked__exec_running() < N && sked__mono_ms() < until)
		usleep(5000);
	assert_int_equal(sked__exec_running(), N);
	int64_t t0 = sked__mono_ms();
	sked__exec_kill_all(SIGKILL);
	for (int i = 0; i < N; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(b[i].rc, SKED_OK);
		assert_true(b[i].r.signaled);
		assert_int_equal(b[i].r.signo, SIGKILL);
		sked__exec_result_free(&b[i].r);
	}
	assert_true(sked__mono_ms() - t0 < 1000);
	assert_int_equal(sked__exec_running(), 0);
}

static void
test_pdeathsig(void **state)
{
	char pidf[600];
	snprintf(pidf, sizeof(pidf), "%s/orphan.pid", tmpdir);
	unlink(pidf);
	pid_t helper = fork();
	assert_true(helper >= 0);
	if (helper == 0) {
		const char *argv[] = {
		        "/bin/sh", "-c", "echo $$ > \"$1\"; exec sleep 30",
		        "sh",      pidf, NULL};
		sked_exec_spec s = spec_of(argv);
		sked_exec_result r;
		int rc = sked__exec_run(&s, &r);
		_exit(rc == SKED_OK ? 0 : 1);
	}
	pid_t victim = read_pid_file(pidf, 2000);
	assert_true(victim > 0);
	assert_int_equal(kill(helper, SIGKILL), 0);
	int st;
	assert_int_equal(waitpid(helper, &st, 0), helper);
	/* The sleep is reparented to us (subreaper) and must die at once. */
	st = reap_within(victim, 1000);
	assert_int_not_equal(st, -1);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGKILL);
	unlink(pidf);
}

struct par {
	int i;
	sked_exec_result r;
	int rc;
};

static void *
run_echo(void *arg)
{
	struct par *p = arg;
	char script[64];
	snprintf(script, sizeof(script), "cat; echo \" $SKED_N\"; exit %d",
	         p->i);
	char env[32];
	snprintf(env, sizeof(env), "SKED_N=%d", p->i);
	const char *argv[] = {"/bin/sh", "-c", script, NULL};
	const char *envx[] = {env, NULL};
	char in[16];
	int n = snprintf(in, sizeof(in), "in%d", p->i);
	sked_exec_spec s = spec_of(argv);
	s.env_extra = envx;
	s.input = in;
	s.input_len = (size_t)n;
	p->rc = sked__exec_run(&s, &p->r);
	return NULL;
}

static void
test_parallel_runs(void **state)
{
	/* Many threads spawning at once: each gets its own stdin, env,
	 * output and status back, and no pipe end leaks into a sibling. */
	enum { N = 8 };
	pthread_t th[N];
	struct par p[N];
	for (int i = 0; i < N; i++) {
		p[i].i = i;
		assert_int_equal(pthread_create(&th[i], NULL, run_echo, &p[i]),
		                 0);
	}
	for (int i = 0; i < N; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(p[i].rc, SKED_OK);
		char want[32];
		snprintf(want, sizeof(want), "in%d %d\n", i, i);
		assert_string_equal(p[i].r.output, want);
		assert_true(p[i].r.exited);
		assert_int_equal(p[i].r.exit_code, i);
		sked__exec_result_free(&p[i].r);
	}
}

static void
test_sigpipe_not_relied_on(void **state)
{
	/* In a helper whose SIGPIPE is at its default (death), feed a big
	 * payload to a child that never reads it: the helper must live. */
	pid_t helper = fork();
	assert_true(helper >= 0);
	if (helper == 0) {
		signal(SIGPIPE, SIG_DFL);
		size_t n = 1u << 20;
		char *in = calloc(1, n);
		const char *argv[] = {"/bin/true", NULL};
		sked_exec_spec s = spec_of(argv);
		s.input = in;
		s.input_len = n;
		sked_exec_result r;
		int rc = sked__exec_run(&s, &r);
		_exit(rc == SKED_OK && r.exited && r.exit_code == 0 ? 0 : 1);
	}
	int st;
	assert_int_equal(waitpid(helper, &st, 0), helper);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* A grandchild in a session of its own escapes the group kill; the
 * orphan sweep (this process is a subreaper) kills it when the handler
 * ends. It once ran on for its 30 s. */
static void
test_setsid_grandchild_swept(void **state)
{
	sked_exec_spec s = spec_of(NULL);
	sked_exec_result r;
	if (access("/usr/bin/setsid", X_OK) != 0) {
		skip();
		return;
	}
	run_sh("setsid sleep 30 </dev/null >/dev/null 2>&1 & echo $!; "
	       "sleep 0.2; exit 0",
	       &s, &r);
	assert_true(r.exited);
	assert_non_null(r.output);
	pid_t gc = (pid_t)strtol(r.output, NULL, 10);
	assert_true(gc > 0);
	/* gone at once: killed and reaped by the sweep */
	assert_int_equal(kill(gc, 0), -1);
	assert_int_equal(errno, ESRCH);
	sked__exec_result_free(&r);
}

static void
test_no_zombies(void **state)
{
	int st;
	errno = 0;
	pid_t p = waitpid(-1, &st, WNOHANG);
	if (p > 0)
		print_error("unreaped child %d\n", (int)p);
	assert_int_equal(p, -1);
	assert_int_equal(errno, ECHILD);
}

int
main(void)
{
	/* The worker ignores SIGPIPE; so do we. */
	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	const char *base = getenv("SKED_TEST_TMP");
	if (!base || !*base)
		base = "/tmp";
	mkdir(base, 0755);
	snprintf(tmpdir, sizeof(tmpdir), "%s/test_exec.XXXXXX", base);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}

	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_exit_codes),
	        cmocka_unit_test(test_argv_passed_verbatim),
	        cmocka_unit_test(test_small_payload_on_stdin),
	        cmocka_unit_test(test_large_payload_byte_exact),
	        cmocka_unit_test(test_child_ignores_stdin_and_writes_a_lot),
	        cmocka_unit_test(test_output_tail_truncation),
	        cmocka_unit_test(test_stderr_combined),
	        cmocka_unit_test(test_environment),
	        cmocka_unit_test(test_signals_reset_for_child),
	        cmocka_unit_test(test_fds_not_leaked),
	        cmocka_unit_test(test_program_not_found),
	        cmocka_unit_test(test_killed_by_signal),
	        cmocka_unit_test(test_timeout),
	        cmocka_unit_test(test_cancel_fd),
	        cmocka_unit_test(test_group_killed_on_timeout),
	        cmocka_unit_test(test_grandchild_killed_after_exit),
	        cmocka_unit_test(test_kill_all),
	        cmocka_unit_test(test_pdeathsig),
	        cmocka_unit_test(test_parallel_runs),
	        cmocka_unit_test(test_sigpipe_not_relied_on),
	        cmocka_unit_test(test_setsid_grandchild_swept),
	        cmocka_unit_test(test_no_zombies),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(tmpdir);
	return failed;
}
