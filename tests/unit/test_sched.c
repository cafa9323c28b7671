/*
 * test_sched.c — schedules on real SQLite files: fires claimed exactly
 * once by racing handles, the misfire and overlap policies, pause and
 * resume, and replacing a definition.
 *
 * Layer: tests. Puts a schedule's next fire in the past with plain SQL on
 * a second handle (what a stopped cluster looks like), then ticks with
 * sked_schedule_tick as a worker does. The worker loop's use of the tick
 * is covered by tests/integration/t_cron_*.sh.
 */
#include "model/sched.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "sqlite_fixture.h"

static char url[512];

static void
new_db(void)
{
	fixture_url("sched", url, sizeof url);
}

static sked *
open_db(void)
{
	return fixture_open(url, NULL);
}

/* Run SQL (a template: {p} is the prefix) with integer/text params. */
static int64_t
sql1(sked *h, const char *tmpl, const sked_val *p, int np)
{
	char *sql = sked__dialect_expand(h->dialect, h->prefix, tmpl);
	sked_res r = {0};
	int rc = sked__qdyn(h, sql, p, np, &r);
	free(sql);
	if (rc != SKED_OK)
		fail_msg("%s: %s", tmpl, sked__db_err(h->db)->msg);
	int64_t v = r.nrows > 0 ? sked__res_int(&r, 0, 0) : -1;
	sked__res_clear(&r);
	return v;
}

static int64_t
db_now(sked *h)
{
	int64_t now = 0;
	assert_int_equal(sked_now(h, &now), SKED_OK);
	return now;
}

static void
set_next(sked *h, const char *name, int64_t ms)
{
	sked_val p[2] = {SKED_TEXTV(name), SKED_INTV(ms)};
	sql1(h, "UPDATE {p}schedule SET next_fire = ?2 WHERE name = ?1", p, 2);
}

static int64_t
ntasks(sked *h, const char *name)
{
	sked_val p = SKED_TEXTV(name);
	return sql1(h, "SELECT COUNT(*) FROM {p}task WHERE schedule_name = ?1",
	            &p, 1);
}

static int64_t
next_fire(sked *h, const char *name)
{
	sked_val p = SKED_TEXTV(name);
	return sql1(h, "SELECT next_fire FROM {p}schedule WHERE name = ?1", &p,
	            1);
}

static void
put(sked *h, const char *name, const char *expr, int misfire, int overlap)
{
	sked_schedule_opts o = {.misfire = misfire, .overlap = overlap};
	if (sked_schedule_put(h, name, expr, "job", &o, NULL) != SKED_OK)
		fail_msg("put %s: %s", name, sked_errmsg(h));
}

static int
tick(sked *h)
{
	int fired = -1;
	if (sked_schedule_tick(h, &fired, NULL) != SKED_OK)
		fail_msg("tick: %s", sked_errmsg(h));
	return fired;
}

/* ---- definitions ---- */

static void
put_checks_and_first_fire_follows_now(void **state)
{
	(void)state;
	new_db();
	sked *h = open_db();
	assert_int_equal(
	        sked_schedule_put(h, "s", "61 * * * *", "job", NULL, NULL),
	        SKED_ECRON);
	assert_non_null(strstr(sked_errmsg(h), "minute"));
	sked_schedule_opts o = {.tz = "Mars/Base"};
	assert_int_equal(
	        sked_schedule_put(h, "s", "* * * * *", "job", &o, NULL),
	        SKED_ETZ);
	assert_int_equal(sked_schedule_put(h, "bad name", "* * * * *", "job",
	                                   NULL, NULL),
	                 SKED_EINVAL);
	o = (sked_schedule_opts){.misfire = 7};
	assert_int_equal(
	        sked_schedule_put(h, "s", "* * * * *", "job", &o, NULL),
	        SKED_EINVAL);
	assert_int_equal(ntasks(h, "s"), 0);

	int64_t before = db_now(h);
	int created = 0;
	o = (sked_schedule_opts){.tz = "Europe/Berlin"};
	assert_int_equal(
	        sked_schedule_put(h, "s", "30 7 * * *", "job", &o, &created),
	        SKED_OK);
	assert_int_equal(created, 1);
	int64_t nf = next_fire(h, "s");
	assert_true(nf > before);
	assert_true(nf - before <= 24 * 3600 * 1000LL + 3600 * 1000LL);
	/* 07:30 in Berlin is 05:30 or 06:30 UTC */
	int64_t tod = (nf / 1000) % 86400;
	assert_true(tod == 5 * 3600 + 1800 || tod == 6 * 3600 + 1800);

	sked_schedule *s = NULL;
	size_t n = 0;
	assert_int_equal(sked_schedule_list(h, &s, &n), SKED_OK);
	assert_int_equal(n, 1);
	assert_string_equal(s[0].tz, "Europe/Berlin");
	assert_int_equal(s[0].next_fire_ms, nf);
	assert_int_equal(s[0].misfire, SKED_MISFIRE_FIRE_ONCE);
	sked_schedules_free(s, n);

	assert_int_equal(sked_schedule_remove(h, "nosuch"), SKED_ENOTFOUND);
	assert_int_equal(sked_schedule_pause(h, "nosuch"), SKED_ENOTFOUND);
	assert_int_equal(sked_schedule_remove(h, "s"), SKED_OK);
	assert_int_equal(sked_schedule_remove(h, "s"), SKED_ENOTFOUND);
	sked_close(h);
}

