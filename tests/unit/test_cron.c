/*
 * test_cron.c — unit tests of the cron engine (src/time/cron.c) and of the
 * public sked_cron_check / sked_cron_next.
 *
 * Layer: tests. Every expected instant is derived by hand in a comment
 * next to it; calendar facts used throughout: 1 January 2026 is a
 * Thursday; 2026 is not a leap year, 2028 is, 2100 is not. Daylight-saving
 * dates for 2026 (checked with zdump): New York springs forward on
 * 8 March at 07:00Z and falls back on 1 November at 06:00Z; London and
 * Berlin on 29 March and 25 October, both at 01:00Z; Sydney falls back on
 * 5 April (16:00Z on the 4th) and springs forward on 4 October (16:00Z on
 * the 3rd).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "sked.h"
#include "time/cron.h"
#include "time/tz.h"
#include "util/timefmt.h"

static int64_t
ms_of(const char *iso)
{
	int64_t ms = 0;
	if (sked__time_parse(iso, &ms) != SKED_OK)
		fail_msg("bad test time %s", iso);
	return ms;
}

/* The fires of expr in zone (NULL: no zone, i.e. UTC) after `from` must
 * be exactly the instants listed, in order, NULL-terminated. */
static void
expect_fires(const char *expr, const char *zone, const char *from, ...)
{
	sked_cron *c = NULL;
	sked_tz *tz = NULL;
	char err[256], got[40];
	const char *want;
	int64_t t = ms_of(from), next;
	va_list ap;
	int i = 0;

	if (sked__cron_parse(expr, &c, err, sizeof(err)) != SKED_OK)
		fail_msg("\"%s\": %s", expr, err);
	if (zone && sked__tz_load(zone, &tz, err, sizeof(err)) != SKED_OK)
		fail_msg("%s", err);
	va_start(ap, from);
	while ((want = va_arg(ap, const char *)) != NULL) {
		int rc = sked__cron_next(c, tz, t, &next);
		if (rc != SKED_OK)
			fail_msg("\"%s\" in %s after %s: fire %d: rc %d", expr,
			         zone ? zone : "UTC", from, i, rc);
		sked__time_format_sec(next, got, sizeof(got));
		if (strcmp(got, want) != 0)
			fail_msg("\"%s\" in %s after %s: fire %d is %s, "
			         "expected %s",
			         expr, zone ? zone : "UTC", from, i, got, want);
		t = next;
		i++;
	}
	va_end(ap);
	sked__tz_free(tz);
	sked__cron_free(c);
}

static void
expect_error(const char *expr, const char *message)
{
	sked_cron *c = (sked_cron *)&message; /* must come back NULL */
	char err[256] = "";

	assert_int_equal(sked__cron_parse(expr, &c, err, sizeof(err)),
	                 SKED_ECRON);
	assert_null(c);
	if (strcmp(err, message) != 0)
		fail_msg("\"%s\": got \"%s\", expected \"%s\"", expr, err,
		         message);
}

/* ---- syntax -------------------------------------------------------- */

static void
test_basic_fields(void **state)
{
	/* Every minute; strictly after `from`, and a fraction of a
	 * second still counts as after. */
	expect_fires("* * * * *", NULL, "2026-01-01T00:00:00Z",
	             "2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z", NULL);
	expect_fires("* * * * *", NULL, "2026-01-01T00:00:59.999Z",
	             "2026-01-01T00:01:00Z", NULL);
	/* Steps over "*". */
	expect_fires("*/15 * * * *", NULL, "2026-01-01T00:07:00Z",
	             "2026-01-01T00:15:00Z", "2026-01-01T00:30:00Z",
	             "2026-01-01T00:45:00Z", "2026-01-01T01:00:00Z", NULL);
	/* "a/n" means a-59/n: minutes 5, 25, 45. */
	expect_fires("5/20 * * * *", NULL, "2026-01-01T00:00:00Z",
	             "2026-01-01T00:05:00Z", "2026-01-01T00:25:00Z",
	             "2026-01-01T00:45:00Z", "2026-01-01T01:05:00Z", NULL);
	/* Lists and ranges with steps: hours 9, 13, 17 on weekdays.
	 * 2 January 2026 is a Friday, so after 17:00 the next is Monday
	 * the 5th. */
	expect_fires("0 9-17/4 * * MON-FRI", NULL, "2026-01-02T10:00:00Z",
	             "2026-01-02T13:00:00Z", "2026-01-02T17:00:00Z",
	             "2026-01-05T09:00:00Z", NULL);
	expect_fires("0,30 8,20 * * *", NULL, "2026-01-01T08:15:00Z",
	             "2026-01-01T08:30:00Z", "2026-01-01T20:00:00Z",
	             "2026-01-01T20:30:00Z", "2026-01-02T08:00:00Z", NULL);
	/* Month names, any case. */
	expect_fires("0 0 1 jan,Jul *", NULL, "2026-02-01T00:00:00Z",
	             "2026-07-01T00:00:00Z", "2027-01-01T00:00:00Z", NULL);
	expect_fires("0 0 1 MAR-may *", NULL, "2026-01-01T00:00:00Z",
	             "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z",
	             "2026-05-01T00:00:00Z", "2027-03-01T00:00:00Z", NULL);
	/* Extra blanks and tabs are fine. */
	expect_fires("  0\t12  * *   *  ", NULL, "2026-01-01T00:00:00Z",
	             "2026-01-01T12:00:00Z", NULL);
}

