/*
 * worker/hooks.c — webhooks (on_end, docs/operations.md "Webhooks"): the
 * rules a worker is given (sked_worker_hook) and the leader's chore that
 * turns task ends into delivery tasks (model/hooks.c). The rules' reads
 * and the signature a delivery carries are hook_rules.c's, below the
 * HTTP handler code that uses them.
 *
 * Layer: the worker (worker.h), on the model (hooks.h) for the chore;
 * the deliveries themselves are run by the HTTP handler code (curl.c)
 * with the payload's URL and this file's signature. The secret is read
 * from SKED_HOOK_SECRET when a delivery is signed, never copied, logged
 * or put in a message.
 */
#include "worker/worker.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/hooks.h"
#include "util/log.h"

/* ends read per turn at most (a page may pass it by one millisecond) */
#define HOOK_PAGE 1000
/* full pages read in one chore turn at most */
#define HOOK_PAGES 10
/* a failing turn warns at most this often */
#define HOOK_WARN_MS 60000

SKED_API int
sked_worker_hook(sked_worker *w, const char *kind, const char *queue,
                 const char *url)
{
	if (!w)
		return SKED_EINVAL;
	if ((kind == NULL) == (queue == NULL) || !url)
		return sked__fail(w->h, SKED_EINVAL,
		                  "an on_end needs a URL and either a kind "
		                  "or a queue");
	if (kind && sked__check_name(w->h, "kind", kind) != SKED_OK)
		return SKED_EINVAL;
	if (queue && sked__check_name(w->h, "queue", queue) != SKED_OK)
		return SKED_EINVAL;
	if ((strncmp(url, "http://", 7) != 0 || !url[7]) &&
	    (strncmp(url, "https://", 8) != 0 || !url[8]))
		return sked__fail(w->h, SKED_EINVAL,
		                  "on_end must be an http:// or https:// URL");
	for (const char *c = url; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f)
			return sked__fail(w->h, SKED_EINVAL,
			                  "on_end must be a URL without spaces "
			                  "or control characters");
	const char *secret = getenv("SKED_HOOK_SECRET");
	if (!secret || !*secret)
		return sked__fail(w->h, SKED_EINVAL,
		                  "on_end needs SKED_HOOK_SECRET in the "
		                  "worker's environment (the key that signs "
		                  "each delivery)");
	if (sked__wk_http_init() != SKED_OK)
		return sked__fail(w->h, SKED_EUNSUPPORTED,
		                  "this build of sked has no HTTP handlers "
		                  "(built without libcurl): on_end cannot be "
		                  "delivered");
	if (w->nhooks == 0) {
		/* the first rule: this worker delivers (kind sked.hook) */
		int have = 0;
		for (int i = 0; i < w->nhandlers; i++)
			have |= strcmp(w->handlers[i].kind, SKED_HOOK_KIND) ==
			        0;
		if (!have) {
			int rc = sked_worker_handle_http(w, SKED_HOOK_KIND,
			                                 "http://on_end", 0);
			if (rc != SKED_OK)
				return rc;
			handler *x = &w->handlers[w->nhandlers - 1];
			free(x->url);
			x->url = NULL;
			x->hook = 1;
		}
	}
	sked_hook_rule *v = realloc(w->hooks, (w->nhooks + 1) * sizeof *v);
	if (!v)
		return sked__fail(w->h, SKED_ENOMEM, "out of memory");
	w->hooks = v;
	sked_hook_rule *r = &v[w->nhooks];
	r->kind = kind ? strdup(kind) : NULL;
	r->queue = queue ? strdup(queue) : NULL;
	r->url = strdup(url);
	if ((kind && !r->kind) || (queue && !r->queue) || !r->url) {
		free(r->kind);
		free(r->queue);
		free(r->url);
		return sked__fail(w->h, SKED_ENOMEM, "out of memory");
	}
	w->nhooks++;
	return SKED_OK;
}

int
sked__wk_hooks(sked_worker *w, int64_t now)
{
	if (w->nhooks == 0)
		return SKED_OK;
	int made = 0, rc = SKED_OK, more = 1;
	/* a backlog of ends: a few full pages in one go, not one a poll */
	for (int page = 0; page < HOOK_PAGES && more && rc == SKED_OK; page++) {
		/* the process too: a node id reused by a second process, or
		 * by this one's next run, never names another's turn */
		char turn[SKED_MAX_NAME + 64];
		snprintf(turn, sizeof turn, "%s:%ld:%" PRIu64, w->node_id,
		         (long)getpid(), ++w->hook_turns);
		int got = 0;
		rc = sked__hooks_turn(w->h, w->hooks, w->nhooks, turn,
		                      HOOK_PAGE, &got, &more);
		made += got;
	}
	if (rc != SKED_OK &&
	    (w->hook_warned == 0 || now - w->hook_warned >= HOOK_WARN_MS)) {
		/* a chore's failure is a debug line; this one would hold
		 * every delivery back unseen (a missing GRANT, say) */
		w->hook_warned = now;
		sked__log(SKED_LOG_WARN,
		          "webhooks: cannot enqueue deliveries (they wait): %s",
		          sked_errmsg(w->h));
	}
	if (made > 0) {
		sked__log(SKED_LOG_DEBUG, "webhooks: %d deliveries enqueued",
		          made);
		sked__wk_ring(w); /* run them without waiting for a poll */
	}
	return rc;
}
