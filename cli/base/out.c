/*
 * out.c — how the `sked` program talks back: error lines, exit codes,
 * strict parsing of flag values, tables and JSON.
 *
 * Layer: the command-line program. Every failure becomes exactly one line
 * on stderr prefixed "sked: " and a sysexits(3) code chosen here, in one
 * table, so that every command maps library status codes the same way.
 * What a status means is the library's business (sked_errmsg and
 * sked_strerror); this file only chooses the words around it.
 */
#include "base/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <unistd.h>

static int g_err_json; /* cli_err_json */

void
cli_err(const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fflush(stdout);
	/* an argument echoed back cannot drive the terminal: control bytes
	 * (but the tab) become '?', as one line must stay one line */
	for (char *c = line; *c; c++)
		if (((unsigned char)*c < 0x20 && *c != '\t' && *c != '\n') ||
		    *c == 0x7f)
			*c = '?';
	if (g_err_json)
		sked_log(SKED_LOG_ERROR, "%s", line);
	else
		fprintf(stderr, "sked: %s\n", line);
}

void
cli_err_json(int on)
{
	g_err_json = on;
}

int
cli_exit_code(int rc)
{
	switch (rc) {
	case SKED_OK:
		return EX_OK;
	case SKED_EURL:
		return EX_USAGE;
	case SKED_EINVAL:
	case SKED_ETOOBIG:
	case SKED_ECRON:
	case SKED_ETZ:
	case SKED_ENOTFOUND:
	case SKED_ESTATE:
		return EX_DATAERR;
	case SKED_EUNAVAILABLE:
	case SKED_EUNSUPPORTED:
		return EX_UNAVAILABLE;
	case SKED_ENOMEM:
		return EX_OSERR;
	case SKED_EREADONLY:
		return EX_CANTCREAT;
	case SKED_EIO:
		return EX_IOERR;
	case SKED_EBUSY:
	case SKED_ETIMEOUT:
	case SKED_ELOCKED:
	case SKED_ELOST:
		return EX_TEMPFAIL;
	case SKED_ESCHEMA:
	case SKED_ESTRATEGY:
	case SKED_ECONFIG:
		return EX_CONFIG;
	case SKED_EPERM:
		return EX_NOPERM;
	case SKED_EDB:
	case SKED_EERROR:
	default:
		return EX_SOFTWARE;
	}
}

int
cli_fail(const sked *h, int rc, const char *fmt, ...)
{
	char what[1024];
	const char *detail = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	if (h != NULL)
		detail = sked_errmsg(h);
	if (detail == NULL || detail[0] == '\0')
		detail = sked_strerror(rc);
	cli_err("%s: %s", what, detail);
	return cli_exit_code(rc);
}

int
cli_usage(const char *cmd, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (cmd != NULL)
		cli_err("%s: %s (see 'sked help %s')", cmd, line, cmd);
	else
		cli_err("%s (see 'sked --help')", line);
	return EX_USAGE;
}

int
cli_opt_error(const char *cmd, int ch, char **argv)
{
	const char *opt = optind > 0 ? argv[optind - 1] : "?";
	char shortopt[3] = {'-', (char)optopt, '\0'};

	/* An unknown letter inside a cluster such as -xv: name the letter. */
	if (optopt != 0 && optopt < 0x100 && strncmp(opt, "--", 2) != 0)
		opt = shortopt;
	if (ch == ':')
		return cli_usage(cmd, "option '%s' needs a value", opt);
	return cli_usage(cmd, "unknown option '%s'", opt);
}

int
cli_parse_int(const char *flag, const char *s, long long min, long long max,
              long long *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (s[0] == '\0' || *end != '\0' || errno == ERANGE ||
	    (s[0] != '-' && s[0] != '+' && (s[0] < '0' || s[0] > '9'))) {
		cli_err("%s: '%s' is not an integer", flag, s);
		return EX_USAGE;
	}
	if (v < min || v > max) {
		cli_err("%s: %s is out of range (%lld to %lld)", flag, s, min,
		        max);
		return EX_USAGE;
	}
	*out = v;
	return 0;
}

int
cli_parse_prefetch(const char *flag, const char *s, int *out)
{
	if (cli_prefetch_value(s, out) == 0)
		return 0;
	cli_err("%s: '%s' is not auto, off or an integer from 0 to 10000", flag,
	        s);
	return EX_USAGE;
}