static void
test_sunday(void **state)
{
	/* Sunday is 0, 7 or SUN; the first Sunday of 2026 is the 4th. */
	static const char *const forms[] = {"0 12 * * 0", "0 12 * * 7",
	                                    "0 12 * * sun", "0 12 ? * SUN"};
	size_t i;

	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++)
		expect_fires(forms[i], NULL, "2026-01-01T00:00:00Z",
		             "2026-01-04T12:00:00Z", "2026-01-11T12:00:00Z",
		             NULL);
	/* 5-7 and FRI-SUN: Friday 2nd, Saturday 3rd, Sunday 4th. */
	expect_fires("0 0 * * 5-7", NULL, "2026-01-01T00:00:00Z",
	             "2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z",
	             "2026-01-04T00:00:00Z", "2026-01-09T00:00:00Z", NULL);
	expect_fires("0 0 * * FRI-SUN", NULL, "2026-01-01T00:00:00Z",
	             "2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z",
	             "2026-01-04T00:00:00Z", "2026-01-09T00:00:00Z", NULL);
	/* Step 2 over the weekdays: Sunday, Tuesday, Thursday, Saturday. */
	expect_fires("0 0 * * */2", NULL, "2026-01-01T00:00:00Z",
	             "2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z",
	             "2026-01-06T00:00:00Z", "2026-01-08T00:00:00Z", NULL);
}

static void
test_aliases(void **state)
{
	/* From Sunday 1 March 2026, 00:00 (itself not included). */
	const char *from = "2026-03-01T00:00:00Z";

	expect_fires("@yearly", NULL, from, "2027-01-01T00:00:00Z", NULL);
	expect_fires("@annually", NULL, from, "2027-01-01T00:00:00Z", NULL);
	expect_fires("@monthly", NULL, from, "2026-04-01T00:00:00Z", NULL);
	expect_fires("@weekly", NULL, from, "2026-03-08T00:00:00Z", NULL);
	expect_fires("@daily", NULL, from, "2026-03-02T00:00:00Z", NULL);
	expect_fires("@midnight", NULL, from, "2026-03-02T00:00:00Z", NULL);
	expect_fires("@hourly", NULL, from, "2026-03-01T01:00:00Z", NULL);
	expect_fires("@DAILY", NULL, from, "2026-03-02T00:00:00Z", NULL);
	expect_fires(" @Hourly ", NULL, from, "2026-03-01T01:00:00Z", NULL);
}

static void
test_seconds_field(void **state)
{
	sked_cron *c;
	char err[128];

	expect_fires("*/10 * * * * *", NULL, "2026-01-01T00:00:00Z",
	             "2026-01-01T00:00:10Z", "2026-01-01T00:00:20Z", NULL);
	expect_fires("* * * * * *", NULL, "2026-01-01T00:00:10.500Z",
	             "2026-01-01T00:00:11Z", "2026-01-01T00:00:12Z", NULL);
	/* 30 seconds past midnight; 59 rolls into the next minute. */
	expect_fires("30 0 0 * * *", NULL, "2026-01-01T00:00:30Z",
	             "2026-01-02T00:00:30Z", NULL);
	expect_fires("59 59 23 31 12 *", NULL, "2026-06-01T00:00:00Z",
	             "2026-12-31T23:59:59Z", "2027-12-31T23:59:59Z", NULL);

	assert_int_equal(sked__cron_parse("0 * * * * *", &c, err, sizeof(err)),
	                 SKED_OK);
	assert_int_equal(sked__cron_has_seconds(c), 1);
	sked__cron_free(c);
	assert_int_equal(sked__cron_parse("* * * * *", &c, err, sizeof(err)),
	                 SKED_OK);
	assert_int_equal(sked__cron_has_seconds(c), 0);
	sked__cron_free(c);
	assert_int_equal(sked__cron_parse("@hourly", &c, err, sizeof(err)),
	                 SKED_OK);
	assert_int_equal(sked__cron_has_seconds(c), 0);
	sked__cron_free(c);
}