/* A worker re-declaring its schedules at start must not wipe a missed
 * fire; a new expression starts over from now. */
static void
replace_keeps_pending_fire_unless_expression_changes(void **state)
{
	(void)state;
	new_db();
	sked *h = open_db();
	put(h, "r", "* * * * *", 0, 0);
	int64_t past = (db_now(h) / 60000 - 5) * 60000;
	set_next(h, "r", past);
	sked_val p = SKED_TEXTV("r");
	int64_t v0 = sql1(h, "SELECT version FROM {p}schedule WHERE name = ?1",
	                  &p, 1);
	put(h, "r", "* * * * *", 0, 0); /* identical: writes nothing */
	assert_int_equal(sql1(h,
	                      "SELECT version FROM {p}schedule WHERE name = "
	                      "?1",
	                      &p, 1),
	                 v0);
	put(h, "r", "* * * * *", SKED_MISFIRE_FIRE_ALL, 0);
	assert_int_equal(next_fire(h, "r"), past);
	int64_t now = db_now(h);
	put(h, "r", "*/5 * * * *", SKED_MISFIRE_FIRE_ALL, 0);
	assert_true(next_fire(h, "r") > now);
	sked_close(h);
}

/* ---- exactly once ---- */

struct racer {
	int fired;
	int64_t until;
};

static int64_t
mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *
race(void *arg)
{
	struct racer *r = arg;
	sked *h = open_db();
	while (mono() < r->until) {
		int f = 0;
		if (sked_schedule_tick(h, &f, NULL) == SKED_OK)
			r->fired += f;
		usleep(20000);
	}
	sked_close(h);
	return NULL;
}

static void
racing_handles_fire_each_time_once(void **state)
{
	(void)state;
	new_db();
	sked *h = open_db();
	put(h, "every", "* * * * * *", 0, 0);
	struct racer r[3];
	pthread_t t[3];
	int64_t until = mono() + 3500;
	for (int i = 0; i < 3; i++) {
		r[i] = (struct racer){0, until};
		assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
	}
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	int64_t n = ntasks(h, "every");
	assert_true(n >= 3);
	assert_int_equal(r[0].fired + r[1].fired + r[2].fired, n);
	assert_int_equal(
	        sql1(h,
	             "SELECT COUNT(DISTINCT fire_time) FROM {p}task WHERE "
	             "schedule_name = 'every'",
	             NULL, 0),
	        n);
	/* no gap: consecutive seconds from the first fire to the last */
	assert_int_equal(
	        sql1(h,
	             "SELECT (MAX(fire_time) - MIN(fire_time)) / 1000 + 1 "
	             "FROM {p}task WHERE schedule_name = 'every'",
	             NULL, 0),
	        n);
	sked_close(h);
}

/* ---- misfires ---- */

