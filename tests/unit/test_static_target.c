/* Tests proto/static_target.c: from a request-target to what to serve, on a
 * made-up tree opened through the callbacks. */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "proto/static_target.h"
#include "tests/unit/check_run.h"

/* The tree: "a.txt" (a file), "dir" (a directory with index.html),
 * "bare" (a directory without one), "secret" (not readable). */
static int opened, closed;

static int fake_open(void *ctx, const char *rel, struct stat *st, const void **mem)
{
	(void)ctx;
	*mem = NULL;
	memset(st, 0, sizeof(*st));
	if (strcmp(rel, "a.txt") == 0 || strcmp(rel, "dir/index.html") == 0) {
		st->st_mode = S_IFREG | 0644;
		st->st_size = 5;
		st->st_ino = 9;
	} else if (strcmp(rel, "dir") == 0 || strcmp(rel, "bare") == 0 ||
		   strcmp(rel, "a b") == 0 || strcmp(rel, ".") == 0) {
		st->st_mode = S_IFDIR | 0755;
	} else if (strcmp(rel, "secret") == 0) {
		return -EACCES;
	} else if (strcmp(rel, "busy") == 0) {
		return -EMFILE;
	} else {
		return -ENOENT;
	}
	return 100 + opened++;
}

static void fake_close(void *ctx, int fd)
{
	(void)ctx;
	(void)fd;
	closed++;
}

static struct static_target out;
static bool autoindex;

static int resolve(const char *target, bool dotfiles)
{
	static const struct static_opener op = {.open = fake_open, .close = fake_close};
	opened = closed = 0;
	static_target_resolve(target, strlen(target), dotfiles, autoindex, NULL, &op, &out);
	return out.status;
}

START_TEST(file)
{
	ck_assert_int_eq(resolve("/a.txt", false), 0);
	ck_assert_int_ge(out.fd, 100);
	ck_assert_str_eq(out.rel, "a.txt");
	ck_assert_uint_eq(out.file.size, 5);
}
END_TEST

START_TEST(directory_index_and_redirect)
{
	ck_assert_int_eq(resolve("/dir/", false), 0);
	ck_assert_str_eq(out.rel, "dir/index.html");
	ck_assert_int_eq(closed, 1); /* the directory's own fd */
	ck_assert_int_eq(resolve("/dir", false), 301);
	ck_assert_str_eq(out.location, "/dir/");
	ck_assert_int_eq(out.fd, -1);
	ck_assert_int_eq(resolve("/a%20b", false), 301);
	ck_assert_str_eq(out.location, "/a%20b/");
	ck_assert_int_eq(resolve("/bare/", false), 404); /* no listings */
}
END_TEST

START_TEST(directory_listing)
{
	autoindex = true;
	ck_assert_int_eq(resolve("/bare/", false), STATIC_LIST_DIR);
	ck_assert_str_eq(out.rel, "bare");
	ck_assert(!out.list_dotfiles);
	ck_assert_int_eq(resolve("/bare/", true), STATIC_LIST_DIR);
	ck_assert(out.list_dotfiles);
	ck_assert_int_eq(out.fd, -1);
	ck_assert_int_eq(closed, opened); /* nothing left open */
	ck_assert_int_eq(resolve("/bare/?format=json", false), STATIC_LIST_DIR);
	ck_assert_str_eq(out.rel, "bare");
	ck_assert_int_eq(resolve("/", false), STATIC_LIST_DIR);
	ck_assert_str_eq(out.rel, ".");
	/* index.html still wins; the slash is still added first */
	ck_assert_int_eq(resolve("/dir/", false), 0);
	ck_assert_str_eq(out.rel, "dir/index.html");
	ck_assert_int_eq(resolve("/bare", false), 301);
	ck_assert_int_eq(resolve("/secret/", false), 403);
	ck_assert_int_eq(resolve("/.git/", false), 404);
	autoindex = false;
}
END_TEST

START_TEST(errors)
{
	ck_assert_int_eq(resolve("/missing", false), 404);
	ck_assert_int_eq(resolve("/secret", false), 403);
	ck_assert_int_eq(resolve("/busy", false), 503);
	ck_assert_int_eq(resolve("/.git/config", false), 404);
	ck_assert_int_eq(opened, 0); /* a dotfile is never opened */
	ck_assert_int_eq(resolve("/../etc/passwd", false), 400);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("static_target");
	TCase *tc = tcase_create("resolve");
	tcase_add_test(tc, file);
	tcase_add_test(tc, directory_listing);
	tcase_add_test(tc, directory_index_and_redirect);
	tcase_add_test(tc, errors);
	suite_add_tcase(s, tc);
	return check_run(s);
}
