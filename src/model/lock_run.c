/*
 * lock_run.c — sked_lock_run: hold a cluster lock while a program runs
 * (what `sked lock run` does; docs/locks.md).
 *
 * Layer: beside the worker, on top of three things it does not repeat:
 * the lock calls of lock.c (acquire, extend, release), the runner of
 * proc/exec.c and proc/spawn.c (spawn without a shell, own process
 * group, PDEATHSIG, every signal disposition reset, no inherited
 * descriptors, the group killed at the end) and the lease guard of guard.c (a separate process that
 * kills the program at a deadline even while this one cannot run).
 *
 * Three parties, one deadline:
 *   - the calling thread takes the lock, then renews it every ttl/3 and
 *     moves the guard's deadline to (start of the last good renewal) +
 *     ttl - safety; on SKED_ELOST it moves the deadline to now;
 *   - a runner thread spends the program's whole life in
 *     sked__exec_run(), which also passes on the signals written to
 *     forward_fd, and says when it returns through a pipe;
 *   - the guard kills the program's group with SIGKILL once the deadline
 *     passes. Should the guard itself die, the calling thread stops the
 *     program through the runner's cancel descriptor instead.
 * The database's expiry can only be later than the deadline: the lease
 * is counted from when the successful acquire or extend began.
 */
#include "model/lock.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proc/exec.h"
#include "proc/guard.h"
#include "handle/handle.h"
#include "util/clock.h"
#include "util/ident.h"
#include "util/log.h"

#define MIN_TTL_MS 1000
#define RETRY_MS   250 /* after a renewal that failed but did not lose */
#define TICK_MS    100 /* how often the guard's life is checked */

/* The safety margin before the lease could run out. */
static int64_t
safety_ms(int64_t ttl_ms)
{
	return ttl_ms / 5 < 200 ? 200 : ttl_ms / 5;
}

/* 1 when fd (> 2) has something to read now. */
static int
readable(int fd)
{
	struct pollfd pf = {fd, POLLIN, 0};
	return fd > 2 && poll(&pf, 1, 0) > 0;
}

