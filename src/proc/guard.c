/*
 * guard.c — the lease guard process (see guard.h).
 *
 * The shared page is written by the worker and read by the guard with
 * atomic loads and stores only: a slot's deadline is set before its
 * process group is armed, and a slot is disarmed before its program is
 * reaped. The guard looks again at the nearest deadline (a tick,
 * GUARD_TICK_MS, at least) and at least every GUARD_IDLE_MS; the worker
 * places deadlines well before a lease can end (worker.c), so either is
 * a small part of the margin.
 */
#include "proc/guard.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sked.h"
#include "util/clock.h"

#define GUARD_TICK_MS 10
/* the longest sleep between two looks: an idle worker's guard wakes 4
 * times a second, not 100 */
#define GUARD_IDLE_MS 250

/* the guard processes alive, for sked__guard_owns (0: a free entry) */
static atomic_int live[8];

int
sked__guard_owns(pid_t pid)
{
	for (size_t i = 0; i < sizeof live / sizeof live[0]; i++)
		if (atomic_load(&live[i]) == (int)pid)
			return 1;
	return 0;
}

struct slot {
	atomic_int pgid; /* > 0: a program to kill at the deadline */
	atomic_int fired;
	atomic_llong deadline; /* monotonic ms; 0: none */
};

struct shm {
	atomic_int stop;
	int nslots;
	struct slot s[];
};

struct sked_guard {
	struct shm *m;
	size_t size;
	pid_t pid;
};

/* The guard, after fork: async-signal-safe calls only, never returns. */
static void __attribute__((noreturn))
guard_main(struct shm *m, pid_t parent, int max_fd)
{
	static const int quiet[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT,
	                            SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE,
	                            SIGUSR1, SIGUSR2, SIGALRM};
	struct sigaction ign;
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	for (size_t i = 0; i < sizeof quiet / sizeof quiet[0]; i++)
		sigaction(quiet[i], &ign, NULL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	prctl(PR_SET_NAME, "sked-guard", 0, 0, 0);
	/* database sockets and pipes stay the worker's alone */
#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0)
#endif
		for (int fd = 3; fd < max_fd; fd++)
			close(fd);
	while (!atomic_load(&m->stop) && getppid() == parent) {
		int64_t now = sked__mono_ms();
		/* the next look: at the nearest deadline, and no
		 * later than GUARD_IDLE_MS (a deadline set meanwhile is seconds
		 * ahead: the worker places them well before a lease ends) */
		int64_t next = GUARD_IDLE_MS;
		for (int i = 0; i < m->nslots; i++) {
			struct slot *s = &m->s[i];
			int pg = atomic_load(&s->pgid);
			if (pg <= 0 || atomic_load(&s->fired))
				continue;
			int64_t dl = atomic_load(&s->deadline);
			if (dl > 0 && now < dl && dl - now < next)
				next = dl - now;
			if (dl <= 0 || now < dl)
				continue;
			atomic_store(&s->fired, 1);
			kill(-pg, SIGKILL);
			kill(pg, SIGKILL);
		}
		if (next < GUARD_TICK_MS)
			next = GUARD_TICK_MS;
		struct timespec tick = {next / 1000, (next % 1000) * 1000000L};
		nanosleep(&tick, NULL);
	}
	_exit(0);
}

int
sked__guard_start(int nslots, sked_guard **out)
{
	*out = NULL;
	if (nslots < 1)
		nslots = 1;
	sked_guard *g = calloc(1, sizeof *g);
	if (!g)
		return SKED_ENOMEM;
	g->size = sizeof(struct shm) + sizeof(struct slot) * (size_t)nslots;
	void *p = mmap(NULL, g->size, PROT_READ | PROT_WRITE,
	               MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		free(g);
		return SKED_ENOMEM;
	}
	g->m = p;
	g->m->nslots = nslots;
	for (int i = 0; i < nslots; i++) {
		atomic_init(&g->m->s[i].pgid, 0);
		atomic_init(&g->m->s[i].fired, 0);
		atomic_init(&g->m->s[i].deadline, 0);
	}
	atomic_init(&g->m->stop, 0);
	struct rlimit rl;
	int max_fd = 65536;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)max_fd)
		max_fd = (int)rl.rlim_cur;
	/* no signal handler of the caller may run in the guard */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0)
		guard_main(g->m, parent, max_fd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		munmap(g->m, g->size);
		free(g);
		return SKED_EIO;
	}
	setpgid(pid, pid); /* also done by the guard; whoever is first */
	for (size_t i = 0; i < sizeof live / sizeof live[0]; i++) {
		int none = 0;
		if (atomic_compare_exchange_strong(&live[i], &none, (int)pid))
			break;
	}
	g->pid = pid;
	*out = g;
	return SKED_OK;
}

void
sked__guard_stop(sked_guard *g)
{
	if (!g)
		return;
	atomic_store(&g->m->stop, 1);
	kill(g->pid, SIGKILL);
	pid_t r;
	do
		r = waitpid(g->pid, NULL, 0);
	while (r < 0 && errno == EINTR);
	for (size_t i = 0; i < sizeof live / sizeof live[0]; i++) {
		int mine = (int)g->pid;
		atomic_compare_exchange_strong(&live[i], &mine, 0);
	}
	munmap(g->m, g->size);
	free(g);
}

void
sked__guard_deadline(sked_guard *g, int slot, int64_t deadline_ms,
                     int raise_only)
{
	if (!g || slot < 0 || slot >= g->m->nslots)
		return;
	struct slot *s = &g->m->s[slot];
	if (raise_only && deadline_ms <= atomic_load(&s->deadline))
		return;
	atomic_store(&s->deadline, deadline_ms);
}

void
sked__guard_arm(sked_guard *g, int slot, pid_t pgid)
{
	if (!g || slot < 0 || slot >= g->m->nslots)
		return;
	atomic_store(&g->m->s[slot].fired, 0);
	atomic_store(&g->m->s[slot].pgid, (int)pgid);
}

void
sked__guard_disarm(sked_guard *g, int slot)
{
	if (!g || slot < 0 || slot >= g->m->nslots)
		return;
	atomic_store(&g->m->s[slot].pgid, 0);
}

int
sked__guard_fired(const sked_guard *g, int slot)
{
	if (!g || slot < 0 || slot >= g->m->nslots)
		return 0;
	return atomic_load(&g->m->s[slot].fired);
}

int
sked__guard_alive(const sked_guard *g)
{
	if (!g)
		return 0;
	/* our own child: a zombie would answer kill(0), so ask waitid */
	siginfo_t si;
	memset(&si, 0, sizeof si);
	if (waitid(P_PID, (id_t)g->pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
		return 0;
	return si.si_pid == 0;
}
