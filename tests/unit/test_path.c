/* Tests proto/path.c: every trick we know for escaping the root. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/path.h"
#include "tests/unit/check_run.h"

/* Each target is copied into a heap block of exactly len bytes, without a NUL,
 * so AddressSanitizer catches any read past len. */
static int run_len(const char *target, size_t len, char *out, size_t outsz, struct path_info *info)
{
	char *copy = malloc(len ? len : 1);
	ck_assert_ptr_nonnull(copy);
	memcpy(copy, target, len);
	int rc = path_from_target(copy, len, out, outsz, info);
	free(copy);
	return rc;
}

static void check_ok(const char *target, const char *want, bool trailing, bool dotfile)
{
	char out[4096];
	struct path_info info;
	int rc = run_len(target, strlen(target), out, sizeof(out), &info);

	ck_assert_msg(rc == 0, "%s: rc %d", target, rc);
	ck_assert_str_eq(out, want);
	ck_assert_msg(info.trailing_slash == trailing, "%s: trailing_slash", target);
	ck_assert_msg(info.dotfile == dotfile, "%s: dotfile", target);
}

static void check_err(const char *target, int want)
{
	char out[4096];
	struct path_info info;
	int rc = run_len(target, strlen(target), out, sizeof(out), &info);

	ck_assert_msg(rc == want, "%s: rc %d, want %d", target, rc, want);
}

START_TEST(test_plain)
{
	check_ok("/", ".", true, false);
	check_ok("/index.html", "index.html", false, false);
	check_ok("/a/b/c.txt", "a/b/c.txt", false, false);
	check_ok("/a/b/", "a/b", true, false);
	check_ok("/a%20b", "a b", false, false);
	check_ok("/%41%42c", "ABc", false, false);
	check_ok("/caf%C3%A9", "caf\xc3\xa9", false, false);
}
END_TEST

START_TEST(test_dotdot_above_root)
{
	check_err("/..", -EINVAL);
	check_err("/../", -EINVAL);
	check_err("/../etc/passwd", -EINVAL);
	check_err("/%2e%2e", -EINVAL);
	check_err("/%2E%2e/", -EINVAL);
	check_err("/.%2e", -EINVAL);
	check_err("/%2e.", -EINVAL);
	check_err("/%2f..%2f", -EINVAL);
	check_err("/%2F..%2Fetc%2Fpasswd", -EINVAL);
	check_err("/a/../../b", -EINVAL);
	check_err("/a/%2e%2e/%2E%2E/b", -EINVAL);
	check_err("/a%2f..%2f..%2fb", -EINVAL);
	check_err("/./../", -EINVAL);
	check_err("//../", -EINVAL);
	/* the order matters, not the count: climbing out then back in is refused */
	check_err("/../a/b/..", -EINVAL);
	/* without a leading '/' these are not origin-form at all */
	check_err("..", -EINVAL);
	check_err("%2e%2e", -EINVAL);
	check_err("%2E%2e/", -EINVAL);
	check_err(".%2e", -EINVAL);
	check_err("%2f..%2f", -EINVAL);
}
END_TEST

START_TEST(test_dotdot_inside)
{
	check_ok("/a/b/../c", "a/c", false, false);
	check_ok("/a/%2e%2e/b", "b", false, false);
	check_ok("/a/..", ".", true, false);
	check_ok("/a/b/..", "a", true, false);
	check_ok("/a/b/.", "a/b", true, false);
	check_ok("/a/./b", "a/b", false, false);
	check_ok("/./././", ".", true, false);
	check_ok("/.", ".", true, false);
	check_ok("/a%2fb%2F..%2fc", "a/c", false, false);
	check_ok("/.hidden/..", ".", true, false); /* removed, so no dotfile */
}
END_TEST

START_TEST(test_slashes)
{
	check_ok("//etc", "etc", false, false);
	check_ok("//etc//passwd", "etc/passwd", false, false);
	check_ok("/a///b////", "a/b", true, false);
	check_ok("/a%2Fb", "a/b", false, false);
	check_ok("/a%2fb%2F", "a/b", true, false);
	check_ok("/%2F%2f", ".", true, false);
	/* backslash is an ordinary byte on Linux */
	check_ok("/a\\..\\b", "a\\..\\b", false, false);
	check_ok("/..\\", "..\\", false, true);
	check_ok("/%5c..%5c", "\\..\\", false, false);
}
END_TEST

