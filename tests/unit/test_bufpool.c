/* Tests server/core/bufpool.c: a steady load keeps the buffers it cycles
 * through from one trim (a timer tick) to the next, however many; a class
 * no one used for a whole tick gives all of its buffers back; a load that
 * fell gives back, tick by tick, what it no longer needs; a load that
 * comes in waves keeps, within the budget it is given, what a wave takes
 * until the next one, and no longer than BUFPOOL_HOLD_TICKS; one trim
 * gives back at most BUFPOOL_TRIM_MAX buffers, the largest first. */
#include <check.h>
#include <stdlib.h>

#include "server/core/bufpool.h"
#include "tests/unit/check_run.h"

#define BIG (256 * 1024) /* the class of a response's send buffer */
#define CLASS 4          /* 16 KiB << 4 */

static struct bufpool pool;
static void *held[200];

static void take(unsigned n)
{
	size_t cap;

	for (unsigned i = 0; i < n; i++) {
		held[i] = bufpool_get(&pool, BIG, &cap);
		ck_assert_ptr_nonnull(held[i]);
		ck_assert_uint_eq(cap, BIG);
	}
}

static void give(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		bufpool_put(&pool, held[i], BIG);
}

/* n buffers of the smallest class in use at once, then given back. */
static void take_small(unsigned n)
{
	size_t cap;
	void *small[8];

	ck_assert_uint_le(n, 8);
	for (unsigned i = 0; i < n; i++)
		small[i] = bufpool_get(&pool, BUFPOOL_MIN, &cap);
	for (unsigned i = 0; i < n; i++)
		bufpool_put(&pool, small[i], cap);
}

static void setup(void)
{
	pool = (struct bufpool){0};
}

static void teardown(void)
{
	bufpool_drain(&pool);
}

START_TEST(test_steady_load_keeps_its_buffers)
{
	/* 100 connections' send buffers, more than 16 MiB: all kept. */
	take(100);
	give(100);
	ck_assert_uint_eq(pool.nfree[CLASS], 100);
	bufpool_trim(&pool, 0);
	ck_assert_uint_eq(pool.nfree[CLASS], 100);
	/* Ticks in which 75 to 100 of them are in use at once: none goes
	 * back to the system, none is taken from it. */
	for (unsigned tick = 0; tick < 40; tick++) {
		unsigned long hits = pool.hits, gets = pool.gets;
		unsigned n = 75 + (tick * 7) % 26;
		take(n);
		give(n);
		ck_assert_uint_eq(pool.hits - hits, pool.gets - gets);
		bufpool_trim(&pool, 0);
		ck_assert_uint_eq(pool.nfree[CLASS], 100);
	}
}
END_TEST

/* What the metric ktlsd_buffer_bytes shows: bytes taken, bytes kept. */
START_TEST(test_bytes_used_and_kept)
{
	size_t used, kept;

	take(10);
	give(4);
	bufpool_bytes(&pool, &used, &kept);
	ck_assert_uint_eq(used, 6 * ((size_t)BUFPOOL_MIN << CLASS));
	ck_assert_uint_eq(kept, 4 * ((size_t)BUFPOOL_MIN << CLASS));
	for (unsigned i = 4; i < 10; i++)
		bufpool_put(&pool, held[i], BIG);
	bufpool_bytes(&pool, &used, &kept);
	ck_assert_uint_eq(used, 0);
	ck_assert_uint_eq(kept, 10 * ((size_t)BUFPOOL_MIN << CLASS));
}
END_TEST

START_TEST(test_idle_class_gives_all_back)
{
	take(50);
	give(50);
	bufpool_trim(&pool, 0); /* the tick they were used in */
	ck_assert_uint_eq(pool.nfree[CLASS], 50);
	bufpool_trim(&pool, 0); /* a tick no one used them */
	ck_assert_uint_eq(pool.nfree[CLASS], 0);
}
END_TEST

START_TEST(test_lower_load_gives_back_the_rest)
{
	take(100);
	give(100);
	bufpool_trim(&pool, 0);
	/* From 100 at once to 10: the peak falls by an eighth a tick, and
	 * what is held beyond it and a quarter more goes back. */
	unsigned last = pool.nfree[CLASS];
	for (unsigned tick = 0; tick < 40; tick++) {
		take(10);
		give(10);
		bufpool_trim(&pool, 0);
		ck_assert_uint_le(pool.nfree[CLASS], last);
		last = pool.nfree[CLASS];
	}
	ck_assert_uint_eq(last, 10 + 10 / BUFPOOL_SPARE_DIV);
}
END_TEST

