/* Tests server/core/page_guard.c: a read of mapped pages past the end of a
 * file that shrank ends the guarded call, and only that. */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "server/core/page_guard.h"
#include "tests/unit/check_run.h"

static char path[] = "/var/tmp/test_page_guard.XXXXXX";
static int fd = -1;
static unsigned char *map;
static size_t page;

/* A file of three pages, mapped, then cut to one: its second and third
 * pages are past its end (SIGBUS, mmap(2)). */
static void setup(void)
{
	page = (size_t)sysconf(_SC_PAGESIZE);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	/* Unlinked at once: two tests end their child with SIGBUS, and
	 * teardown does not run after that. */
	unlink(path);
	strcpy(path + strlen(path) - 6, "XXXXXX");
	unsigned char *block = malloc(3 * page);
	ck_assert_ptr_nonnull(block);
	memset(block, 'g', 3 * page);
	ck_assert_int_eq(write(fd, block, 3 * page), (ssize_t)(3 * page));
	free(block);
	map = mmap(NULL, 3 * page, PROT_READ, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(map, MAP_FAILED);
	ck_assert_int_eq(ftruncate(fd, (off_t)page), 0);
	page_guard_install();
}

static void teardown(void)
{
	munmap(map, 3 * page);
	close(fd);
}

struct sum {
	const unsigned char *p;
	size_t len;
	unsigned long total;
};

static void add_up(void *arg)
{
	struct sum *s = arg;

	for (size_t i = 0; i < s->len; i++)
		s->total += ((const volatile unsigned char *)s->p)[i];
}

START_TEST(read_within_the_file)
{
	struct iovec r = {map, page};
	struct sum s = {map, page, 0};

	ck_assert(page_guard_call(&r, 1, add_up, &s));
	ck_assert_uint_eq(s.total, (unsigned long)'g' * page);
}
END_TEST

/* The read past the end stops there, and the guard works again after. */
START_TEST(read_past_the_end_is_stopped)
{
	struct iovec r[2] = {{map, page}, {map + page, 2 * page}};
	struct sum s = {map, 3 * page, 0};

	ck_assert(!page_guard_call(r, 2, add_up, &s));
	ck_assert_uint_eq(s.total, (unsigned long)'g' * page);
	s = (struct sum){map + 2 * page, page, 0};
	ck_assert(!page_guard_call(&r[1], 1, add_up, &s));
	s = (struct sum){map, page, 0};
	ck_assert(page_guard_call(r, 1, add_up, &s));
}
END_TEST

/* A SIGBUS at an address the call was not given is not swallowed. */
START_TEST(other_pages_still_kill)
{
	struct iovec r = {map, page};
	struct sum s = {map + page, page, 0};

	page_guard_call(&r, 1, add_up, &s);
}
END_TEST

/* Nor is one outside any guarded call. */
START_TEST(unguarded_reads_still_kill)
{
	struct sum s = {map + page, page, 0};

	add_up(&s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("page_guard");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, read_within_the_file);
	tcase_add_test(tc, read_past_the_end_is_stopped);
	/* These two end the process: only where each test runs in a child
	 * of its own (not CK_FORK=no, scripts/test's valgrind pass; the
	 * plain and the ASan passes run them). */
	const char *fork = getenv("CK_FORK");
	if (!fork || strcmp(fork, "no") != 0) {
		tcase_add_test_raise_signal(tc, other_pages_still_kill, SIGBUS);
		tcase_add_test_raise_signal(tc, unguarded_reads_still_kill, SIGBUS);
	}
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(suite());
}