/* Sleep ms, or less when fd (> 2) becomes readable. */
static void
pause_ms(int64_t ms, int fd)
{
	if (fd > 2) {
		struct pollfd pf = {fd, POLLIN, 0};
		poll(&pf, 1, (int)ms);
		return;
	}
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Take the lock, trying again while it is held (or the database busy)
 * until wait_ms has passed or a byte waits on stop_fd. *began gets when
 * the successful try began. */
static int
acquire(sked *h, const char *name, const char *owner, int64_t ttl_ms,
        const sked_lock_opts *lo, int stop_fd, int64_t *token, int64_t *began)
{
	sked_lock_opts once = *lo;
	int64_t deadline = sked__mono_ms() + lo->wait_ms,
	        pause = SKED__LOCK_WAIT_MIN_MS;

	once.wait_ms = 0;
	for (;;) {
		*began = sked__mono_ms();
		int rc =
		        sked_lock_acquire(h, name, owner, ttl_ms, &once, token);
		if (rc != SKED_ELOCKED && rc != SKED_EBUSY)
			return rc;
		int64_t left = deadline - sked__mono_ms();
		if (left <= 0 || readable(stop_fd))
			return rc;
		pause_ms(pause < left ? pause : left, stop_fd);
		pause = pause * 2 > SKED__LOCK_WAIT_MAX_MS
		                ? SKED__LOCK_WAIT_MAX_MS
		                : pause * 2;
	}
}

/* The runner thread: the program's whole life, then one byte on done. */
struct runner {
	sked_exec_spec spec;
	sked_exec_result res;
	int rc;
	int done_w;
};

static void *
run_program(void *arg)
{
	struct runner *r = arg;
	char b = 1;

	r->rc = sked__exec_run(&r->spec, &r->res);
	while (write(r->done_w, &b, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static void
close_pair(int p[2])
{
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0) {
			close(p[i]);
			p[i] = -1;
		}
}

/* Renew until the runner says the program ended. Returns 1 when a
 * renewal found the lock taken over; *unguarded is 1 when the program
 * was stopped because the guard died. */
static int
keep(sked *h, const char *name, const char *owner, int64_t token,
     int64_t ttl_ms, int64_t began, sked_guard *g, int done_r, int cancel_w,
     int *unguarded)
{
	int64_t next = began + ttl_ms / 3, safety = safety_ms(ttl_ms);
	int failing = 0, lost = 0, cancelled = 0;

	*unguarded = 0;

	for (;;) {
		int64_t now = sked__mono_ms();
		int64_t wait = next > now ? next - now : 0;
		struct pollfd pf = {done_r, POLLIN, 0};
		if (poll(&pf, 1, (int)(wait < TICK_MS ? wait : TICK_MS)) > 0)
			return lost;
		if (!cancelled && !sked__guard_alive(g)) {
			/* nothing would kill the program at the deadline */
			sked__log(SKED_LOG_ERROR,
			          "lock run: the lease guard of lock %s died; "
			          "stopping the program",
			          name);
			while (write(cancel_w, "x", 1) < 0 && errno == EINTR)
				;
			cancelled = *unguarded = 1;
		}
		now = sked__mono_ms();
		if (now < next || lost || sked__guard_fired(g, 0))
			continue;
		int rc = sked_lock_extend(h, name, owner, token, ttl_ms);
		if (rc == SKED_OK) {
			sked__guard_deadline(g, 0, now + ttl_ms - safety, 1);
			next = now + ttl_ms / 3;
			if (failing)
				sked__log(SKED_LOG_INFO,
				          "lock run: lock %s renewed again",
				          name);
			failing = 0;
		} else if (rc == SKED_ELOST) {
			/* someone else may hold it: stop the program now */
			lost = 1;
			sked__guard_deadline(g, 0, 1, 0);
		} else {
			if (!failing)
				sked__log(SKED_LOG_WARN,
				          "lock run: cannot renew lock %s yet: "
				          "%s",
				          name, sked_errmsg(h));
			failing = 1;
			next = sked__mono_ms() + RETRY_MS;
		}
	}
}

SKED_API int
sked_lock_run(sked *h, const char *name, const char *const *argv,
              const sked_lock_run_opts *opts, sked_lock_run_result *out)
{
	if (!out)
		return SKED_EINVAL;
	memset(out, 0, sizeof *out);
	if (!h || !opts)
		return SKED_EINVAL;
	if (!argv || !argv[0] || !argv[0][0])
		return sked__fail(h, SKED_EINVAL, "no program to run");
	if (opts->ttl_ms < MIN_TTL_MS)
		return sked__fail(h, SKED_EINVAL,
		                  "the time-to-live must be at least 1s (it is "
		                  "renewed every ttl/3)");
	char owner_buf[SKED_MAX_NAME + 1];
	const char *owner = opts->owner;
	if (!owner) {
		sked__default_id(owner_buf, sizeof owner_buf);
		owner = owner_buf;
	}
	int64_t ttl_ms = opts->ttl_ms, token = 0, began = 0;
	int rc = acquire(h, name, owner, ttl_ms, &opts->lock, opts->forward_fd,
	                 &token, &began);
	if (rc != SKED_OK)
		return rc;
	out->token = token;

	/* The guard first: the program must never run without it. */
	sked_guard *g = NULL;
	int done_p[2] = {-1, -1}, cancel_p[2] = {-1, -1};
	if (sked__guard_start(1, &g) != SKED_OK ||
	    pipe2(done_p, O_CLOEXEC) != 0 || pipe2(cancel_p, O_CLOEXEC) != 0) {
		rc = sked__fail(h, SKED_EIO, "cannot start the lease guard: %s",
		                strerror(errno));
		goto release;
	}
	sked__guard_deadline(g, 0, began + ttl_ms - safety_ms(ttl_ms), 0);

	char env_name[SKED_MAX_NAME + 32], env_token[48];
	snprintf(env_name, sizeof env_name, "SKED_LOCK_NAME=%s", name);
	snprintf(env_token, sizeof env_token, "SKED_FENCING_TOKEN=%" PRId64,
	         token);
	const char *env[] = {env_name, env_token, NULL};
	struct runner r;
	memset(&r, 0, sizeof r);
	r.spec.argv = argv;
	r.spec.env_extra = env;
	r.spec.inherit_stdio = 1;
	r.spec.forward_fd = opts->forward_fd;
	r.spec.cancel_fd = cancel_p[0];
	r.spec.kill_grace_ms = 1; /* cancel only when the guard died */
	r.spec.guard = g;
	r.spec.guard_slot = 0;
	r.done_w = done_p[1];
	pthread_t th;
	if (pthread_create(&th, NULL, run_program, &r) != 0) {
		rc = sked__fail(h, SKED_EIO, "cannot start the runner thread");
		goto release;
	}
	int unguarded;
	out->lost = keep(h, name, owner, token, ttl_ms, began, g, done_p[0],
	                 cancel_p[1], &unguarded);
	pthread_join(th, NULL);
	out->expired = !out->lost && (sked__guard_fired(g, 0) || unguarded);

	const sked_exec_result *res = &r.res;
	out->spawned = res->spawned;
	out->spawn_errno = res->spawn_errno;
	out->exited = res->exited;
	out->exit_code = res->exit_code;
	out->signaled = res->signaled;
	out->signo = res->signo;
	snprintf(out->error, sizeof out->error, "%s", res->error);
	rc = r.rc;
	if (rc == SKED_OK && !res->spawned)
		rc = SKED_EIO;
	if (rc != SKED_OK)
		sked__fail(h, rc, "%s", res->error);
	sked__exec_result_free(&r.res);

release:
	sked__guard_stop(g);
	close_pair(done_p);
	close_pair(cancel_p);
	if (!out->lost) {
		/* ours still, unless it expired meanwhile; best effort: a lock
		 * not released expires by itself at its TTL */
		char keep_msg[sizeof h->errmsg];
		memcpy(keep_msg, h->errmsg, sizeof keep_msg);
		out->release_rc =
		        sked_lock_release(h, name, owner, token, &opts->lock);
		if (out->release_rc == SKED_OK || rc != SKED_OK)
			memcpy(h->errmsg, keep_msg, sizeof keep_msg);
	}
	return rc;
}
