/*
 * test_lock.c — cluster locks on real SQLite files: one winner among
 * racing handles, fencing tokens that only grow, owner checks on extend
 * and release, expiry by the database clock, lock-at-least-for, waiting.
 *
 * Layer: tests. sked_lock_run's outcomes are checked here; `sked lock
 * run` under a race, a kill -9 and a takeover (renewal while a program
 * runs, killing it when the lease could be lost) in
 * tests/integration/t_lock_race.sh.
 */
#include "model/lock.h"

#include <errno.h>
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
#include "util/clock.h"

static char url[512];

static void
new_db(void)
{
	fixture_url("lock", url, sizeof url);
}

static sked *
open_db(void)
{
	return fixture_open(url, NULL);
}

static void
owners_tokens_and_expiry(void **state)
{
	(void)state;
	new_db();
	sked *a = open_db(), *b = open_db();
	int64_t ta = 0, tb = 0, t;

	assert_int_equal(sked_lock_get(a, "L", &(sked_lock_state){0}),
	                 SKED_ENOTFOUND);
	assert_int_equal(sked_lock_acquire(a, "L", "alice", 5000, NULL, &ta),
	                 SKED_OK);
	assert_int_equal(ta, 1);
	assert_int_equal(sked_lock_acquire(b, "L", "bob", 5000, NULL, &tb),
	                 SKED_ELOCKED);
	assert_non_null(strstr(sked_errmsg(b), "alice"));

	/* only the owner, with its token, extends or releases */
	assert_int_equal(sked_lock_extend(b, "L", "bob", ta, 5000), SKED_ELOST);
	assert_int_equal(sked_lock_extend(a, "L", "alice", ta + 1, 5000),
	                 SKED_ELOST);
	assert_int_equal(sked_lock_release(b, "L", "bob", ta, NULL),
	                 SKED_ELOST);
	assert_int_equal(sked_lock_extend(a, "L", "alice", ta, 5000), SKED_OK);
	sked_lock_state st;
	assert_int_equal(sked_lock_get(b, "L", &st), SKED_OK);
	assert_true(st.held);
	assert_string_equal(st.owner, "alice");
	assert_int_equal(st.token, ta);

	assert_int_equal(sked_lock_release(a, "L", "alice", ta, NULL), SKED_OK);
	assert_int_equal(sked_lock_acquire(b, "L", "bob", 300, NULL, &tb),
	                 SKED_OK);
	assert_true(tb > ta);

	/* bob's lease runs out by the database clock: alice takes it, with
	 * a larger token, and bob can neither extend nor release */
	usleep(400 * 1000);
	assert_int_equal(sked_lock_acquire(a, "L", "alice", 5000, NULL, &t),
	                 SKED_OK);
	assert_true(t > tb);
	assert_int_equal(sked_lock_extend(b, "L", "bob", tb, 5000), SKED_ELOST);
	assert_int_equal(sked_lock_release(b, "L", "bob", tb, NULL),
	                 SKED_ELOST);
	/* the owner taking it again gets a new token too */
	int64_t t2 = 0;
	assert_int_equal(sked_lock_acquire(a, "L", "alice", 5000, NULL, &t2),
	                 SKED_OK);
	assert_true(t2 > t);

	/* names are checked before they reach SQL */
	assert_int_equal(
	        sked_lock_acquire(a, "no spaces", "alice", 5000, NULL, &t),
	        SKED_EINVAL);
	assert_int_equal(sked_lock_acquire(a, "M", "alice", 0, NULL, &t),
	                 SKED_EINVAL);
	sked_close(a);
	sked_close(b);
}

static void
at_least_keeps_it_after_release(void **state)
{
	(void)state;
	new_db();
	sked *a = open_db(), *b = open_db();
	sked_lock_opts lo = {.at_least_ms = 800};
	int64_t ta = 0, tb = 0;
	int64_t t0 = sked__mono_ms();
	assert_int_equal(sked_lock_acquire(a, "A", "alice", 5000, &lo, &ta),
	                 SKED_OK);
	assert_int_equal(sked_lock_release(a, "A", "alice", ta, &lo), SKED_OK);
	assert_int_equal(sked_lock_acquire(b, "A", "bob", 5000, NULL, &tb),
	                 SKED_ELOCKED);
	/* and it is free once the at-least time has passed (not the ttl) */
	sked_lock_opts wait = {.wait_ms = 3000};
	assert_int_equal(sked_lock_acquire(b, "A", "bob", 5000, &wait, &tb),
	                 SKED_OK);
	int64_t waited = sked__mono_ms() - t0;
	assert_true(waited >= 700 && waited < 2500);
	assert_true(tb > ta);
	sked_close(a);
	sked_close(b);
}

