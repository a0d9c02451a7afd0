/* Tests server/conf/file_read.c: a regular file and a link to one are read; a
 * folder, a FIFO, a device and a file over the limit are refused, and
 * none of them blocks. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/conf/file_read.h"
#include "tests/unit/check_run.h"

static char dir[] = "/tmp/test_file_read_XXXXXX";

static char *in_dir(const char *name)
{
	static char path[sizeof(dir) + 32];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	const char *names[] = {"file", "link", "fifo", "big"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlink(in_dir(names[i]));
	rmdir(dir);
	strcpy(dir, "/tmp/test_file_read_XXXXXX");
}

START_TEST(test_regular_and_link)
{
	char *buf;
	size_t len;
	FILE *f = fopen(in_dir("file"), "w");

	ck_assert_ptr_nonnull(f);
	fputs("root /srv\n", f);
	fclose(f);
	ck_assert_int_eq(symlink("file", in_dir("link")), 0);
	ck_assert_int_eq(file_read_whole(in_dir("file"), &buf, &len), 0);
	ck_assert_uint_eq(len, 10);
	ck_assert_str_eq(buf, "root /srv\n");
	free(buf);
	/* certbot's live/: links to regular files are followed */
	ck_assert_int_eq(file_read_whole(in_dir("link"), &buf, &len), 0);
	ck_assert_str_eq(buf, "root /srv\n");
	free(buf);
}
END_TEST

START_TEST(test_refused)
{
	char *buf = NULL;
	size_t len = 0;

	/* No writer ever comes: an open without O_NONBLOCK would wait. */
	ck_assert_int_eq(mkfifo(in_dir("fifo"), 0600), 0);
	ck_assert_int_eq(file_read_whole(in_dir("fifo"), &buf, &len), -EINVAL);
	ck_assert_str_eq(file_read_error(-EINVAL), "not a regular file");
	ck_assert_int_eq(file_read_whole("/dev/zero", &buf, &len), -EINVAL);
	ck_assert_int_eq(file_read_whole(dir, &buf, &len), -EISDIR);
	ck_assert_str_eq(file_read_error(-EISDIR), "not a regular file");
	ck_assert_int_eq(file_read_whole(in_dir("none"), &buf, &len), -ENOENT);
	ck_assert_str_eq(file_read_error(-ENOENT), "No such file or directory");

	int fd = open(in_dir("big"), O_WRONLY | O_CREAT, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, FILE_READ_MAX + 1), 0);
	close(fd);
	ck_assert_int_eq(file_read_whole(in_dir("big"), &buf, &len), -EFBIG);
	ck_assert_str_eq(file_read_error(-EFBIG), "larger than 1 MiB");
	ck_assert_ptr_null(buf);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("file_read");
	TCase *tc = tcase_create("file_read");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_regular_and_link);
	tcase_add_test(tc, test_refused);
	suite_add_tcase(s, tc);
	return check_run(s);
}
