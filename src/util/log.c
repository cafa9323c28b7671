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
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "sked.h"
#include "util/text.h"
#include "util/timefmt.h"

#define LINE_MAX_BYTES 2048

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sked_log_fn sink; /* guarded by lock; NULL: stderr */
static void *sink_data;  /* guarded by lock */
static atomic_int threshold = SKED_LOG_INFO;
static atomic_int json_lines; /* SKED_LOG_FORMAT=json: one object a line */
static char log_node[SKED_MAX_NAME + 1]; /* guarded by lock */
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
	const char *f = getenv("SKED_LOG_FORMAT");
	if (f && strcasecmp(f, "json") == 0)
		atomic_store(&json_lines, 1);
}

/* s as a JSON string body (quotes not included) */
static size_t
json_escape(char *out, size_t cap, const char *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 7 < cap; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20) {
			o += (size_t)snprintf(out + o, cap - o, "\\u%04x", c);
		} else if (c < 0x80) {
			out[o++] = (char)c;
		} else {
			/* a valid UTF-8 sequence as it is; any other byte
			 * (0xFF from a handler's stderr) as U+FFFD, so that
			 * the line stays JSON */
			size_t k = sked__utf8_seq((const unsigned char *)s + i,
			                          n - i);
			if (k == 0) {
				o += (size_t)snprintf(out + o, cap - o,
				                      "\\ufffd");
				continue;
			}
			if (o + k + 7 >= cap)
				break;
			memcpy(out + o, s + i, k);
			o += k;
			i += k - 1;
		}
	}
	out[o] = '\0';
	return o;
}

/* s for a terminal: a newline or a carriage return becomes a space; any
 * other control character (C0 but the tab, DEL, and C1 as UTF-8) becomes
 * \xHH or \u00HH. At most cap - 1 bytes, cut before an escape. */
static size_t
text_escape(char *out, size_t cap, const char *s, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		unsigned char d = i + 1 < n ? (unsigned char)s[i + 1] : 0;
		char e[8];
		size_t el = 1;
		if (c == '\n' || c == '\r') {
			e[0] = ' ';
		} else if ((c < 0x20 && c != '\t') || c == 0x7f) {
			el = (size_t)snprintf(e, sizeof e, "\\x%02x", c);
		} else if (c == 0xc2 && d >= 0x80 && d <= 0x9f) {
			el = (size_t)snprintf(e, sizeof e, "\\u%04x", d);
			i++;
		} else {
			e[0] = (char)c;
		}
		if (o + el >= cap)
			break;
		memcpy(out + o, e, el);
		o += el;
	}
	return o;
}

/* ,"key":"value" (escaped) at out + len; the new length */
static int
json_str(char *out, size_t cap, int len, const char *key, const char *v)
{
	char esc[LINE_MAX_BYTES * 2];

	if (!v || len >= (int)cap)
		return len;
	json_escape(esc, sizeof esc, v, strlen(v));
	return len + snprintf(out + len, cap - (size_t)len, ",\"%s\":\"%s\"",
	                      key, esc);
}

/* ,"key":number at out + len; the new length */
static int
json_num(char *out, size_t cap, int len, const char *key, long long v)
{
	if (len >= (int)cap)
		return len;
	return len +
	       snprintf(out + len, cap - (size_t)len, ",\"%s\":%lld", key, v);
}

/* The JSON form of a line: time, level, pid, node, the facts, msg.
 * Without facts, the task id and attempt come from a message that names
 * them ("task N attempt A…"); an error line's message is its error. */
