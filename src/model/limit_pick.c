/*
 * limit_pick.c — the pure parts of the limited claim (limited.c): the
 * rate's window record, picking candidates under a per-key limit, and the
 * fair order across concurrency keys with their weights. No SQL and no
 * handle: unit/test_limits calls them directly (limits.h).
 *
 * Layer: the model, below limited.c, which is their one caller in sked.
 */
#include "model/limits.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- pure: the rate window ---- */

/* Parse the next "T:C" of a record at *s; 0 at the end, -1 if malformed. */
static int
next_entry(const char **s, int64_t *t, int64_t *c)
{
	const char *p = *s;
	if (*p == ',')
		p++;
	if (*p == '\0')
		return 0;
	char *e;
	long long tv = strtoll(p, &e, 10);
	if (e == p || *e != ':')
		return -1;
	p = e + 1;
	long long cv = strtoll(p, &e, 10);
	if (e == p || (*e != ',' && *e != '\0') || cv < 0)
		return -1;
	*t = tv;
	*c = cv;
	*s = e;
	return 1;
}

int
sked__rate_used(const char *log, int64_t now_ms, int64_t window_ms, int n_max)
{
	int64_t used = 0, t, c;
	int r;
	const char *s = log ? log : "";
	while ((r = next_entry(&s, &t, &c)) > 0)
		if (t > now_ms - window_ms)
			used += c;
	if (r < 0 || used > n_max)
		return n_max;
	return (int)used;
}

int64_t
sked__rate_last(const char *log)
{
	int64_t t, c, last = INT64_MIN;
	const char *s = log ? log : "";
	while (next_entry(&s, &t, &c) > 0)
		if (t > last)
			last = t;
	return last;
}

void
sked__rate_add(const char *log, int64_t now_ms, int64_t window_ms, int64_t t_ms,
               int k, sked_buf *out)
{
	int64_t t, c;
	int r;
	char num[48];
	const char *s = log ? log : "";
	sked__buf_put(out, "", 0);
	while ((r = next_entry(&s, &t, &c)) > 0) {
		if (t <= now_ms - window_ms)
			continue;
		if (t == t_ms) {
			k += (int)c;
			continue;
		}
		snprintf(num, sizeof num, "%s%" PRId64 ":%" PRId64,
		         out->n ? "," : "", t, c);
		sked__buf_puts(out, num);
	}
	if (k > 0) {
		snprintf(num, sizeof num, "%s%" PRId64 ":%d", out->n ? "," : "",
		         t_ms, k);
		sked__buf_puts(out, num);
	}
}

/* ---- pure: picking under a per-key limit ---- */

int
sked__limits_pick(const char *const *cand_keys, int ncand, int want,
                  int per_key, const char *const *keys, const int *running,
                  int nkeys, int *pick)
{
	/* keys seen: those running, then those picked here */
	int cap = nkeys + ncand;
	const char **seen = malloc(sizeof *seen * (size_t)(cap ? cap : 1));
	int *count = malloc(sizeof *count * (size_t)(cap ? cap : 1));
	int nseen = 0, got = 0;
	if (!seen || !count) {
		free(seen);
		free(count);
		return -1;
	}
	for (int i = 0; i < nkeys; i++) {
		seen[nseen] = keys[i];
		count[nseen++] = running[i];
	}
	for (int i = 0; i < ncand && got < want; i++) {
		const char *k = cand_keys[i];
		if (per_key <= 0 || !k) {
			pick[got++] = i;
			continue;
		}
		int j = 0;
		while (j < nseen && strcmp(seen[j], k) != 0)
			j++;
		if (j == nseen) {
			seen[nseen] = k;
			count[nseen++] = 0;
		}
		if (count[j] >= per_key)
			continue;
		count[j]++;
		pick[got++] = i;
	}
	free(seen);
	free(count);
	return got;
}

/* ---- pure: the fair order ---- */

static int
fair_cmp(const void *a, const void *b)
{
	const sked_fair_cand *x = a, *y = b;
	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	if (x->round != y->round)
		return x->round < y->round ? -1 : 1;
	if (x->wrap != y->wrap)
		return x->wrap < y->wrap ? -1 : 1;
	int k = strcmp(x->key ? x->key : "", y->key ? y->key : "");
	if (k != 0)
		return k;
	if (x->run_at_ms != y->run_at_ms)
		return x->run_at_ms < y->run_at_ms ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int
same_key(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static int
weight_of(const sked_fair_cand *c)
{
	return c->weight > 1 ? c->weight : 1;
}

void
sked__fair_order_turns(sked_fair_cand *c, int n, const char *after, int used)
{
	/* rows come key by key, each key's in claim order: first the place
	 * of a row among its key's rows of its priority (in round) */
	for (int i = 0; i < n; i++)
		c[i].round = i > 0 && same_key(c[i].key, c[i - 1].key) &&
		                             c[i].priority == c[i - 1].priority
		                     ? c[i - 1].round + 1
		                     : 0;
	for (int i = 0; i < n; i++) {
		int w = weight_of(&c[i]), place = c[i].round;
		const char *k = c[i].key ? c[i].key : "";
		int cmp = after ? strcmp(k, after) : 1;
		if (cmp == 0 && used < w) {
			/* the key of the last pick, its turn not over: its
			 * next w - used first, then its later rounds last */
			int left = w - (used > 0 ? used : 0);
			c[i].wrap = place < left ? -1 : 1;
			c[i].round = place < left ? 0 : 1 + (place - left) / w;
			continue;
		}
		c[i].round = place / w;
		c[i].wrap = cmp <= 0;
	}
	if (n > 1)
		qsort(c, (size_t)n, sizeof *c, fair_cmp);
}

void
sked__fair_order(sked_fair_cand *c, int n, const char *after)
{
	sked__fair_order_turns(c, n, after, INT_MAX);
}

int
sked__fair_used(const sked_fair_cand *c, const int *pick, int npick,
                const char *after, int used)
{
	if (npick <= 0)
		return used;
	const char *last = c[pick[npick - 1]].key;
	int run = 0;
	while (run < npick && same_key(c[pick[npick - 1 - run]].key, last))
		run++;
	const char *k = last ? last : "";
	if (run == npick && after && strcmp(k, after) == 0 && used >= 0 &&
	    used < weight_of(&c[pick[npick - 1]]))
		return used + run; /* its turn went on */
	return run;
}