/* s is a duration in form whose numbers are too big for int64 ms: with
 * every run of digits read as 1, it parses */
static int
dur_overflows(const char *s)
{
	char shape[128];
	size_t o = 0;
	int64_t ms;

	for (; *s && o + 2 < sizeof shape; s++)
		if (*s < '0' || *s > '9')
			shape[o++] = *s;
		else if (s[1] < '0' || s[1] > '9')
			shape[o++] = '1';
	shape[o] = '\0';
	return *s == '\0' && sked_parse_duration(shape, &ms) == SKED_OK;
}

int
cli_parse_duration(const char *flag, const char *s, int64_t *ms)
{
	if (sked_parse_duration(s, ms) != SKED_OK && dur_overflows(s))
		*ms = INT64_MAX;
	else if (sked_parse_duration(s, ms) != SKED_OK || *ms < 0) {
		cli_err("%s: '%s' is not a duration (like 500ms, 30s, 10m, "
		        "2h, 1d)",
		        flag, s);
		return EX_USAGE;
	}
	if (*ms > SKED_DURATION_MAX_MS) {
		cli_err("%s: '%s' is more than 100 years, the longest "
		        "duration sked takes",
		        flag, s);
		return EX_DATAERR;
	}
	return 0;
}

int
cli_parse_time(const char *flag, const char *s, int64_t *ms)
{
	const char *t = strpbrk(s, "Tt ");

	if (sked_parse_time(s, ms) != SKED_OK) {
		cli_err("%s: '%s' is not an ISO-8601 time (like "
		        "2026-03-08T07:30:00Z)",
		        flag, s);
		return EX_USAGE;
	}
	/* The library reads a time without a zone as UTC; on the command
	 * line that is more often someone's local time, so the zone must be
	 * written: Z or an offset after the time of day. */
	if (t == NULL || strpbrk(t, "Zz+-") == NULL) {
		cli_err("%s: '%s' names no time zone: write Z for UTC "
		        "(%.10sT%sZ) or an offset such as +01:00",
		        flag, s, s, t != NULL ? t + 1 : "00:00:00");
		return EX_USAGE;
	}
	if (*ms < 0 || *ms > SKED_TIME_MAX_MS) {
		cli_err("%s: '%s' is outside the times sked stores "
		        "(1970-01-01 to 9999-12-31)",
		        flag, s);
		return EX_DATAERR;
	}
	return 0;
}

int
cli_parse_id(const char *cmd, const char *s, int64_t *id)
{
	long long v;
	char what[64];

	snprintf(what, sizeof what, "%s: task id", cmd);
	if (cli_parse_int(what, s, 1, LLONG_MAX, &v) != 0)
		return EX_USAGE;
	*id = v;
	return 0;
}

const char *
cli_time(int64_t ms, char *buf, size_t len)
{
	if (ms == 0) {
		snprintf(buf, len, "-");
		return buf;
	}
	return sked_format_time(ms, buf, len);
}

const char *
cli_time_sec(int64_t ms, char *buf, size_t len)
{
	size_t n;

	sked_format_time(ms, buf, len);
	n = strlen(buf);
	if (n >= 5 && buf[n - 5] == '.') { /* "….123Z" → "…Z" */
		buf[n - 5] = 'Z';
		buf[n - 4] = '\0';
	}
	return buf;
}

int
cli_broken_pipe(void)
{
	static int closed; /* once seen, stdout stays closed */

	if (errno == EPIPE)
		closed = 1;
	return closed;
}

/* ---- JSON ---- */

json_t *
cli_json_time(int64_t ms)
{
	char buf[32];

	if (ms == 0)
		return json_null();
	return json_string(sked_format_time(ms, buf, sizeof buf));
}

json_t *
cli_json_due_age(int64_t ms)
{
	return ms > 0 ? json_integer(ms) : json_null();
}

