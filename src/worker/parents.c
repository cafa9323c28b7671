/*
 * worker/parents.c — results: what a handler leaves, and what a task that
 * waited for others is told of its parents (docs/workflows.md).
 *
 * Layer: the worker (worker.h). The claiming thread reads the parents of
 * the tasks of a claim batch that had parents (the claim's open_parents
 * below 0) before their jobs reach the pool; a batch without such tasks
 * costs nothing. Bounded (issue 39, docs/security.md): a task has at
 * most SKED_MAX_PARENTS parents of at most SKED_RESULT_MAX bytes each.
 * One statement reads the small results (at most 1024 characters, 4 KiB)
 * of up to SMALL_GROUP children, at most 32 MiB; a child with a larger
 * parent's result is read again alone, at most 64 MiB a statement;
 * what a child is handed is at most SKED_PARENTS_RESULTS_MAX bytes of
 * JSON, the results past it (in id order) left out and marked "cut". The pool's
 * handlers read them through the sked_job_parent* calls, the pipe and
 * program handlers' JSON, or HTTP's header and body.
 */
#include "worker/worker.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/log.h"

void
sked__wk_parents_free(sked_parents *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		free(p->kind[i]);
		free(p->result[i]);
	}
	free(p->id);
	free(p->kind);
	free(p->result);
	free(p->json);
	free(p->ids);
	free(p->error);
	free(p);
}

/* The bytes s takes in JSON with every non-ASCII character escaped
 * (json_dumps's JSON_ENSURE_ASCII): an upper bound, quotes included. */
static size_t
json_len(const char *s)
{
	size_t n = 2;
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			n += 2;
		else if (*c < 0x20)
			n += 6; /* backslash, u and 4 hex digits */
		else if (*c < 0x80)
			n += 1;
		else if (*c >= 0xf0)
			n += 12 -
			     3; /* a surrogate pair; the 3 bytes to come add 1 */
		else if (*c >= 0xc0)
			n += 6 - 1; /* one escape; each continuation adds 1 */
		else
			n += 1;
	}
	return n;
}

/* The JSON and the id list of p, from its arrays; cut[i]: parent i's
 * result was left out for the bound. */
