/* Tests server/http/resolve.c's ACME HTTP-01 answer (resolve_challenge):
 * the key authorization for /.well-known/acme-challenge/TOKEN when the
 * request's host is the name the token was put for, in origin and absolute
 * form, the port aside, the site the host names with it; everything else
 * (another name, another token, a longer path, a query, no host, nothing
 * pending) goes on untouched as any request. The rest of resolve.c opens
 * files beneath real roots, which the integration tests cover. */
#include <check.h>
#include <string.h>

#include "server/conf/server-t.h"
#include "server/core/acme_chal.h"
#include "server/http/resolve.h"
#include "tests/unit/check_run.h"

static struct site sites[2];
static struct server srv = {.sites = sites, .nsites = 2};
static struct static_target out;

static bool ask(const char *target, const char *host, bool tls, unsigned conn_site)
{
	const struct static_ask a = {
	    .target = target,
	    .target_len = strlen(target),
	    .host = host,
	    .host_len = host ? strlen(host) : 0,
	};

	memset(&out, 0x5a, sizeof(out));
	out.status = -7; /* what a miss must leave */
	return resolve_challenge(&srv, tls, conn_site, &a, &out);
}

#define PATH "/.well-known/acme-challenge/"

START_TEST(test_nothing_pending)
{
	ck_assert(!ask(PATH "tok", "a.test", false, 0));
	ck_assert_int_eq(out.status, -7);
}
END_TEST

START_TEST(test_hit)
{
	ck_assert_int_eq(acme_chal_put_http("a.test", "tok-1_x", "tok-1_x.thumb"), 0);
	const char *hosts[] = {"a.test", "A.Test", "a.test.", "a.test:80", "a.test:8080"};
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		ck_assert_msg(ask(PATH "tok-1_x", hosts[i], false, 0), "%s", hosts[i]);
		ck_assert_int_eq(out.status, STATIC_ACME_CHALLENGE);
		ck_assert_uint_eq(out.key_authz_len, 13);
		ck_assert_str_eq(out.key_authz, "tok-1_x.thumb");
		ck_assert_int_eq(out.fd, -1);
		ck_assert_ptr_null(out.mem);
		ck_assert_uint_eq(out.extras.n, 0); /* not the site's content: none of its fields */
		ck_assert_ptr_eq(out.root, &sites[0]);
	}
	/* Absolute-form: its path; the host the caller took from it. */
	ck_assert(ask("http://a.test" PATH "tok-1_x", "a.test", false, 0));
	ck_assert(ask("HTTPS://a.test:443" PATH "tok-1_x", "a.test:443", true, 0));
	ck_assert_str_eq(out.key_authz, "tok-1_x.thumb");
	acme_chal_drop("a.test");
}
END_TEST

START_TEST(test_miss)
{
	ck_assert_int_eq(acme_chal_put_http("a.test", "tok", "tok.k"), 0);
	const char *targets[] = {
	    PATH "tok2", PATH "to", PATH "tok?x=1", PATH "tok/", PATH "tok/x", PATH,
	    PATH "%74ok", /* a validator sends base64url as it is */
	    "/.well-known/acme-challenge", "/.well-known/acme-challengetok", "/x" PATH "tok",
	    "/.WELL-KNOWN/acme-challenge/tok", "//.well-known/acme-challenge/tok", "", "*",
	    "http://" PATH "tok", "ftp://a.test" PATH "tok",
	};
	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		ck_assert_msg(!ask(targets[i], "a.test", false, 0), "%s", targets[i]);
		ck_assert_int_eq(out.status, -7);
	}
	/* The Host is the identifier (RFC 8555 8.3): not another name's,
	 * not none, not one that is no authority. */
	ck_assert(!ask(PATH "tok", "b.test", false, 0));
	ck_assert(!ask(PATH "tok", "www.a.test", false, 0));
	ck_assert(!ask(PATH "tok", NULL, false, 0));
	ck_assert(!ask(PATH "tok", "user@a.test", false, 0));
	ck_assert(!ask(PATH "tok", "a.test:x", false, 0));
	ck_assert_int_eq(out.status, -7);
	ck_assert(ask(PATH "tok", "a.test", false, 0));
	/* Dropped: a miss again. */
	acme_chal_drop("a.test");
	ck_assert(!ask(PATH "tok", "a.test", false, 0));
}
END_TEST

/* The answer names the site the host does, for the access log and the
 * site's counters; a host that names another site than a TLS connection's
 * is answered all the same, with no site (the log says none). */
START_TEST(test_site)
{
	ck_assert_int_eq(vhost_add(&srv.names, "a.test", 0), 0);
	ck_assert_int_eq(vhost_add(&srv.names, "b.test", 1), 0);
	ck_assert_int_eq(acme_chal_put_http("b.test", "tok", "tok.b"), 0);
	ck_assert(ask(PATH "tok", "b.test", false, 0));
	ck_assert_ptr_eq(out.root, &sites[1]);
	ck_assert(ask(PATH "tok", "b.test", true, 1));
	ck_assert_ptr_eq(out.root, &sites[1]);
	ck_assert(ask(PATH "tok", "b.test", true, 0));
	ck_assert_ptr_null(out.root);
	ck_assert_str_eq(out.key_authz, "tok.b");
	acme_chal_drop("b.test");
	vhost_free(&srv.names);
}
END_TEST

static Suite *resolve_suite(void)
{
	Suite *s = suite_create("resolve");
	TCase *tc = tcase_create("http");

	tcase_add_test(tc, test_nothing_pending);
	tcase_add_test(tc, test_hit);
	tcase_add_test(tc, test_miss);
	tcase_add_test(tc, test_site);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(resolve_suite());
}
