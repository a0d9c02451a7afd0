/* Tests server/core/bufpool.c: a steady load keeps the buffers it cycles
 * through from one trim (a timer tick) to the next, however many; a class
 * no one used for a whole tick gives all of its buffers back; a load that
 * fell gives back, tick by tick, what it no longer needs; a load that
 * comes in waves keeps, within the budget it is given, what a wave takes
 * until the next one, and no longer than BUFPOOL_HOLD_TICKS; one trim
 * makes at most BUFPOOL_TRIM_MAX munmap calls of at most
 * BUFPOOL_TRIM_BYTES in all, the largest class first, one call for
 * buffers that lie side by side; a taker then gets the lowest address.
 *
 * munmap is this file's own (the executable's definition comes before
 * libc's for bufpool.c's calls): it counts the calls and bytes, and
 * unmaps by the system call. An ASan build keeps malloc's buffers
 * (BUFPOOL_OWN_MAPS 0), and the checks say what it does instead. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "server/core/bufpool.h"
#include "tests/unit/check_run.h"

#define BIG (256 * 1024) /* the class of a response's send buffer */
#define CLASS 4          /* 16 KiB << 4 */

static struct bufpool pool;
static void *held[400];
static unsigned munmaps;
static size_t unmapped;

int munmap(void *addr, size_t len)
{
	munmaps++;
	unmapped += len;
	return (int)syscall(SYS_munmap, addr, len);
}

static int by_address(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;

	return (x > y) - (x < y);
}

/* How many runs of neighbours held[0..n) make (n at most 400). */
static unsigned runs_of(unsigned n)
{
	void *v[400];
	unsigned runs = n > 0;

	for (unsigned i = 0; i < n; i++)
		v[i] = held[i];
	qsort(v, n, sizeof(*v), by_address);
	for (unsigned i = 1; i < n; i++)
		if ((char *)v[i - 1] + BIG != (char *)v[i])
			runs++;
	return runs;
}

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
	munmaps = 0;
	unmapped = 0;
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
 * ticks, within both bounds, and none is lost or freed twice (ASan). */
START_TEST(test_trim_gives_back_a_bounded_amount)
{
	ck_assert_uint_gt(400 * (size_t)BIG, BUFPOOL_TRIM_BYTES);
	take(400);
	give(400);
	bufpool_trim(&pool, 0); /* the tick they were used in */
	ck_assert_uint_eq(pool.nfree[CLASS], 400);
	unsigned last = 400, trims = 0;
	while (last > 0) {
		munmaps = 0;
		unmapped = 0;
		bufpool_trim(&pool, 0);
		unsigned gone = last - pool.nfree[CLASS];
		ck_assert_uint_gt(gone, 0);
		ck_assert_uint_le((size_t)gone * BIG, BUFPOOL_TRIM_BYTES);
		/* One call a run of neighbours; one free a buffer where malloc's
		 * are kept (an ASan build). */
		ck_assert_uint_le(BUFPOOL_OWN_MAPS ? munmaps : gone, BUFPOOL_TRIM_MAX);
		ck_assert_uint_eq(unmapped, BUFPOOL_OWN_MAPS ? (size_t)gone * BIG : 0);
		last = pool.nfree[CLASS];
		trims++;
	}
	ck_assert_uint_ge(trims, 2);
	/* What is still kept when a taker comes is the taker's. */
	take(400);
	give(400);
	bufpool_trim(&pool, 0);
	bufpool_trim(&pool, 0);
	ck_assert_uint_gt(pool.nfree[CLASS], 10);
	unsigned long hits = pool.hits;
	take(10);
	ck_assert_uint_eq(pool.hits - hits, 10);
	give(10);
}
END_TEST

/* Buffers side by side go back in one munmap each run (an ASan build
 * keeps malloc's buffers, which free() gives back: no munmap of ours). */
START_TEST(test_neighbours_go_in_one_munmap)
{
	take(64);
	unsigned runs = runs_of(64);
	give(64);
	bufpool_trim(&pool, 0);
	bufpool_trim(&pool, 0); /* a tick no one used them: all go */
	ck_assert_uint_eq(pool.nfree[CLASS], 0);
	ck_assert_uint_eq(unmapped, BUFPOOL_OWN_MAPS ? 64 * (size_t)BIG : 0);
	ck_assert_uint_eq(munmaps, BUFPOOL_OWN_MAPS ? runs : 0);
}
END_TEST

/* The trim gives back the highest addresses, and takers then get the
 * lowest first: the buffers in use gather at one end, the free ones at
 * the other, side by side. */
START_TEST(test_takers_get_the_lowest_first)
{
	unsigned n = (unsigned)(BUFPOOL_TRIM_BYTES / BIG) + 10;
	void *v[400];

	ck_assert_uint_le(n, 400);
	take(n);
	for (unsigned i = 0; i < n; i++)
		v[i] = held[i];
	qsort(v, n, sizeof(*v), by_address);
	give(n);
	bufpool_trim(&pool, 0);
	bufpool_trim(&pool, 0); /* all would go; the bounds keep some */
	unsigned left = pool.nfree[CLASS];
	ck_assert_uint_gt(left, 0);
	ck_assert_uint_lt(left, n);
	take(left);
	for (unsigned i = 0; i < left; i++)
		ck_assert_ptr_eq(held[i], v[i]);
	give(left);
}
END_TEST

/* What one trim may give back goes to the largest class first: the
 * smaller one keeps all of its buffers while the larger has some left. */
START_TEST(test_trim_frees_the_largest_first)
{
	unsigned n = (unsigned)(BUFPOOL_TRIM_BYTES / BIG) + 10;

	ck_assert_uint_le(n, 400);
	take_small(8);
	take(n);
	give(n);
	bufpool_trim(&pool, 0); /* the tick they were used in */
	unsigned trims = 0;
	do {
		bufpool_trim(&pool, 0); /* ticks no one used either class */
		trims++;
		if (pool.nfree[CLASS] > 0)
			ck_assert_uint_eq(pool.nfree[0], 8);
	} while (pool.nfree[CLASS] > 0);
	ck_assert_uint_ge(trims, 2);
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
	tcase_add_test(tc, test_trim_gives_back_a_bounded_amount);
	tcase_add_test(tc, test_neighbours_go_in_one_munmap);
	tcase_add_test(tc, test_takers_get_the_lowest_first);
	tcase_add_test(tc, test_trim_frees_the_largest_first);
	suite_add_tcase(s, tc);
	return check_run(s);
}
