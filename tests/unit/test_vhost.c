/* Tests proto/vhost.c. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "proto/vhost.h"
#include "tests/unit/check_run.h"

static int find(const struct vhost_table *t, const char *host)
{
	return vhost_find(t, host, strlen(host));
}

START_TEST(test_exact_and_wildcard)
{
	struct vhost_table t = {0};

	ck_assert_int_eq(vhost_add(&t, "dl-a.test", 1), 0);
	ck_assert_int_eq(vhost_add(&t, "*.example.org", 2), 0);
	ck_assert_int_eq(vhost_add(&t, "*.eu.example.org", 3), 0);
	ck_assert_int_eq(vhost_add(&t, "www.example.org", 4), 0);
	ck_assert_int_eq(find(&t, "dl-a.test"), 1);
	ck_assert_int_eq(find(&t, "DL-A.Test"), 1);
	ck_assert_int_eq(find(&t, "dl-a.test."), 1);
	ck_assert_int_eq(find(&t, "dl-b.test"), -1);
	ck_assert_int_eq(find(&t, "x.dl-a.test"), -1);
	ck_assert_int_eq(find(&t, "a.example.org"), 2);
	ck_assert_int_eq(find(&t, "a.b.example.org"), 2);
	/* the exact name wins over the wildcard, the longest wildcard over a shorter one */
	ck_assert_int_eq(find(&t, "www.example.org"), 4);
	ck_assert_int_eq(find(&t, "mirror.eu.example.org"), 3);
	/* a wildcard needs a label before it */
	ck_assert_int_eq(find(&t, "example.org"), -1);
	ck_assert_int_eq(find(&t, ".example.org"), -1);
	ck_assert_int_eq(find(&t, "badexample.org"), -1);
	ck_assert_int_eq(find(&t, ""), -1);
	vhost_free(&t);
	ck_assert_int_eq(find(&t, "dl-a.test"), -1);
}
END_TEST

START_TEST(test_many)
{
	struct vhost_table t = {0};
	char names[100][16];

	for (unsigned i = 0; i < 100; i++) {
		snprintf(names[i], sizeof(names[i]), "s%u.test", i);
		ck_assert_int_eq(vhost_add(&t, names[i], i), 0);
	}
	for (unsigned i = 0; i < 100; i++)
		ck_assert_int_eq(find(&t, names[i]), (int)i);
	vhost_free(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vhost");
	TCase *tc = tcase_create("vhost");

	tcase_add_test(tc, test_exact_and_wildcard);
	tcase_add_test(tc, test_many);
	suite_add_tcase(s, tc);
	return check_run(s);
}
