/* Tests server/core/filecache.c on a real folder: a file, a folder and a missing
 * name opened again come from the cache without a syscall of their own;
 * a missing name found later is served once its entry is revalidated;
 * missing names cannot push the open files out; an entry's memo lives
 * with its stat. The clock is the test's, moved by hand. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/core/filecache.h"
#include "tests/unit/check_run.h"

static char dir[] = "/tmp/test_filecache_XXXXXX";
static struct file_root root;
static struct clock clk;
static struct filecache fc;

static char *in_dir(const char *name)
{
	static char path[sizeof(dir) + 64];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static void put_file(const char *name, const char *text)
{
	FILE *f = fopen(in_dir(name), "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static void setup(void)
{
	struct stat st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	root.fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(root.fd, 0);
	ck_assert_int_eq(fstat(root.fd, &st), 0);
	root.dev = st.st_dev;
	root.ino = st.st_ino;
	clk = (struct clock){.now_ms = 100000, .now_sec = 1000000};
	filecache_init(&fc, &clk);
	put_file("a.txt", "hello");
	ck_assert_int_eq(mkdir(in_dir("sub"), 0755), 0);
}

static void teardown(void)
{
	char cmd[sizeof(dir) + 16];

	filecache_clear(&fc);
	close(root.fd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(dir, "/tmp/test_filecache_XXXXXX");
}

static int open_rel(const char *rel, struct static_opened *f)
{
	return filecache_open(&fc, &root, rel, f);
}

START_TEST(test_file_again_is_a_hit)
{
	struct static_opened f, g;
	int fd = open_rel("a.txt", &f);

	ck_assert_int_ge(fd, 0);
	ck_assert(S_ISREG(f.st.st_mode));
	ck_assert_ptr_nonnull(f.memo);
	ck_assert_uint_eq(fc.misses, 1);
	ck_assert_int_eq(open_rel("a.txt", &g), fd);
	ck_assert_uint_eq(fc.hits, 1);
	ck_assert_ptr_eq(g.memo, f.memo); /* what was made of it stays */
	filecache_release(&fc, fd);
	filecache_release(&fc, fd);
	ck_assert_uint_eq(fc.open, 1); /* the cache's own */
}
END_TEST

START_TEST(test_folder_is_kept)
{
	struct static_opened f;
	int fd = open_rel(".", &f);

	ck_assert_int_ge(fd, 0);
	ck_assert(S_ISDIR(f.st.st_mode));
	filecache_release(&fc, fd);
	ck_assert_int_eq(open_rel(".", &f), fd);
	ck_assert(S_ISDIR(f.st.st_mode));
	filecache_release(&fc, fd);
	ck_assert_uint_eq(fc.misses, 1);
	ck_assert_uint_eq(fc.hits, 1);
}
END_TEST

START_TEST(test_missing_is_kept_then_found)
{
	struct static_opened f;

	ck_assert_int_eq(open_rel("later.txt", &f), -ENOENT);
	ck_assert_int_eq(open_rel("later.txt", &f), -ENOENT);
	ck_assert_int_eq(open_rel("sub/none/deeper", &f), -ENOENT);
	ck_assert_uint_eq(fc.misses, 2);
	ck_assert_uint_eq(fc.hits, 1);
	ck_assert_uint_eq(fc.nmissing, 2);
	ck_assert_uint_eq(fc.n, 0);

	/* Created: still missing within the second the entry is trusted ... */
	put_file("later.txt", "now");
	clk.now_ms += FILECACHE_VALID_MS - 1;
	ck_assert_int_eq(open_rel("later.txt", &f), -ENOENT);
	/* ... then the stat by path finds it, and it is opened. */
	clk.now_ms += 1;
	int fd = open_rel("later.txt", &f);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(f.st.st_size, 3);
	ck_assert_uint_eq(fc.nmissing, 1);
	filecache_release(&fc, fd);

	/* A name still missing at its revalidation stays a hit. */
	ck_assert_int_eq(open_rel("sub/none/deeper", &f), -ENOENT);
	ck_assert_uint_eq(fc.revalidations, 1);
}
END_TEST

START_TEST(test_missing_cannot_push_out_files)
{
	struct static_opened f;
	char name[32];
	int fd = open_rel("a.txt", &f);

	ck_assert_int_ge(fd, 0);
	filecache_release(&fc, fd);
	for (unsigned i = 0; i < FILECACHE_MISSING_MAX + 50; i++) {
		snprintf(name, sizeof(name), "none%u", i);
		ck_assert_int_eq(open_rel(name, &f), -ENOENT);
	}
	ck_assert_uint_eq(fc.nmissing, FILECACHE_MISSING_MAX);
	unsigned long long misses = fc.misses;
	ck_assert_int_eq(open_rel("a.txt", &f), fd);
	ck_assert_uint_eq(fc.misses, misses);
	filecache_release(&fc, fd);
	/* The oldest missing names went first. */
	ck_assert_int_eq(open_rel("none0", &f), -ENOENT);
	ck_assert_uint_eq(fc.misses, misses + 1);
}
END_TEST

START_TEST(test_memo_goes_with_the_stat)
{
	struct static_opened f;
	int fd = open_rel("a.txt", &f);

	ck_assert_int_ge(fd, 0);
	f.memo->validators = true;
	strcpy(f.memo->etag, "\"x\"");
	f.memo->types = (const struct mime_table *)&fc; /* any address */
	f.memo->content_type = "text/plain";
	filecache_release(&fc, fd);

	/* A reload: the type is looked up again, the validators stay. */
	filecache_new_config(&fc);
	fd = open_rel("a.txt", &f);
	ck_assert(f.memo->validators);
	ck_assert_ptr_null(f.memo->types);
	ck_assert_ptr_null(f.memo->content_type);
	filecache_release(&fc, fd);

	/* Replaced by rename: a new entry, a new memo with nothing made. */
	char from[sizeof(dir) + 64];
	put_file("a.new", "other bytes");
	strcpy(from, in_dir("a.new"));
	ck_assert_int_eq(rename(from, in_dir("a.txt")), 0);
	clk.now_ms += FILECACHE_VALID_MS;
	fd = open_rel("a.txt", &f);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(f.st.st_size, 11);
	ck_assert(!f.memo->validators);
	filecache_release(&fc, fd);
}
END_TEST

START_TEST(test_dropped_while_lent)
{
	struct static_opened f, g;
	int fd = open_rel("a.txt", &f);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(unlink(in_dir("a.txt")), 0);
	clk.now_ms += FILECACHE_VALID_MS;
	ck_assert_int_eq(open_rel("a.txt", &g), -ENOENT);
	/* The lent fd and its memo live on until the lease ends. */
	ck_assert_int_eq(fcntl(fd, F_GETFD), FD_CLOEXEC);
	ck_assert(!f.memo->validators);
	filecache_release(&fc, fd);
	ck_assert_uint_eq(fc.open, 0);
	ck_assert_uint_eq(fc.nmissing, 1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("filecache");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_file_again_is_a_hit);
	tcase_add_test(tc, test_folder_is_kept);
	tcase_add_test(tc, test_missing_is_kept_then_found);
	tcase_add_test(tc, test_missing_cannot_push_out_files);
	tcase_add_test(tc, test_memo_goes_with_the_stat);
	tcase_add_test(tc, test_dropped_while_lent);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(suite());
}