static void
misfire_policies(void **state)
{
	(void)state;
	new_db();
	sked *h = open_db();
	put(h, "once", "* * * * * *", SKED_MISFIRE_FIRE_ONCE, 0);
	put(h, "all", "* * * * * *", SKED_MISFIRE_FIRE_ALL, 0);
	put(h, "skip", "* * * * * *", SKED_MISFIRE_SKIP, 0);
	put(h, "flood", "* * * * * *", SKED_MISFIRE_FIRE_ALL, 0);
	int64_t now = db_now(h);
	int64_t missed = (now / 1000 - 10) * 1000; /* 10 s ago, a fire */
	set_next(h, "once", missed);
	set_next(h, "all", missed);
	set_next(h, "skip", missed);
	set_next(h, "flood", (now / 1000 - 1000) * 1000);
	tick(h);
	int64_t after = db_now(h);

	/* fire-once: one task, for the latest missed fire */
	assert_int_equal(ntasks(h, "once"), 1);
	int64_t ft = sql1(h,
	                  "SELECT fire_time FROM {p}task WHERE "
	                  "schedule_name = 'once'",
	                  NULL, 0);
	assert_true(ft >= now - 1000 && ft <= after);
	/* fire-all: every missed fire, in order, none twice */
	int64_t n = ntasks(h, "all");
	assert_true(n >= 11 && n <= 12 + (after - now) / 1000);
	assert_int_equal(sql1(h,
	                      "SELECT MIN(fire_time) FROM {p}task WHERE "
	                      "schedule_name = 'all'",
	                      NULL, 0),
	                 missed);
	assert_int_equal(sql1(h,
	                      "SELECT (MAX(fire_time) - MIN(fire_time)) / "
	                      "1000 + 1 FROM {p}task WHERE schedule_name = "
	                      "'all'",
	                      NULL, 0),
	                 n);
	/* skip: nothing */
	assert_int_equal(ntasks(h, "skip"), 0);
	/* fire-all is bounded: the latest SKED_MAX_CATCHUP fires */
	assert_int_equal(ntasks(h, "flood"), SKED_MAX_CATCHUP);
	assert_true(sql1(h,
	                 "SELECT MAX(fire_time) FROM {p}task WHERE "
	                 "schedule_name = 'flood'",
	                 NULL, 0) >= now - 1000);
	/* every policy continues after now */
	const char *names[] = {"once", "all", "skip", "flood"};
	for (int i = 0; i < 4; i++)
		assert_true(next_fire(h, names[i]) > now);
	sked_close(h);
}

static void
recent_search_matches_walking(void **state)
{
	(void)state;
	sked_cron *c = NULL;
	sked_tz *tz = NULL;
	assert_int_equal(sked__cron_parse("*/7 * * * *", &c, NULL, 0), SKED_OK);
	assert_int_equal(sked__tz_load("UTC", &tz, NULL, 0), SKED_OK);
	int64_t first = 1700000040000LL, now = first + 3 * 3600 * 1000LL;
	int64_t out[SKED_MAX_CATCHUP], walk[200], t = first - 1, f;
	int nw = 0, n = 0;
	while (sked__cron_next(c, tz, t, &f) == SKED_OK && f <= now) {
		walk[nw++] = f;
		t = f;
	}
	int64_t total = 0;
	assert_int_equal(
	        sked__fire_recent(c, tz, first, now, 5, out, &n, &total),
	        SKED_OK);
	assert_int_equal(n, 5);
	assert_true(total == -1 || total == nw); /* more than 5: -1 allowed */
	for (int i = 0; i < 5; i++)
		assert_int_equal(out[i], walk[nw - 5 + i]);
	assert_int_equal(
	        sked__fire_recent(c, tz, first, now, 100, out, &n, &total),
	        SKED_OK);
	assert_int_equal(n, nw);
	assert_int_equal(total, nw); /* all of them: exact */
	assert_int_equal(out[0], walk[0]);
	sked__cron_free(c);
	sked__tz_free(tz);
}

/* ---- fire.c: the clock cases, pure ---- */