/* ---- calendar -------------------------------------------------------- */

static void
test_leap_years(void **state)
{
	/* 29 February: 2028, 2032, 2036 (every fourth year). */
	expect_fires("0 0 29 2 *", NULL, "2026-01-01T00:00:00Z",
	             "2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z",
	             "2036-02-29T00:00:00Z", NULL);
	/* 2100 is not a leap year: after 2096 comes 2104. */
	expect_fires("0 0 29 2 *", NULL, "2096-03-01T00:00:00Z",
	             "2104-02-29T00:00:00Z", NULL);
	/* 2000 was (divisible by 400). */
	expect_fires("0 0 29 2 *", NULL, "1997-01-01T00:00:00Z",
	             "2000-02-29T00:00:00Z", NULL);
	/* With day of week restricted too, it is "29 Feb OR any Monday":
	 * the Mondays of February 2026 are the 2nd and the 9th. */
	expect_fires("0 0 29 2 1", NULL, "2026-01-01T00:00:00Z",
	             "2026-02-02T00:00:00Z", "2026-02-09T00:00:00Z", NULL);
	/* In 2028 (29 Feb is a Tuesday) it fires on the Mondays and on
	 * the 29th: 7, 14, 21, 28, 29. */
	expect_fires("0 0 29 2 1", NULL, "2028-02-20T00:00:00Z",
	             "2028-02-21T00:00:00Z", "2028-02-28T00:00:00Z",
	             "2028-02-29T00:00:00Z", "2029-02-05T00:00:00Z", NULL);
}

static void
test_month_ends_and_rollover(void **state)
{
	/* The 31st skips the short months. */
	expect_fires("0 0 31 * *", NULL, "2026-01-31T00:00:00Z",
	             "2026-03-31T00:00:00Z", "2026-05-31T00:00:00Z",
	             "2026-07-31T00:00:00Z", "2026-08-31T00:00:00Z", NULL);
	/* The 30th skips only February. */
	expect_fires("0 0 30 * *", NULL, "2026-01-30T00:00:00Z",
	             "2026-03-30T00:00:00Z", NULL);
	/* Year rollover. */
	expect_fires("0 0 1 1 *", NULL, "2026-12-31T23:59:59Z",
	             "2027-01-01T00:00:00Z", NULL);
	expect_fires("59 23 31 12 *", NULL, "2026-12-31T23:59:00Z",
	             "2027-12-31T23:59:00Z", NULL);
	expect_fires("*/30 * * * *", NULL, "2026-12-31T23:45:00Z",
	             "2027-01-01T00:00:00Z", "2027-01-01T00:30:00Z", NULL);
	/* Before the epoch works too (1969-12-31 was a Wednesday). */
	expect_fires("0 0 * * WED", NULL, "1969-12-25T00:00:00Z",
	             "1969-12-31T00:00:00Z", "1970-01-07T00:00:00Z", NULL);
}

static void
test_last_day(void **state)
{
	/* L: 31 Jan, 28 Feb, 31 Mar, 30 Apr 2026; 29 Feb 2028. */
	expect_fires("0 0 L * *", NULL, "2026-01-15T00:00:00Z",
	             "2026-01-31T00:00:00Z", "2026-02-28T00:00:00Z",
	             "2026-03-31T00:00:00Z", "2026-04-30T00:00:00Z", NULL);
	expect_fires("0 0 L 2 ?", NULL, "2027-03-01T00:00:00Z",
	             "2028-02-29T00:00:00Z", "2029-02-28T00:00:00Z", NULL);
	/* L-2: two days before the last: 29 Jan, 26 Feb, 29 Mar. */
	expect_fires("0 0 L-2 * *", NULL, "2026-01-01T00:00:00Z",
	             "2026-01-29T00:00:00Z", "2026-02-26T00:00:00Z",
	             "2026-03-29T00:00:00Z", NULL);
	/* L with plain days in one list: the 1st and the last. */
	expect_fires("0 0 1,L * *", NULL, "2026-01-15T00:00:00Z",
	             "2026-01-31T00:00:00Z", "2026-02-01T00:00:00Z",
	             "2026-02-28T00:00:00Z", NULL);
}

