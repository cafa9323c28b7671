/*
 * children.c — the registry of the handler programs running now, and the
 * subreaper sweep of the orphans they leave.
 *
 * Layer: src/proc/ (floor 1; spawn.h). Every program sked starts is
 * registered here, by its process group id, from fork (sked__child_fork
 * holds the registry lock across fork()) until it is reaped, so that
 * sked__exec_kill_all reaches every group that exists and never a pid
 * number that is no longer ours. The sweep kills and reaps what this
 * process inherits as a child subreaper and did not start. Linux-specific
 * on purpose: /proc/self/task/N/children and PR_SET_CHILD_SUBREAPER.
 */
#include "proc/spawn.h"
#include "proc/exec.h"
#include "proc/guard.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* reg_lock guards reg_head and reg_count. It is a leaf lock: nothing else
 * is taken while holding it. It is held across fork() so that a child is
 * registered before anyone could want to kill it; the child never touches
 * it. An entry is removed before its child is reaped, so a pid number sent
 * a signal under this lock always still belongs to our child. */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sked_child *reg_head;
static size_t reg_count;

static void
reg_add_locked(struct sked_child *r)
{
	r->reaping = 0;
	r->prev = NULL;
	r->next = reg_head;
	if (reg_head)
		reg_head->prev = r;
	reg_head = r;
	reg_count++;
}

void
sked__child_remove(struct sked_child *r)
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

void
sked__child_retire(struct sked_child *r)
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
	for (struct sked_child *r = reg_head; r; r = r->next)
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
	for (struct sked_child *r = reg_head; r; r = r->next)
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

pid_t
sked__child_fork(const struct sked_child_args *ca, struct sked_child *reg,
                 const sked_exec_spec *spec)
{
	pthread_mutex_lock(&reg_lock);
	pid_t pid = fork();
	if (pid == 0)
		sked__spawn_child(ca);
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
