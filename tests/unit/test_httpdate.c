/* Tests proto/httpdate.c: the three forms, round trips, garbage, and dates
 * past 2038. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/httpdate.h"
#include "tests/unit/check_run.h"

#define RFC_EXAMPLE 784111777 /* Sun, 06 Nov 1994 08:49:37 GMT */

static int parse(const char *s, time_t *t)
{
	/* exactly strlen bytes on the heap, no NUL: reads past len show up */
	size_t n = strlen(s);
	char *copy = malloc(n ? n : 1);
	ck_assert_ptr_nonnull(copy);
	memcpy(copy, s, n);
	int rc = httpdate_parse(copy, n, t);
	free(copy);
	return rc;
}

static void check_parse(const char *s, time_t want)
{
	time_t t = 0;
	int rc = parse(s, &t);

	ck_assert_msg(rc == 0, "\"%s\": rc %d", s, rc);
	ck_assert_msg(t == want, "\"%s\": got %lld, want %lld", s, (long long)t, (long long)want);
}

static void check_bad(const char *s)
{
	time_t t = 12345;

	ck_assert_msg(parse(s, &t) == -EINVAL, "\"%s\" accepted", s);
	ck_assert_msg(t == 12345, "\"%s\": output written on error", s);
}

START_TEST(test_format)
{
	char buf[HTTPDATE_LEN + 1];

	httpdate_format(RFC_EXAMPLE, buf);
	ck_assert_str_eq(buf, "Sun, 06 Nov 1994 08:49:37 GMT");
	httpdate_format(0, buf);
	ck_assert_str_eq(buf, "Thu, 01 Jan 1970 00:00:00 GMT");
	httpdate_format(951782400, buf);
	ck_assert_str_eq(buf, "Tue, 29 Feb 2000 00:00:00 GMT");
	httpdate_format(-1, buf);
	ck_assert_str_eq(buf, "Wed, 31 Dec 1969 23:59:59 GMT");
	ck_assert_uint_eq(strlen(buf), HTTPDATE_LEN);
}
END_TEST

START_TEST(test_format_past_2038)
{
	char buf[HTTPDATE_LEN + 1];

	ck_assert_uint_ge(sizeof(time_t), 8);
	httpdate_format((time_t)2147483647, buf);
	ck_assert_str_eq(buf, "Tue, 19 Jan 2038 03:14:07 GMT");
	httpdate_format((time_t)2147483648LL, buf);
	ck_assert_str_eq(buf, "Tue, 19 Jan 2038 03:14:08 GMT");
	httpdate_format((time_t)4102444800LL, buf);
	ck_assert_str_eq(buf, "Fri, 01 Jan 2100 00:00:00 GMT");
	httpdate_format((time_t)253402300799LL, buf);
	ck_assert_str_eq(buf, "Fri, 31 Dec 9999 23:59:59 GMT");
	/* beyond four digits: clamped, never malformed */
	httpdate_format((time_t)253402300800LL, buf);
	ck_assert_str_eq(buf, "Fri, 31 Dec 9999 23:59:59 GMT");
	httpdate_format((time_t)INT64_MAX, buf);
	ck_assert_str_eq(buf, "Fri, 31 Dec 9999 23:59:59 GMT");
	httpdate_format((time_t)INT64_MIN, buf);
	ck_assert_str_eq(buf, "Mon, 01 Jan 0001 00:00:00 GMT");
}
END_TEST

/* The formatter computes UTC fields itself: it must agree with gmtime_r
 * (as strftime with C-locale names) over the whole years 1..9999 range,
 * leap days and both sides of 1970 included. */