static void
wait_is_bounded(void **state)
{
	(void)state;
	new_db();
	sked *a = open_db(), *b = open_db();
	int64_t ta = 0, tb = 0;
	assert_int_equal(sked_lock_acquire(a, "W", "alice", 10000, NULL, &ta),
	                 SKED_OK);
	sked_lock_opts lo = {.wait_ms = 300};
	int64_t t0 = sked__mono_ms();
	assert_int_equal(sked_lock_acquire(b, "W", "bob", 5000, &lo, &tb),
	                 SKED_ELOCKED);
	int64_t waited = sked__mono_ms() - t0;
	assert_true(waited >= 300 && waited < 1500);
	sked_close(a);
	sked_close(b);
}

struct racer {
	int rc;
	int64_t token;
	char owner[16];
};

static void *
race(void *arg)
{
	struct racer *r = arg;
	sked *h = open_db();
	sked_lock_opts lo = {0};
	r->rc = sked_lock_acquire(h, "R", r->owner, 10000, &lo, &r->token);
	sked_close(h);
	return NULL;
}

static void
one_winner_among_racers(void **state)
{
	(void)state;
	new_db();
	sked_close(open_db()); /* the schema, before the race */
	struct racer r[6];
	pthread_t t[6];
	for (int i = 0; i < 6; i++) {
		memset(&r[i], 0, sizeof r[i]);
		snprintf(r[i].owner, sizeof r[i].owner, "o%d", i);
		assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
	}
	int won = 0;
	for (int i = 0; i < 6; i++) {
		pthread_join(t[i], NULL);
		if (r[i].rc == SKED_OK) {
			won++;
			assert_int_equal(r[i].token, 1);
		} else {
			/* SQLite may answer busy instead of waiting */
			assert_true(r[i].rc == SKED_ELOCKED ||
			            r[i].rc == SKED_EBUSY);
		}
	}
	assert_int_equal(won, 1);
}

/* sked_lock_run: the program runs holding the lock, with its name and
 * token in the environment; its status comes back; the lock is released
 * after it, and also when the program cannot start; a held lock runs
 * nothing. */
static void
run_holds_reports_and_releases(void **state)
{
	(void)state;
	new_db();
	sked *a = open_db(), *b = open_db();
	sked_lock_run_opts ro = {.owner = "runner", .ttl_ms = 2000};
	sked_lock_run_result res;
	int64_t t = 0;
	const char *exit3[] = {"sh", "-c",
	                       "test \"$SKED_LOCK_NAME\" = R && "
	                       "test \"$SKED_FENCING_TOKEN\" = 1 && exit 3",
	                       NULL};
	assert_int_equal(sked_lock_run(a, "R", exit3, &ro, &res), SKED_OK);
	assert_int_equal(res.token, 1);
	assert_true(res.spawned);
	assert_true(res.exited);
	assert_int_equal(res.exit_code, 3);
	assert_false(res.expired);
	assert_false(res.lost);
	assert_int_equal(res.release_rc, SKED_OK);
	assert_int_equal(sked_lock_acquire(b, "R", "other", 2000, NULL, &t),
	                 SKED_OK);

	const char *never[] = {"sh", "-c", "exit 9", NULL};
	assert_int_equal(sked_lock_run(a, "R", never, &ro, &res), SKED_ELOCKED);
	assert_false(res.spawned);
	assert_non_null(strstr(sked_errmsg(a), "other"));
	assert_int_equal(sked_lock_release(b, "R", "other", t, NULL), SKED_OK);

	const char *nosuch[] = {"/nonexistent/sked-program", NULL};
	assert_int_equal(sked_lock_run(a, "R", nosuch, &ro, &res), SKED_EIO);
	assert_false(res.spawned);
	assert_int_equal(res.spawn_errno, ENOENT);
	assert_non_null(strstr(sked_errmsg(a), "cannot run"));
	assert_int_equal(sked_lock_acquire(b, "R", "other", 2000, NULL, &t),
	                 SKED_OK);

	ro.ttl_ms = 999; /* renewed every ttl/3: too short */
	assert_int_equal(sked_lock_run(a, "Q", exit3, &ro, &res), SKED_EINVAL);
	sked_close(a);
	sked_close(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(owners_tokens_and_expiry),
	        cmocka_unit_test(at_least_keeps_it_after_release),
	        cmocka_unit_test(wait_is_bounded),
	        cmocka_unit_test(one_winner_among_racers),
	        cmocka_unit_test(run_holds_reports_and_releases),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
