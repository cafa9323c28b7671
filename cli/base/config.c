/*
 * config.c — the `sked` program's INI config file, read with inih.
 *
 * Layer: the command-line program. This file only reads and checks the
 * file into struct cli_config; main.c applies the precedence (flag,
 * environment, file, default) and cmd_worker.c turns the [worker] and
 * [handler.KIND] settings into sked_worker_options. Values the library
 * validates itself (URLs, strategies, prefixes, queue lists) are passed on
 * as written and reported by the library when wrong.
 *
 * Sections and keys:
 *   [sked]          database, strategy, prefix
 *   [worker]        node_id, queues, concurrency, lease, poll, grace,
 *                   timeout, retry_base, retry_max, prefetch, lanes, wait_db,
 *                   lock_wait_warn, max_connections
 *   [handler.KIND]  command, timeout
 *   [schedule.NAME] cron, tz, kind, payload, queue, priority,
 *                   max_attempts, misfire, overlap, unique,
 *                   unique_scope, unique_for, unique_replace: a schedule
 *                   that a worker adds or replaces when it starts
 *                   (cmd_cron.c)
 *   [queue.NAME]    concurrency, per_key, rate, fair: the queue's cluster-wide
 *                   limits (N or none; rate N/DURATION or none), which a
 *                   worker sets when it starts (cmd_queue.c); on_end
 *   [kind.NAME]     on_end: the URL that each end of a task of the kind
 *                   is POSTed to (webhooks; a kind's beats its queue's)
 *   [retention]     succeeded, dead, cancelled: how long ended tasks are
 *                   kept (a duration, or "forever"; cmd_prune.c)
 * Anything else is an error naming the file and line.
 */
#include "base/cli.h"

#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <unistd.h>

#define CONFIG_MAX (1024 * 1024) /* bytes */

/* inih does not pass line numbers to the handler (INI_HANDLER_LINENO is
 * off in the packaged build), so the reader counts lines itself. */
struct parse {
	FILE *f;
	int line;
	int too_long;  /* line number of the first over-long line */
	size_t bytes;  /* read so far */
	int err_line;  /* line of the first error found by the handler */
	char err[256]; /* that error */
	struct cli_config *cfg;
};

static char *
reader(char *str, int num, void *stream)
{
	struct parse *p = stream;
	size_t n;
	int ch;

	if (p->bytes > CONFIG_MAX || fgets(str, num, p->f) == NULL)
		return NULL;
	p->line++;
	n = strlen(str);
	p->bytes += n; /* a file that grows while read stops at the bound */
	if (n > 0 && n + 1 < (size_t)num && str[n - 1] != '\n' && !feof(p->f)) {
		/* fgets stopped at the line's end, strlen at a zero byte */
		if (p->err_line == 0) {
			p->err_line = p->line;
			snprintf(p->err, sizeof p->err,
			         "holds a zero byte (a config file is text)");
		}
		while ((ch = fgetc(p->f)) != EOF && ch != '\n')
			;
		str[0] = '\0';
	} else if (n > 0 && str[n - 1] != '\n' && !feof(p->f)) {
		/* Longer than inih's buffer: refuse it rather than let the
		 * rest be parsed as a line of its own. */
		if (p->too_long == 0)
			p->too_long = p->line;
		while ((ch = fgetc(p->f)) != EOF && ch != '\n')
			;
		str[0] = '\0';
	}
	return str;
}

