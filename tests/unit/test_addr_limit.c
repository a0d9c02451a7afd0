/* Tests server/net/addr_limit.c: --limit-conn's table of connections per
 * client address, its keys, its limits and what it does when full. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/net/addr_limit.h"
#include "tests/unit/check_run.h"

static struct addr_key v4(const char *text)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(1234)};
	struct addr_key k;

	ck_assert_int_eq(inet_pton(AF_INET, text, &a.sin_addr), 1);
	ck_assert(addr_key_from(&k, (struct sockaddr *)&a, sizeof(a)));
	return k;
}

static struct addr_key v6(const char *text)
{
	struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(4321)};
	struct addr_key k;

	ck_assert_int_eq(inet_pton(AF_INET6, text, &a.sin6_addr), 1);
	ck_assert(addr_key_from(&k, (struct sockaddr *)&a, sizeof(a)));
	return k;
}

START_TEST(test_keys)
{
	struct addr_key a = v4("192.0.2.7"), b = v6("::ffff:192.0.2.7"), c = v6("2001:db8::1"),
			d = v6("2001:db8::2");
	struct sockaddr_in short_one = {.sin_family = AF_INET};
	struct sockaddr unix_one = {.sa_family = AF_UNIX};
	struct addr_key k;

	/* The same client whichever way its address came. */
	ck_assert_mem_eq(&a, &b, sizeof(a));
	/* IPv6 by the full address: two of one /64 are two clients. */
	ck_assert(memcmp(&c, &d, sizeof(c)) != 0);
	ck_assert(!addr_key_from(&k, (struct sockaddr *)&short_one, sizeof(short_one) - 1));
	ck_assert(!addr_key_from(&k, &unix_one, sizeof(unix_one)));
}
END_TEST

START_TEST(test_limit)
{
	struct addr_limit *t = addr_limit_new(64);
	struct addr_key a = v4("127.0.0.1"), b = v4("127.0.0.2");

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(addr_limit_enter(t, 0, &a, 2), ADDR_LIMIT_COUNTED);
	ck_assert_int_eq(addr_limit_enter(t, 0, &a, 2), ADDR_LIMIT_COUNTED);
	ck_assert_int_eq(addr_limit_enter(t, 0, &a, 2), ADDR_LIMIT_OVER);
	ck_assert_uint_eq(addr_limit_count(t, 0, &a), 2);
	/* Another address, another site: counted apart. */
	ck_assert_int_eq(addr_limit_enter(t, 0, &b, 2), ADDR_LIMIT_COUNTED);
	ck_assert_int_eq(addr_limit_enter(t, 1, &a, 2), ADDR_LIMIT_COUNTED);
	ck_assert_uint_eq(addr_limit_count(t, 0, &b), 1);
	ck_assert_uint_eq(addr_limit_count(t, 1, &a), 1);
	/* One closes: one more may come. */
	addr_limit_leave(t, 0, &a);
	ck_assert_uint_eq(addr_limit_count(t, 0, &a), 1);
	ck_assert_int_eq(addr_limit_enter(t, 0, &a, 2), ADDR_LIMIT_COUNTED);
	/* A lower limit after a reload: refused until enough have closed. */
	ck_assert_int_eq(addr_limit_enter(t, 0, &a, 1), ADDR_LIMIT_OVER);
	addr_limit_leave(t, 0, &a);
	addr_limit_leave(t, 0, &a);
	ck_assert_uint_eq(addr_limit_count(t, 0, &a), 0);
	ck_assert_int_eq(addr_limit_enter(t, 0, &a, 1), ADDR_LIMIT_COUNTED);
	addr_limit_free(t);
}
END_TEST

/* The smallest table is one bucket: more addresses than its slots are let
 * in uncounted (fail open), and a slot freed is taken again. */
