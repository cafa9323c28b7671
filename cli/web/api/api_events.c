/*
 * api_events.c — GET /api/events?after=POS&kind=K&queue=Q&limit=N
 * &settle=D&wait=D: a page of the events feed (sked_events_read) and the
 * position to read on from; with wait, a long-poll that answers as soon
 * as an event comes, or after D (cut to API_WAIT_MAX_MS) with none
 * (docs/api.md, "Events").
 *
 * Layer: the command-line program, a client of <sked.h> only; below
 * api_serve.c's router, beside api_wait.c.
 *
 * A long-poll never holds the API's handle while it sleeps: it takes
 * the handle (under its mutex) for one read, lets it go, and sleeps with
 * a back-off from 100 ms to 1 s. At most API_EVENT_WAITS requests sleep
 * at once (the HTTP server has 256 connection threads; together with
 * api_wait.c's API_WAITS they can never take them all): one more is
 * answered at once, like a wait of 0.
 */
#include "web/api/api_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#define API_EVENT_WAITS 32
#define EVENTS_DFLT     100
#define NAP_MIN_MS      100
#define NAP_MAX_MS      1000

static pthread_mutex_t parked_mu = PTHREAD_MUTEX_INITIALIZER;
static int parked;

static int
park(int on)
{
	int ok = 1;
	pthread_mutex_lock(&parked_mu);
	if (on && parked >= API_EVENT_WAITS)
		ok = 0;
	else
		parked += on ? 1 : -1;
	pthread_mutex_unlock(&parked_mu);
	return ok;
}

void
api_get_events(struct cli_api *a, const struct cli_http_request *rq,
               struct cli_http_reply *rp)
{
	char err[160] = "";
	sked_event_filter f = {0};
	long long limit = EVENTS_DFLT;
	int64_t after = 0, wait = 0;
	const char *s;

	if (api_name_arg(rq, "kind", &f.kind, err, sizeof err) != 0 ||
	    api_name_arg(rq, "queue", &f.queue, err, sizeof err) != 0 ||
	    api_count_arg(rq, "limit", 1, SKED_EVENTS_MAX, &limit, err,
	                  sizeof err) != 0)
		return api_fail(rp, 400, EX_USAGE, "%s", err);
	if ((s = cli_http_arg(rq, "after")) && strcmp(s, "now") == 0) {
		after = -1;
	} else if (s) {
		long long v = 0;
		if (api_count_arg(rq, "after", 0, INT64_MAX, &v, err,
		                  sizeof err) != 0)
			return api_fail(
			        rp, 400, EX_USAGE,
			        "'after' must be a position (an event's "
			        "pos or a page's next) or now");
		after = v;
	}
	if ((s = cli_http_arg(rq, "settle")) &&
	    (api_duration("settle", s, &f.settle_ms, err, sizeof err) != 0 ||
	     f.settle_ms <= 0))
		return api_fail(rp, 400, EX_USAGE, "%s",
		                f.settle_ms <= 0 && !err[0]
		                        ? "'settle' must be a duration > 0"
		                        : err);
	if ((s = cli_http_arg(rq, "wait")) &&
	    api_duration("wait", s, &wait, err, sizeof err) != 0)
		return api_fail(rp, 400, EX_USAGE, "%s", err);
	if (wait > API_WAIT_MAX_MS)
		wait = API_WAIT_MAX_MS;

	int parked_here = 0;
	int64_t end = cli_mono_ms() + wait, nap = NAP_MIN_MS;
	for (;;) {
		sked_event *e = NULL;
		size_t n = 0;
		int64_t next = after;
		pthread_mutex_lock(a->mu);
		int rc = sked_events_read(a->h, after, &f, (size_t)limit, &e,
		                          &n, &next);
		if (rc != SKED_OK) {
			api_fail_rc(a, rp, rc, "events");
			pthread_mutex_unlock(a->mu);
			break;
		}
		pthread_mutex_unlock(a->mu);
		int64_t left = end - cli_mono_ms();
		/* "now" is read once: later reads go on from there */
		after = next;
		if (n > 0 || left <= 0 ||
		    (!parked_here && !(parked_here = park(1)))) {
			char pos[24];
			snprintf(pos, sizeof pos, "%" PRId64, next);
			api_reply(rp, 200,
			          json_pack("{s:o,s:s}", "events",
			                    cli_events_json(e, n), "next",
			                    pos));
			sked_events_free(e, n);
			break;
		}
		sked_events_free(e, n);
		int64_t ms = left < nap ? left : nap;
		struct timespec ts = {.tv_sec = ms / 1000,
		                      .tv_nsec = (ms % 1000) * 1000000};
		nanosleep(&ts, NULL);
		nap = nap * 2 > NAP_MAX_MS ? NAP_MAX_MS : nap * 2;
	}
	if (parked_here)
		park(0);
}