/* Length of the valid UTF-8 sequence at s (of n bytes left), or 0. */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	size_t need, i;
	unsigned int cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		need = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		need = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		need = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n < need)
		return 0;
	for (i = 1; i < need; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((need == 3 && cp < 0x800) || (need == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return need;
}

json_t *
cli_json_str(const char *s, size_t len)
{
	json_t *v;
	char *clean;
	size_t i = 0, o = 0, k;

	if (s == NULL)
		return json_null();
	v = json_stringn(s, len);
	if (v != NULL)
		return v;
	/* Not UTF-8: replace each bad byte with U+FFFD. */
	clean = malloc(len * 3 + 1);
	if (clean == NULL)
		return NULL;
	while (i < len) {
		k = utf8_len((const unsigned char *)s + i, len - i);
		if (k == 0) {
			memcpy(clean + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		} else {
			memcpy(clean + o, s + i, k);
			o += k;
			i += k;
		}
	}
	v = json_stringn(clean, o);
	free(clean);
	return v;
}

json_t *
cli_json_cstr(const char *s)
{
	return s == NULL ? json_null() : cli_json_str(s, strlen(s));
}

json_t *
cli_json_result(const char *s)
{
	json_t *v = s ? json_loads(s, JSON_DECODE_ANY, NULL) : NULL;
	return v ? v : cli_json_cstr(s);
}

int
cli_json_print(json_t *v)
{
	int rc = 0;

	if (v == NULL) {
		cli_err("out of memory building JSON");
		return EX_OSERR;
	}
	if (json_dumpf(v, stdout, JSON_INDENT(2)) != 0 ||
	    fputc('\n', stdout) == EOF || fflush(stdout) != 0) {
		/* a reader that closed the pipe has what it wanted */
		if (!cli_broken_pipe()) {
			cli_err("cannot write JSON to stdout: %s",
			        strerror(errno));
			rc = EX_IOERR;
		}
	}
	json_decref(v);
	return rc;
}

/* ---- tables ---- */

struct cli_table {
	size_t ncols, nrows, cap;
	char **cells; /* (nrows + 1) * ncols; row 0 is the header */
};

struct cli_table *
cli_table_new(size_t ncols, const char *const *headers)
{
	struct cli_table *t = calloc(1, sizeof *t);

	if (t == NULL)
		return NULL;
	t->ncols = ncols;
	cli_table_add(t, headers);
	return t;
}

/* a copy of s for a terminal: control characters (C0, DEL, C1 as UTF-8)
 * escaped, so that a value from the database cannot drive it */
static char *
term_dup(const char *s)
{
	size_t n = strlen(s), o = 0;
	char *out = malloc(n * 6 + 1);

	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f)
			o += (size_t)sprintf(out + o, "\\x%02x", c);
		else if (c == 0xc2 && (unsigned char)s[i + 1] >= 0x80 &&
		         (unsigned char)s[i + 1] <= 0x9f)
			o += (size_t)sprintf(out + o, "\\u%04x",
			                     (unsigned char)s[++i]);
		else
			out[o++] = (char)c;
	}
	out[o] = '\0';
	return out;
}

void
cli_table_add(struct cli_table *t, const char *const *cells)
{
	size_t i;

	if (t == NULL)
		return;
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		char **p = realloc(t->cells, cap * t->ncols * sizeof *p);
		if (p == NULL)
			return;
		t->cells = p;
		t->cap = cap;
	}
	for (i = 0; i < t->ncols; i++)
		t->cells[t->nrows * t->ncols + i] =
		        term_dup(cells[i] != NULL ? cells[i] : "-");
	t->nrows++;
}

void
cli_table_print(const struct cli_table *t, FILE *f)
{
	size_t r, i, *w;

	if (t == NULL)
		return;
	w = calloc(t->ncols, sizeof *w);
	if (w == NULL)
		return;
	for (r = 0; r < t->nrows; r++)
		for (i = 0; i < t->ncols; i++) {
			const char *s = t->cells[r * t->ncols + i];
			size_t n = s ? strlen(s) : 0;
			if (n > w[i])
				w[i] = n;
		}
	for (r = 0; r < t->nrows; r++) {
		for (i = 0; i < t->ncols; i++) {
			const char *s = t->cells[r * t->ncols + i];
			if (i + 1 == t->ncols)
				fprintf(f, "%s\n", s ? s : "");
			else
				fprintf(f, "%-*s  ", (int)w[i], s ? s : "");
		}
	}
	free(w);
}

void
cli_table_free(struct cli_table *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
}

/* ---- input ---- */

/* The refusal of an input over max bytes, of which n were read: its
 * size from fstat for a regular file, else by reading the rest up to
 * DRAIN_MAX bytes (a pipe says its size; /dev/zero never ends). */
#define DRAIN_MAX ((uintmax_t)64 * 1024 * 1024)

