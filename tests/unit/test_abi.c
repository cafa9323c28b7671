/*
 * test_abi.c — the calls a binding in another language relies on
 * (docs/abi.md): version and ABI check, codes by name, struct sizes, and
 * option objects passed as they are to the calls that take the structs,
 * against a real SQLite database.
 */
#include "sked_abi.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sqlite_fixture.h"

static void
version_and_abi(void **state)
{
	(void)state;
	assert_string_equal(sked_version(), SKED_VERSION);
	assert_int_equal(sked_abi_version(), SKED_ABI_VERSION);
	assert_int_equal(sked_abi_check(SKED_ABI_VERSION), SKED_OK);
	assert_int_equal(sked_abi_check(SKED_ABI_VERSION + 1),
	                 SKED_EUNSUPPORTED);
	assert_int_equal(sked_abi_check(0), SKED_EUNSUPPORTED);
}

static void
codes_by_name(void **state)
{
	(void)state;
	assert_int_equal(sked_errcode("SKED_OK"), SKED_OK);
	assert_int_equal(sked_errcode("SKED_EBUSY"), SKED_EBUSY);
	assert_int_equal(sked_errcode("SKED_ENOTFOUND"), -9);
	assert_int_equal(sked_errcode("ENOTFOUND"), 1);
	assert_int_equal(sked_errcode(""), 1);
	assert_int_equal(sked_errcode(NULL), 1);
#define X(name, num, text)                                                     \
	assert_int_equal(sked_errcode(sked_errname(-(num))), -(num));
	SKED_ERRNO_MAP(X)
#undef X
}

static void
struct_sizes(void **state)
{
	(void)state;
	assert_int_equal(sked_struct_size("sked_task"), sizeof(sked_task));
	assert_int_equal(sked_struct_size("sked_run"), sizeof(sked_run));
	assert_int_equal(sked_struct_size("sked_worker_counters"),
	                 sizeof(sked_worker_counters));
	/* a binding builds sked_enqueue_graph's array itself (issue 37) */
	assert_int_equal(sked_struct_size("sked_graph_task"),
	                 sizeof(sked_graph_task));
	/* a running task's progress (sked_task_live_get, issue 36) */
	assert_int_equal(sked_struct_size("sked_task_live"),
	                 sizeof(sked_task_live));
	/* a schedule's unique key (sked_schedule_uniques, issue 37) */
	assert_int_equal(sked_struct_size("sked_schedule_unique"),
	                 sizeof(sked_schedule_unique));
	assert_int_equal(sked_struct_size("sked_task "), 0);
	assert_int_equal(sked_struct_size(NULL), 0);
}

