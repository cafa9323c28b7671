/*
 * worker/curl.c — http:// and https:// handlers: a task is a POST of its
 * payload, its facts in Sked-Task-* headers.
 *
 * Layer: the worker's pool (worker.h), on libcurl; no SQL. Each pool
 * thread keeps one curl handle, so connections are reused from task to
 * task. What an answer means:
 *
 *   2xx                      success
 *   429 or 503 + Retry-After a failed attempt retried after that delay
 *                            (seconds or an HTTP date) instead of the
 *                            backoff; the attempt counts as any other
 *   any other status         a failed attempt, "HTTP 500 Internal Server
 *                            Error" in the run record
 *   timeout, refused, TLS…   a failed attempt with curl's own words
 *
 * The run's output is the first 4 KiB of the response body; a 2xx
 * body (at most 64 KiB) is the task's result. A task that waited for
 * others names them in Sked-Task-Parents (ids), and when its payload is
 * a JSON object without "parents", the body gets a "parents" member:
 * [{"id", "kind", "result"}, …]. Credentials
 * come from the worker's environment, never from the task:
 * SKED_HTTP_AUTHORIZATION_<KIND> (the kind in upper case, '-' and '.' as
 * '_'), else SKED_HTTP_AUTHORIZATION, sent as the Authorization header.
 *
 * A webhook delivery (kind sked.hook, a handler with x->hook: hooks.c)
 * is the same request with its URL and body taken from the payload,
 * {"url": URL, "event": {…}}: the event is the body, and a
 * Sked-Signature header (t=UNIX,v1=HEX) signs it. A URL that is not
 * one of this worker's on_end URLs is refused without a request.
 */
#include "worker/worker.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef SKED_HAVE_CURL
#include <curl/curl.h>

enum { BODY_MAX = 4096 };
/* a Retry-After past a year is read as a year */
#define RETRY_AFTER_MAX_S (366L * 24 * 3600)

struct sked_http {
	CURL *curl;
};

/* the body: its first SKED_RESULT_MAX + 1 bytes kept (a 2xx body is
 * the task's result; the run's output is its first BODY_MAX bytes),
 * the rest counted */
struct body {
	char *buf; /* SKED_RESULT_MAX + 2 bytes */
	size_t len, total;
};

struct reply {
	long retry_after_s; /* -1: none */
	int no_retry;       /* Sked-Retry: no */
	char status[128];   /* the status line's reason, if any */
};

static size_t
on_body(char *p, size_t size, size_t n, void *ud)
{
	struct body *b = ud;
	size_t len = size * n, room = SKED_RESULT_MAX + 1 - b->len;
	memcpy(b->buf + b->len, p, len < room ? len : room);
	b->len += len < room ? len : room;
	b->total += len;
	return len; /* the rest is read and dropped */
}

static size_t
on_header(char *p, size_t size, size_t n, void *ud)
{
	struct reply *r = ud;
	size_t len = size * n;
	char line[512];
	size_t l = len < sizeof line - 1 ? len : sizeof line - 1;
	memcpy(line, p, l);
	line[l] = '\0';
	line[strcspn(line, "\r\n")] = '\0';
	if (strncmp(line, "HTTP/", 5) == 0) {
		/* "HTTP/1.1 503 Service Unavailable": keep the reason */
		const char *sp = strchr(line, ' ');
		sp = sp ? strchr(sp + 1, ' ') : NULL;
		snprintf(r->status, sizeof r->status, "%s", sp ? sp + 1 : "");
		r->retry_after_s = -1;
		r->no_retry = 0;
	} else if (strncasecmp(line, "Sked-Retry:", 11) == 0) {
		const char *v = line + 11;
		while (*v == ' ' || *v == '\t')
			v++;
		r->no_retry = strncasecmp(v, "no", 2) == 0 &&
		              (v[2] == '\0' || v[2] == ' ' || v[2] == '\t');
	} else if (strncasecmp(line, "Retry-After:", 12) == 0) {
		const char *v = line + 12;
		while (*v == ' ' || *v == '\t')
			v++;
		char *end = NULL;
		long s = strtol(v, &end, 10);
		if (end != v && *end == '\0' && s >= 0) {
			r->retry_after_s = s;
		} else {
			time_t t = curl_getdate(v, NULL);
			if (t > 0)
				r->retry_after_s =
				        t > time(NULL) ? t - time(NULL) : 0;
		}
		/* the worker caps it at --retry-max; this keeps the
		 * milliseconds within int64 (strtol saturates at LONG_MAX) */
		if (r->retry_after_s > RETRY_AFTER_MAX_S)
			r->retry_after_s = RETRY_AFTER_MAX_S;
	}
	return len;
}

static int
on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut,
            curl_off_t un)
{
	(void)dt;
	(void)dn;
	(void)ut;
	(void)un;
	const sked_job *j = ud;
	return atomic_load(&((sked_job *)j)->cancel) != CANCEL_NONE;
}