static int
too_big(const char *flag, int fd, const char *path, size_t n, size_t max)
{
	struct stat st;
	char sink[65536];
	uintmax_t size = n;
	ssize_t got = 0;

	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		size = (uintmax_t)st.st_size;
	} else {
		while (size < DRAIN_MAX &&
		       (got = read(fd, sink, sizeof sink)) != 0) {
			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0)
				break;
			size += (uintmax_t)got;
		}
		if (size >= DRAIN_MAX) {
			cli_err("%s: %s holds more than %ju bytes, more than "
			        "the limit of %zu bytes (SKED_MAX_PAYLOAD in "
			        "sked.h, fixed when sked is built)",
			        flag, fd == 0 ? "stdin" : path, size, max);
			return EX_DATAERR;
		}
	}
	cli_err("%s: %s is %ju bytes, more than the limit of %zu bytes "
	        "(SKED_MAX_PAYLOAD in sked.h, fixed when sked is built)",
	        flag, fd == 0 ? "stdin" : path, size, max);
	return EX_DATAERR;
}

int
cli_read_file(const char *flag, const char *path, size_t max, char **out,
              size_t *len)
{
	int fd = 0;
	char *buf = NULL, *nb;
	size_t n = 0, cap = 0, want;
	ssize_t got;

	if (strcmp(path, "-") != 0) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			cli_err("%s: cannot read %s: %s", flag, path,
			        strerror(errno));
			return EX_NOINPUT;
		}
	}
	/* Read at most max + 1 bytes: enough to know it is too big. The
	 * buffer grows as the input does, so a large max costs nothing. */
	for (;;) {
		if (n == cap) {
			want = cap ? cap * 2 : 65536;
			if (want > max + 1 || want < cap)
				want = max + 1;
			if (want <= cap)
				break; /* max + 1 bytes read */
			if ((nb = realloc(buf, want + 1)) == NULL) {
				free(buf);
				if (fd != 0)
					close(fd);
				cli_err("%s: out of memory", flag);
				return EX_OSERR;
			}
			buf = nb;
			cap = want;
		}
		got = read(fd, buf + n, cap - n);
		if (got == 0)
			break;
		if (got < 0) {
			if (errno == EINTR)
				continue;
			cli_err("%s: cannot read %s: %s", flag,
			        fd == 0 ? "stdin" : path, strerror(errno));
			free(buf);
			if (fd != 0)
				close(fd);
			return EX_NOINPUT;
		}
		n += (size_t)got;
	}
	if (n > max) {
		/* too big: say how big, not how much was read to know it */
		int ex = too_big(flag, fd, path, n, max);
		free(buf);
		if (fd != 0)
			close(fd);
		return ex;
	}
	if (fd != 0)
		close(fd);
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

char **
cli_split_argv(const char *command)
{
	size_t n = 0, i = 0;
	const char *p = command;
	char **argv;

	errno = 0;
	while (*p != '\0') {
		p += strspn(p, " \t");
		if (*p == '\0')
			break;
		n++;
		p += strcspn(p, " \t");
	}
	if (n == 0)
		return NULL;
	argv = calloc(n + 1, sizeof *argv);
	if (argv == NULL)
		return NULL;
	p = command;
	while (i < n) {
		size_t k;
		p += strspn(p, " \t");
		k = strcspn(p, " \t");
		argv[i] = strndup(p, k);
		if (argv[i] == NULL) {
			cli_argv_free(argv);
			errno = ENOMEM;
			return NULL;
		}
		i++;
		p += k;
	}
	return argv;
}

void
cli_argv_free(char **argv)
{
	size_t i;

	if (argv == NULL)
		return;
	for (i = 0; argv[i] != NULL; i++)
		free(argv[i]);
	free(argv);
}

int
cli_simple_args(struct cli *c, const char *cmd, int argc, char **argv,
                int nargs, const char *what)
{
	static const struct option opts[] = {CLI_COMMON_OPTIONS,
	                                     {NULL, 0, NULL, 0}};
	int ch;

	optind = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (ch) {
		case CLI_OPT_HELP:
			cli_help(stdout, cmd);
			return EX_OK;
		case CLI_OPT_JSON:
			c->json = 1;
			break;
		default:
			return cli_opt_error(cmd, ch, argv);
		}
	}
	if (argc - optind < nargs)
		return cli_usage(cmd, "missing %s", what);
	if (argc - optind > nargs)
		return cli_usage(cmd, "unexpected argument '%s'",
		                 argv[optind + nargs]);
	return -1;
}