static int fail(struct parse *p, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* Keep the first error; returning 0 tells inih this line was bad. */
static int
fail(struct parse *p, const char *fmt, ...)
{
	va_list ap;

	if (p->err_line == 0) {
		p->err_line = p->line;
		va_start(ap, fmt);
		vsnprintf(p->err, sizeof p->err, fmt, ap);
		va_end(ap);
	}
	return 0;
}

/* 1 when s is a name (sked_name_valid), else the refusal "[SECTION]:
 * 'S' is not a valid WHAT" and 0, as every handler returns. */
static int
want_name(struct parse *p, const char *section, const char *what, const char *s)
{
	if (sked_name_valid(s))
		return 1;
	return fail(p, "[%s]: '%s' is not a valid %s", section, s, what);
}

static int
set_str(struct parse *p, char **dst, const char *value)
{
	char *s = strdup(value);

	if (s == NULL)
		return fail(p, "out of memory");
	free(*dst);
	*dst = s;
	return 1;
}

static int
set_duration(struct parse *p, int64_t *dst, const char *name, const char *value)
{
	int64_t ms;

	if (sked_parse_duration(value, &ms) != SKED_OK || ms < 0)
		return fail(p,
		            "%s: '%s' is not a duration (like 500ms, 30s, "
		            "10m, 2h, 1d)",
		            name, value);
	*dst = ms;
	return 1;
}

static struct cli_handler *
handler_for(struct parse *p, const char *kind)
{
	struct cli_config *cfg = p->cfg;
	struct cli_handler *hs;
	size_t i;

	for (i = 0; i < cfg->nhandlers; i++)
		if (strcmp(cfg->handlers[i].kind, kind) == 0)
			return &cfg->handlers[i];
	hs = realloc(cfg->handlers, (cfg->nhandlers + 1) * sizeof *hs);
	if (hs == NULL)
		return NULL;
	cfg->handlers = hs;
	hs = &cfg->handlers[cfg->nhandlers];
	memset(hs, 0, sizeof *hs);
	hs->kind = strdup(kind);
	if (hs->kind == NULL)
		return NULL;
	hs->line = p->line;
	cfg->nhandlers++;
	return hs;
}

static int
on_sked(struct parse *p, const char *name, const char *value)
{
	struct cli_config *cfg = p->cfg;

	if (strcmp(name, "database") == 0)
		return set_str(p, &cfg->database, value);
	if (strcmp(name, "strategy") == 0)
		return set_str(p, &cfg->strategy, value);
	if (strcmp(name, "prefix") == 0)
		return set_str(p, &cfg->prefix, value);
	return fail(p, "unknown key '%s' in [%s]", name, "sked");
}

static int
set_int(struct parse *p, int *dst, const char *name, const char *value,
        long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(value, &end, 10);
	if (value[0] == '\0' || *end != '\0' || errno != 0 || v < min ||
	    v > max)
		return fail(p, "%s: '%s' is not an integer from %ld to %ld",
		            name, value, min, max);
	*dst = (int)v;
	return 1;
}

static int
on_worker(struct parse *p, const char *name, const char *value)
{
	struct cli_config *cfg = p->cfg;

	if (strcmp(name, "node_id") == 0)
		return set_str(p, &cfg->node_id, value);
	if (strcmp(name, "queues") == 0)
		return set_str(p, &cfg->queues, value);
	if (strcmp(name, "http") == 0)
		return set_str(p, &cfg->http, value);
	if (strcmp(name, "concurrency") == 0)
		return set_int(p, &cfg->concurrency, name, value, 1, 4096);
	if (strcmp(name, "lanes") == 0)
		return set_int(p, &cfg->lanes, name, value, 1, 64);
	if (strcmp(name, "max_connections") == 0)
		return set_int(p, &cfg->max_connections, name, value, 2, 1000);
	if (strcmp(name, "lease") == 0)
		return set_duration(p, &cfg->lease_ms, name, value);
	if (strcmp(name, "poll") == 0)
		return set_duration(p, &cfg->poll_ms, name, value);
	if (strcmp(name, "grace") == 0)
		return set_duration(p, &cfg->grace_ms, name, value);
	if (strcmp(name, "timeout") == 0)
		return set_duration(p, &cfg->timeout_ms, name, value);
	if (strcmp(name, "retry_base") == 0)
		return set_duration(p, &cfg->retry_base_ms, name, value);
	if (strcmp(name, "retry_max") == 0)
		return set_duration(p, &cfg->retry_max_ms, name, value);
	if (strcmp(name, "prefetch") == 0) {
		if (cli_prefetch_value(value, &cfg->prefetch) != 0)
			return fail(p,
			            "%s: '%s' is not auto, off or an integer "
			            "from 0 to 10000",
			            name, value);
		return 1;
	}
	if (strcmp(name, "lock_wait_warn") == 0) {
		if (strcmp(value, "never") == 0) {
			cfg->lock_wait_warn_ms = -1;
			return 1;
		}
		return set_duration(p, &cfg->lock_wait_warn_ms, name, value);
	}
	if (strcmp(name, "wait_db") == 0) {
		if (strcmp(value, "forever") == 0) {
			cfg->wait_db_ms = -1;
			cfg->wait_db_set = 1;
			return 1;
		}
		if (strcmp(value, "0") == 0) {
			cfg->wait_db_ms = 0;
			cfg->wait_db_set = 1;
			return 1;
		}
		cfg->wait_db_set = 1;
		return set_duration(p, &cfg->wait_db_ms, name, value);
	}
	return fail(p, "unknown key '%s' in [%s]", name, "worker");
}

static int
on_handler(struct parse *p, const char *section, const char *kind,
           const char *name, const char *value)
{
	struct cli_handler *hd;

	/* [handler.*] is the catch-all, as '*' is to the library */
	if (strcmp(kind, "*") != 0 && !want_name(p, section, "task kind", kind))
		return 0;
	hd = handler_for(p, kind);
	if (hd == NULL)
		return fail(p, "out of memory");
	if (strcmp(name, "command") == 0) {
		if (strspn(value, " \t") == strlen(value))
			return fail(p, "[%s]: %s is empty", section, name);
		return set_str(p, &hd->command, value);
	}
	if (strcmp(name, "timeout") == 0)
		return set_duration(p, &hd->timeout_ms, name, value);
	return fail(p, "unknown key '%s' in [%s]", name, section);
}

static struct cli_schedule *
schedule_for(struct parse *p, const char *name)
{
	struct cli_config *cfg = p->cfg;
	struct cli_schedule *ss;
	size_t i;

	for (i = 0; i < cfg->nschedules; i++)
		if (strcmp(cfg->schedules[i].name, name) == 0)
			return &cfg->schedules[i];
	ss = realloc(cfg->schedules, (cfg->nschedules + 1) * sizeof *ss);
	if (ss == NULL)
		return NULL;
	cfg->schedules = ss;
	ss = &cfg->schedules[cfg->nschedules];
	memset(ss, 0, sizeof *ss);
	ss->name = strdup(name);
	if (ss->name == NULL)
		return NULL;
	ss->line = p->line;
	ss->unique_scope = -1;
	cfg->nschedules++;
	return ss;
}

static int
on_schedule(struct parse *p, const char *section, const char *name,
            const char *key, const char *value)
{
	struct cli_schedule *sc;

	if (!want_name(p, section, "schedule name", name))
		return 0;
	sc = schedule_for(p, name);
	if (sc == NULL)
		return fail(p, "out of memory");
	if (strcmp(key, "cron") == 0)
		return set_str(p, &sc->cron, value);
	if (strcmp(key, "tz") == 0)
		return set_str(p, &sc->tz, value);
	if (strcmp(key, "kind") == 0)
		return want_name(p, section, "task kind", value) &&
		       set_str(p, &sc->kind, value);
	if (strcmp(key, "payload") == 0)
		return set_str(p, &sc->payload, value);
	if (strcmp(key, "queue") == 0)
		return want_name(p, section, "queue name", value) &&
		       set_str(p, &sc->queue, value);
	if (strcmp(key, "priority") == 0)
		return set_int(p, &sc->priority, key, value, -1000000, 1000000);
	if (strcmp(key, "max_attempts") == 0)
		return set_int(p, &sc->max_attempts, key, value, 1, 1000);
	if (strcmp(key, "misfire") == 0) {
		if (sked_misfire_parse(value) < 0)
			return fail(p,
			            "[%s]: misfire '%s' is not fire-once, "
			            "fire-all or skip",
			            section, value);
		return set_str(p, &sc->misfire, value);
	}
	if (strcmp(key, "overlap") == 0) {
		if (sked_overlap_parse(value) < 0)
			return fail(p,
			            "[%s]: overlap '%s' is not allow or skip",
			            section, value);
		return set_str(p, &sc->overlap, value);
	}
	if (strcmp(key, "unique") == 0)
		return set_str(p, &sc->unique_key, value);
	if (strcmp(key, "unique_scope") == 0) {
		if (strcmp(value, "live") != 0 && strcmp(value, "pending") != 0)
			return fail(p,
			            "[%s]: unique_scope '%s' is not live or "
			            "pending (a period is unique_for)",
			            section, value);
		sc->unique_scope = strcmp(value, "pending") == 0
		                           ? SKED_UNIQUE_PENDING
		                           : SKED_UNIQUE_LIVE;
		return 1;
	}
	if (strcmp(key, "unique_for") == 0) {
		int64_t ms = 0;
		if (sked_parse_duration(value, &ms) != SKED_OK || ms <= 0)
			return fail(p,
			            "[%s]: unique_for '%s' is not a duration "
			            "above 0 (500ms, 30s, 10m, 2h, 1d)",
			            section, value);
		sc->unique_for_ms = ms;
		return 1;
	}
	if (strcmp(key, "unique_replace") == 0) {
		if (strcmp(value, "on") != 0 && strcmp(value, "off") != 0)
			return fail(p,
			            "[%s]: unique_replace '%s' is neither on "
			            "nor off",
			            section, value);
		sc->unique_replace = strcmp(value, "on") == 0;
		return 1;
	}
	return fail(p, "unknown key '%s' in [%s]", key, section);
}

static struct cli_queue *
queue_for(struct parse *p, const char *name)
{
	struct cli_config *cfg = p->cfg;
	struct cli_queue *qs;
	size_t i;

	for (i = 0; i < cfg->nqueues_limits; i++)
		if (strcmp(cfg->queues_limits[i].name, name) == 0)
			return &cfg->queues_limits[i];
	qs = realloc(cfg->queues_limits,
	             (cfg->nqueues_limits + 1) * sizeof *qs);
	if (qs == NULL)
		return NULL;
	cfg->queues_limits = qs;
	qs = &cfg->queues_limits[cfg->nqueues_limits];
	memset(qs, 0, sizeof *qs);
	qs->concurrency = qs->per_key = qs->rate_n = SKED_LIMIT_KEEP;
	qs->fair = -1;
	qs->name = strdup(name);
	if (qs->name == NULL)
		return NULL;
	qs->line = p->line;
	cfg->nqueues_limits++;
	return qs;
}

/* on_end = URL in [kind.NAME] or [queue.NAME]: an http:// or https://
 * URL without blanks, once per section */
static int
on_hook(struct parse *p, const char *section, const char *kind,
        const char *queue, const char *value)
{
	struct cli_config *cfg = p->cfg;
	int http = strncmp(value, "http://", 7) == 0 && value[7] != '\0';
	int https = strncmp(value, "https://", 8) == 0 && value[8] != '\0';
	if (!http && !https)
		return fail(p,
		            "[%s]: on_end '%s' is not an http:// or https:// "
		            "URL",
		            section, value);
	for (const char *c = value; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f)
			return fail(p,
			            "[%s]: on_end holds a blank or a "
			            "control character",
			            section);
	for (size_t i = 0; i < cfg->nhooks; i++) {
		struct cli_hook *h = &cfg->hooks[i];
		if ((kind && h->kind && strcmp(h->kind, kind) == 0) ||
		    (queue && h->queue && strcmp(h->queue, queue) == 0))
			return fail(p, "[%s]: on_end given twice", section);
	}
	struct cli_hook *v = realloc(cfg->hooks, (cfg->nhooks + 1) * sizeof *v);
	if (v == NULL)
		return fail(p, "out of memory");
	cfg->hooks = v;
	struct cli_hook *h = &v[cfg->nhooks];
	memset(h, 0, sizeof *h);
	h->kind = kind ? strdup(kind) : NULL;
	h->queue = queue ? strdup(queue) : NULL;
	h->url = strdup(value);
	h->line = p->line;
	cfg->nhooks++;
	if ((kind && !h->kind) || (queue && !h->queue) || !h->url)
		return fail(p, "out of memory");
	return 1;
}

/* [kind.NAME]: what belongs to a kind whatever runs it (on_end) */
static int
on_kind(struct parse *p, const char *section, const char *name, const char *key,
        const char *value)
{
	if (!want_name(p, section, "task kind", name))
		return 0;
	if (strcmp(key, "on_end") == 0)
		return on_hook(p, section, name, NULL, value);
	return fail(p, "unknown key '%s' in [%s] (on_end)", key, section);
}

/* [queue.NAME]: the values as `sked queue set` reads its flags */
static int
on_queue(struct parse *p, const char *section, const char *name,
         const char *key, const char *value)
{
	struct cli_queue *q;
	int n;
	int64_t ms;

	if (!want_name(p, section, "queue name", name))
		return 0;
	if (strcmp(key, "on_end") == 0)
		return on_hook(p, section, NULL, name, value);
	q = queue_for(p, name);
	if (q == NULL)
		return fail(p, "out of memory");
	if (strcmp(key, "concurrency") == 0 || strcmp(key, "per_key") == 0) {
		if (strcmp(value, "none") == 0)
			n = 0;
		else if (!set_int(p, &n, key, value, 1, 1000000))
			return 0;
		*(key[0] == 'c' ? &q->concurrency : &q->per_key) = n;
		return 1;
	}
	if (strcmp(key, "rate") == 0) {
		if (strcmp(value, "none") == 0) {
			q->rate_n = 0;
			return 1;
		}
		if (sked_parse_rate(value, &n, &ms) != SKED_OK)
			return fail(p,
			            "[%s]: rate '%s' is not N/DURATION (e.g. "
			            "100/1m) or none",
			            section, value);
		q->rate_n = n;
		q->rate_ms = ms;
		return 1;
	}
	if (strcmp(key, "fair") == 0) {
		if (strcmp(value, "on") != 0 && strcmp(value, "off") != 0)
			return fail(p, "[%s]: fair '%s' is neither on nor off",
			            section, value);
		q->fair = strcmp(value, "on") == 0;
		return 1;
	}
	return fail(p,
	            "unknown key '%s' in [%s] (concurrency, per_key, rate, "
	            "fair, on_end)",
	            key, section);
}

static int
on_retention(struct parse *p, const char *name, const char *value)
{
	static const char *const keys[3] = {"succeeded", "dead", "cancelled"};
	for (int i = 0; i < 3; i++) {
		if (strcmp(name, keys[i]) != 0)
			continue;
		p->cfg->keep_set[i] = 1;
		if (strcmp(value, "forever") == 0 || strcmp(value, "0") == 0) {
			p->cfg->keep_ms[i] = 0;
			return 1;
		}
		return set_duration(p, &p->cfg->keep_ms[i], name, value);
	}
	return fail(p,
	            "unknown key '%s' in [retention] (succeeded, dead, "
	            "cancelled)",
	            name);
}

static int
on_entry(void *user, const char *section, const char *name, const char *value)
{
	struct parse *p = user;

	if (strcmp(section, "sked") == 0)
		return on_sked(p, name, value);
	if (strcmp(section, "worker") == 0)
		return on_worker(p, name, value);
	if (strcmp(section, "retention") == 0)
		return on_retention(p, name, value);
	if (strncmp(section, "handler.", 8) == 0)
		return on_handler(p, section, section + 8, name, value);
	if (strncmp(section, "schedule.", 9) == 0 && section[9] != '\0')
		return on_schedule(p, section, section + 9, name, value);
	if (strncmp(section, "queue.", 6) == 0 && section[6] != '\0')
		return on_queue(p, section, section + 6, name, value);
	if (strncmp(section, "kind.", 5) == 0 && section[5] != '\0')
		return on_kind(p, section, section + 5, name, value);
	if (section[0] == '\0')
		return fail(p, "key '%s' outside any section", name);
	return fail(p, "unknown section [%s]", section);
}

int
cli_config_load(const char *path, struct cli_config *cfg)
{
	struct stat st;
	struct parse p;
	size_t i;
	int rc;

	memset(&p, 0, sizeof p);
	cfg->path = path;
	p.cfg = cfg;
	/* without blocking: open() of a FIFO would wait for a writer; the
	 * checks below then refuse anything but a regular file */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd >= 0 && fcntl(fd, F_SETFL, 0) != 0) {
		close(fd);
		fd = -1;
	}
	p.f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (p.f == NULL && fd >= 0)
		close(fd);
	if (p.f == NULL) {
		cli_err("%s: cannot read config: %s", path, strerror(errno));
		return EX_CONFIG;
	}
	/* /dev/zero or a FIFO would be read forever */
	if (fstat(fileno(p.f), &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > CONFIG_MAX) {
		cli_err("%s: cannot read config: %s", path,
		        S_ISREG(st.st_mode) ? "larger than 1 MiB"
		                            : "not a regular file");
		fclose(p.f);
		return EX_CONFIG;
	}
	rc = ini_parse_stream(reader, &p, on_entry, &p);
	if (ferror(p.f)) {
		cli_err("%s: cannot read config: %s", path, strerror(errno));
		fclose(p.f);
		return EX_CONFIG;
	}
	fclose(p.f);
	if (p.too_long != 0 && (p.err_line == 0 || p.too_long < p.err_line)) {
		cli_err("%s:%d: line too long (at most %d characters)", path,
		        p.too_long, INI_MAX_LINE - 2);
		return EX_CONFIG;
	}
	if (p.err_line != 0) {
		cli_err("%s:%d: %s", path, p.err_line, p.err);
		return EX_CONFIG;
	}
	if (rc > 0) {
		cli_err("%s:%d: not a section, key = value or comment", path,
		        rc);
		return EX_CONFIG;
	}
	if (rc < 0) {
		cli_err("%s: cannot parse config (out of memory)", path);
		return EX_CONFIG;
	}
	for (i = 0; i < cfg->nschedules; i++)
		if (cfg->schedules[i].cron == NULL ||
		    cfg->schedules[i].kind == NULL) {
			cli_err("%s:%d: [schedule.%s] needs cron and kind",
			        path, cfg->schedules[i].line,
			        cfg->schedules[i].name);
			return EX_CONFIG;
		}
	/* the unique keys' conflicts, as `cron add` refuses them */
	for (i = 0; i < cfg->nschedules; i++) {
		const struct cli_schedule *sc = &cfg->schedules[i];
		const char *bad =
		        !sc->unique_key && (sc->unique_scope >= 0 ||
		                            sc->unique_for_ms ||
		                            sc->unique_replace)
		                ? "unique_scope, unique_for and unique_replace "
		                  "need unique"
		        : sc->unique_scope >= 0 && sc->unique_for_ms
		                ? "unique_scope and unique_for conflict"
		        : sc->unique_replace && sc->unique_for_ms
		                ? "unique_replace works with the live and "
		                  "pending scopes, not with unique_for"
		                : NULL;
		if (bad) {
			cli_err("%s:%d: [schedule.%s]: %s", path, sc->line,
			        sc->name, bad);
			return EX_CONFIG;
		}
	}
	for (i = 0; i < cfg->nhandlers; i++)
		if (cfg->handlers[i].command == NULL) {
			cli_err("%s:%d: [handler.%s] has no command", path,
			        cfg->handlers[i].line, cfg->handlers[i].kind);
			return EX_CONFIG;
		}
	return 0;
}

void
cli_config_free(struct cli_config *cfg)
{
	size_t i;

	free(cfg->database);
	free(cfg->strategy);
	free(cfg->prefix);
	free(cfg->node_id);
	free(cfg->queues);
	free(cfg->http);
	for (i = 0; i < cfg->nhandlers; i++) {
		free(cfg->handlers[i].kind);
		free(cfg->handlers[i].command);
	}
	free(cfg->handlers);
	for (i = 0; i < cfg->nschedules; i++) {
		struct cli_schedule *sc = &cfg->schedules[i];
		free(sc->name);
		free(sc->cron);
		free(sc->tz);
		free(sc->kind);
		free(sc->payload);
		free(sc->queue);
		free(sc->misfire);
		free(sc->overlap);
		free(sc->unique_key);
	}
	free(cfg->schedules);
	for (i = 0; i < cfg->nqueues_limits; i++)
		free(cfg->queues_limits[i].name);
	free(cfg->queues_limits);
	for (i = 0; i < cfg->nhooks; i++) {
		free(cfg->hooks[i].kind);
		free(cfg->hooks[i].queue);
		free(cfg->hooks[i].url);
	}
	free(cfg->hooks);
	memset(cfg, 0, sizeof *cfg);
}
