/*
 * dashboard_session.c — who may ask the dashboard: the --auth credentials
 * (read from a file or the environment, compared in constant time), the
 * Host check against DNS rebinding, the same-origin check of a POST, and
 * the browsers' sessions with their CSRF tokens (docs/operations.md,
 * "Security").
 *
 * Layer: the command-line program, a client of <sked.h> only; called by
 * the router and the command (dashboard.c), calls nothing of the
 * dashboard's other files (dashboard_int.h draws them).
 */
#include "web/dashboard/dashboard_int.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <unistd.h>

#define AUTH_MIN      8 /* the least length of a password or a token */
#define AUTH_DISTINCT 4 /* and how many different characters at least */

/* A POST comes from this dashboard's own pages: Sec-Fetch-Site says so
 * (checked by the caller), or, from a browser too old to send it, the
 * Origin names this host. */
int
dash_same_origin(const struct cli_http_request *rq)
{
	const char *origin = cli_http_header(rq, "Origin");
	const char *host = cli_http_header(rq, "Host");
	const char *o;

	if (cli_http_header(rq, "Sec-Fetch-Site") || !origin)
		return 1;
	if (!host || strcmp(origin, "null") == 0)
		return 0;
	o = strstr(origin, "://");
	return o && strcmp(o + 3, host) == 0;
}

/* Without --auth, answer only requests addressed to a loopback name or
 * to the address listened on: a page elsewhere that points a name of its
 * own at 127.0.0.1 (DNS rebinding) must not read or steer the dashboard. */
int
dash_host_allowed(const struct dash *d, const struct cli_http_request *rq)
{
	const char *host = cli_http_header(rq, "Host");
	char name[256];
	size_t n;

	if (d->secret)
		return 1;
	if (!host)
		return 0;
	if (host[0] == '[') {
		const char *close = strchr(host, ']');
		n = close ? (size_t)(close - host + 1) : strlen(host);
	} else {
		n = strcspn(host, ":");
	}
	if (n >= sizeof name)
		return 0;
	memcpy(name, host, n);
	name[n] = '\0';
	return strcmp(name, "localhost") == 0 || strcmp(name, "[::1]") == 0 ||
	       (strncmp(name, "127.", 4) == 0 &&
	        strspn(name, "0123456789.") == n) ||
	       (d->listen_host[0] && strcmp(name, d->listen_host) == 0);
}

int
dash_authorized(struct dash *d, const struct cli_http_request *rq)
{
	const char *a, *user, *pass;
	char dec[512];

	if (!d->secret)
		return 1;
	a = cli_http_header(rq, "Authorization");
	if (!a)
		return 0;
	if (strncmp(a, "Bearer ", 7) == 0)
		return !d->user && cli_http_same(a + 7, d->secret);
	if (cli_http_basic(a, dec, sizeof dec, &user, &pass) != 0)
		return 0;
	/* a token works as the password of any user name */
	return (!d->user || cli_http_same(user, d->user)) &
	       cli_http_same(pass, d->secret);
}

/* The session the request's cookie names, touched, its token rotated when
 * due; with create, a new one when there is none (the reply sets its
 * cookie), the least recently used giving way. Copies its tokens into
 * tok and prev; 0, or -1 when there is none (or no randomness). */
int
dash_session_of(struct dash *d, const struct cli_http_request *rq,
                struct cli_http_reply *rp, int create, char *tok, char *prev)
{
	const char *id = cli_http_cookie(rq, "sked_session");
	int64_t now = cli_mono_ms();
	struct dash_session *se = NULL, *lru = &d->sess[0];
	int rc = 0;

