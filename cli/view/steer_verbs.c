/*
 * steer_verbs.c — cancel and retry as verbs: which statuses each may act
 * on, their words, and steering what a filter matches (count first,
 * then the change). `sked cancel`/`sked retry` (cmd/cmd_steer.c), the
 * JSON API and the dashboard all steer through these.
 *
 * Layer: cli/view/, what more than one command or page shows; a client
 * of <sked.h> only. Which states allow which move is the library's.
 */
#include "view/view.h"

#include <stdio.h>

const struct cli_verb cli_cancel_verb = {
        "cancel",
        "cancelled",
        "cancelled",
        sked_cancel,
        sked_cancel_ids,
        sked_cancel_where,
        {SKED_PENDING, SKED_RETRY, SKED_RUNNING, -1},
        {SKED_PENDING, SKED_RETRY, -1, -1},
};

const struct cli_verb cli_retry_verb = {
        "retry",
        "retried",
        "will run again",
        sked_retry,
        sked_retry_ids,
        sked_retry_where,
        {SKED_DEAD, SKED_CANCELLED, SKED_RETRY, -1},
        {SKED_DEAD, -1, -1, -1},
};

int
cli_verb_allows(const struct cli_verb *v, int status)
{
	for (int i = 0; i < 4 && v->allowed[i] >= 0; i++)
		if (v->allowed[i] == status)
			return 1;
	return 0;
}

void
cli_status_words(const int *st, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = '\0';
	for (int i = 0; i < 4 && st[i] >= 0 && off < len; i++) {
		int last = i == 3 || st[i + 1] < 0;
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
		                        i == 0 ? ""
		                        : last ? " or "
		                               : ", ",
		                        sked_status_name(st[i]));
	}
}

int
cli_steer_where(sked *h, const struct cli_verb *v, sked_list_filter *f,
                const int *st, int apply, int64_t *matched, int64_t *changed,
                int *at)
{
	int64_t n;
	int rc;

	*matched = *changed = 0;
	*at = -1;
	for (int i = 0; i < 4 && st[i] >= 0; i++) {
		f->status = st[i];
		if ((rc = sked_task_count(h, f, &n)) != SKED_OK)
			return rc;
		*matched += n;
	}
	for (int i = 0; apply && *matched > 0 && i < 4 && st[i] >= 0; i++) {
		f->status = st[i];
		n = 0;
		rc = v->where(h, f, &n);
		*changed += n;
		if (rc != SKED_OK) {
			*at = st[i];
			return rc;
		}
	}
	return SKED_OK;
}

static json_t *
id_array(const int64_t *ids, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, json_integer((json_int_t)ids[i]));
	return a;
}

int
cli_steer_one(sked *h, const struct cli_verb *v, int64_t id, int with_deps,
              json_t **out)
{
	int64_t *ids = NULL;
	size_t n = 0;
	sked_task *t = NULL;
	int rc;

	*out = NULL;
	if (v == &cli_cancel_verb)
		rc = sked_cancel_graph(h, id, &ids, &n);
	else if (with_deps)
		rc = sked_retry_graph(h, id, &ids, &n);
	else
		rc = v->one(h, id);
	if (rc != SKED_OK)
		return rc;
	*out = json_pack("{s:I, s:s}", "id", (json_int_t)id, "result", v->done);
	if (v == &cli_cancel_verb) {
		json_object_set_new(*out, "cancelled_with", id_array(ids, n));
	} else {
		/* retried: pending, or blocked again while a parent has not
		 * succeeded (the retry never runs it early) */
		if (sked_task_get(h, id, &t) == SKED_OK)
			json_object_set_new(
			        *out, "status",
			        json_string(sked_status_name(t->status)));
		sked_tasks_free(t, t ? 1 : 0);
		if (with_deps)
			json_object_set_new(*out, "retried_with",
			                    id_array(n > 0 ? ids + 1 : ids,
			                             n > 0 ? n - 1 : 0));
	}
	free(ids);
	return SKED_OK;
}