static void
test_last_and_nth_weekday(void **state)
{
	/* 5L, the last Friday: 30 Jan, 27 Feb, 27 Mar 2026 (Fridays of
	 * January: 2, 9, 16, 23, 30). */
	expect_fires("0 0 ? * 5L", NULL, "2026-01-01T00:00:00Z",
	             "2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z",
	             "2026-03-27T00:00:00Z", NULL);
	expect_fires("0 0 * * FRIL", NULL, "2026-01-01T00:00:00Z",
	             "2026-01-30T00:00:00Z", NULL);
	/* 0L and 7L: the last Sunday (25 Jan, 22 Feb 2026). */
	expect_fires("0 0 * * 7L", NULL, "2026-01-01T00:00:00Z",
	             "2026-01-25T00:00:00Z", "2026-02-22T00:00:00Z", NULL);
	/* L alone in day of week is Saturday (Quartz): 3, 10 Jan. */
	expect_fires("0 0 ? * L", NULL, "2026-01-01T00:00:00Z",
	             "2026-01-03T00:00:00Z", "2026-01-10T00:00:00Z", NULL);
	/* 1#2, the second Monday: 12 Jan (Mondays 5, 12), 9 Feb (2, 9),
	 * 9 Mar (2, 9). */
	expect_fires("0 0 * * 1#2", NULL, "2026-01-01T00:00:00Z",
	             "2026-01-12T00:00:00Z", "2026-02-09T00:00:00Z",
	             "2026-03-09T00:00:00Z", NULL);
	expect_fires("0 0 ? * mon#2", NULL, "2026-01-01T00:00:00Z",
	             "2026-01-12T00:00:00Z", NULL);
	/* FRI#5: only months with five Fridays: January (30th), May
	 * (Fridays 1..29: 29th), July (31st). */
	expect_fires("0 0 * * FRI#5", NULL, "2026-01-01T00:00:00Z",
	             "2026-01-30T00:00:00Z", "2026-05-29T00:00:00Z",
	             "2026-07-31T00:00:00Z", NULL);
}

static void
test_nearest_weekday(void **state)
{
	/* 15W in 2026: January 15 is a Thursday (itself); February 15
	 * and March 15 are Sundays (Monday 16th); April 15 Wednesday. */
	expect_fires("0 0 15W * *", NULL, "2026-01-01T00:00:00Z",
	             "2026-01-15T00:00:00Z", "2026-02-16T00:00:00Z",
	             "2026-03-16T00:00:00Z", "2026-04-15T00:00:00Z", NULL);
	/* 15 August 2026 is a Saturday: Friday 14th. */
	expect_fires("0 0 15W 8 *", NULL, "2026-01-01T00:00:00Z",
	             "2026-08-14T00:00:00Z", NULL);
	/* 1 August 2026 is a Saturday: the nearest weekday in the month
	 * is Monday 3rd, not Friday 31 July. */
	expect_fires("0 0 1W 8 *", NULL, "2026-01-01T00:00:00Z",
	             "2026-08-03T00:00:00Z", NULL);
	/* 31 May 2026 is a Sunday: Friday 29th, not Monday 1 June. */
	expect_fires("0 0 31W 5 *", NULL, "2026-01-01T00:00:00Z",
	             "2026-05-29T00:00:00Z", NULL);
	/* LW, the last weekday: 31 Jan 2026 is a Saturday (30th), 28 Feb a
	 * Saturday (27th), 31 Mar a Tuesday (31st), 31 May a Sunday
	 * (29th). */
	expect_fires("0 0 LW * *", NULL, "2026-01-01T00:00:00Z",
	             "2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z",
	             "2026-03-31T00:00:00Z", "2026-04-30T00:00:00Z",
	             "2026-05-29T00:00:00Z", NULL);
}

static void
test_dom_dow_or(void **state)
{
	/* Both restricted: the 13th OR any Friday. */
	expect_fires("0 0 13 * FRI", NULL, "2026-01-01T00:00:00Z",
	             "2026-01-02T00:00:00Z", "2026-01-09T00:00:00Z",
	             "2026-01-13T00:00:00Z", "2026-01-16T00:00:00Z", NULL);
	/* "*\/10" is restricted (only "*" and "?" are not): days 1, 11,
	 * 21, 31 OR Mondays (5, 12, 19, 26). */
	expect_fires("0 0 */10 * MON", NULL, "2026-01-01T00:00:00Z",
	             "2026-01-05T00:00:00Z", "2026-01-11T00:00:00Z",
	             "2026-01-12T00:00:00Z", "2026-01-19T00:00:00Z",
	             "2026-01-21T00:00:00Z", NULL);
	/* Only one restricted: that one alone decides. */
	expect_fires("0 0 * * MON", NULL, "2026-01-01T00:00:00Z",
	             "2026-01-05T00:00:00Z", NULL);
	expect_fires("0 0 ? * MON", NULL, "2026-01-01T00:00:00Z",
	             "2026-01-05T00:00:00Z", NULL);
	expect_fires("0 0 20 * ?", NULL, "2026-01-01T00:00:00Z",
	             "2026-01-20T00:00:00Z", NULL);
	expect_fires("0 0 20 * *", NULL, "2026-01-01T00:00:00Z",
	             "2026-01-20T00:00:00Z", NULL);
	/* L OR the second Monday. */
	expect_fires("0 0 L * 1#2", NULL, "2026-01-13T00:00:00Z",
	             "2026-01-31T00:00:00Z", "2026-02-09T00:00:00Z",
	             "2026-02-28T00:00:00Z", NULL);
}