static struct curl_slist *
headers_for(const sked_job *j, const char *sig)
{
	char h[SKED_MAX_NAME + 64];
	struct curl_slist *l = NULL, *t;
#define ADD(...)                                                               \
	do {                                                                   \
		snprintf(h, sizeof h, __VA_ARGS__);                            \
		if (!(t = curl_slist_append(l, h)))                            \
			goto oom;                                              \
		l = t;                                                         \
	} while (0)
	ADD("Sked-Task-Id: %lld", (long long)j->t.id);
	ADD("Sked-Task-Kind: %s", j->t.kind);
	ADD("Sked-Task-Queue: %s", j->t.queue);
	ADD("Sked-Task-Attempt: %d", j->t.attempt);
	ADD("Sked-Task-Max-Attempts: %d", j->t.max_attempts);
	ADD("Sked-Task-Fencing: %d", j->t.attempt);
	if (j->parents && j->parents->ids) {
		/* the ids may be long: a header of their own size */
		char *a = malloc(strlen(j->parents->ids) + 32);
		if (!a)
			goto oom;
		sprintf(a, "Sked-Task-Parents: %s", j->parents->ids);
		t = curl_slist_append(l, a);
		free(a);
		if (!t)
			goto oom;
		l = t;
	}
	if (sig) /* a webhook's signature (hooks.c) */
		ADD("Sked-Signature: %s", sig);
	if (j->t.traceparent) /* W3C trace context, as a client sends it */
		ADD("traceparent: %s", j->t.traceparent);
	const char *p = j->t.payload ? j->t.payload : "";
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	ADD("Content-Type: %s", *p == '{' || *p == '['
	                                ? "application/json"
	                                : "text/plain; charset=utf-8");
	ADD("Expect:"); /* no 100-continue round trip for big payloads */
	/* credentials from the worker's environment only */
	char name[SKED_MAX_NAME + 32];
	int k = snprintf(name, sizeof name, "SKED_HTTP_AUTHORIZATION_");
	for (const char *c = j->t.kind; *c && k < (int)sizeof name - 1; c++)
		name[k++] = isalnum((unsigned char)*c)
		                    ? (char)toupper((unsigned char)*c)
		                    : '_';
	name[k] = '\0';
	const char *auth = getenv(name);
	if (!auth || !*auth)
		auth = getenv("SKED_HTTP_AUTHORIZATION");
	if (auth && *auth) {
		char *a = malloc(strlen(auth) + 32);
		if (!a)
			goto oom;
		sprintf(a, "Authorization: %s", auth);
		t = curl_slist_append(l, a);
		free(a);
		if (!t)
			goto oom;
		l = t;
	}
#undef ADD
	return l;
oom:
	curl_slist_free_all(l);
	return NULL;
}

/* The body a task with parents sends when its payload is a JSON
 * object without a "parents" member: the payload with one added,
 * [{"id", "kind", "result"}, …] (docs/handlers.md); else NULL (the
 * payload as it is). */
static char *
body_with_parents(const sked_job *j)
{
	if (!j->parents || !j->parents->json || !j->t.payload)
		return NULL;
	json_t *o = json_loadb(j->t.payload, j->t.payload_len, 0, NULL);
	json_t *par = json_loads(j->parents->json, 0, NULL);
	char *s = NULL;
	if (json_is_object(o) && par && !json_object_get(o, "parents") &&
	    json_object_set(o, "parents", par) == 0)
		s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	json_decref(par);
	return s;
}

/* A delivery's URL and body from its payload {"url", "event"} (*url and
 * *body malloc'd), its signature into sig; else an error message on j,
 * with give_up (the same payload would fail again). */
static int
hook_request(sked_job *j, char **url, char **body, char *sig, size_t sig_sz)
{
	json_t *o = j->t.payload ? json_loadb(j->t.payload, j->t.payload_len, 0,
	                                      NULL)
	                         : NULL;
	json_t *u = json_object_get(o, "url");
	json_t *e = json_object_get(o, "event");
	const char *why = NULL;
	if (!json_is_string(u) || !json_is_object(e))
		why = "a webhook delivery needs a payload {\"url\", \"event\"}";
	else if (!sked__wk_hook_url_ok(j->w, json_string_value(u)))
		why = "a webhook delivery's URL is not one of this worker's "
		      "on_end URLs";
	if (!why) {
		*url = strdup(json_string_value(u));
		*body = json_dumps(e, JSON_COMPACT | JSON_PRESERVE_ORDER);
		char hex[160];
		long long t = (long long)time(NULL);
		if (!*url || !*body)
			why = "out of memory";
		else if (sked__wk_hook_sign(*body, strlen(*body), t, hex,
		                            sizeof hex) != SKED_OK)
			why = "cannot sign a webhook delivery "
			      "(SKED_HOOK_SECRET)";
		else
			snprintf(sig, sig_sz, "t=%lld,v1=%s", t, hex);
	}
	json_decref(o);
	if (why) {
		free(*url);
		free(*body);
		*url = *body = NULL;
		j->error = strdup(why);
		j->give_up = 1;
		return -1;
	}
	return 0;
}

