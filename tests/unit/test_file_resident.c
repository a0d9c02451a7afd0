/* Tests server/core/file_resident.c: whether file bytes are in the page cache.
 * Built twice: as test_file_resident with cachestat where the kernel has it,
 * and as test_file_resident_mincore with the call's number pointed at one
 * no kernel has (ENOSYS), so that mincore over a mapping answers. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server/core/file_resident.h"
#include "tests/unit/check_run.h"

#define SIZE (3u << 20) /* not a multiple of the probes' 4 MiB spans, and 3 of them */

static char path[] = "/var/tmp/test_file_resident.XXXXXX";
static int fd = -1;

/* Makes the test file at path, written back to disk; fd is open on it.
 * Returns false on any failure (it is used outside a test too). */
static bool make_file(void)
{
	static char block[64 * 1024];

	memset(block, 'r', sizeof(block));
	fd = mkstemp(path);
	if (fd < 0)
		return false;
	for (size_t off = 0; off < SIZE; off += sizeof(block))
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
			return false;
	/* A last partial page: a range may end inside it. */
	return write(fd, block, 100) == 100 && fdatasync(fd) == 0;
}

static void setup(void)
{
	ck_assert(make_file());
}

static void teardown(void)
{
	close(fd);
	unlink(path);
	strcpy(path + strlen(path) - 6, "XXXXXX");
}

/* Pages can only be dropped from the cache once written back; a file system
 * that is its own cache (tmpfs) keeps them. */
static bool evict(void)
{
	return posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0 && !file_resident(fd, 0, SIZE);
}

/* Whether the file system under path lets evict() work: asked before the
 * tests run, so that where it does not, the test that needs it is skipped
 * (and said to be) rather than counted as passed. */
static bool can_evict(void)
{
	bool ok = make_file() && evict();

	teardown();
	return ok;
}

START_TEST(test_written_file_is_cached)
{
	ck_assert(file_resident(fd, 0, SIZE + 100));
	ck_assert(file_resident(fd, 12345, 1));
	ck_assert(file_resident(fd, SIZE - 5000, 5100)); /* into the last page */
	ck_assert(file_resident(fd, 0, 0));
}
END_TEST

START_TEST(test_evicted_then_read)
{
	ck_assert(evict());
	ck_assert(!file_resident(fd, SIZE / 2, 4096));
	/* Read the middle MiB back (no read ahead past it): that and only
	 * that is cached again. */
	ck_assert_int_eq(posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM), 0);
	static char buf[1 << 20];
	ck_assert_int_eq(pread(fd, buf, sizeof(buf), 1 << 20), (ssize_t)sizeof(buf));
	ck_assert(file_resident(fd, 1 << 20, 1 << 20));
	ck_assert(file_resident(fd, (1 << 20) + 777, 4096));
	ck_assert(!file_resident(fd, 0, 2 << 20));
	ck_assert(!file_resident(fd, 1 << 20, (1 << 20) + 4096));
}
END_TEST

/* A range past the end of the file is not cached: a file that shrank must
 * take the path that finds out it did. */
START_TEST(test_past_the_end)
{
	ck_assert(!file_resident(fd, SIZE + 100, 4096));
	ck_assert(!file_resident(fd, 0, SIZE + 100 + 8192));
}
END_TEST

/* A file the process could not write: the kernel will not say (cachestat
 * refuses, mincore calls every page resident), so it is never taken for
 * cached, evicted or not, and the look ahead remembers not to ask again.
 * Run as nobody on a root-owned file opened read-only, as a --user server
 * meets a mirror's files. */
START_TEST(test_not_ours)
{
	ck_assert(evict());
	ck_assert_int_eq(fchown(fd, 0, 0), 0);
	ck_assert_int_eq(fchmod(fd, 0644), 0);
	/* As nobody in a child of this test's, so that the test itself stays
	 * root and its teardown can remove the file. */
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(10);
		int ro = open(path, O_RDONLY);
		if (ro < 0)
			_exit(11);
		if (file_resident(ro, 0, SIZE))
			_exit(12); /* evicted, yet taken for cached */
		uint64_t known = 0;
		if (file_resident_ahead(ro, &known, 0, 4096, SIZE, 4u << 20) ||
		    known != FILE_RESIDENT_UNKNOWABLE)
			_exit(13);
		static char buf[1 << 20];
		if (pread(ro, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
			_exit(14);
		if (file_resident(ro, 0, 4096)) /* cached now, but not known to be */
			_exit(15);
		if (file_resident_ahead(ro, &known, 0, 4096, SIZE, 4u << 20))
			_exit(16);
		_exit(0);
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0); /* 12-16: which question was answered wrong */
}
END_TEST

START_TEST(test_not_a_file)
{
	ck_assert(!file_resident(-1, 0, 4096));
}
END_TEST

static Suite *file_resident_suite(const char *name)
{
	Suite *s = suite_create("file_resident");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_written_file_is_cached);
	/* The line scripts/test counts as a skip. */
	if (can_evict())
		tcase_add_test(tc, test_evicted_then_read);
	else
		printf("SKIP %s: test_evicted_then_read: %s keeps its pages when asked to drop "
		       "them (tmpfs?)\n",
		       name, path);
	if (geteuid() == 0 && can_evict())
		tcase_add_test(tc, test_not_ours);
	else
		printf("SKIP %s: test_not_ours: needs root (to become nobody) and a file system "
		       "that drops pages\n",
		       name);
	tcase_add_test(tc, test_past_the_end);
	tcase_add_test(tc, test_not_a_file);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	/* test_file_resident or test_file_resident_mincore */
	const char *slash = argc > 0 ? strrchr(argv[0], '/') : NULL;

	return check_run(file_resident_suite(slash ? slash + 1 : "test_file_resident"));
}
