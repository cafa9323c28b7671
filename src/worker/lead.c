/*
 * worker/lead.c — the leader: which node runs the cluster's chores.
 *
 * Layer: the worker (worker.h), on the model's cluster locks (lock.c).
 * Taking back expired leases, forgetting dead nodes, firing schedules and
 * retention are the cluster's work, not each node's (docs/design.md, "The
 * leader"). One node does them: the holder of the cluster lock
 * LEADER_LOCK, whose fencing token grows with every new holder.
 *
 * The heartbeat thread keeps the lock, on its own connection, so that a
 * claim never delays it:
 *   - the leader extends it every LEAD_TTL/3; the lock lives LEAD_TTL
 *     (lease/3) on the database's clock;
 *   - every other node looks at the lock every lease*2/3 (one read) and
 *     takes it when it is free or expired;
 * so a leader killed or frozen is replaced within LEAD_TTL + lease*2/3,
 * one lease. The leader believes it leads until its last extension's
 * start plus LEAD_TTL less a margin (w->sh.lead_until_ms, monotonic): a
 * frozen leader that wakes up after its lock expired does no chore until
 * its heartbeat has extended the lock again, which fails once another
 * node holds it with a newer token. Each chore is exactly once by its
 * own conditional statement anyway, so the short moments two nodes may
 * both believe they lead cost a wasted statement, never a double fire.
 */
#include "worker/worker.h"

#include <stdatomic.h>
#include <string.h>

#include "util/log.h"

static int64_t
lead_ttl(const sked_worker *w)
{
	return w->o.lease_ms / 3;
}

/* the monotonic ms until which this node leads after an extension or a
 * take that began at began: a quarter of the lock's life short of its
 * end on the database's clock (which started later still) */
static int64_t
lead_until(const sked_worker *w, int64_t began)
{
	return began + lead_ttl(w) - lead_ttl(w) / 4;
}

int
sked__wk_leads(sked_worker *w)
{
	return sked__mono_ms() < atomic_load(&w->sh.lead_until_ms);
}

static void
lost(sked_worker *w, const char *why)
{
	w->beat.leads = 0;
	atomic_store(&w->sh.lead_until_ms, 0);
	sked__log(SKED_LOG_INFO,
	          "worker %s no longer leads the cluster's "
	          "chores: %s",
	          w->node_id, why);
}

void
sked__wk_lead_turn(sked_worker *w, int64_t now)
{
	sked *h = w->beat.h;
	if (!h || now < w->beat.lead_next)
		return;
	int64_t began = sked__mono_ms();
	if (w->beat.leads) {
		int rc = sked_lock_extend(h, LEADER_LOCK, w->node_id,
		                          w->beat.lead_token, lead_ttl(w));
		if (rc == SKED_OK) {
			atomic_store(&w->sh.lead_until_ms,
			             lead_until(w, began));
			w->beat.lead_next = began + lead_ttl(w) / 3;
			return;
		}
		if (rc == SKED_ELOST) {
			lost(w, sked_errmsg(h));
			w->beat.lead_next = 0; /* look at once */
			return;
		}
		/* the database did not answer: it leads until lead_until
		 * says otherwise; try again soon */
		w->beat.lead_next = began + lead_ttl(w) / 6 + 1;
		return;
	}
	w->beat.lead_next = began + w->o.lease_ms * 2 / 3;
	/* one read while another node holds it */
	sked_lock_state st;
	int rc = sked_lock_get(h, LEADER_LOCK, &st);
	if (rc == SKED_OK && st.held && strcmp(st.owner, w->node_id) != 0)
		return;
	if (rc != SKED_OK && rc != SKED_ENOTFOUND)
		return;
	int64_t token = 0;
	rc = sked_lock_acquire(h, LEADER_LOCK, w->node_id, lead_ttl(w), NULL,
	                       &token);
	if (rc != SKED_OK)
		return;
	w->beat.leads = 1;
	w->beat.lead_token = token;
	atomic_store(&w->sh.lead_token, token);
	atomic_store(&w->sh.lead_until_ms, lead_until(w, began));
	w->beat.lead_next = began + lead_ttl(w) / 3;
	sked__log(SKED_LOG_INFO,
	          "worker %s leads the cluster's chores (leader lock %s, "
	          "token %lld): taking back expired leases, firing "
	          "schedules, forgetting dead nodes%s",
	          w->node_id, LEADER_LOCK, (long long)token,
	          w->keep_ms[0] > 0 || w->keep_ms[1] > 0 || w->keep_ms[2] > 0
	                  ? ", retention"
	                  : "");
	sked__wk_ring(w); /* the loop starts on the chores at once */
}

void
sked__wk_lead_end(sked_worker *w)
{
	if (!w->beat.leads || !w->beat.h)
		return;
	atomic_store(&w->sh.lead_until_ms, 0);
	w->beat.leads = 0;
	/* another node takes over at its next look, not a lock's life later */
	if (sked_lock_release(w->beat.h, LEADER_LOCK, w->node_id,
	                      w->beat.lead_token, NULL) == SKED_OK)
		sked__log(SKED_LOG_INFO,
		          "worker %s gave up leading the cluster's chores",
		          w->node_id);
}