static void
option_objects_reach_the_row(void **state)
{
	(void)state;
	char url[512];
	fixture_url("abi", url, sizeof url);
	sked_options *o = sked_options_new();
	assert_non_null(o);
	assert_int_equal(sked_options_set_prefix(o, "abi_"), SKED_OK);
	assert_int_equal(sked_options_set_migrate(o, 1), SKED_OK);
	assert_int_equal(sked_options_set_strategy(o, "bogus"), SKED_OK);
	assert_int_equal(sked_options_set_strategy(o, NULL), SKED_OK);
	sked *h = NULL;
	int rc = sked_open(url, o, &h);
	sked_options_free(o);
	if (rc != SKED_OK)
		fail_msg("open: %s", sked_errmsg(h));

	sked_enqueue_opts *e = sked_enqueue_opts_new();
	char q[] = "q.abi";
	assert_int_equal(sked_enqueue_opts_set_queue(e, q), SKED_OK);
	q[0] = 'X'; /* the object keeps its own copy */
	assert_int_equal(sked_enqueue_opts_set_unique_key(e, "u1"), SKED_OK);
	assert_int_equal(sked_enqueue_opts_set_priority(e, -3), SKED_OK);
	assert_int_equal(sked_enqueue_opts_set_run_at_ms(e, 1900000000123LL),
	                 SKED_OK);
	assert_int_equal(sked_enqueue_opts_set_max_attempts(e, 2), SKED_OK);
	int64_t id = 0;
	assert_int_equal(sked_enqueue(h, "k", "p", 1, e, &id, NULL), SKED_OK);
	sked_task *t = NULL;
	assert_int_equal(sked_task_get(h, id, &t), SKED_OK);
	assert_string_equal(t->queue, "q.abi");
	assert_string_equal(t->unique_key, "u1");
	assert_int_equal(t->priority, -3);
	assert_int_equal(t->run_at_ms, 1900000000123LL);
	assert_int_equal(t->max_attempts, 2);
	sked_tasks_free(t, 1);

	/* values are checked by the call that reads them */
	assert_int_equal(sked_enqueue_opts_set_queue(e, "not a name"), SKED_OK);
	assert_int_equal(sked_enqueue(h, "k", "p", 1, e, &id, NULL),
	                 SKED_EINVAL);
	sked_enqueue_opts_free(e);

	sked_list_filter *f = sked_list_filter_new();
	assert_int_equal(f->status, -1);
	assert_int_equal(sked_list_filter_set_queue(f, "q.abi"), SKED_OK);
	sked_task *ts = NULL;
	size_t n = 0;
	assert_int_equal(sked_task_list(h, f, &ts, &n), SKED_OK);
	assert_int_equal(n, 1);
	sked_tasks_free(ts, n);
	assert_int_equal(sked_list_filter_set_queue(f, NULL), SKED_OK);
	assert_int_equal(sked_list_filter_set_kind(f, "none"), SKED_OK);
	assert_int_equal(sked_task_list(h, f, &ts, &n), SKED_OK);
	assert_int_equal(n, 0);
	sked_list_filter_free(f);

	sked_worker_options *wo = sked_worker_options_new();
	assert_int_equal(sked_worker_options_set_queues(wo, "a b"), SKED_OK);
	sked_worker *w = NULL;
	assert_int_equal(sked_worker_new(h, wo, &w), SKED_EINVAL);
	assert_null(w);
	assert_int_equal(sked_worker_options_set_queues(wo, "q.abi:2"),
	                 SKED_OK);
	assert_int_equal(sked_worker_options_set_concurrency(wo, 2), SKED_OK);
	assert_int_equal(sked_worker_new(h, wo, &w), SKED_OK);
	sked_worker_options_free(wo);
	sked_worker_free(w);

	/* schedule options: the definition as set, text payload included */
	sked_schedule_opts *so = sked_schedule_opts_new();
	assert_non_null(so);
	assert_int_equal(sked_schedule_opts_set_tz(so, "Europe/Paris"),
	                 SKED_OK);
	assert_int_equal(sked_schedule_opts_set_payload(so, "{\"a\":1}"),
	                 SKED_OK);
	assert_int_equal(sked_schedule_opts_set_queue(so, "q.abi"), SKED_OK);
	assert_int_equal(sked_schedule_opts_set_priority(so, 4), SKED_OK);
	assert_int_equal(sked_schedule_opts_set_max_attempts(so, 2), SKED_OK);
	assert_int_equal(sked_schedule_opts_set_misfire(so, SKED_MISFIRE_SKIP),
	                 SKED_OK);
	assert_int_equal(sked_schedule_opts_set_overlap(so, SKED_OVERLAP_SKIP),
	                 SKED_OK);
	assert_int_equal(sked_schedule_put(h, "s", "0 3 * * *", "k", so, NULL),
	                 SKED_OK);
	sked_schedule_opts_free(so);
	sked_schedule *sl = NULL;
	assert_int_equal(sked_schedule_list(h, &sl, &n), SKED_OK);
	assert_int_equal(n, 1);
	assert_string_equal(sl[0].tz, "Europe/Paris");
	assert_string_equal(sl[0].payload, "{\"a\":1}");
	assert_string_equal(sl[0].queue, "q.abi");
	assert_int_equal(sl[0].priority, 4);
	assert_int_equal(sl[0].max_attempts, 2);
	assert_int_equal(sl[0].misfire, SKED_MISFIRE_SKIP);
	assert_int_equal(sl[0].overlap, SKED_OVERLAP_SKIP);
	sked_schedules_free(sl, n);

	/* a schedule's unique key comes through an enqueue option object:
	 * sked_schedule keeps its layout, and the key is listed beside it */
	sked_enqueue_opts *uo = sked_enqueue_opts_new();
	assert_int_equal(sked_enqueue_opts_set_unique_key(uo, "uk"), SKED_OK);
	assert_int_equal(sked_enqueue_opts_set_unique_for_ms(uo, 60000),
	                 SKED_OK);
	assert_int_equal(sked_schedule_put_unique(h, "su", "0 3 * * *", "k",
	                                          NULL, uo, NULL),
	                 SKED_OK);
	assert_int_equal(sked_enqueue_opts_set_unique_replace(uo, 1), SKED_OK);
	assert_int_equal(sked_schedule_put_unique(h, "sv", "0 3 * * *", "k",
	                                          NULL, uo, NULL),
	                 SKED_EINVAL); /* replace and a period */
	sked_enqueue_opts_free(uo);
	sked_schedule_unique *su = NULL;
	assert_int_equal(sked_schedule_uniques(h, &su, &n), SKED_OK);
	assert_int_equal(n, 1);
	assert_string_equal(su[0].name, "su");
	assert_string_equal(su[0].key, "uk");
	assert_int_equal(su[0].scope, SKED_UNIQUE_PERIOD);
	assert_int_equal(su[0].for_ms, 60000);
	assert_int_equal(su[0].replace, 0);
	sked_schedule_uniques_free(su, n);
	/* defined again without it: no key */
	assert_int_equal(
	        sked_schedule_put(h, "su", "0 3 * * *", "k", NULL, NULL),
	        SKED_OK);
	assert_int_equal(sked_schedule_uniques(h, &su, &n), SKED_OK);
	assert_int_equal(n, 0);
	sked_schedule_uniques_free(su, n);

	/* lock options: at_least keeps the lock after a release */
	sked_lock_opts *lo = sked_lock_opts_new();
	assert_int_equal(sked_lock_opts_set_wait_ms(lo, 0), SKED_OK);
	assert_int_equal(sked_lock_opts_set_at_least_ms(lo, 60000), SKED_OK);
	int64_t tok = 0;
	assert_int_equal(sked_lock_acquire(h, "l", "me", 30000, lo, &tok),
	                 SKED_OK);
	assert_int_equal(sked_lock_release(h, "l", "me", tok, lo), SKED_OK);
	sked_lock_opts_free(lo);
	sked_lock_state ls;
	assert_int_equal(sked_lock_get(h, "l", &ls), SKED_OK);
	assert_int_equal(ls.held, 1);

	assert_int_equal(sked_enqueue_opts_set_queue(NULL, "x"), SKED_EINVAL);
	assert_int_equal(sked_schedule_opts_set_tz(NULL, "x"), SKED_EINVAL);
	assert_int_equal(sked_lock_opts_set_wait_ms(NULL, 1), SKED_EINVAL);
	sked_schedule_opts_free(NULL);
	sked_lock_opts_free(NULL);
	sked_options_free(NULL);
	sked_enqueue_opts_free(NULL);
	sked_list_filter_free(NULL);
	sked_worker_options_free(NULL);
	sked_close(h);
}

