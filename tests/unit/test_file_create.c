/* Tests server/core/file_create.c: logs and the pid file are made and appended
 * to; a symbolic link at their name (to a file, or to nothing yet), a file
 * with another hard link, a FIFO and a folder are refused and left as they
 * were; a removal removes only the file that was made. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/core/file_create.h"
#include "tests/unit/check_run.h"

static char dir[] = "/tmp/test_file_create_XXXXXX";

static char *in_dir(const char *name)
{
	static char paths[4][sizeof(dir) + 32];
	static unsigned next;
	char *p = paths[next++ % 4];
	snprintf(p, sizeof(paths[0]), "%s/%s", dir, name);
	return p;
}

static const char *const names[] = {"log", "target", "link", "dangling", "made", "hard",
				    "fifo", "pid", "other"};

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	FILE *f = fopen(in_dir("target"), "w");
	ck_assert_ptr_nonnull(f);
	fputs("TARGET\n", f);
	fclose(f);
}

static void teardown(void)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlink(in_dir(names[i]));
	rmdir(in_dir("sub"));
	rmdir(dir);
	strcpy(dir, "/tmp/test_file_create_XXXXXX");
}

/* The target's bytes are still "TARGET\n". */
static void target_intact(void)
{
	struct stat st;
	ck_assert_int_eq(stat(in_dir("target"), &st), 0);
	ck_assert_int_eq(st.st_size, 7);
}

START_TEST(test_log)
{
	struct file_id id;
	struct stat st;
	int fd = file_create_log(in_dir("log"), &id);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "a\n", 2), 2);
	close(fd);
	fd = file_create_log(in_dir("log"), NULL); /* again: appended */
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "b\n", 2), 2);
	ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
	ck_assert_int_eq(stat(in_dir("log"), &st), 0);
	ck_assert_int_eq(st.st_size, 4);
	ck_assert(id.valid && id.ino == (uint64_t)st.st_ino);
}
END_TEST

START_TEST(test_refused)
{
	ck_assert_int_eq(symlink(in_dir("target"), in_dir("link")), 0);
	ck_assert_int_eq(file_create_log(in_dir("link"), NULL), -ELOOP);
	ck_assert_str_eq(file_create_error(-ELOOP), "a symbolic link; not following it");
	ck_assert_int_eq(file_create_pid(in_dir("link"), 1, NULL), -ELOOP);
	target_intact();

	ck_assert_int_eq(symlink(in_dir("made"), in_dir("dangling")), 0);
	ck_assert_int_eq(file_create_log(in_dir("dangling"), NULL), -ELOOP);
	ck_assert_int_eq(access(in_dir("made"), F_OK), -1);

	ck_assert_int_eq(link(in_dir("target"), in_dir("hard")), 0);
	ck_assert_int_eq(file_create_log(in_dir("hard"), NULL), -EMLINK);
	ck_assert_int_eq(file_create_pid(in_dir("hard"), 1, NULL), -EMLINK);
	target_intact(); /* not emptied by the pid file's write */

	ck_assert_int_eq(mkfifo(in_dir("fifo"), 0600), 0);
	ck_assert_int_eq(file_create_log(in_dir("fifo"), NULL), -EINVAL);
	ck_assert_int_eq(file_create_log(dir, NULL), -EISDIR);
	ck_assert_int_eq(mkdir(in_dir("sub"), 0700), 0);
	ck_assert_int_eq(file_create_log(in_dir("sub"), NULL), -EISDIR);
	ck_assert_int_eq(file_create_log(in_dir("none/log"), NULL), -ENOENT);
}
END_TEST

START_TEST(test_pid_file)
{
	struct file_id id, other;
	char buf[32] = {0};
	FILE *f = fopen(in_dir("pid"), "w");

	fputs("a much longer line than a pid\n", f);
	fclose(f);
	ck_assert_int_eq(file_create_pid(in_dir("pid"), 1234, &id), 0);
	f = fopen(in_dir("pid"), "r");
	ck_assert_uint_eq(fread(buf, 1, sizeof(buf) - 1, f), 5);
	fclose(f);
	ck_assert_str_eq(buf, "1234\n");

	/* Replaced meanwhile: the new file is not ours to remove. */
	ck_assert_int_eq(rename(in_dir("pid"), in_dir("other")), 0);
	ck_assert_int_eq(file_create_pid(in_dir("pid"), 99, &other), 0);
	ck_assert_int_eq(file_remove_if_same(in_dir("pid"), &id), -ESTALE);
	ck_assert_int_eq(access(in_dir("pid"), F_OK), 0);
	ck_assert_int_eq(file_remove_if_same(in_dir("pid"), &other), 0);
	ck_assert_int_eq(access(in_dir("pid"), F_OK), -1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("file_create");
	TCase *tc = tcase_create("file_create");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_log);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_pid_file);
	suite_add_tcase(s, tc);
	return check_run(s);
}