START_TEST(test_decode_once)
{
	check_ok("/%252e%252e", "%2e%2e", false, false);
	check_ok("/%252e%252e/x", "%2e%2e/x", false, false);
	check_ok("/%252F", "%2F", false, false);
	/* overlong UTF-8 for '.' is just two bytes, never a dot */
	check_ok("/%c0%ae%c0%ae", "\xc0\xae\xc0\xae", false, false);
	check_ok("/%c0%ae%c0%ae/%c0%ae%c0%ae/etc", "\xc0\xae\xc0\xae/\xc0\xae\xc0\xae/etc", false,
	         false);
	check_ok("/%e0%80%ae", "\xe0\x80\xae", false, false);
	check_ok("/%C0%AF", "\xc0\xaf", false, false);
}
END_TEST

START_TEST(test_bad_escapes)
{
	check_err("/%00", -EINVAL);
	check_err("/a%00b", -EINVAL);
	check_err("/a%", -EINVAL);
	check_err("/%", -EINVAL);
	check_err("/a%4", -EINVAL);
	check_err("/%zz", -EINVAL);
	check_err("/%4g", -EINVAL);
	check_err("/%g4", -EINVAL);
	check_err("/%%41", -EINVAL);
	check_err("/%-1", -EINVAL);
	check_err("/% 1", -EINVAL);
	/* a truncated escape cut by the query is still truncated */
	check_err("/a%4?1", -EINVAL);
}
END_TEST

START_TEST(test_raw_bytes)
{
	char out[64];

	ck_assert_int_eq(run_len("/a\0b", 4, out, sizeof(out), NULL), -EINVAL);
	ck_assert_int_eq(run_len("/a?\0", 4, out, sizeof(out), NULL), -EINVAL);
	check_err("/a b", -EINVAL);
	check_err("/a\tb", -EINVAL);
	check_err("/a\r\nb", -EINVAL);
	check_err("/a\x7f", -EINVAL);
	/* high bytes are ordinary */
	check_ok("/\xc3\xa9", "\xc3\xa9", false, false);
	/* len is honoured: the rest is not read */
	ck_assert_int_eq(run_len("/abc/../../x", 4, out, sizeof(out), NULL), 0);
	ck_assert_str_eq(out, "abc");
}
END_TEST

START_TEST(test_query_fragment)
{
	check_ok("/a?x=../../", "a", false, false);
	check_ok("/a?x=%00&y=%zz", "a", false, false);
	check_ok("/a/?q", "a", true, false);
	check_ok("/?../..", ".", true, false);
	check_ok("/a#../../etc", "a", false, false);
	check_ok("/a#frag?x", "a", false, false);
	check_ok("/a?q#f", "a", false, false);
	/* escaped '?' and '#' are part of the name */
	check_ok("/a%3Fb", "a?b", false, false);
	check_ok("/a%23b", "a#b", false, false);
	check_ok("/a%3F..%2F..", ".", true, false);
}
END_TEST

START_TEST(test_dotfiles)
{
	check_ok("/.git/config", ".git/config", false, true);
	check_ok("/a/.env", "a/.env", false, true);
	check_ok("/%2egit/HEAD", ".git/HEAD", false, true);
	/* RFC 8615: the well-known prefix is not a dotfile, what is inside
	 * it and other names like it are. */
	check_ok("/.well-known/acme-challenge/tok_en-1", ".well-known/acme-challenge/tok_en-1", false,
		 false);
	check_ok("/%2ewell-known/security.txt", ".well-known/security.txt", false, false);
	check_ok("/.well-known/", ".well-known", true, false);
	check_ok("/.well-known/.git/x", ".well-known/.git/x", false, true);
	check_ok("/a/.well-known/x", "a/.well-known/x", false, true);
	check_ok("/.well-knownx/a", ".well-knownx/a", false, true);
	check_ok("/.well-know/a", ".well-know/a", false, true);
	check_ok("/...", "...", false, true);
	check_ok("/..a", "..a", false, true);
	check_ok("/a.b/c.", "a.b/c.", false, false);
	check_ok("/.a/../b", "b", false, false);
}
END_TEST

START_TEST(test_absolute_form)
{
	check_ok("http://example.com/a/b", "a/b", false, false);
	check_ok("https://example.com:8443/a/", "a", true, false);
	check_ok("HTTPS://Example.COM/x", "x", false, false);
	check_ok("https://example.com", ".", true, false);
	check_ok("https://example.com?q=/../..", ".", true, false);
	check_ok("https://example.com#/..", ".", true, false);
	check_ok("https://example.com/", ".", true, false);
	check_ok("https://u@h/a", "a", false, false);
	check_err("https://example.com/../x", -EINVAL);
	check_err("http://h/%2e%2e", -EINVAL);
	check_err("http:///a", -EINVAL);
	check_err("https://", -EINVAL);
	check_err("ftp://h/a", -EINVAL);
	check_err("http:/a", -EINVAL);
	check_err("httpx://h/a", -EINVAL);
}
END_TEST