/* ---- errors -------------------------------------------------------- */

static void
test_errors(void **state)
{
	expect_error("", "empty cron expression");
	expect_error(" \t ", "empty cron expression");
	expect_error("* * * *", "expected 5 or 6 fields, got 4");
	expect_error("* * * * * * *", "expected 5 or 6 fields, got 7");
	expect_error("0 0 32 * *", "day of month: 32 is out of range 1-31");
	expect_error("0 0 0 * *", "day of month: 0 is out of range 1-31");
	expect_error("60 * * * *", "minute: 60 is out of range 0-59");
	expect_error("60 * * * * *", "second: 60 is out of range 0-59");
	expect_error("0 24 * * *", "hour: 24 is out of range 0-23");
	expect_error("0 0 * 13 *", "month: 13 is out of range 1-12");
	expect_error("0 0 * 0 *", "month: 0 is out of range 1-12");
	expect_error("0 0 * * 8", "day of week: 8 is out of range 0-7");
	expect_error("0 0-30 * * *", "hour: 30 is out of range 0-23");
	expect_error("*/0 * * * *", "minute: step 0 in \"*/0\"");
	expect_error("0 1-5/0 * * *", "hour: step 0 in \"1-5/0\"");
	expect_error("*/61 * * * *",
	             "minute: step 61 in \"*/61\" is out of range 1-60");
	expect_error("*/ * * * *",
	             "minute: expected a step after \"/\" in \"*/\"");
	expect_error("5-2 * * * *", "minute: range \"5-2\" is reversed");
	expect_error("0 0 * * FRI-MON",
	             "day of week: range \"FRI-MON\" is reversed");
	expect_error("1- * * * *", "minute: missing value in \"1-\"");
	expect_error("5x * * * *", "minute: unexpected \"x\" in \"5x\"");
	expect_error("0 0 * * 1x", "day of week: unexpected \"x\" in \"1x\"");
	expect_error("1,,2 * * * *", "minute: empty list item");
	expect_error("1, * * * *", "minute: empty list item");
	expect_error("0 0 * FOO *", "month: unknown name \"FOO\"");
	expect_error("0 0 * JANUARY *", "month: unknown name \"JANUARY\"");
	expect_error("0 0 * * FUNDAY", "day of week: unknown name \"FUNDAY\"");
	expect_error("0 MON * * *", "hour: expected a number in \"MON\"");
	expect_error("? * * * *", "minute: \"?\" is only allowed in day of "
	                          "month and day of week");
	expect_error("0 0 ?5 * *", "day of month: unexpected \"5\" in \"?5\"");
	expect_error("0 0 5L * *", "day of month: unexpected \"L\" in \"5L\"");
	expect_error("0 0 L-31 * *",
	             "day of month: 31 in \"L-31\" is out of range 0-30");
	expect_error("0 0 LX * *", "day of month: unexpected \"X\" in \"LX\"");
	expect_error("0 0 * * 1#6",
	             "day of week: 6 in \"1#6\" is out of range 1-5");
	expect_error("0 0 * * 1#0",
	             "day of week: 0 in \"1#0\" is out of range 1-5");
	expect_error("0 0 15W * MON#", "day of week: expected a number after "
	                               "\"#\" in \"MON#\"");
	expect_error("0 0 32W * *", "day of month: 32 is out of range 1-31");
	expect_error("L * * * *", "minute: expected a number in \"L\"");
	expect_error("1234567 * * * *",
	             "minute: number too long in \"1234567\"");
	expect_error("@every", "unknown alias \"@every\"");
	expect_error("@daily 5", "unexpected \"5\" after \"@daily\"");
	/* Dates that never occur. */
	expect_error("0 0 30 2 *",
	             "0 0 30 2 *: this date never occurs (30 February)");
	expect_error("0 0 31 4 *",
	             "0 0 31 4 *: this date never occurs (31 April)");
	expect_error("0 0 31 4,6,9,11 *", "0 0 31 4,6,9,11 *: this date never "
	                                  "occurs (31 April/June/September/"
	                                  "November)");
	expect_error(
	        "0 0 30,31 FEB ?",
	        "0 0 30,31 FEB ?: this date never occurs (30,31 February)");
	expect_error("0 0 30W 2 *",
	             "0 0 30W 2 *: this date never occurs (30W February)");
	expect_error("0 0 L-29 2 *",
	             "0 0 L-29 2 *: this date never occurs (L-29 February)");
	expect_error("0 0 0 30 2 *",
	             "0 0 0 30 2 *: this date never occurs (30 February)");
	/* Control bytes are refused, not echoed. */
	expect_error("0 0 * * *\x01",
	             "unexpected byte 0x01 in cron expression");
}