static int
fail_with_message(sked_job *job, void *userdata)
{
	(void)userdata;
	sked_job_set_error_msg(job, "first");
	sked_job_set_error_msg(job, "plain 100% text, no format");
	return 1;
}

static void
plain_error_message(void **state)
{
	(void)state;
	char url[512];
	fixture_url("abi-err", url, sizeof url);
	sked *h = fixture_open(url, NULL);
	sked_enqueue_opts eo = {.max_attempts = 1};
	int64_t id = 0;
	assert_int_equal(sked_enqueue(h, "f", NULL, 0, &eo, &id, NULL),
	                 SKED_OK);
	sked_worker_options wo = {.until_empty = 1, .poll_ms = 50};
	sked_worker *w = NULL;
	assert_int_equal(sked_worker_new(h, &wo, &w), SKED_OK);
	assert_int_equal(sked_worker_handle(w, "f", fail_with_message, NULL),
	                 SKED_OK);
	assert_int_equal(sked_worker_run(w), SKED_OK);
	sked_worker_free(w);
	sked_run *r = NULL;
	size_t n = 0;
	assert_int_equal(sked_runs_get(h, id, &r, &n), SKED_OK);
	assert_int_equal(n, 1);
	assert_string_equal(r[0].error, "plain 100% text, no format");
	sked_runs_free(r, n);
	sked_close(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(version_and_abi),
	        cmocka_unit_test(codes_by_name),
	        cmocka_unit_test(struct_sizes),
	        cmocka_unit_test(option_objects_reach_the_row),
	        cmocka_unit_test(plain_error_message),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
