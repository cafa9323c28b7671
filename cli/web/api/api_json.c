/*
 * api_json.c — the JSON API's two edges: reading a request (a JSON body
 * and its fields, query arguments, durations, statuses) with one line
 * for what is wrong, and writing a reply (a JSON value, or the one error
 * shape {"error": {"code": SYSEXITS, "message": "…"}} with the HTTP
 * status of a library error).
 *
 * Layer: the command-line program, a client of <sked.h> only; the bottom
 * of the API's files, called by the router (api_serve.c) and the handlers
 * (api_tasks.c, api_queues.c); api_int.h draws them.
 */
#include "web/api/api_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sysexits.h>

void
api_reply(struct cli_http_reply *rp, int status, json_t *v)
{
	char *s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

	json_decref(v);
	cli_sbuf_free(&rp->body);
	rp->content_type = "application/json";
	if (!s) {
		rp->status = 500;
		cli_sbuf_puts(&rp->body, "{\"error\":{\"code\":71,\"message\":"
		                         "\"out of memory\"}}\n");
		return;
	}
	rp->status = status;
	cli_sbuf_puts(&rp->body, s);
	cli_sbuf_puts(&rp->body, "\n");
	free(s);
}

void
api_fail(struct cli_http_reply *rp, int status, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	api_reply(rp, status,
	          json_pack("{s:{s:i, s:o}}", "error", "code", code, "message",
	                    cli_json_cstr(msg)));
}

/* a library failure: the status its code calls for, the CLI's exit code */
void
api_fail_rc(struct cli_api *a, struct cli_http_reply *rp, int rc,
            const char *what)
{
	const char *m = sked_errmsg(a->h);
	int status;

	switch (rc) {
	case SKED_EINVAL:
	case SKED_ETOOBIG:
	case SKED_ECRON:
	case SKED_ETZ:
		status = 400;
		break;
	case SKED_ENOTFOUND:
		status = 404;
		break;
	case SKED_ESTATE:
		status = 409;
		break;
	case SKED_EUNAVAILABLE:
	case SKED_EBUSY:
	case SKED_ETIMEOUT:
	case SKED_ELOCKED:
	case SKED_ELOST:
	case SKED_EREADONLY:
		status = 503;
		break;
	default:
		status = 500;
	}
	api_fail(rp, status, cli_exit_code(rc), "%s: %s", what,
	         m && m[0] ? m : sked_strerror(rc));
}

/* The fields a body may have, NULL-ended; one line in err for another. */
int
api_known_fields(json_t *body, const char *const *names, char *err, size_t len)
{
	const char *k;
	json_t *v;

	json_object_foreach(body, k, v)
	{
		size_t i;
		for (i = 0; names[i] && strcmp(names[i], k) != 0; i++)
			;
		if (!names[i]) {
			snprintf(err, len, "unknown field '%.64s'", k);
			return -1;
		}
	}
	return 0;
}

/* A string field (NULL when absent or null); -1 for another type. */
int
api_str_field(json_t *body, const char *name, const char **out, char *err,
              size_t len)
{
	json_t *v = json_object_get(body, name);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		snprintf(err, len, "'%s' must be a string", name);
		return -1;
	}
	*out = json_string_value(v);
	return 0;
}

/* An integer field within [min, max]; *set says it was there. */
int
api_int_field(json_t *body, const char *name, long long min, long long max,
              long long *out, int *set, char *err, size_t len)
{
	json_t *v = json_object_get(body, name);

	*set = 0;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < min ||
	    json_integer_value(v) > max) {
		snprintf(err, len, "'%s' must be an integer from %lld to %lld",
		         name, min, max);
		return -1;
	}
	*out = json_integer_value(v);
	*set = 1;
	return 0;
}

/* A duration ("30s", "1h30m"), as the CLI reads one. */
int
api_duration(const char *name, const char *s, int64_t *ms, char *err,
             size_t len)
{
	if (sked_parse_duration(s, ms) != SKED_OK || *ms < 0) {
		snprintf(err, len,
		         "'%s': '%.64s' is not a duration (like 500ms, 30s, "
		         "10m, 2h, 1d)",
		         name, s);
		return -1;
	}
	if (*ms > SKED_DURATION_MAX_MS) {
		snprintf(err, len,
		         "'%s': '%.64s' is more than 100 years, the longest "
		         "duration sked takes",
		         name, s);
		return -1;
	}
	return 0;
}

/* The POST body: a JSON object; an empty body is an empty object. */
json_t *
api_read_body(const struct cli_http_request *rq, struct cli_http_reply *rp)
{
	const char *ct = cli_http_header(rq, "Content-Type");
	json_error_t je;
	json_t *v;

	if (rq->body_len == 0)
		return json_object();
	if (!ct || strncasecmp(ct, "application/json", 16) != 0 ||
	    (ct[16] != '\0' && ct[16] != ';' && ct[16] != ' ')) {
		api_fail(rp, 415, EX_DATAERR,
		         "the body must be JSON, sent with Content-Type: "
		         "application/json");
		return NULL;
	}
	v = json_loadb(rq->body, rq->body_len, JSON_REJECT_DUPLICATES, &je);
	if (!v) {
		/* valid JSON that no C number holds (1e400, 2^64) is not
		 * "not JSON": say what sked cannot read */
		if (json_error_code(&je) == json_error_numeric_overflow)
			api_fail(rp, 400, EX_DATAERR,
			         "the body holds a number too large to read "
			         "(line %d, column %d): ids and counts are "
			         "64-bit integers",
			         je.line, je.column);
		else
			api_fail(rp, 400, EX_DATAERR,
			         "the body is not JSON: %s (line %d, column "
			         "%d)",
			         je.text, je.line, je.column);
		return NULL;
	}
	if (!json_is_object(v)) {
		json_decref(v);
		api_fail(rp, 400, EX_DATAERR, "the body must be a JSON object");
		return NULL;
	}
	return v;
}

/* A query argument as a name (queue, kind, node); -1 when not one. */
int
api_name_arg(const struct cli_http_request *rq, const char *key,
             const char **out, char *err, size_t len)
{
	const char *v = cli_http_arg(rq, key);

	*out = NULL;
	if (!v || !v[0])
		return 0;
	if (!sked_name_valid(v)) {
		snprintf(err, len, "'%s': '%.64s' is not a name", key, v);
		return -1;
	}
	*out = v;
	return 0;
}

int
api_status_value(const char *key, const char *s, int *out, char *err,
                 size_t len)
{
	*out = sked_status_parse(s);
	if (*out >= 0)
		return 0;
	snprintf(err, len,
	         "'%s': '%.32s' is not one of pending, running, succeeded, "
	         "dead, retry, cancelled, blocked",
	         key, s);
	return -1;
}

int
api_count_arg(const struct cli_http_request *rq, const char *key, long long min,
              long long max, long long *out, char *err, size_t len)
{
	const char *v = cli_http_arg(rq, key);
	char *end;

	if (!v)
		return 0;
	errno = 0;
	*out = strtoll(v, &end, 10);
	if (!v[0] || *end || errno || *out < min || *out > max) {
		snprintf(err, len, "'%s' must be an integer from %lld to %lld",
		         key, min, max);
		return -1;
	}
	return 0;
}