static void
test_errors_are_one_line(void **state)
{
	char err[16];
	sked_cron *c;

	/* A short buffer truncates; NULL err is allowed. */
	assert_int_equal(sked__cron_parse("0 0 32 * *", &c, err, sizeof(err)),
	                 SKED_ECRON);
	assert_string_equal(err, "day of month: 3");
	assert_int_equal(sked__cron_parse("0 0 32 * *", &c, NULL, 0),
	                 SKED_ECRON);
	assert_int_equal(sked__cron_parse(NULL, &c, NULL, 0), SKED_ECRON);
	/* 29 February alone is fine: it occurs in leap years. */
	assert_int_equal(sked__cron_parse("0 0 29 2 *", &c, NULL, 0), SKED_OK);
	sked__cron_free(c);
	/* 30 February OR a weekday is fine: the weekdays occur. */
	assert_int_equal(sked__cron_parse("0 0 30 2 MON", &c, NULL, 0),
	                 SKED_OK);
	sked__cron_free(c);
	sked__cron_free(NULL);
}

/* ---- daylight saving ------------------------------------------------- */

static void
test_dst_new_york(void **state)
{
	const char *ny = "America/New_York";

	/* Spring: 02:30 does not exist on 8 March; it fires once at the
	 * first instant after the gap, 03:00 EDT = 07:00Z. On the 9th
	 * 02:30 EDT = 06:30Z. */
	expect_fires("30 2 * * *", ny, "2026-03-07T12:00:00Z",
	             "2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z", NULL);
	/* Reaching the end of the gap exactly still fires there. */
	expect_fires("30 2 * * *", ny, "2026-03-08T06:59:59.500Z",
	             "2026-03-08T07:00:00Z", NULL);
	/* Several times in the gap collapse into one fire; 03:00 itself is
	 * the same instant. */
	expect_fires("0,30 2,3 * * *", ny, "2026-03-08T06:00:00Z",
	             "2026-03-08T07:00:00Z", "2026-03-08T07:30:00Z",
	             "2026-03-09T06:00:00Z", NULL);
	/* Hour "*": the gap's times do not exist and are skipped; 00:30
	 * EST 05:30Z, 01:30 EST 06:30Z, then 03:30 EDT 07:30Z. */
	expect_fires("30 * * * *", ny, "2026-03-08T05:00:00Z",
	             "2026-03-08T05:30:00Z", "2026-03-08T06:30:00Z",
	             "2026-03-08T07:30:00Z", NULL);

	/* Fall: 01:30 happens at 05:30Z (EDT) and 06:30Z (EST); a fixed
	 * hour fires only at the first. The next day 01:30 EST = 06:30Z. */
	expect_fires("30 1 * * *", ny, "2026-10-31T12:00:00Z",
	             "2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z", NULL);
	/* Starting inside the second pass does not fire the repeat. */
	expect_fires("30 1 * * *", ny, "2026-11-01T06:10:00Z",
	             "2026-11-02T06:30:00Z", NULL);
	/* Every 20 minutes of 01:xx, only in the first pass: 05:00, 05:20,
	 * 05:40Z, then 01:00 EST on the 2nd = 06:00Z. */
	expect_fires("*/20 1 * * *", ny, "2026-11-01T04:00:00Z",
	             "2026-11-01T05:00:00Z", "2026-11-01T05:20:00Z",
	             "2026-11-01T05:40:00Z", "2026-11-02T06:00:00Z", NULL);
	/* Hour "*": every real hour, both 01:00 EDT (05:00Z) and 01:00 EST
	 * (06:00Z). From 23:30 EDT on the 31st. */
	expect_fires("0 * * * *", ny, "2026-11-01T03:30:00Z",
	             "2026-11-01T04:00:00Z", "2026-11-01T05:00:00Z",
	             "2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z", NULL);
	/* From 01:30 EDT: the next hour start is 01:00 EST. */
	expect_fires("0 * * * *", ny, "2026-11-01T05:30:00Z",
	             "2026-11-01T06:00:00Z", NULL);
	/* Ordinary days are plain: 09:00 EST = 14:00Z, EDT = 13:00Z. */
	expect_fires("0 9 * * *", ny, "2026-01-10T00:00:00Z",
	             "2026-01-10T14:00:00Z", NULL);
	expect_fires("0 9 * * *", ny, "2026-07-10T00:00:00Z",
	             "2026-07-10T13:00:00Z", NULL);
	/* Past 2037, from the footer rule: 9 March 2042 02:30 is in the
	 * gap (second Sunday of March 2042 is the 9th) -> 07:00Z. */
	expect_fires("30 2 * * *", ny, "2042-03-08T12:00:00Z",
	             "2042-03-09T07:00:00Z", "2042-03-10T06:30:00Z", NULL);
}