START_TEST(test_not_a_path)
{
	check_err("", -EINVAL);
	check_err("*", -EINVAL);
	check_err("foo", -EINVAL);
	check_err("a/b", -EINVAL);
	check_err("example.com:443", -EINVAL);
	check_err("?x", -EINVAL);
	check_err("%2F", -EINVAL);
	check_err("\\etc", -EINVAL);
}
END_TEST

START_TEST(test_too_long)
{
	char out[16];
	struct path_info info;

	/* 15 bytes + NUL fit exactly; 16 do not */
	ck_assert_int_eq(run_len("/0123456789abcde", 16, out, 16, &info), 0);
	ck_assert_str_eq(out, "0123456789abcde");
	ck_assert_int_eq(run_len("/0123456789abcdef", 17, out, 16, &info), -ENAMETOOLONG);
	ck_assert_int_eq(run_len("/a/b", 4, out, 4, &info), 0);
	ck_assert_str_eq(out, "a/b");
	ck_assert_int_eq(run_len("/a/b", 4, out, 3, &info), -ENAMETOOLONG);
	ck_assert_int_eq(run_len("/", 1, out, 2, &info), 0);
	ck_assert_str_eq(out, ".");
	ck_assert_int_eq(run_len("/", 1, out, 1, &info), -ENAMETOOLONG);
	ck_assert_int_eq(run_len("/a", 2, out, 0, &info), -ENAMETOOLONG);
	/* the decoded length counts, not the raw one */
	ck_assert_int_eq(
	    run_len("/%41%41%41%41%41%41%41%41%41%41%41%41%41%41%41", 46, out, 16, &info), 0);
	ck_assert_str_eq(out, "AAAAAAAAAAAAAAA");
	/* the result counts, not what ".." removed on the way */
	ck_assert_int_eq(run_len("/0123456789abcdefghijkl/../x", 28, out, 16, &info), 0);
	ck_assert_str_eq(out, "x");
	/* too long and above the root: the climb is the answer (400, not 414) */
	ck_assert_int_eq(run_len("/../0123456789abcdefghijkl", 26, out, 16, &info), -EINVAL);
	ck_assert_int_eq(run_len("/0123456789abcdefghijkl/../..", 29, out, 16, &info), -EINVAL);
	ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(test_very_long)
{
	enum { N = 100000 };
	char *t = malloc(3 * N + 16), *out = malloc(4096), *big = malloc(3 * N);
	size_t n = 0;

	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_nonnull(out);
	ck_assert_ptr_nonnull(big);

	/* a very long single name */
	t[n++] = '/';
	memset(t + n, 'x', N);
	n += N;
	ck_assert_int_eq(run_len(t, n, out, 4096, NULL), -ENAMETOOLONG);

	/* very deep, then climbed back out exactly to the root */
	n = 0;
	for (int i = 0; i < N / 2; i++)
		t[n++] = '/', t[n++] = 'a';
	for (int i = 0; i < N / 2; i++)
		memcpy(t + n, "/..", 3), n += 3;
	ck_assert_int_eq(run_len(t, n, out, 4096, NULL), 0);
	ck_assert_str_eq(out, ".");
	/* one ".." more is above the root */
	memcpy(t + n, "/..", 3);
	ck_assert_int_eq(run_len(t, n + 3, out, 4096, NULL), -EINVAL);

	/* very deep and kept: fits a big buffer, not a small one */
	n = 0;
	for (int i = 0; i < N / 2; i++)
		t[n++] = '/', t[n++] = 'a';
	ck_assert_int_eq(run_len(t, n, big, n, NULL), 0);
	ck_assert_uint_eq(strlen(big), n - 1);
	ck_assert_int_eq(run_len(t, n, out, 4096, NULL), -ENAMETOOLONG);

	free(t);
	free(out);
	free(big);
}
END_TEST

START_TEST(test_info_null)
{
	char out[64];

	ck_assert_int_eq(path_from_target("/a/", 3, out, sizeof(out), NULL), 0);
	ck_assert_str_eq(out, "a");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("path");
	TCase *tc = tcase_create("path");

	tcase_add_test(tc, test_plain);
	tcase_add_test(tc, test_dotdot_above_root);
	tcase_add_test(tc, test_dotdot_inside);
	tcase_add_test(tc, test_slashes);
	tcase_add_test(tc, test_decode_once);
	tcase_add_test(tc, test_bad_escapes);
	tcase_add_test(tc, test_raw_bytes);
	tcase_add_test(tc, test_query_fragment);
	tcase_add_test(tc, test_dotfiles);
	tcase_add_test(tc, test_absolute_form);
	tcase_add_test(tc, test_not_a_path);
	tcase_add_test(tc, test_too_long);
	tcase_add_test(tc, test_very_long);
	tcase_add_test(tc, test_info_null);
	suite_add_tcase(s, tc);

	return check_run(s);
}