void
sked__wk_run_http(sked_job *j, const handler *x, sked_http **hp)
{
	sked_worker *w = j->w;
	j->ok = 0;
	j->exit_code = -1;
	char *hook_url = NULL, *post = NULL, sig[256] = "";
	if (x->hook && hook_request(j, &hook_url, &post, sig, sizeof sig) != 0)
		return;
	if (!*hp) {
		*hp = calloc(1, sizeof **hp);
		if (*hp && !((*hp)->curl = curl_easy_init())) {
			free(*hp);
			*hp = NULL;
		}
		if (!*hp) {
			free(hook_url);
			free(post);
			j->error = strdup("cannot start an HTTP client");
			return;
		}
	}
	CURL *c = (*hp)->curl;
	struct curl_slist *hdr = headers_for(j, x->hook ? sig : NULL);
	if (!hdr) {
		free(hook_url);
		free(post);
		j->error = strdup("out of memory");
		return;
	}
	int64_t timeout = sked__claimed_timeout(
	        &j->t, x->timeout_ms ? x->timeout_ms : w->o.timeout_ms);
	struct body b = {.buf = malloc(SKED_RESULT_MAX + 2)};
	if (!x->hook)
		post = body_with_parents(j);
	if (!b.buf) {
		curl_slist_free_all(hdr);
		free(hook_url);
		free(post);
		j->error = strdup("out of memory");
		return;
	}
	struct reply r = {.retry_after_s = -1};
	char cerr[CURL_ERROR_SIZE] = "";
	curl_easy_reset(c); /* keeps the connection cache */
	curl_easy_setopt(c, CURLOPT_URL, hook_url ? hook_url : x->url);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS,
	                 post           ? post
	                 : j->t.payload ? j->t.payload
	                                : "");
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
	                 (curl_off_t)(post           ? strlen(post)
	                              : j->t.payload ? j->t.payload_len
	                                             : 0));
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "sked/" SKED_VERSION);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &r);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, j);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	if (timeout > 0)
		curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)timeout);
	CURLcode rc = curl_easy_perform(c);
	curl_slist_free_all(hdr);
	free(post);
	free(hook_url);
	long code = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	/* a 2xx body is the task's result */
	if (rc == CURLE_OK && code >= 200 && code < 300 && b.total > 0)
		sked__ignore(sked__wk_set_result(j, b.buf, b.total));
	if (b.len) {
		size_t k = b.len < BODY_MAX ? b.len : BODY_MAX;
		b.buf[k] = '\0';
		j->output = strdup(b.buf);
	}
	free(b.buf);
	char msg[600];
	if (rc == CURLE_ABORTED_BY_CALLBACK) {
		j->error = strdup("cancelled");
		return;
	}
	if (rc == CURLE_OPERATION_TIMEDOUT) {
		snprintf(msg, sizeof msg, "timed out after %lld ms",
		         (long long)timeout);
		j->error = strdup(msg);
		return;
	}
	if (rc != CURLE_OK) {
		snprintf(msg, sizeof msg, "HTTP request failed: %s",
		         cerr[0] ? cerr : curl_easy_strerror(rc));
		j->error = strdup(msg);
		return;
	}
	if (code >= 200 && code < 300) {
		j->ok = 1;
		return;
	}
	/* 422: the request is understood and wrong; or any status with
	 * Sked-Retry: no (docs/handlers.md, "No retry") */
	j->give_up = r.no_retry || code == 422;
	if ((code == 429 || code == 503) && r.retry_after_s >= 0)
		j->retry_ms = r.retry_after_s > 0
		                      ? (int64_t)r.retry_after_s * 1000
		                      : 1;
	snprintf(msg, sizeof msg, "HTTP %ld%s%s", code, r.status[0] ? " " : "",
	         r.status);
	j->error = strdup(msg);
}

void
sked__wk_http_free(sked_http *hp)
{
	if (!hp)
		return;
	curl_easy_cleanup(hp->curl);
	free(hp);
}

int
sked__wk_http_init(void)
{
	static int done;
	if (!done && curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK)
		done = 1;
	return done ? SKED_OK : SKED_EIO;
}

#else /* no libcurl in this build */

void
sked__wk_run_http(sked_job *j, const handler *x, sked_http **hp)
{
	(void)x;
	(void)hp;
	j->ok = 0;
	j->exit_code = -1;
	j->error = strdup("this build of sked has no HTTP handlers (libcurl)");
}

void
sked__wk_http_free(sked_http *hp)
{
	(void)hp;
}

int
sked__wk_http_init(void)
{
	return SKED_EUNSUPPORTED;
}

#endif