static int
parents_text(sked_parents *p, const unsigned char *cut)
{
	json_t *a = json_array();
	sked_buf ids = {0};
	for (size_t i = 0; a && i < p->n; i++) {
		/* a result that is JSON goes on as that value, text as a
		 * string (docs/workflows.md) */
		json_t *r = p->result[i] ? json_loads(p->result[i],
		                                      JSON_DECODE_ANY, NULL)
		                         : NULL;
		if (p->result[i] && !r)
			r = json_string(p->result[i]);
		json_t *o = json_pack("{s:I, s:s?, s:o?}", "id",
		                      (json_int_t)p->id[i], "kind", p->kind[i],
		                      "result", r);
		if (o && cut && cut[i])
			json_object_set_new(o, "cut", json_true());
		if (!o || json_array_append_new(a, o) != 0) {
			json_decref(a);
			a = NULL;
		}
		char num[32];
		snprintf(num, sizeof num, "%s%lld", i ? "," : "",
		         (long long)p->id[i]);
		sked__buf_puts(&ids, num);
	}
	p->json = a ? json_dumps(a, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
	json_decref(a);
	p->ids = ids.oom ? NULL : ids.p;
	if (ids.oom)
		free(ids.p);
	if (!p->ids)
		p->ids = strdup("");
	return p->json && p->ids ? SKED_OK : SKED_ENOMEM;
}

static sked_parents *
parents_error(const char *msg)
{
	sked_parents *p = calloc(1, sizeof *p);
	if (p)
		p->error = strdup(msg);
	return p;
}

/* children whose parents' small results one statement reads */
#define SMALL_GROUP 8

/* One chunk of children (ids k of them): add their rows to out. With
 * big (k entries), the small results' statement: a child with a longer
 * result is marked there and left out of out, to be read alone. */
static int
read_chunk(sked *h, const int64_t *ids, const int *at, int k,
           sked_parents **out, unsigned char *big)
{
	sked_val *v = calloc((size_t)k, sizeof *v);
	sked_buf sql = {0};
	sked_res r = {0};
	if (!v)
		return SKED_ENOMEM;
	for (int i = 0; i < k; i++)
		v[i] = SKED_INTV(ids[i]);
	sked__sql_fill(
	        &sql,
	        h->sql[big ? SKED_SQL_DEP_RESULTS_SMALL : SKED_SQL_DEP_RESULTS],
	        1, k);
	int rc = sql.oom ? SKED_ENOMEM : sked__qdyn(h, sql.p, v, k, &r);
	free(sql.p);
	free(v);
	for (int i = 0; rc == SKED_OK && big && i < k; i++)
		for (int row = 0; row < r.nrows; row++)
			if (sked__res_int(&r, row, 0) == ids[i] &&
			    sked__res_int(&r, row, 4) != 0)
				big[i] = 1;
	for (int i = 0; rc == SKED_OK && i < k; i++) {
		if (big && big[i])
			continue;
		sked_parents *p = calloc(1, sizeof *p);
		if (!p) {
			rc = SKED_ENOMEM;
			break;
		}
		out[at[i]] = p;
		size_t m = 0;
		for (int row = 0; row < r.nrows; row++)
			m += sked__res_int(&r, row, 0) == ids[i];
		p->id = calloc(m + 1, sizeof *p->id);
		p->kind = calloc(m + 1, sizeof *p->kind);
		p->result = calloc(m + 1, sizeof *p->result);
		if (!p->id || !p->kind || !p->result) {
			rc = SKED_ENOMEM;
			break;
		}
		int oom = 0;
		size_t budget = SKED_PARENTS_RESULTS_MAX, ncut = 0;
		unsigned char *cut = calloc(m + 1, 1);
		if (!cut) {
			rc = SKED_ENOMEM;
			break;
		}
		for (int row = 0; row < r.nrows; row++) {
			if (sked__res_int(&r, row, 0) != ids[i])
				continue;
			p->id[p->n] = sked__res_int(&r, row, 1);
			p->kind[p->n] = sked__res_dup(&r, row, 2, &oom);
			const char *res = sked__res_text(&r, row, 3);
			size_t need = res ? json_len(res) : 0;
			if (res && need > budget) {
				cut[p->n] = 1; /* over the bound: left out */
				ncut++;
			} else if (res) {
				budget -= need;
				p->result[p->n] =
				        sked__res_dup(&r, row, 3, &oom);
			}
			p->n++;
		}
		if (ncut)
			sked__log(SKED_LOG_WARN,
			          "task %lld: %zu of its %zu parents' results "
			          "left out: together they pass %d bytes "
			          "(SKED_PARENTS_RESULTS_MAX)",
			          (long long)ids[i], ncut, p->n,
			          SKED_PARENTS_RESULTS_MAX);
		if (oom || parents_text(p, cut) != SKED_OK)
			rc = SKED_ENOMEM;
		free(cut);
	}
	sked__res_clear(&r);
	return rc;
}

void
sked__wk_parents_read(sked *h, const sked_claimed *c, int n,
                      sked_parents ***out)
{
	*out = NULL;
	int k = 0;
	for (int i = 0; i < n; i++)
		k += c[i].has_parents;
	if (k == 0)
		return;
	sked_parents **p = calloc((size_t)n, sizeof *p);
	int64_t *ids = malloc(sizeof *ids * (size_t)k);
	int *at = malloc(sizeof *at * (size_t)k);
	int rc = p && ids && at ? SKED_OK : SKED_ENOMEM;
	k = 0;
	for (int i = 0; rc == SKED_OK && i < n; i++)
		if (c[i].has_parents) {
			ids[k] = c[i].id;
			at[k++] = i;
		}
	/* the small results a group at a time, then each child with a
	 * longer one alone */
	unsigned char *big = rc == SKED_OK ? calloc((size_t)k, 1) : NULL;
	if (rc == SKED_OK && !big)
		rc = SKED_ENOMEM;
	for (int from = 0; rc == SKED_OK && from < k; from += SMALL_GROUP)
		rc = read_chunk(h, ids + from, at + from,
		                k - from < SMALL_GROUP ? k - from : SMALL_GROUP,
		                p, big + from);
	for (int i = 0; rc == SKED_OK && i < k; i++)
		if (big[i])
			rc = read_chunk(h, ids + i, at + i, 1, p, NULL);
	free(big);
	if (rc != SKED_OK && p) {
		char msg[600];
		const char *why =
		        rc == SKED_ENOMEM ? "out of memory" : sked_errmsg(h);
		/* a failure the handle did not describe still says what */
		if (!why || !*why || strcmp(why, "no error") == 0)
			why = sked_strerror(rc);
		snprintf(msg, sizeof msg,
		         "cannot read the results of its parents: %s", why);
		sked__log(SKED_LOG_WARN, "%s (%d claimed task(s))", msg, k);
		for (int i = 0; i < n; i++) {
			sked__wk_parents_free(p[i]);
			p[i] = c[i].has_parents ? parents_error(msg) : NULL;
		}
	}
	free(ids);
	free(at);
	*out = p;
}

int
sked__wk_set_result(sked_job *j, const char *s, size_t len)
{
	free(j->result);
	j->result = NULL;
	j->result_len = 0;
	j->result_over = 0;
	if (!s)
		return SKED_OK;
	/* one trailing newline (echo's) is not part of a result */
	if (len > 0 && s[len - 1] == '\n')
		len -= len > 1 && s[len - 2] == '\r' ? 2 : 1;
	if (len > SKED_RESULT_MAX) {
		j->result_over = len;
		return SKED_OK;
	}
	if (!(j->result = malloc(len + 1)))
		return SKED_ENOMEM;
	memcpy(j->result, s, len);
	j->result[len] = '\0';
	j->result_len = len;
	return SKED_OK;
}

SKED_API int
sked_job_set_result(sked_job *j, const char *text, size_t len)
{
	if (!j)
		return SKED_EINVAL;
	return sked__wk_set_result(j, text, len);
}

SKED_API size_t
sked_job_parent_count(const sked_job *j)
{
	return j && j->parents ? j->parents->n : 0;
}

SKED_API int
sked_job_parent(const sked_job *j, size_t i, int64_t *id, const char **kind,
                const char **result)
{
	if (!j || !j->parents || i >= j->parents->n)
		return SKED_EINVAL;
	if (id)
		*id = j->parents->id[i];
	if (kind)
		*kind = j->parents->kind[i];
	if (result)
		*result = j->parents->result[i];
	return SKED_OK;
}

SKED_API const char *
sked_job_parents_json(const sked_job *j)
{
	return j && j->parents && j->parents->json ? j->parents->json : "[]";
}
