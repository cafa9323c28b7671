/*
 * worker/wakes.c — which wake-ups are for this worker (docs/design.md,
 * "Wake-ups").
 *
 * Layer: the worker (worker.h), on the model's wake.c and the payload of
 * util/wake.h. The loop's connection LISTENs on {p}task; every
 * notification reaches every listening worker, and this file decides
 * which of them make this one claim:
 *   - a payload that is not sked's (an older sked, a NOTIFY by hand), or
 *     notifications lost with a statement's reply: claim, as before;
 *   - a wake-up for a queue or kind this worker does not serve: no;
 *   - else the window: of the live workers that serve what this one
 *     serves (its group; the heartbeat reads its rank and their number),
 *     the n + 1 from rank r on claim. The first of the window passes it
 *     on (the next window, one hop further) when it has no free slot.
 * The leader calls for help when its claims keep coming back full (a
 * backlog no notification told of: delayed tasks, retries): a wake-up
 * for 3 workers, doubled every poll while it lasts.
 */
#include "worker/worker.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "model/wake.h"
#include "util/log.h"

static int
serves(const sked_worker *w, const sked_wake *k)
{
	if (k->kind[0] && w->kinds) {
		char pat[SKED_MAX_NAME + 3];
		snprintf(pat, sizeof pat, ",%s,", k->kind);
		if (!strstr(w->kinds, pat))
			return 0;
	}
	if (k->queue[0] && w->nqueues) {
		for (int i = 0; i < w->nqueues; i++)
			if (strcmp(w->queues[i].name, k->queue) == 0)
				return 1;
		return 0;
	}
	return 1;
}

typedef struct {
	sked_worker *w;
	wk_heard *out;
	int room;
} hearing;

static void
heard_one(void *arg, const char *payload)
{
	hearing *g = arg;
	wk_heard *out = g->out;
	sked_wake k;
	out->heard++;
	if (!payload || !sked__wake_parse(payload, &k)) {
		out->mine = 1;
		return;
	}
	if (!serves(g->w, &k))
		return;
	int m = atomic_load(&g->w->sh.ranked_of);
	int place = sked__wake_place(&k, atomic_load(&g->w->sh.rank), m);
	if (place < 0)
		return;
	if (g->room > 0) {
		out->mine = 1;
		return;
	}
	out->missed = 1;
	sked_wake next;
	if (place == 0 && out->npass < WK_PASS_MAX &&
	    sked__wake_next(&k, m, &next))
		out->pass[out->npass++] = next;
}

void
sked__wk_hear(sked_worker *w, int room, wk_heard *out)
{
	memset(out, 0, sizeof *out);
	hearing g = {w, out, room};
	sked__db_drain_notify(w->h->db, heard_one, &g);
}

void
sked__wk_pass_on(sked_worker *w, const wk_heard *heard)
{
	for (int i = 0; i < heard->npass; i++)
		if (sked__wake_send(w->h, &heard->pass[i]) != SKED_OK) {
			sked__log(SKED_LOG_DEBUG,
			          "cannot pass a wake-up on: %s",
			          sked_errmsg(w->h));
			return;
		}
}

int
sked__wk_help(sked_worker *w, int64_t now)
{
	(void)now;
	if (!w->h->listening || w->o.concurrency < 2)
		return SKED_OK;
	pthread_mutex_lock(&w->sh.mu);
	int backlog = w->sh.backlog;
	pthread_mutex_unlock(&w->sh.mu);
	if (!backlog) {
		w->sh.help_n = 0;
		return SKED_OK;
	}
	w->sh.help_n = w->sh.help_n ? w->sh.help_n * 2 : 2;
	if (w->sh.help_n > WK_HELP_MAX)
		w->sh.help_n = WK_HELP_MAX;
	/* best effort: the others' safety poll is the floor */
	if (sked__wake(w->h, sked__wake_r(), w->sh.help_n, NULL, NULL) !=
	    SKED_OK)
		sked__log(SKED_LOG_DEBUG, "cannot call for help: %s",
		          sked_errmsg(w->h));
	return SKED_OK;
}