START_TEST(test_full)
{
	struct addr_limit *t = addr_limit_new(1);
	struct addr_key k[10];
	char text[32];
	int counted = 0;

	ck_assert_ptr_nonnull(t);
	for (int i = 0; i < 10; i++) {
		snprintf(text, sizeof(text), "10.0.0.%d", i + 1);
		k[i] = v4(text);
		enum addr_limit_result r = addr_limit_enter(t, 0, &k[i], 1);
		ck_assert(r == ADDR_LIMIT_COUNTED || r == ADDR_LIMIT_UNTRACKED);
		counted += r == ADDR_LIMIT_COUNTED;
	}
	ck_assert_int_eq(counted, 7);
	/* An address already there still counts, and is still limited. */
	ck_assert_int_eq(addr_limit_enter(t, 0, &k[0], 1), ADDR_LIMIT_OVER);
	ck_assert_int_eq(addr_limit_enter(t, 0, &k[9], 1), ADDR_LIMIT_UNTRACKED);
	addr_limit_leave(t, 0, &k[0]);
	ck_assert_int_eq(addr_limit_enter(t, 0, &k[9], 1), ADDR_LIMIT_COUNTED);
	ck_assert_int_eq(addr_limit_enter(t, 0, &k[0], 1), ADDR_LIMIT_UNTRACKED);
	addr_limit_free(t);
}
END_TEST

/* Workers enter and leave at once: no count is lost. */
struct racer {
	struct addr_limit *t;
	struct addr_key k;
};

static void *race(void *arg)
{
	struct racer *r = arg;

	for (int i = 0; i < 100000; i++) {
		if (addr_limit_enter(r->t, 0, &r->k, 1000000) == ADDR_LIMIT_COUNTED)
			addr_limit_leave(r->t, 0, &r->k);
	}
	for (int i = 0; i < 1000; i++)
		addr_limit_enter(r->t, 0, &r->k, 1000000);
	return NULL;
}

START_TEST(test_threads)
{
	struct racer r = {addr_limit_new(1024), v6("2001:db8::7")};
	pthread_t th[4];

	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, race, &r), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	ck_assert_uint_eq(addr_limit_count(r.t, 0, &r.k), 4000);
	addr_limit_free(r.t);
}
END_TEST

/* --limit-req: a second's worth at once, then the rate; per address and
 * site; a full bucket gives the longest-idle slot to a new key. */
START_TEST(test_rate)
{
	struct addr_rate *t = addr_rate_new(64);
	struct addr_key a = v4("192.0.2.7"), b = v4("192.0.2.8");
	uint64_t now = 1000;

	ck_assert_ptr_nonnull(t);
	for (int i = 0; i < 5; i++)
		ck_assert(addr_rate_take(t, 0, &a, 5, now));
	ck_assert(!addr_rate_take(t, 0, &a, 5, now));     /* the burst spent */
	ck_assert(addr_rate_take(t, 0, &b, 5, now));      /* another client */
	ck_assert(addr_rate_take(t, 1, &a, 5, now));      /* another site */
	ck_assert(!addr_rate_take(t, 0, &a, 5, now + 199)); /* 0.995 of a request back */
	ck_assert(addr_rate_take(t, 0, &a, 5, now + 200));  /* one */
	ck_assert(!addr_rate_take(t, 0, &a, 5, now + 200));
	ck_assert(!addr_rate_take(t, 0, &a, 5, now + 100)); /* a clock behind: no refill */
	/* Long idle: a burst again, never more. */
	for (int i = 0; i < 5; i++)
		ck_assert(addr_rate_take(t, 0, &a, 5, now + 100000));
	ck_assert(!addr_rate_take(t, 0, &a, 5, now + 100000));
	addr_rate_free(t);

	/* One bucket (64 slots asked: about 11 buckets; 200 keys overflow
	 * them): every new key is let in, whatever it evicts. */
	t = addr_rate_new(1);
	char text[32];
	for (int i = 0; i < 200; i++) {
		snprintf(text, sizeof(text), "198.51.100.%d", i);
		struct addr_key k = v4(text);
		ck_assert(addr_rate_take(t, 0, &k, 1, now + (uint64_t)i));
	}
	/* The newest keys are still there: spent. */
	struct addr_key last = v4("198.51.100.199");
	ck_assert(!addr_rate_take(t, 0, &last, 1, now + 199));
	addr_rate_free(t);
}
END_TEST

static Suite *addr_limit_suite(void)
{
	Suite *s = suite_create("addr_limit");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_keys);
	tcase_add_test(tc, test_limit);
	tcase_add_test(tc, test_full);
	tcase_add_test(tc, test_threads);
	tcase_add_test(tc, test_rate);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(addr_limit_suite());
}