static void
test_dst_london_berlin(void **state)
{
	/* London, 29 March: 01:30 does not exist -> 02:00 BST = 01:00Z;
	 * the 30th: 01:30 BST = 00:30Z. */
	expect_fires("30 1 * * *", "Europe/London", "2026-03-28T12:00:00Z",
	             "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z", NULL);
	/* London, 25 October: 01:30 BST (00:30Z) fires, 01:30 GMT (01:30Z)
	 * does not; the 26th 01:30 GMT = 01:30Z. */
	expect_fires("30 1 * * *", "Europe/London", "2026-10-24T12:00:00Z",
	             "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z", NULL);
	/* Hour "*" fires 01:00 BST (00:00Z) and 01:00 GMT (01:00Z). */
	expect_fires("0 * * * *", "Europe/London", "2026-10-24T23:30:00Z",
	             "2026-10-25T00:00:00Z", "2026-10-25T01:00:00Z",
	             "2026-10-25T02:00:00Z", NULL);
	/* Berlin, 29 March: 02:30 does not exist -> 03:00 CEST = 01:00Z;
	 * then 02:30 CEST = 00:30Z. */
	expect_fires("30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z",
	             "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z", NULL);
	/* Berlin, 25 October: 02:30 CEST = 00:30Z once; then CET 01:30Z. */
	expect_fires("30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z",
	             "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z", NULL);
	/* Berlin 2040 (footer): DST starts 25 March at 01:00Z. */
	expect_fires("30 2 * * *", "Europe/Berlin", "2040-03-24T12:00:00Z",
	             "2040-03-25T01:00:00Z", NULL);
	/* Six fields: 02:00:30 on 29 March is in the gap too. */
	expect_fires("30 0 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z",
	             "2026-03-29T01:00:00Z", "2026-03-30T00:00:30Z", NULL);
}

static void
test_dst_sydney(void **state)
{
	const char *syd = "Australia/Sydney";

	/* April fall-back (5 April): 02:30 is at 15:30Z (AEDT) and again
	 * 16:30Z (AEST) on the 4th; fires once at the first. 6 April
	 * 02:30 AEST = 16:30Z on the 5th. */
	expect_fires("30 2 * * *", syd, "2026-04-04T12:00:00Z",
	             "2026-04-04T15:30:00Z", "2026-04-05T16:30:00Z", NULL);
	/* Hour "*": 02:00 AEDT (15:00Z), 02:00 AEST (16:00Z), 03:00 AEST
	 * (17:00Z). */
	expect_fires("0 * * * *", syd, "2026-04-04T14:30:00Z",
	             "2026-04-04T15:00:00Z", "2026-04-04T16:00:00Z",
	             "2026-04-04T17:00:00Z", NULL);
	/* October spring-forward (4 October): 02:30 does not exist ->
	 * 03:00 AEDT = 16:00Z on the 3rd; 5 October 02:30 AEDT = 15:30Z
	 * on the 4th. */
	expect_fires("30 2 * * *", syd, "2026-10-03T12:00:00Z",
	             "2026-10-03T16:00:00Z", "2026-10-04T15:30:00Z", NULL);
	/* Midnight on New Year's Day is in summer time: 13:00Z. */
	expect_fires("@yearly", syd, "2026-06-01T00:00:00Z",
	             "2026-12-31T13:00:00Z", NULL);
}

/* ---- speed, bounds and the public API ----------------------------------- */

static void
test_rare_is_fast(void **state)
{
	static const char *const exprs[] = {"0 0 29 2 *", "0 0 29 2 1",
	                                    "0 0 29 2 MON#5", "59 59 23 L 2 ?"};
	sked_cron *c;
	sked_tz *tz;
	struct timespec a, b;
	int64_t next, t = ms_of("2097-01-01T00:00:00Z");
	double us;
	size_t i;
	int k;

	assert_int_equal(sked__tz_load("Europe/Berlin", &tz, NULL, 0), SKED_OK);
	for (i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++) {
		assert_int_equal(sked__cron_parse(exprs[i], &c, NULL, 0),
		                 SKED_OK);
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (k = 0; k < 1000; k++)
			assert_int_equal(sked__cron_next(c, tz, t, &next),
			                 SKED_OK);
		clock_gettime(CLOCK_MONOTONIC, &b);
		us = ((double)(b.tv_sec - a.tv_sec) * 1e9 +
		      (double)(b.tv_nsec - a.tv_nsec)) /
		     1e3 / 1000;
		/* Microseconds normally; a generous bound for sanitizers
		 * and busy machines, still far below minute stepping. */
		if (us > 2000)
			fail_msg("%s: %.1f us per call", exprs[i], us);
		sked__cron_free(c);
	}
	sked__tz_free(tz);
	/* The 2104 answer really comes from the search. */
	expect_fires("0 0 29 2 *", "Europe/Berlin", "2097-01-01T00:00:00Z",
	             "2104-02-28T23:00:00Z", NULL);
}