static void
fire_clock_cases(void **state)
{
	(void)state;
	sked_fire_plan p;
	char err[128] = "";
	/* every minute, UTC */
	assert_int_equal(
	        sked__fire_load("* * * * *", NULL, &p, err, sizeof err),
	        SKED_OK);
	const int64_t m = 60000, base = 1700000040000LL; /* a whole minute */
	sked_fire_result r;

	/* on time: the fire due now, next the one after */
	assert_int_equal(sked__fire_due(&p, base, SKED_MISFIRE_FIRE_ONCE,
	                                base + 500, &r),
	                 SKED_OK);
	assert_int_equal(r.clock_case, SKED_FIRE_ON_TIME);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.fires[0], base);
	assert_int_equal(r.next, base + m);

	/* on time at the edge of the tolerance, whatever the policy */
	assert_int_equal(sked__fire_due(&p, base, SKED_MISFIRE_SKIP,
	                                base + SKED__SCHED_TOLERANCE_MS, &r),
	                 SKED_OK);
	assert_int_equal(r.clock_case, SKED_FIRE_ON_TIME);
	assert_int_equal(r.n, 1);

	/* misfire, fire-once: ten minutes late, the latest missed fire */
	int64_t now = base + 10 * m + 30000;
	assert_int_equal(
	        sked__fire_due(&p, base, SKED_MISFIRE_FIRE_ONCE, now, &r),
	        SKED_OK);
	assert_int_equal(r.clock_case, SKED_FIRE_MISFIRE_ONCE);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.fires[0], base + 10 * m);
	assert_int_equal(r.next, base + 11 * m);

	/* misfire, fire-all: all eleven, counted exactly */
	assert_int_equal(
	        sked__fire_due(&p, base, SKED_MISFIRE_FIRE_ALL, now, &r),
	        SKED_OK);
	assert_int_equal(r.clock_case, SKED_FIRE_MISFIRE_ALL);
	assert_int_equal(r.n, 11);
	assert_int_equal(r.missed, 11);
	for (int i = 0; i < 11; i++)
		assert_int_equal(r.fires[i], base + i * m);
	assert_int_equal(r.next, base + 11 * m);

	/* misfire, fire-all past the bound: the latest SKED_MAX_CATCHUP */
	now = base + 500 * m;
	assert_int_equal(
	        sked__fire_due(&p, base, SKED_MISFIRE_FIRE_ALL, now, &r),
	        SKED_OK);
	assert_int_equal(r.n, SKED_MAX_CATCHUP);
	assert_true(r.missed != r.n);
	assert_int_equal(r.fires[SKED_MAX_CATCHUP - 1], now);
	assert_int_equal(r.fires[0], now - (SKED_MAX_CATCHUP - 1) * m);

	/* misfire, skip: none, and on from now */
	assert_int_equal(sked__fire_due(&p, base, SKED_MISFIRE_SKIP, now, &r),
	                 SKED_OK);
	assert_int_equal(r.clock_case, SKED_FIRE_MISFIRE_SKIP);
	assert_int_equal(r.n, 0);
	assert_int_equal(r.next, now + m);

	/* clock went back: next_fire is after now; nothing, next stays */
	assert_int_equal(sked__fire_due(&p, base + 5 * m, SKED_MISFIRE_FIRE_ALL,
	                                base, &r),
	                 SKED_OK);
	assert_int_equal(r.clock_case, SKED_FIRE_CLOCK_BACK);
	assert_int_equal(r.n, 0);
	assert_int_equal(r.next, base + 5 * m);

	sked__fire_free(&p);
	assert_int_not_equal(
	        sked__fire_load("61 * * * *", "UTC", &p, err, sizeof err),
	        SKED_OK);
	assert_null(p.cron);
}

/* ---- overlap, pause ---- */

static void
overlap_skip_waits_for_the_previous_task(void **state)
{
	(void)state;
	new_db();
	sked *h = open_db();
	/* yearly: only the next fire we set is ever due in this test */
	put(h, "o", "0 0 1 1 *", 0, SKED_OVERLAP_SKIP);
	put(h, "a", "0 0 1 1 *", 0, SKED_OVERLAP_ALLOW);
	int64_t now = db_now(h);
	set_next(h, "o", now - 300);
	set_next(h, "a", now - 300);
	tick(h);
	assert_int_equal(ntasks(h, "o"), 1);
	assert_int_equal(ntasks(h, "a"), 1);

	set_next(h, "o", now - 200); /* its first task is still pending */
	set_next(h, "a", now - 200);
	tick(h);
	assert_int_equal(ntasks(h, "o"), 1);
	assert_int_equal(ntasks(h, "a"), 2);
	assert_true(next_fire(h, "o") > now); /* advanced all the same */

	sql1(h, "UPDATE {p}task SET status = 2 WHERE schedule_name = 'o'", NULL,
	     0);
	set_next(h, "o", now - 100);
	tick(h);
	assert_int_equal(ntasks(h, "o"), 2);
	sked_close(h);
}

