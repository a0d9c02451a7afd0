/* Tests server/page_guard.c: a read of a mapped page that a truncation
 * took away is -EFAULT inside page_guard_run, and the default SIGBUS
 * outside it. */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server/page_guard.h"
#include "tests/unit/check_run.h"

static long page;
static volatile unsigned char sink;

struct read_job {
	const unsigned char *from;
	size_t len;
	unsigned sum;
};

static void read_pages(void *arg)
{
	struct read_job *j = arg;

	for (size_t i = 0; i < j->len; i++)
		j->sum += j->from[i];
}

/* A mapping of three pages of a file cut to one. */
static unsigned char *shrunk_mapping(void)
{
	char path[] = "/tmp/ktlsd-test-page-guard-XXXXXX";
	int fd = mkstemp(path);
	unsigned char *m;

	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(ftruncate(fd, 3 * page), 0);
	m = mmap(NULL, (size_t)(3 * page), PROT_READ, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	ck_assert_int_eq(ftruncate(fd, page), 0);
	close(fd);
	return m;
}

START_TEST(test_fault_is_efault)
{
	unsigned char *m = shrunk_mapping();
	struct read_job ok = {.from = m, .len = (size_t)page};
	struct read_job gone = {.from = m, .len = (size_t)(3 * page)};

	ck_assert_int_eq(page_guard_install(), 0);
	ck_assert_int_eq(page_guard_run(read_pages, &ok), 0);
	ck_assert_int_eq(page_guard_run(read_pages, &gone), -EFAULT);
	/* Again: the guard is armed for every run, not once. */
	ck_assert_int_eq(page_guard_run(read_pages, &gone), -EFAULT);
	ck_assert_int_eq(page_guard_run(read_pages, &ok), 0);
	munmap(m, (size_t)(3 * page));
}
END_TEST

START_TEST(test_fault_outside_kills)
{
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		unsigned char *m = shrunk_mapping();
		page_guard_install();
		sink = m[2 * page]; /* not in page_guard_run: the default action */
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status));
	ck_assert_int_eq(WTERMSIG(status), SIGBUS);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("page_guard");
	TCase *tc = tcase_create("page_guard");

	page = sysconf(_SC_PAGESIZE);
	tcase_add_test(tc, test_fault_is_efault);
	tcase_add_test(tc, test_fault_outside_kills);
	suite_add_tcase(s, tc);
	return check_run(s);
}
