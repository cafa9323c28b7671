/*
 * log.c — formatted log lines, a replaceable sink, a threshold.
 *
 * Layer: util. The timestamp comes from the node's clock (CLOCK_REALTIME):
 * this is the only place sked reads it, and only to stamp log lines;
 * everything that decides anything uses the database's clock.
 *
 * Locking: `lock` guards `sink` and `sink_data`, and is held while a sink
 * runs, so that once sked_set_log returns no thread still calls the old
 * sink. It is a leaf lock: nothing is taken while holding it. `threshold`
 * is an atomic so that sked__log_enabled costs no lock.
 */
#include "util/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "sked.h"
#include "util/timefmt.h"

#define LINE_MAX_BYTES 2048

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sked_log_fn sink; /* guarded by lock; NULL: stderr */
static void *sink_data;  /* guarded by lock */
static atomic_int threshold = SKED_LOG_INFO;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static const char *const level_names[] = {"error", "warn", "info", "debug"};

const char *
sked__log_level_name(int level)
{
	if (level < SKED_LOG_ERROR || level > SKED_LOG_DEBUG)
		return NULL;
	return level_names[level];
}

int
sked__log_level_parse(const char *name)
{
	if (name == NULL)
		return -1;
	for (int i = SKED_LOG_ERROR; i <= SKED_LOG_DEBUG; i++)
		if (strcasecmp(name, level_names[i]) == 0)
			return i;
	if (strcasecmp(name, "warning") == 0)
		return SKED_LOG_WARN;
	return -1;
}

/* SKED_LOG is read once, before the first line or the first
 * sked_set_log, whichever comes first; an unknown value is ignored. */
static void
read_env(void)
{
	int t = sked__log_level_parse(getenv("SKED_LOG"));
	if (t >= 0)
		atomic_store(&threshold, t);
}

int
sked__log_enabled(int level)
{
	pthread_once(&env_once, read_env);
	return level <= atomic_load(&threshold);
}

static void
write_stderr(const char *line, size_t n)
{
	/* One write(2) per line keeps lines from different processes whole
	 * on a shared pipe. */
	while (n > 0) {
		ssize_t w = write(STDERR_FILENO, line, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		line += w;
		n -= (size_t)w;
	}
}

void
sked__log(int level, const char *fmt, ...)
{
	char line[LINE_MAX_BYTES];
	struct timespec ts;
	int saved = errno, n, m;
	const char *name = sked__log_level_name(level);
	va_list ap;

	if (!sked__log_enabled(level))
		return;
	if (name == NULL)
		name = "debug";
	clock_gettime(CLOCK_REALTIME, &ts);
	sked__time_format((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000,
	                  line, 32);
	/* Always print milliseconds, so that stamps line up. */
	n = 0;
	while (line[n] != '\0' && line[n] != 'Z')
		n++;
	if (ts.tv_nsec / 1000000 == 0)
		n += snprintf(line + n, sizeof(line) - (size_t)n, ".000");
	n += snprintf(line + n, sizeof(line) - (size_t)n,
	              "Z sked[%ld] %s: ", (long)getpid(), name);
	va_start(ap, fmt);
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		m = 0;
	if ((size_t)m > sizeof(line) - (size_t)n - 2) {
		m = (int)(sizeof(line) - (size_t)n - 2);
		/* mark the cut with "..." */
		line[n + m - 1] = line[n + m - 2] = line[n + m - 3] = '.';
	}
	for (int i = n; i < n + m; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	n += m;
	line[n] = '\0';

	pthread_mutex_lock(&lock);
	if (sink != NULL) {
		sink(level, line, sink_data);
	} else {
		line[n] = '\n';
		write_stderr(line, (size_t)n + 1);
		line[n] = '\0';
	}
	pthread_mutex_unlock(&lock);
	errno = saved;
}

SKED_API void
sked_set_log(sked_log_fn fn, void *userdata, int thr)
{
	/* Settle the environment first so it cannot override this later. */
	pthread_once(&env_once, read_env);
	if (thr > SKED_LOG_DEBUG)
		thr = SKED_LOG_DEBUG;
	if (thr < SKED_LOG_ERROR)
		thr = SKED_LOG_ERROR - 1; /* below error: drop everything */
	pthread_mutex_lock(&lock);
	sink = fn;
	sink_data = userdata;
	atomic_store(&threshold, thr);
	pthread_mutex_unlock(&lock);
}

SKED_API void
sked_log(int level, const char *fmt, ...)
{
	char msg[LINE_MAX_BYTES];
	va_list ap;

	if (!sked__log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	sked__log(level, "%s", msg);
}