static void
paused_schedules_do_not_fire(void **state)
{
	(void)state;
	new_db();
	sked *h = open_db();
	put(h, "p", "* * * * * *", SKED_MISFIRE_FIRE_ALL, 0);
	assert_int_equal(sked_schedule_pause(h, "p"), SKED_OK);
	int64_t now = db_now(h);
	set_next(h, "p", (now / 1000 - 5) * 1000);
	assert_int_equal(tick(h), 0);
	assert_int_equal(ntasks(h, "p"), 0);
	assert_int_equal(sked_schedule_resume(h, "p"), SKED_OK);
	/* fires missed while paused are not misfires */
	assert_true(next_fire(h, "p") > now);
	assert_int_equal(sked_schedule_resume(h, "p"), SKED_OK);
	sked_close(h);
}

/* sked_schedule_run: one task per call, with the schedule's definition,
 * paused or not, its next fire untouched; fire times off whole seconds
 * and distinct, also when the milliseconds right after now are taken
 * already (the run moves past them). */
static void
run_now_makes_one_task_per_call(void **state)
{
	(void)state;
	new_db();
	sked *h = open_db();
	put(h, "r", "0 3 * * *", SKED_MISFIRE_FIRE_ONCE, SKED_OVERLAP_SKIP);
	int64_t next = next_fire(h, "r"), id = 0, prev = 0;
	assert_int_equal(sked_schedule_pause(h, "r"), SKED_OK);
	/* the next few milliseconds hold tasks of this schedule already */
	int64_t t0 = db_now(h);
	for (int i = 0; i < 3; i++) {
		sked_val p[2] = {SKED_TEXTV("r"), SKED_INTV(t0 + i)};
		sql1(h,
		     "INSERT INTO {p}task (queue, kind, payload, status, "
		     "priority, run_at, attempts, max_attempts, version, "
		     "schedule_name, fire_time, created_at, updated_at) VALUES "
		     "('default', 'job', '', 0, 0, ?2, 0, 1, 0, ?1, ?2, ?2, "
		     "?2)",
		     p, 2);
	}
	for (int i = 0; i < 40; i++) {
		assert_int_equal(sked_schedule_run(h, "r", &id), SKED_OK);
		assert_true(id > prev);
		prev = id;
	}
	assert_int_equal(sked_schedule_run(h, "r", NULL), SKED_OK);
	assert_int_equal(ntasks(h, "r"), 3 + 41);
	sked_val p = SKED_TEXTV("r");
	assert_int_equal(sql1(h,
	                      "SELECT COUNT(DISTINCT fire_time) FROM {p}task "
	                      "WHERE schedule_name = ?1",
	                      &p, 1),
	                 3 + 41);
	assert_int_equal(sql1(h,
	                      "SELECT COUNT(*) FROM {p}task WHERE "
	                      "schedule_name = ?1 AND fire_time % 1000 = 0 "
	                      "AND kind = 'job' AND attempts = 0",
	                      &p, 1),
	                 0);
	sked_task *t = NULL;
	assert_int_equal(sked_task_get(h, id, &t), SKED_OK);
	assert_string_equal(t->schedule_name, "r");
	assert_string_equal(t->kind, "job");
	assert_int_equal(t->status, SKED_PENDING);
	sked_tasks_free(t, 1);
	assert_int_equal(next_fire(h, "r"), next);
	assert_int_equal(sked_schedule_run(h, "nope", &id), SKED_ENOTFOUND);
	assert_int_equal(sked_schedule_run(h, "bad name", &id), SKED_EINVAL);
	assert_int_equal(sked_schedule_run(NULL, "r", &id), SKED_EINVAL);
	sked_close(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(put_checks_and_first_fire_follows_now),
	        cmocka_unit_test(
	                replace_keeps_pending_fire_unless_expression_changes),
	        cmocka_unit_test(racing_handles_fire_each_time_once),
	        cmocka_unit_test(misfire_policies),
	        cmocka_unit_test(recent_search_matches_walking),
	        cmocka_unit_test(fire_clock_cases),
	        cmocka_unit_test(overlap_skip_waits_for_the_previous_task),
	        cmocka_unit_test(paused_schedules_do_not_fire),
	        cmocka_unit_test(run_now_makes_one_task_per_call),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