static int
json_line(char *out, size_t cap, const char *stamp, const char *level,
          const sked__log_facts *f, const char *msg, size_t n)
{
	char m[LINE_MAX_BYTES];
	sked__log_facts none = SKED__LOG_FACTS_NONE;
	int len;

	if (n >= sizeof m)
		n = sizeof m - 1;
	memcpy(m, msg, n);
	m[n] = '\0';
	if (!f) {
		const char *t = strstr(m, "task ");
		f = &none;
		if (t && sscanf(t, "task %lld attempt %d", &none.task_id,
		                &none.attempt) < 1)
			none.task_id = 0;
		if (none.task_id <= 0)
			none.task_id = none.attempt = 0;
	}
	len = snprintf(out, cap,
	               "{\"time\":\"%s\",\"level\":\"%s\",\"pid\":%ld", stamp,
	               level, (long)getpid());
	if (log_node[0])
		len = json_str(out, cap, len, "node", log_node);
	if (f->task_id > 0)
		len = json_num(out, cap, len, "task_id", f->task_id);
	if (f->attempt > 0)
		len = json_num(out, cap, len, "attempt", f->attempt);
	len = json_str(out, cap, len, "kind", f->kind);
	len = json_str(out, cap, len, "queue", f->queue);
	len = json_str(out, cap, len, "outcome", f->outcome);
	if (f->duration_ms >= 0)
		len = json_num(out, cap, len, "duration_ms", f->duration_ms);
	len = json_str(out, cap, len, "error",
	               f->error ? f->error
	                        : (strcmp(level, "error") == 0 ? m : NULL));
	len = json_str(out, cap, len, "msg", m);
	if (len < (int)cap - 1)
		out[len++] = '}';
	out[len < (int)cap ? len : (int)cap - 1] = '\0';
	return len < (int)cap ? len : (int)cap - 1;
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

static void
vlog(int level, const sked__log_facts *f, const char *fmt, va_list ap)
{
	char line[LINE_MAX_BYTES];
	struct timespec ts;
	int saved = errno, n, m;
	const char *name = sked__log_level_name(level);

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
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	if (m < 0)
		m = 0;
	if ((size_t)m > sizeof(line) - (size_t)n - 2) {
		m = (int)(sizeof(line) - (size_t)n - 2);
		/* mark the cut with "..." */
		line[n + m - 1] = line[n + m - 2] = line[n + m - 3] = '.';
	}
	n += m;
	line[n] = '\0';

	pthread_mutex_lock(&lock);
	if (atomic_load(&json_lines)) {
		char js[LINE_MAX_BYTES * 3];
		int stamp_len = 0;
		while (line[stamp_len] && line[stamp_len] != ' ')
			stamp_len++;
		line[stamp_len] = '\0';
		int jn = json_line(js, sizeof js - 1, line, name, f,
		                   line + (n - m), (size_t)m);
		line[stamp_len] = ' ';
		if (sink != NULL) {
			sink(level, js, sink_data);
		} else {
			js[jn] = '\n';
			write_stderr(js, (size_t)jn + 1);
		}
	} else {
		/* text: what a handler said cannot move the cursor, recolour
		 * the terminal or forge a line of its own */
		char txt[LINE_MAX_BYTES];
		size_t tn = (size_t)(n - m);
		memcpy(txt, line, tn);
		tn += text_escape(txt + tn, sizeof txt - tn - 1, line + (n - m),
		                  (size_t)m);
		txt[tn] = '\0';
		if (sink != NULL) {
			sink(level, txt, sink_data);
		} else {
			txt[tn] = '\n';
			write_stderr(txt, tn + 1);
		}
	}
	pthread_mutex_unlock(&lock);
	errno = saved;
}

void
sked__log(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(level, NULL, fmt, ap);
	va_end(ap);
}

void
sked__log_task(int level, const sked__log_facts *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(level, f, fmt, ap);
	va_end(ap);
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

SKED_API int
sked_set_log_format(const char *format)
{
	pthread_once(&env_once, read_env);
	if (format && strcasecmp(format, "json") == 0)
		atomic_store(&json_lines, 1);
	else if (format && strcasecmp(format, "text") == 0)
		atomic_store(&json_lines, 0);
	else
		return SKED_EINVAL;
	return SKED_OK;
}

SKED_API void
sked_set_log_node(const char *node)
{
	pthread_mutex_lock(&lock);
	snprintf(log_node, sizeof log_node, "%s", node ? node : "");
	pthread_mutex_unlock(&lock);
}

SKED_API int
sked_log_level_from_name(const char *name)
{
	return sked__log_level_parse(name);
}