static void
test_bounds(void **state)
{
	sked_cron *c;
	int64_t next;

	assert_int_equal(sked__cron_parse("* * * * *", &c, NULL, 0), SKED_OK);
	assert_int_equal(
	        sked__cron_next(c, NULL, INT64_C(9000000000000000000), &next),
	        SKED_EINVAL);
	assert_int_equal(sked__cron_next(c, NULL, INT64_MIN, &next),
	                 SKED_EINVAL);
	sked__cron_free(c);
	/* Nothing parseable stays silent for a century (the parser
	 * refuses impossible dates), but 5 Mondays in February come
	 * rarely: leap years whose 1 February is a Monday, 2016, 2044. */
	expect_fires("0 0 ? 2 MON#5", NULL, "2016-03-01T00:00:00Z",
	             "2044-02-29T00:00:00Z", NULL);
}

static void
test_public_api(void **state)
{
	char err[128];
	int64_t out[3];

	assert_int_equal(sked_cron_check("*/5 * * * *", NULL, err, sizeof(err)),
	                 SKED_OK);
	assert_int_equal(sked_cron_check("0 9 * * MON-FRI", "Europe/Berlin",
	                                 err, sizeof(err)),
	                 SKED_OK);
	assert_int_equal(sked_cron_check("0 0 32 * *", NULL, err, sizeof(err)),
	                 SKED_ECRON);
	assert_string_equal(err, "day of month: 32 is out of range 1-31");
	assert_int_equal(
	        sked_cron_check("0 0 * * *", "Mars/Base", err, sizeof(err)),
	        SKED_ETZ);
	assert_string_equal(err, "unknown time zone 'Mars/Base'");

	assert_int_equal(sked_cron_next("30 2 * * *", "America/New_York",
	                                ms_of("2026-03-07T12:00:00Z"), 3, out,
	                                err, sizeof(err)),
	                 SKED_OK);
	assert_true(out[0] == ms_of("2026-03-08T07:00:00Z"));
	assert_true(out[1] == ms_of("2026-03-09T06:30:00Z"));
	assert_true(out[2] == ms_of("2026-03-10T06:30:00Z"));
	/* NULL zone is UTC. */
	assert_int_equal(sked_cron_next("@hourly", NULL,
	                                ms_of("2026-03-07T12:00:00Z"), 2, out,
	                                err, sizeof(err)),
	                 SKED_OK);
	assert_true(out[0] == ms_of("2026-03-07T13:00:00Z"));
	assert_true(out[1] == ms_of("2026-03-07T14:00:00Z"));
	assert_int_equal(sked_cron_next("@hourly", "../etc/passwd", 0, 1, out,
	                                err, sizeof(err)),
	                 SKED_ETZ);
	assert_string_equal(err, "invalid time zone name '../etc/passwd'");
	assert_int_equal(
	        sked_cron_next("@hourly", NULL, 0, 1, NULL, err, sizeof(err)),
	        SKED_EINVAL);
	assert_int_equal(
	        sked_cron_next("@hourly", NULL, 0, 0, NULL, err, sizeof(err)),
	        SKED_OK);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_basic_fields),
	        cmocka_unit_test(test_sunday),
	        cmocka_unit_test(test_aliases),
	        cmocka_unit_test(test_seconds_field),
	        cmocka_unit_test(test_leap_years),
	        cmocka_unit_test(test_month_ends_and_rollover),
	        cmocka_unit_test(test_last_day),
	        cmocka_unit_test(test_last_and_nth_weekday),
	        cmocka_unit_test(test_nearest_weekday),
	        cmocka_unit_test(test_dom_dow_or),
	        cmocka_unit_test(test_errors),
	        cmocka_unit_test(test_errors_are_one_line),
	        cmocka_unit_test(test_dst_new_york),
	        cmocka_unit_test(test_dst_london_berlin),
	        cmocka_unit_test(test_dst_sydney),
	        cmocka_unit_test(test_rare_is_fast),
	        cmocka_unit_test(test_bounds),
	        cmocka_unit_test(test_public_api),
	};

	unsetenv("TZDIR");
	return cmocka_run_group_tests_name("cron", tests, NULL, NULL);
}
