/*
 * wake.c — sending wake-ups (wake.h).
 *
 * Layer: the model. The dialect's notify statement takes the payload as
 * its one parameter (PostgreSQL: SELECT pg_notify('{p}task', ?1)).
 */
#include "model/wake.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int
sked__wake_send(sked *h, const sked_wake *w)
{
	if (!h->notify_sql)
		return SKED_OK;
	char buf[SKED_WAKE_MAX + 1];
	if (sked__wake_format(buf, sizeof buf, w) < 0)
		return SKED_EINVAL;
	sked_val p = SKED_TEXTV(buf);
	return sked__qdyn(h, h->notify_sql, &p, 1, NULL);
}

int
sked__wake(sked *h, uint32_t r, int64_t n, const char *queue, const char *kind)
{
	if (!h->notify_sql)
		return SKED_OK;
	sked_wake w = {.r = r, .n = n < 1 ? 1 : n};
	if (queue && strlen(queue) < sizeof w.queue)
		strcpy(w.queue, queue);
	if (kind && strlen(kind) < sizeof w.kind)
		strcpy(w.kind, kind);
	return sked__wake_send(h, &w);
}

uint32_t
sked__wake_r(void)
{
	/* a counter stepped by an odd constant from a seed of the clock
	 * and the process: different across processes, spread within one */
	static atomic_uint_fast32_t next;
	uint32_t v = (uint32_t)atomic_fetch_add(&next, 0x9e3779b9u);
	if (v == 0) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		v = (uint32_t)ts.tv_nsec ^ ((uint32_t)getpid() << 16);
		atomic_fetch_add(&next, v);
	}
	return v ^ (v >> 15);
}
