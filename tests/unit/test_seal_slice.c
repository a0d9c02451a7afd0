/* Tests server/net/seal_slice.c: how much the sealer takes at once as the
 * speed of its seals changes. */
#include <check.h>
#include <stdlib.h>

#include "server/net/seal_slice.h"
#include "tests/unit/check_run.h"

/* The largest seal at the usual speed (seal_slice.h). */
#define USUAL_NS 80000

START_TEST(test_starts_whole)
{
	struct seal_slice sl;

	seal_slice_init(&sl);
	ck_assert_uint_eq(seal_slice_take(&sl, 1 << 30), SEAL_MAX);
	ck_assert_uint_eq(seal_slice_take(&sl, 1000), 1000);
	seal_slice_took(&sl, SEAL_MAX, USUAL_NS);
	ck_assert_uint_eq(seal_slice_take(&sl, 1 << 30), SEAL_MAX);
}
END_TEST

/* What seals in the slice at the speed measured, in whole records. */
START_TEST(test_slow_first_seal)
{
	struct seal_slice sl;

	seal_slice_init(&sl);
	seal_slice_took(&sl, SEAL_MAX, 4 * (uint64_t)SEAL_SLICE_NS);
	ck_assert_uint_eq(seal_slice_take(&sl, SEAL_MAX), SEAL_MAX / 4);
	seal_slice_init(&sl);
	seal_slice_took(&sl, 200 * 1024, 2 * (uint64_t)SEAL_SLICE_NS); /* 100 KiB fit */
	ck_assert_uint_eq(seal_slice_take(&sl, SEAL_MAX), 6 * SEAL_SLICE_MIN);
}
END_TEST

/* One seal some times slower among quick ones (an interrupt, a fault)
 * keeps the size. */
START_TEST(test_a_slower_seal_keeps)
{
	struct seal_slice sl;

	seal_slice_init(&sl);
	for (int i = 0; i < 8; i++)
		seal_slice_took(&sl, SEAL_MAX, USUAL_NS);
	seal_slice_took(&sl, SEAL_MAX, USUAL_NS * 22 / 10);
	ck_assert_uint_eq(seal_slice_take(&sl, SEAL_MAX), SEAL_MAX);
}
END_TEST

/* A stall of milliseconds in one seal (a preemption) cuts the size to a
 * record; quick seals bring it back within some ten (seal_slice.c). */
START_TEST(test_stall_cuts_then_recovers)
{
	struct seal_slice sl;
	int seals = 0;

	seal_slice_init(&sl);
	for (int i = 0; i < 8; i++)
		seal_slice_took(&sl, SEAL_MAX, USUAL_NS);
	seal_slice_took(&sl, SEAL_MAX, 6500000);
	ck_assert_uint_eq(seal_slice_take(&sl, SEAL_MAX), SEAL_SLICE_MIN);
	while (seal_slice_take(&sl, SEAL_MAX) < SEAL_MAX && seals < 100) {
		size_t n = seal_slice_take(&sl, SEAL_MAX);
		seal_slice_took(&sl, n, (uint64_t)n * USUAL_NS / SEAL_MAX);
		seals++;
	}
	ck_assert_int_le(seals, 12);
}
END_TEST

/* Memory twenty times slower: within a few seals they are a slice's worth,
 * and as many quick ones bring the whole size back. */
START_TEST(test_slow_run_and_back)
{
	struct seal_slice sl;
	size_t last = SEAL_MAX;

	seal_slice_init(&sl);
	seal_slice_took(&sl, SEAL_MAX, USUAL_NS);
	for (int i = 0; i < 12; i++) {
		size_t n = seal_slice_take(&sl, SEAL_MAX);
		ck_assert_uint_le(n, last);
		ck_assert_uint_eq(n % SEAL_SLICE_MIN, 0);
		seal_slice_took(&sl, n, (uint64_t)n * USUAL_NS * 20 / SEAL_MAX);
		last = n;
	}
	ck_assert_uint_lt(seal_slice_take(&sl, SEAL_MAX), SEAL_MAX / 4);
	/* About SEAL_SLICE_NS each now. */
	size_t n = seal_slice_take(&sl, SEAL_MAX);
	ck_assert_uint_le((uint64_t)n * USUAL_NS * 20 / SEAL_MAX, SEAL_SLICE_NS);
	for (int i = 0; i < 12; i++) {
		n = seal_slice_take(&sl, SEAL_MAX);
		seal_slice_took(&sl, n, (uint64_t)n * USUAL_NS / SEAL_MAX);
	}
	ck_assert_uint_eq(seal_slice_take(&sl, SEAL_MAX), SEAL_MAX);
}
END_TEST

/* However slow, one record still goes; short seals do not count. */
START_TEST(test_floor_and_short_seals)
{
	struct seal_slice sl;

	seal_slice_init(&sl);
	seal_slice_took(&sl, SEAL_SLICE_MIN - 1, UINT64_MAX);
	ck_assert_uint_eq(seal_slice_take(&sl, SEAL_MAX), SEAL_MAX);
	seal_slice_took(&sl, SEAL_SLICE_MIN, UINT64_MAX);
	ck_assert_uint_eq(seal_slice_take(&sl, SEAL_MAX), SEAL_SLICE_MIN);
	seal_slice_took(&sl, SEAL_MAX, 0);
	ck_assert_uint_eq(seal_slice_take(&sl, SEAL_MAX) % SEAL_SLICE_MIN, 0);
}
END_TEST

static Suite *seal_slice_suite(void)
{
	Suite *s = suite_create("seal_slice");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_starts_whole);
	tcase_add_test(tc, test_slow_first_seal);
	tcase_add_test(tc, test_a_slower_seal_keeps);
	tcase_add_test(tc, test_stall_cuts_then_recovers);
	tcase_add_test(tc, test_slow_run_and_back);
	tcase_add_test(tc, test_floor_and_short_seals);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(seal_slice_suite());
}
