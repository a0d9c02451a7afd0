/* Tests server/core/stats.c's per-site counting: the status codes and
 * latency buckets, and the slots a site name keeps for the life of the
 * process. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "server/core/stats.h"
#include "tests/unit/check_run.h"

START_TEST(test_count_site)
{
	static struct worker_stats st; /* 30 KB: not on the stack */

	memset(&st, 0, sizeof(st));
	stats_count_site(&st, 1, 200, 1000, 0);
	stats_count_site(&st, 1, 200, 24, 5);  /* at a bound: that bucket */
	stats_count_site(&st, 1, 404, 0, 6);
	stats_count_site(&st, 1, 418, 0, 3600000);
	stats_count_site(&st, 9999, 200, 1, 1); /* past the slots: the last */
	const struct stat_site *s = &st.sites[1];
	ck_assert_uint_eq(s->codes[0], 2); /* 200 */
	ck_assert_int_eq(stat_codes[10], 404);
	ck_assert_uint_eq(s->codes[10], 1);
	ck_assert_int_eq(stat_codes[STAT_CODES - 1], 0);
	ck_assert_uint_eq(s->codes[STAT_CODES - 1], 1); /* 418: other */
	ck_assert_uint_eq(s->body_bytes, 1024);
	ck_assert_uint_eq(s->latency[0], 2);                        /* <= 5 ms */
	ck_assert_uint_eq(s->latency[1], 1);                        /* <= 25 ms */
	ck_assert_uint_eq(s->latency[STAT_LATENCY_BUCKETS - 1], 1); /* +Inf */
	ck_assert_uint_eq(s->latency_ms, 5 + 6 + 3600000);
	ck_assert_uint_eq(st.sites[STAT_SITES - 1].codes[0], 1);
}
END_TEST

START_TEST(test_site_slots)
{
	char name[16];

	ck_assert_uint_eq(stats_site_slot(NULL), 0);
	ck_assert_str_eq(stats_site_name(0), "-");
	ck_assert_uint_eq(stats_site_count(), 1);
	unsigned a = stats_site_slot("a"), b = stats_site_slot("b");
	ck_assert_uint_eq(a, 1);
	ck_assert_uint_eq(b, 2);
	/* A reload that names them again, in another order: the same slots. */
	ck_assert_uint_eq(stats_site_slot("b"), b);
	ck_assert_uint_eq(stats_site_slot("a"), a);
	ck_assert_str_eq(stats_site_name(a), "a");
	ck_assert_uint_eq(stats_site_count(), 3);
	/* Names past the slots share the last one, "other". */
	for (unsigned i = 3; i < STAT_SITES - 1; i++) {
		snprintf(name, sizeof(name), "s%u", i);
		ck_assert_uint_eq(stats_site_slot(name), i);
	}
	ck_assert_uint_eq(stats_site_slot("one-too-many"), STAT_SITES - 1);
	ck_assert_uint_eq(stats_site_slot("another"), STAT_SITES - 1);
	ck_assert_str_eq(stats_site_name(STAT_SITES - 1), "other");
	ck_assert_uint_eq(stats_site_count(), STAT_SITES - 1);
	ck_assert_uint_eq(stats_site_slot("a"), a); /* the old ones stay */
}
END_TEST

static Suite *stats_suite(void)
{
	Suite *s = suite_create("stats");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_count_site);
	tcase_add_test(tc, test_site_slots);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(stats_suite());
}
