/* Tests proto/path_rule.c: addresses and prefixes as allow and deny read
 * them, the rule a path falls under, and where a redirect sends it. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <string.h>

#include "proto/path_rule.h"
#include "tests/unit/check_run.h"

static const uint8_t *v4(const char *s)
{
	static uint8_t a[16];

	memset(a, 0, sizeof(a));
	a[10] = a[11] = 0xff;
	ck_assert_int_eq(inet_pton(AF_INET, s, a + 12), 1);
	return a;
}

static const uint8_t *v6(const char *s)
{
	static uint8_t a[16];

	ck_assert_int_eq(inet_pton(AF_INET6, s, a), 1);
	return a;
}

START_TEST(test_acl)
{
	struct path_acl acl[3];

	ck_assert_int_eq(path_acl_parse("10.0.0.0/8", true, &acl[0]), 0);
	ck_assert_int_eq(path_acl_parse("2001:db8::/32", true, &acl[1]), 0);
	ck_assert_int_eq(path_acl_parse("all", false, &acl[2]), 0);
	ck_assert(path_acl_allows(acl, 3, v4("10.1.2.3")));
	ck_assert(!path_acl_allows(acl, 3, v4("11.0.0.1")));
	ck_assert(path_acl_allows(acl, 3, v6("2001:db8:1::5")));
	ck_assert(!path_acl_allows(acl, 3, v6("2001:db9::5")));
	ck_assert(path_acl_allows(acl, 3, v6("::ffff:10.9.9.9"))); /* mapped: the IPv4 rule */
	ck_assert(!path_acl_allows(acl, 3, NULL)); /* a Unix socket's client: "all" alone */
	ck_assert(path_acl_allows(acl, 2, NULL));  /* nothing matched: allowed */

	/* 0.0.0.0/0 is every IPv4 client, not an IPv6 one; a /25 splits a byte. */
	ck_assert_int_eq(path_acl_parse("0.0.0.0/0", false, &acl[0]), 0);
	ck_assert(!path_acl_allows(acl, 1, v4("192.0.2.1")));
	ck_assert(path_acl_allows(acl, 1, v6("2001:db8::1")));
	ck_assert_int_eq(path_acl_parse("192.0.2.128/25", false, &acl[0]), 0);
	ck_assert(!path_acl_allows(acl, 1, v4("192.0.2.200")));
	ck_assert(path_acl_allows(acl, 1, v4("192.0.2.100")));
	ck_assert_int_eq(path_acl_parse("192.0.2.7", false, &acl[0]), 0);
	ck_assert(!path_acl_allows(acl, 1, v4("192.0.2.7")));
	ck_assert(path_acl_allows(acl, 1, v4("192.0.2.8")));

	/* ::/0 is every IPv6 client, not an IPv4 nor a Unix socket's (nginx's). */
	ck_assert_int_eq(path_acl_parse("::/0", false, &acl[0]), 0);
	ck_assert(!path_acl_allows(acl, 1, v6("2001:db8::1")));
	ck_assert(path_acl_allows(acl, 1, v4("192.0.2.1")));
	ck_assert(path_acl_allows(acl, 1, NULL));
	ck_assert_int_eq(path_acl_parse("1.2.3.4/ 8", true, &acl[0]), -EINVAL);
	ck_assert_int_eq(path_acl_parse("1.2.3.4/+8", true, &acl[0]), -EINVAL);
	ck_assert_int_eq(path_acl_parse("10.0.0.0/33", true, &acl[0]), -EINVAL);
	ck_assert_int_eq(path_acl_parse("::/129", true, &acl[0]), -EINVAL);
	ck_assert_int_eq(path_acl_parse("10.0.0.0/", true, &acl[0]), -EINVAL);
	ck_assert_int_eq(path_acl_parse("/8", true, &acl[0]), -EINVAL);
	ck_assert_int_eq(path_acl_parse("example.org", true, &acl[0]), -EINVAL);
	ck_assert_int_eq(path_acl_parse("10.0.0.0/8x", true, &acl[0]), -EINVAL);
}
END_TEST

START_TEST(test_match)
{
	const struct path_rule r[] = {
	    {.prefix = ".", .prefix_len = 1},
	    {.prefix = "nightly", .prefix_len = 7},
	    {.prefix = "nightly/deep", .prefix_len = 12},
	};

	ck_assert_ptr_eq(path_rule_match(r, 3, "nightly"), &r[1]);
	ck_assert_ptr_eq(path_rule_match(r, 3, "nightly/a.iso"), &r[1]);
	ck_assert_ptr_eq(path_rule_match(r, 3, "nightly/deep/x"), &r[2]);
	ck_assert_ptr_eq(path_rule_match(r, 3, "nightly/deeper"), &r[1]);
	ck_assert_ptr_eq(path_rule_match(r, 3, "nightlyx/a"), &r[0]);
	ck_assert_ptr_eq(path_rule_match(r, 3, "."), &r[0]);
	ck_assert_ptr_null(path_rule_match(r + 1, 2, "releases/a"));
	/* The root's rule is the shortest, wherever it stands. */
	const struct path_rule s[] = {r[1], r[0]};
	ck_assert_ptr_eq(path_rule_match(s, 2, "nightly/a"), &s[0]);
}
END_TEST

START_TEST(test_location)
{
	struct path_rule r = {.prefix = "old", .prefix_len = 3, .redirect_status = 308,
			      .redirect_to = "https://m.example.org/new/"};
	char out[128];

	ck_assert_int_gt(path_rule_location(&r, "old/a b/c\r\n.iso", false, "?x=1&y=%41", 10,
					    out, sizeof(out)), 0);
	ck_assert_str_eq(out, "https://m.example.org/new/a%20b/c%0D%0A.iso?x=1&y=%41");
	ck_assert_int_gt(path_rule_location(&r, "old", true, "", 0, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "https://m.example.org/new/");
	r.redirect_to = "/elsewhere";
	ck_assert_int_gt(path_rule_location(&r, "old/x", false, "", 0, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "/elsewhere/x");
	r = (struct path_rule){.prefix = ".", .prefix_len = 1, .redirect_to = "https://n.example/"};
	ck_assert_int_gt(path_rule_location(&r, "a/b", true, "?q", 2, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "https://n.example/a/b/?q"); /* a folder keeps its slash */
	ck_assert_int_eq(path_rule_location(&r, "a/b", false, "?q", 2, out, 12), -ENAMETOOLONG);
}
END_TEST

static Suite *path_rule_suite(void)
{
	Suite *s = suite_create("path_rule");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_acl);
	tcase_add_test(tc, test_match);
	tcase_add_test(tc, test_location);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(path_rule_suite());
}