	pthread_mutex_lock(&d->sess_mu);
	for (int i = 0; i < SESSIONS; i++) {
		struct dash_session *x = &d->sess[i];
		if (x->used && now - x->used > SESSION_IDLE_MS)
			memset(x, 0, sizeof *x);
		if (id && x->used && strlen(id) == 32 &&
		    cli_http_same(id, x->id))
			se = x;
		if (x->used < lru->used)
			lru = x;
	}
	if (!se && create) {
		se = lru;
		memset(se, 0, sizeof *se);
		if (dash_random_token(se->id, sizeof se->id) != 0 ||
		    dash_random_token(se->tok, sizeof se->tok) != 0) {
			memset(se, 0, sizeof *se);
			se = NULL;
		} else {
			se->rotated = now;
			snprintf(rp->set_cookie, sizeof rp->set_cookie,
			         "sked_session=%s; Path=/; HttpOnly; "
			         "SameSite=Strict",
			         se->id);
		}
	}
	if (se && now - se->rotated >= d->rotate_ms) {
		char fresh[33];
		if (dash_random_token(fresh, sizeof fresh) == 0) {
			memcpy(se->prev, se->tok, sizeof se->prev);
			memcpy(se->tok, fresh, sizeof se->tok);
			se->rotated = now;
		}
	}
	if (se) {
		se->used = now ? now : 1;
		memcpy(tok, se->tok, sizeof se->tok);
		memcpy(prev, se->prev, sizeof se->prev);
	} else {
		rc = -1;
	}
	pthread_mutex_unlock(&d->sess_mu);
	return rc;
}

/* --auth file:PATH or env:NAME: "user:password" or a token, first line */
int
dash_load_auth(struct dash *d, const char *spec)
{
	char *text = NULL, *nl;
	size_t len = 0;
	int ex;

	if (strncmp(spec, "file:", 5) == 0) {
		struct stat st;
		if ((ex = cli_read_file("--auth", spec + 5, 4096, &text,
		                        &len)) != 0)
			return ex;
		if (stat(spec + 5, &st) == 0 && (st.st_mode & 077))
			sked_log(SKED_LOG_WARN,
			         "dashboard --auth: %s can be read by other "
			         "users (chmod 600 it)",
			         spec + 5);
	} else if (strncmp(spec, "env:", 4) == 0) {
		const char *v = getenv(spec + 4);
		if (!v || !v[0]) {
			cli_err("dashboard --auth: the environment variable "
			        "'%s' is not set",
			        spec + 4);
			return EX_USAGE;
		}
		text = strdup(v);
	} else {
		cli_err("dashboard --auth: give file:PATH or env:NAME "
		        "(credentials never go on the command line)");
		return EX_USAGE;
	}
	if (!text) {
		cli_err("dashboard: out of memory");
		return EX_OSERR;
	}
	if ((nl = strpbrk(text, "\r\n")))
		*nl = '\0';
	/* the password (or the token) alone must be long enough: the user
	 * name is no secret */
	char *colon = strchr(text, ':');
	const char *secret = colon ? colon + 1 : text;
	const char *weak = cli_secret_weak(secret, AUTH_MIN, AUTH_DISTINCT);
	if (colon == text || weak) {
		if (colon == text)
			cli_err("dashboard --auth: the user name before ':' is "
			        "empty");
		else
			cli_err("dashboard --auth: the %s is %s (at least %d "
			        "characters, %d of them different, no blanks)",
			        colon ? "password after 'user:'" : "token",
			        weak, AUTH_MIN, AUTH_DISTINCT);
		free(text);
		return EX_USAGE;
	}
	if (colon) {
		*colon = '\0';
		d->user = strdup(text);
		d->secret = strdup(colon + 1);
		free(text);
		if (!d->user || !d->secret) {
			cli_err("dashboard: out of memory");
			return EX_OSERR;
		}
	} else {
		d->secret = text;
	}
	return 0;
}

int
dash_random_token(char *out, size_t len)
{
	unsigned char raw[16];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || read(fd, raw, sizeof raw) != (ssize_t)sizeof raw) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	for (size_t i = 0; i < sizeof raw && 2 * i + 2 < len; i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
	return 0;
}
