/* Tests server/net/pace.c: --limit-rate's token bucket, its free first bytes,
 * the size of what it grants and how long it says to wait. */
#include <check.h>
#include <stdlib.h>

#include "server/net/pace.h"
#include "tests/unit/check_run.h"

START_TEST(test_unlimited)
{
	struct pace p;

	pace_init(&p, 0, 12345, 100);
	ck_assert(!pace_limits(&p));
	ck_assert_uint_eq(pace_grant(&p, 1 << 30, 100), 1 << 30);
	pace_spend(&p, 1 << 30);
	ck_assert_uint_eq(pace_grant(&p, 1 << 30, 100), 1 << 30);
	ck_assert_uint_eq(p.free_left, 0);
}
END_TEST

/* The free bytes go at once, whatever the rate, and are spent first. */
START_TEST(test_free_first)
{
	struct pace p;

	pace_init(&p, 1000, 100000, 0);
	ck_assert(!pace_limits(&p));
	ck_assert_uint_eq(pace_grant(&p, 60000, 0), 60000);
	pace_spend(&p, 60000);
	ck_assert_uint_eq(p.free_left, 40000);
	/* Past the free bytes: what is left of them and the full bucket. */
	ck_assert_uint_eq(pace_grant(&p, 60000, 0), 40000 + 1000);
	pace_spend(&p, 41000);
	ck_assert(pace_limits(&p));
	ck_assert_uint_eq(pace_grant(&p, 60000, 0), 0);
}
END_TEST

/* The bucket holds a tenth of a second's worth, or a chunk of 16 KiB, or
 * the whole rate below that. */
START_TEST(test_burst)
{
	struct pace p;

	pace_init(&p, 10 << 20, 0, 0); /* 10 MiB/s: 1 MiB */
	ck_assert_uint_eq(p.burst, 1 << 20);
	pace_init(&p, 64 * 1024, 0, 0); /* 64 KiB/s: one chunk */
	ck_assert_uint_eq(p.burst, PACE_CHUNK);
	pace_init(&p, 1000, 0, 0); /* 1000 B/s: a second's worth */
	ck_assert_uint_eq(p.burst, 1000);
	ck_assert_uint_eq(pace_grant(&p, 5000, 0), 1000);
}
END_TEST

/* Empty: nothing until a chunk has come back, and the wait says when. */
START_TEST(test_wait_and_refill)
{
	struct pace p;

	pace_init(&p, 256 * 1024, 0, 1000); /* burst 26214 */
	size_t n = pace_grant(&p, 1 << 20, 1000);
	ck_assert_uint_eq(n, 26214);
	pace_spend(&p, n);
	ck_assert_uint_eq(pace_grant(&p, 1 << 20, 1000), 0);
	/* 26214 bytes at 262144/s: 100 ms. */
	ck_assert_uint_eq(pace_wait_ms(&p, 1 << 20), 100);
	/* 50 ms later: half a bucket, less than it waits for. */
	ck_assert_uint_eq(pace_grant(&p, 1 << 20, 1050), 0);
	ck_assert_uint_eq(pace_wait_ms(&p, 1 << 20), 50);
	ck_assert_uint_eq(pace_grant(&p, 1 << 20, 1100), 26214);
	/* A small send needs only its own bytes. */
	pace_spend(&p, 26214);
	ck_assert_uint_eq(pace_grant(&p, 100, 1101), 100);
	ck_assert_uint_eq(pace_grant(&p, 300, 1101), 0);
	ck_assert_uint_eq(pace_wait_ms(&p, 300), 1);
	/* Never more than a full bucket, however long it was idle. */
	ck_assert_uint_eq(pace_grant(&p, 1 << 20, 1000000000), 26214);
	/* A clock that went back refills nothing. */
	pace_spend(&p, 26214);
	ck_assert_uint_eq(pace_grant(&p, 1 << 20, 5), 0);
}
END_TEST

/* No fraction of a byte is lost to millisecond steps: a second of 1 ms
 * steps at 1000 B/s grants 1000 bytes. */
START_TEST(test_no_rounding_loss)
{
	struct pace p;
	uint64_t total = 0;

	pace_init(&p, 1000, 0, 0);
	pace_spend(&p, pace_grant(&p, 1000, 0));
	for (uint64_t t = 1; t <= 3000; t++) {
		size_t n = pace_grant(&p, 1, t);
		total += n;
		pace_spend(&p, n);
	}
	ck_assert_uint_eq(total, 3000);
}
END_TEST

/* The arithmetic holds at the largest rate the option takes. */
START_TEST(test_large_rate)
{
	struct pace p;

	pace_init(&p, 1u << 30, 0, 0);
	ck_assert_uint_eq(p.burst, (1u << 30) / 10);
	pace_spend(&p, pace_grant(&p, 1u << 30, 0));
	ck_assert_uint_eq(pace_grant(&p, 1u << 30, 0), 0);
	ck_assert_uint_eq(pace_grant(&p, 1u << 30, 100), (1u << 30) / 10);
	ck_assert_uint_eq(pace_grant(&p, 1u << 30, UINT64_MAX / 2), (1u << 30) / 10);
}
END_TEST

static Suite *pace_suite(void)
{
	Suite *s = suite_create("pace");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_unlimited);
	tcase_add_test(tc, test_free_first);
	tcase_add_test(tc, test_burst);
	tcase_add_test(tc, test_wait_and_refill);
	tcase_add_test(tc, test_no_rounding_loss);
	tcase_add_test(tc, test_large_rate);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(pace_suite());
}
