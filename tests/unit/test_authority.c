/* Tests proto/authority.c: Host values and target authorities by RFC 3986's
 * grammar, their comparison, and where an absolute-form target's path
 * starts. */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "proto/authority.h"
#include "tests/unit/check_run.h"

static struct authority A;

static int parse(const char *s)
{
	return authority_parse(s, strlen(s), &A);
}

static bool host_is(const char *want)
{
	return A.host_len == strlen(want) && memcmp(A.host, want, A.host_len) == 0;
}

static bool port_is(const char *want)
{
	if (!want)
		return A.port == NULL;
	return A.port && A.port_len == strlen(want) && memcmp(A.port, want, A.port_len) == 0;
}

START_TEST(test_valid)
{
	ck_assert_int_eq(parse("dl.test"), 0);
	ck_assert(host_is("dl.test") && port_is(NULL));
	ck_assert_int_eq(parse("dl.test:8443"), 0);
	ck_assert(host_is("dl.test") && port_is("8443"));
	ck_assert_int_eq(parse("DL.Test."), 0); /* case and a trailing dot: vhost_find's */
	ck_assert(host_is("DL.Test."));
	ck_assert_int_eq(parse("dl.test:"), 0); /* an empty port is none (RFC 3986 6.2.3) */
	ck_assert(host_is("dl.test") && port_is(NULL));
	ck_assert_int_eq(parse("127.0.0.1:80"), 0);
	ck_assert(host_is("127.0.0.1") && port_is("80"));
	ck_assert_int_eq(parse("[::1]:8443"), 0);
	ck_assert(host_is("::1") && port_is("8443"));
	ck_assert_int_eq(parse("[2001:db8::7]"), 0);
	ck_assert(host_is("2001:db8::7"));
	ck_assert_int_eq(parse("[::ffff:192.0.2.1]"), 0);
	ck_assert_int_eq(parse("[v1.fe80::a+en1]"), 0);      /* IPvFuture */
	ck_assert_int_eq(parse("a_b~c!$&'()*+,;=.test"), 0); /* unreserved, sub-delims */
	ck_assert_int_eq(parse("%41.test"), 0);
	ck_assert(host_is("%41.test"));
}
END_TEST

START_TEST(test_invalid)
{
	static const char *const bad[] = {
	    "", /* RFC 9110 4.2.1: no empty host */
	    ":80",
	    "b.test x", /* a space */
	    "b.test\tx",
	    "b.test:abc", /* a port is digits */
	    "b.test:80x",
	    "b.test:-1",
	    "b.test:80:81",
	    "user@b.test", /* RFC 9110 4.2.4: no userinfo */
	    "user:pw@b.test",
	    "b.test/x",
	    "b.test?x",
	    "b.test#x",
	    "b\"test",
	    "b.test%", /* a broken escape */
	    "b.test%4",
	    "b.test%zz",
	    "[::1", /* IP literals */
	    "[::1]x",
	    "[::1]:8x",
	    "[]",
	    "[::g]",
	    "[1.2.3.4]",
	    "[fe80::1%25eth0]", /* a zone (RFC 6874) is not for Host */
	    "[v.x]",
	    "[v1.]",
	    "[v1x]",
	    "::1",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(parse(bad[i]) == -EINVAL, "accepted \"%s\"", bad[i]);
	/* A NUL inside (the length says where the value ends). */
	ck_assert_int_eq(authority_parse("b.test\0x", 8, &A), -EINVAL);
	/* An IPv6 literal too long for any address. */
	ck_assert_int_eq(parse("[0000:0000:0000:0000:0000:0000:0000:0000:0000:0000]"), -EINVAL);
}
END_TEST

static bool same(const char *x, const char *y)
{
	struct authority a, b;

	ck_assert_int_eq(authority_parse(x, strlen(x), &a), 0);
	ck_assert_int_eq(authority_parse(y, strlen(y), &b), 0);
	return authority_same(&a, &b, "443");
}

START_TEST(test_same)
{
	ck_assert(same("dl.test", "dl.test"));
	ck_assert(same("dl.test", "DL.TEST"));
	ck_assert(same("dl.test", "dl.test."));
	ck_assert(same("dl.test", "dl.test:443"));
	ck_assert(same("dl.test:", "dl.test:0443"));
	ck_assert(same("[::1]:8443", "[::1]:8443"));
	ck_assert(!same("dl.test", "dl.test:8443"));
	ck_assert(!same("dl.test", "other.test"));
	ck_assert(!same("dl.test", "dl.tes"));
	ck_assert(!same("a.test:80", "a.test:8"));
}
END_TEST

static long split(const char *t, enum target_scheme *scheme, const char **auth, size_t *n)
{
	return target_split(t, strlen(t), scheme, auth, n);
}

START_TEST(test_target_split)
{
	enum target_scheme scheme;
	const char *auth;
	size_t n;

	ck_assert_int_eq(split("/a?b", &scheme, &auth, &n), 0);
	ck_assert_int_eq(scheme, TARGET_ORIGIN);
	ck_assert_ptr_null(auth);
	ck_assert_int_eq(split("http://b.test/x", &scheme, &auth, &n), 13);
	ck_assert_int_eq(scheme, TARGET_HTTP);
	ck_assert(n == 6 && memcmp(auth, "b.test", 6) == 0);
	ck_assert_int_eq(split("HTTPS://b.test:8443?q", &scheme, &auth, &n), 19);
	ck_assert_int_eq(scheme, TARGET_HTTPS);
	ck_assert(n == 11 && memcmp(auth, "b.test:8443", 11) == 0);
	ck_assert_int_eq(split("https://u@b.test", &scheme, &auth, &n), 16);
	ck_assert(n == 8); /* the authority as sent: authority_parse refuses it */
	ck_assert_int_eq(split("http:///x", &scheme, &auth, &n), -EINVAL);
	ck_assert_int_eq(split("ftp://b.test/", &scheme, &auth, &n), -EINVAL);
	ck_assert_int_eq(split("*", &scheme, &auth, &n), -EINVAL);
	ck_assert_int_eq(split("b.test:443", &scheme, &auth, &n), -EINVAL);
	ck_assert_int_eq(split("", &scheme, &auth, &n), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("authority");
	TCase *tc = tcase_create("authority");

	tcase_add_test(tc, test_valid);
	tcase_add_test(tc, test_invalid);
	tcase_add_test(tc, test_same);
	tcase_add_test(tc, test_target_split);
	suite_add_tcase(s, tc);
	return check_run(s);
}