/* A wave of n every 6 ticks (1.5 s), nothing between. */
static void wave(unsigned n, size_t hold)
{
	take(n);
	give(n);
	for (unsigned tick = 0; tick < 6; tick++)
		bufpool_trim(&pool, hold);
}

START_TEST(test_waves_take_from_the_pool)
{
	size_t hold = 100 * (size_t)BIG;

	wave(100, hold);
	for (unsigned i = 0; i < 10; i++) {
		unsigned long hits = pool.hits, gets = pool.gets;
		wave(100, hold);
		ck_assert_uint_eq(pool.hits - hits, pool.gets - gets);
		ck_assert_uint_eq(pool.nfree[CLASS], 100);
	}
	/* The waves stop: all goes back once they are out of the window. */
	for (unsigned tick = 0; tick < BUFPOOL_HOLD_TICKS; tick++)
		bufpool_trim(&pool, hold);
	ck_assert_uint_eq(pool.nfree[CLASS], 0);
}
END_TEST

START_TEST(test_waves_hold_within_the_budget)
{
	wave(100, 10 * (size_t)BIG);
	ck_assert_uint_eq(pool.nfree[CLASS], 10);
	/* The budget is bytes over all classes, the smaller ones first: the
	 * eight 16 KiB buffers take half of one big one's share, so the big
	 * class keeps 3 of a budget of 4 (a budget per class would keep 4). */
	take_small(8);
	take(100);
	give(100);
	bufpool_trim(&pool, 0); /* the tick of the wave: the peak keeps all */
	bufpool_trim(&pool, 4 * (size_t)BIG);
	bufpool_trim(&pool, 4 * (size_t)BIG); /* 97 to give back: two trims */
	ck_assert_uint_eq(pool.nfree[0], 8);
	ck_assert_uint_eq(pool.nfree[CLASS], 3);
}
END_TEST

/* A wave bigger than one trim may give back: the rest goes on the next
 * ticks, and none is lost or freed twice (ASan). */
START_TEST(test_trim_gives_back_a_bounded_number)
{
	ck_assert_uint_lt(BUFPOOL_TRIM_MAX, 200);
	take(200);
	give(200);
	bufpool_trim(&pool, 0); /* the tick they were used in */
	ck_assert_uint_eq(pool.nfree[CLASS], 200);
	unsigned last = 200;
	while (last > 0) {
		bufpool_trim(&pool, 0);
		unsigned gone = last - pool.nfree[CLASS];
		ck_assert_uint_eq(gone, last < BUFPOOL_TRIM_MAX ? last : BUFPOOL_TRIM_MAX);
		last = pool.nfree[CLASS];
	}
	/* What is still kept when a taker comes is the taker's. */
	take(100);
	give(100);
	bufpool_trim(&pool, 0);
	bufpool_trim(&pool, 0);
	unsigned long hits = pool.hits;
	take(10);
	ck_assert_uint_eq(pool.hits - hits, 10);
	give(10);
}
END_TEST

START_TEST(test_trim_frees_the_largest_first)
{
	take_small(8);
	take(BUFPOOL_TRIM_MAX);
	give(BUFPOOL_TRIM_MAX);
	bufpool_trim(&pool, 0);
	bufpool_trim(&pool, 0); /* a tick no one used either class */
	ck_assert_uint_eq(pool.nfree[CLASS], 0);
	ck_assert_uint_eq(pool.nfree[0], 8);
	bufpool_trim(&pool, 0);
	ck_assert_uint_eq(pool.nfree[0], 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bufpool");
	TCase *tc = tcase_create("trim");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_steady_load_keeps_its_buffers);
	tcase_add_test(tc, test_bytes_used_and_kept);
	tcase_add_test(tc, test_idle_class_gives_all_back);
	tcase_add_test(tc, test_lower_load_gives_back_the_rest);
	tcase_add_test(tc, test_waves_take_from_the_pool);
	tcase_add_test(tc, test_waves_hold_within_the_budget);
	tcase_add_test(tc, test_trim_gives_back_a_bounded_number);
	tcase_add_test(tc, test_trim_frees_the_largest_first);
	suite_add_tcase(s, tc);
	return check_run(s);
}