#define LIKE_GMTIME_MAX 64 /* room for any int fields */
static void format_like_gmtime(time_t t, char out[LIKE_GMTIME_MAX])
{
	static const char *const wd[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
	static const char *const mo[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
					 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	struct tm tm;

	ck_assert_ptr_nonnull(gmtime_r(&t, &tm));
	snprintf(out, LIKE_GMTIME_MAX, "%s, %02d %s %04d %02d:%02d:%02d GMT", wd[tm.tm_wday],
		 tm.tm_mday, mo[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

START_TEST(test_format_agrees_with_gmtime)
{
	static const long long edges[] = {
	    -62135596800LL, -62135596799LL, -86401, -86400, -1, 0, 1, 86399, 86400,
	    951782399 /* 2000-02-28T23:59:59 */, 951782400, 951868800 /* 2000-03-01 */,
	    4107542399LL /* 2100-02-28T23:59:59 */, 4107542400LL, 253402300799LL};
	char got[HTTPDATE_LEN + 1], want[LIKE_GMTIME_MAX];
	unsigned long long x = 88172645463325252ULL; /* xorshift: reproducible */

	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		httpdate_format((time_t)edges[i], got);
		format_like_gmtime((time_t)edges[i], want);
		ck_assert_str_eq(got, want);
	}
	for (int i = 0; i < 50000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		long long t = -62135596800LL + (long long)(x % (253402300799ULL + 62135596800ULL));
		httpdate_format((time_t)t, got);
		format_like_gmtime((time_t)t, want);
		ck_assert_str_eq(got, want);
	}
}
END_TEST

/* RFC 3339 from the same fields, against gmtime_r's, over years 0 to 9999
 * (what autoindex.c's listings print). Four-digit years throughout:
 * strftime's %Y would print year 999 as "999". */
START_TEST(test_rfc3339_agrees_with_gmtime)
{
	static const long long edges[] = {-62167219200LL, -62135596800LL, -1, 0, 1,
					  951782400, 4107542400LL, 253402300799LL};
	char got[24], want[64];
	struct tm tm;
	unsigned long long x = 88172645463325252ULL;

	for (int i = 0; i < 25000 + (int)(sizeof(edges) / sizeof(edges[0])); i++) {
		long long t;
		if (i < (int)(sizeof(edges) / sizeof(edges[0]))) {
			t = edges[i];
		} else {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			t = -62167219200LL + (long long)(x % (253402300799ULL + 62167219200ULL));
		}
		time_t tt = (time_t)t;
		ck_assert_ptr_nonnull(gmtime_r(&tt, &tm));
		snprintf(want, sizeof(want), "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
		httpdate_rfc3339(tt, got);
		ck_assert_str_eq(got, want);
	}
}
END_TEST

START_TEST(test_parse_forms)
{
	check_parse("Sun, 06 Nov 1994 08:49:37 GMT", RFC_EXAMPLE);
	check_parse("Sun Nov  6 08:49:37 1994", RFC_EXAMPLE);
	check_parse("Sun Nov 06 08:49:37 1994", RFC_EXAMPLE);
	check_parse("Thu, 01 Jan 1970 00:00:00 GMT", 0);
	check_parse("Wed, 31 Dec 1969 23:59:59 GMT", -1);
	check_parse("Tue, 29 Feb 2000 00:00:00 GMT", 951782400);
	check_parse("Thu Feb 29 00:00:00 2024", 1709164800);
	/* a leap second carries into the next minute */
	check_parse("Sat, 31 Dec 2016 23:59:60 GMT", 1483228800);
}
END_TEST

/* The RFC 850 century depends on today's date (RFC 9110 5.6.7), so the
 * expected years are worked out here the same way. */
static long long rfc850_expected(int yy, int mon, int mday, int h, int m, int s)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	int cur = tm.tm_year + 1900;
	int year = cur - cur % 100 + yy;
	if (year > cur + 50)
		year -= 100;
	struct tm want = {.tm_year = year - 1900,
	                  .tm_mon = mon,
	                  .tm_mday = mday,
	                  .tm_hour = h,
	                  .tm_min = m,
	                  .tm_sec = s};
	return (long long)timegm(&want);
}

static const char *weekday_long(long long t)
{
	static const char *const names[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
	                                    "Thursday", "Friday", "Saturday"};
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	return names[tm.tm_wday];
}

START_TEST(test_parse_rfc850)
{
	char buf[64];
	struct {
		int yy, mon, mday;
		const char *mname;
	} cases[] = {{94, 10, 6, "Nov"},  {0, 0, 1, "Jan"},   {38, 0, 19, "Jan"},
	             {69, 11, 31, "Dec"}, {99, 5, 15, "Jun"}, {70, 0, 1, "Jan"}};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long long want =
		    rfc850_expected(cases[i].yy, cases[i].mon, cases[i].mday, 8, 49, 37);
		snprintf(buf, sizeof(buf), "%s, %02d-%s-%02d 08:49:37 GMT", weekday_long(want),
		         cases[i].mday, cases[i].mname, cases[i].yy);
		check_parse(buf, (time_t)want);
	}
	/* while it is before 2044, "94" is 1994, as in the RFC example */
	if (time(NULL) < 2335219200LL) /* 2044-01-01 */
		check_parse("Sunday, 06-Nov-94 08:49:37 GMT", RFC_EXAMPLE);
	check_bad("Sun, 06-Nov-94 08:49:37 GMT");    /* short name */
	check_bad("Monday, 06-Nov-94 08:49:37 GMT"); /* wrong weekday */
	check_bad("Sunday, 06-Nov-1994 08:49:37 GMT");
	check_bad("Sunday, 06 Nov 94 08:49:37 GMT");
	check_bad("Sunday,06-Nov-94 08:49:37 GMT ");
	check_bad("Sunday, 06-nov-94 08:49:37 GMT");
	check_bad("Sunday, 06-Nov-94 08:49:37 UTC");
	check_bad("Sunday, 06-Nov-9x 08:49:37 GMT");
	check_bad("Someday, 06-Nov-94 08:49:37 GMT");
	check_bad("Sunday , 06-Nov-94 08:49:37 GMT");
	check_bad("Wednesday,, 06-Nov-94 08:49:37 GMT");
}
END_TEST

START_TEST(test_parse_past_2038)
{
	check_parse("Tue, 19 Jan 2038 03:14:08 GMT", (time_t)2147483648LL);
	check_parse("Fri, 01 Jan 2100 00:00:00 GMT", (time_t)4102444800LL);
	check_parse("Fri, 31 Dec 9999 23:59:59 GMT", (time_t)253402300799LL);
	check_parse("Fri Dec 31 23:59:59 9999", (time_t)253402300799LL);
	check_bad("Mon, 29 Feb 2100 00:00:00 GMT"); /* 2100 is not a leap year */
}
END_TEST

START_TEST(test_round_trip)
{
	static const long long times[] = {0,
	                                  1,
	                                  -1,
	                                  784111777,
	                                  951782400,
	                                  1700000000,
	                                  2147483647,
	                                  2147483648LL,
	                                  4102444799LL,
	                                  32503680000LL,
	                                  253402300799LL,
	                                  -2208988800LL};
	char buf[HTTPDATE_LEN + 1];
	time_t t;

	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
		httpdate_format((time_t)times[i], buf);
		ck_assert_int_eq(httpdate_parse(buf, HTTPDATE_LEN, &t), 0);
		ck_assert_msg((long long)t == times[i], "%s: %lld != %lld", buf, (long long)t,
		              times[i]);
	}
	/* every day for 150 years from 1950, at a varying time of day */
	for (long long x = -631152000LL; x < 4102444800LL; x += 86400 + 3607) {
		httpdate_format((time_t)x, buf);
		ck_assert_int_eq(httpdate_parse(buf, HTTPDATE_LEN, &t), 0);
		ck_assert_int_eq((long long)t, x);
	}
}
END_TEST

START_TEST(test_invalid)
{
	static const char *const bad[] = {
	    "",
	    "garbage",
	    "Sun, 06 Nov 1994 08:49:37 GMT ",
	    " Sun, 06 Nov 1994 08:49:37 GMT",
	    "Sun, 06 Nov 1994 08:49:37 gmt",
	    "Sun, 06 Nov 1994 08:49:37 UTC",
	    "sun, 06 Nov 1994 08:49:37 GMT",
	    "Sun, 06 nov 1994 08:49:37 GMT",
	    "Sun, 6 Nov 1994 08:49:37 GMT",
	    "Sun, 06 Nov 94 08:49:37 GMT",
	    "Sun, 06-Nov-1994 08:49:37 GMT",
	    "Sun,  6 Nov 1994 08:49:37 GMT",
	    "Sun, 06 Nov 1994 8:49:37 GMT ",
	    "Sun, 06 Nov 1994 08.49.37 GMT",
	    "Sun, 06 Nov 1994 24:00:00 GMT",
	    "Sun, 06 Nov 1994 08:60:00 GMT",
	    "Sun, 06 Nov 1994 08:49:61 GMT",
	    "Sun, 00 Nov 1994 08:49:37 GMT",
	    "Sun, 32 Nov 1994 08:49:37 GMT",
	    "Sat, 31 Nov 1994 08:49:37 GMT", /* November has 30 days */
	    "Thu, 29 Feb 2001 08:49:37 GMT",
	    "Mon, 06 Nov 1994 08:49:37 GMT", /* wrong weekday */
	    "Sun, 06 Xyz 1994 08:49:37 GMT",
	    "Sun, 06 Nov 19x4 08:49:37 GMT",
	    "Sun, 06 Nov -994 08:49:37 GMT",
	    "Sun, +6 Nov 1994 08:49:37 GMT",
	    "Sun, 06 Nov 1994 08:49:3a GMT",
	    "Sun; 06 Nov 1994 08:49:37 GMT",
	    "Sun Nov  6 08:49:37 1994 ",
	    "Sun Nov 6 08:49:37 1994",
	    "Sun Nov  6 08:49:37 94",
	    "Sun Nov   6 08:49:37 1994",
	    "Mon Nov  6 08:49:37 1994",
	    "Sun Nov  0 08:49:37 1994",
	    "Sun Nov 6  08:49:37 1994",
	    "Sun  Nov 6 08:49:37 1994",
	    "Sun Nov  6 08:49:37  994",
	    "Sun Nov  6 08:49:37 GMT ",
	    "1994-11-06T08:49:37Z",
	    "784111777",
	    "Sun, 06 Nov 1994 08:49:37 GMT\r\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		check_bad(bad[i]);

	/* an embedded NUL is not a terminator: the length decides */
	time_t t = 0;
	ck_assert_int_eq(httpdate_parse("Sun, 06 Nov 1994 08:49:37 GMT\0", 30, &t), -EINVAL);
	ck_assert_int_eq(httpdate_parse("Sun, 06 Nov 1994 08:49:37 G\0T", 29, &t), -EINVAL);
	ck_assert_int_eq(httpdate_parse(NULL, 0, &t), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("httpdate");
	TCase *tc = tcase_create("httpdate");

	tcase_add_test(tc, test_format);
	tcase_add_test(tc, test_format_past_2038);
	tcase_add_test(tc, test_format_agrees_with_gmtime);
	tcase_add_test(tc, test_rfc3339_agrees_with_gmtime);
	tcase_add_test(tc, test_parse_forms);
	tcase_add_test(tc, test_parse_rfc850);
	tcase_add_test(tc, test_parse_past_2038);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_invalid);
	suite_add_tcase(s, tc);

	return check_run(s);
}
