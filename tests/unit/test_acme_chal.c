/* Tests server/core/acme_chal.c: what is put is found by its name (case
 * and a trailing dot aside) and token, and nothing else is; what cannot be
 * a name, token or key authorization is refused; the table holds 64; the
 * contexts' references (each freed once, none while a handshake holds
 * one); the counts; and workers reading while the ACME thread writes.
 * Each test leaves the table empty: scripts/test runs them in one process
 * (CK_FORK=no, under valgrind). */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <openssl/ssl.h>

#include "server/core/acme_chal.h"
#include "tests/unit/check_run.h"

static int http(const char *host, const char *token, char *out, size_t outlen)
{
	return acme_chal_http(host, strlen(host), token, strlen(token), out, outlen);
}

START_TEST(test_empty)
{
	char out[256];
	uint64_t h, a;

	uint64_t h0, a0;

	acme_chal_counts(&h0, &a0);
	ck_assert(!acme_chal_active());
	ck_assert_int_eq(http("a.test", "tok", out, sizeof(out)), -1);
	ck_assert_ptr_null(acme_chal_alpn("a.test", 6));
	acme_chal_drop("a.test"); /* nothing to drop: no harm */
	acme_chal_counts(&h, &a);
	ck_assert_uint_eq(h, h0);
	ck_assert_uint_eq(a, a0);
}
END_TEST

START_TEST(test_http_found)
{
	char out[256];

	ck_assert_int_eq(acme_chal_put_http("Example.TEST.", "tok_en-1", "tok_en-1.thumb"), 0);
	ck_assert(acme_chal_active());
	memset(out, 'x', sizeof(out));
	ck_assert_int_eq(http("example.test", "tok_en-1", out, sizeof(out)), 14);
	ck_assert_str_eq(out, "tok_en-1.thumb");
	/* The host as a client may write it: any case, a trailing dot. */
	ck_assert_int_eq(http("EXAMPLE.test.", "tok_en-1", out, sizeof(out)), 14);
	/* The token is case-sensitive (base64url), and must be all of it. */
	ck_assert_int_eq(http("example.test", "TOK_EN-1", out, sizeof(out)), -1);
	ck_assert_int_eq(http("example.test", "tok_en-", out, sizeof(out)), -1);
	ck_assert_int_eq(http("example.test", "tok_en-12", out, sizeof(out)), -1);
	ck_assert_int_eq(acme_chal_http("example.test", 12, "tok_en-1", 0, out, sizeof(out)), -1);
	/* Another name with that token: none (RFC 8555 8.3: the Host is the
	 * identifier), nor a name that only starts like it. */
	ck_assert_int_eq(http("other.test", "tok_en-1", out, sizeof(out)), -1);
	ck_assert_int_eq(http("example.tes", "tok_en-1", out, sizeof(out)), -1);
	ck_assert_int_eq(http("www.example.test", "tok_en-1", out, sizeof(out)), -1);
	ck_assert_int_eq(acme_chal_http("example.test.x", 12, "tok_en-1", 8, out, sizeof(out)),
			 14); /* lengths, not NULs, bound host and token */
	ck_assert_int_eq(http("", "tok_en-1", out, sizeof(out)), -1);
	ck_assert_int_eq(http(".", "tok_en-1", out, sizeof(out)), -1);
	/* Room for the answer and its NUL, or none. */
	ck_assert_int_eq(http("example.test", "tok_en-1", out, 14), -1);
	ck_assert_int_eq(http("example.test", "tok_en-1", out, 15), 14);
	ck_assert_int_eq(acme_chal_http(NULL, 0, "tok_en-1", 8, out, sizeof(out)), -1);
	/* An ALPN lookup for that name finds nothing: another kind. */
	ck_assert_ptr_null(acme_chal_alpn("example.test", 12));
	acme_chal_drop("example.test");
	ck_assert(!acme_chal_active());
}
END_TEST

/* Two tokens of one name (two orders, or a retried authorization) are both
 * answered; the same token again replaces its key authorization; a drop
 * takes all of the name's, and only the name's. */
START_TEST(test_http_replace_and_drop)
{
	char out[256];

	ck_assert_int_eq(acme_chal_put_http("a.test", "one", "one.k1"), 0);
	ck_assert_int_eq(acme_chal_put_http("a.test", "two", "two.k"), 0);
	ck_assert_int_eq(acme_chal_put_http("b.test", "one", "one.b"), 0);
	ck_assert_int_eq(acme_chal_put_http("A.TEST", "one", "one.k2"), 0);
	ck_assert_int_eq(http("a.test", "one", out, sizeof(out)), 6);
	ck_assert_str_eq(out, "one.k2");
	ck_assert_int_eq(http("a.test", "two", out, sizeof(out)), 5);
	ck_assert_int_eq(http("b.test", "one", out, sizeof(out)), 5);
	ck_assert_str_eq(out, "one.b");

	acme_chal_drop("A.test.");
	ck_assert_int_eq(http("a.test", "one", out, sizeof(out)), -1);
	ck_assert_int_eq(http("a.test", "two", out, sizeof(out)), -1);
	ck_assert_int_eq(http("b.test", "one", out, sizeof(out)), 5);
	ck_assert(acme_chal_active());
	acme_chal_drop("b.test");
	ck_assert(!acme_chal_active());
	ck_assert_int_eq(http("b.test", "one", out, sizeof(out)), -1);
}
END_TEST

START_TEST(test_refused)
{
	char name[300], token[200], ka[300];
	char out[512];

	ck_assert_int_eq(acme_chal_put_http(NULL, "t", "t.k"), -EINVAL);
	ck_assert_int_eq(acme_chal_put_http("a.test", NULL, "t.k"), -EINVAL);
	ck_assert_int_eq(acme_chal_put_http("a.test", "t", NULL), -EINVAL);
	ck_assert_int_eq(acme_chal_put_http("", "t", "t.k"), -EINVAL);
	ck_assert_int_eq(acme_chal_put_http(".", "t", "t.k"), -EINVAL);
	ck_assert_int_eq(acme_chal_put_http("a test", "t", "t.k"), -EINVAL);
	ck_assert_int_eq(acme_chal_put_http("a\x7f.test", "t", "t.k"), -EINVAL);
	/* A name of 253 is one, with or without its dot; 254 is not. */
	memset(name, 'a', 253);
	name[253] = '\0';
	ck_assert_int_eq(acme_chal_put_http(name, "t", "t.k"), 0);
	name[253] = '.';
	name[254] = '\0';
	ck_assert_int_eq(acme_chal_put_http(name, "t", "t.k"), 0);
	ck_assert_int_eq(acme_chal_http(name, 254, "t", 1, out, sizeof(out)), 3);
	name[253] = 'a';
	ck_assert_int_eq(acme_chal_put_http(name, "t", "t.k"), -EINVAL);
	ck_assert_int_eq(acme_chal_http(name, 254, "t", 1, out, sizeof(out)), -1);
	/* Tokens: base64url without padding, 1 to 128. */
	ck_assert_int_eq(acme_chal_put_http("a.test", "", "k"), -EINVAL);
	ck_assert_int_eq(acme_chal_put_http("a.test", "abc=", "k"), -EINVAL);
	ck_assert_int_eq(acme_chal_put_http("a.test", "a/b", "k"), -EINVAL);
	ck_assert_int_eq(acme_chal_put_http("a.test", "a+b", "k"), -EINVAL);
	ck_assert_int_eq(acme_chal_put_http("a.test", "a.b", "k"), -EINVAL);
	memset(token, 'T', 128);
	token[128] = '\0';
	ck_assert_int_eq(acme_chal_put_http("a.test", token, "k"), 0);
	ck_assert_int_eq(http("a.test", token, out, sizeof(out)), 1);
	token[128] = 'T';
	token[129] = '\0';
	ck_assert_int_eq(acme_chal_put_http("a.test", token, "k"), -EINVAL);
	ck_assert_int_eq(http("a.test", token, out, sizeof(out)), -1);
	/* Key authorizations go into a body as they are: printable, 1 to 255. */
	ck_assert_int_eq(acme_chal_put_http("a.test", "t", ""), -EINVAL);
	ck_assert_int_eq(acme_chal_put_http("a.test", "t", "t.k\r\nSet-Cookie: x"), -EINVAL);
	ck_assert_int_eq(acme_chal_put_http("a.test", "t", "t k"), -EINVAL);
	memset(ka, 'k', 255);
	ka[255] = '\0';
	ck_assert_int_eq(acme_chal_put_http("a.test", "t", ka), 0);
	ck_assert_int_eq(http("a.test", "t", out, sizeof(out)), 255);
	ka[255] = 'k';
	ka[256] = '\0';
	ck_assert_int_eq(acme_chal_put_http("a.test", "t", ka), -EINVAL);
	ck_assert_int_eq(http("a.test", "t", out, sizeof(out)), 255); /* the old one stays */
	/* ALPN: a name and a context. */
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	ck_assert_int_eq(acme_chal_put_alpn("", ctx), -EINVAL);
	ck_assert_int_eq(acme_chal_put_alpn(NULL, ctx), -EINVAL);
	ck_assert_int_eq(acme_chal_put_alpn("a.test", NULL), -EINVAL);
	SSL_CTX_free(ctx);
	ck_assert_ptr_null(acme_chal_alpn("a.test", 6));
	ck_assert_ptr_null(acme_chal_alpn(NULL, 0));
	name[253] = '\0';
	acme_chal_drop(name);
	acme_chal_drop("a.test");
	ck_assert(!acme_chal_active());
}
END_TEST

/* Frees of contexts the tests made, seen through ex_data's free callback. */
static int ctx_index = -1;
static atomic_int ctx_freed;

static void ctx_free_cb(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
			void *argp)
{
	(void)parent, (void)ad, (void)idx, (void)argl, (void)argp;
	if (ptr)
		atomic_fetch_add(&ctx_freed, 1);
}

/* A context tagged with tag (read back by tag_of). */
static SSL_CTX *tagged_ctx(const char *tag)
{
	if (ctx_index < 0)
		ctx_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, ctx_free_cb);
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	ck_assert_ptr_nonnull(ctx);
	ck_assert(SSL_CTX_set_ex_data(ctx, ctx_index, (void *)tag));
	return ctx;
}

static const char *tag_of(SSL_CTX *ctx)
{
	return SSL_CTX_get_ex_data(ctx, ctx_index);
}

START_TEST(test_alpn_references)
{
	static const char tag1[] = "one", tag2[] = "two";
	SSL_CTX *one = tagged_ctx(tag1), *two = tagged_ctx(tag2);
	char out[64];

	ck_assert_int_eq(acme_chal_put_alpn("A.test.", one), 0);
	SSL_CTX_free(one); /* the table has its own */
	ck_assert_int_eq(ctx_freed, 0);
	SSL_CTX *got = acme_chal_alpn("a.TEST", 6);
	ck_assert_ptr_eq(got, one);
	ck_assert_ptr_eq(tag_of(got), tag1);
	/* No HTTP-01 answer for a TLS-ALPN-01 entry. */
	ck_assert_int_eq(http("a.test", "one", out, sizeof(out)), -1);

	/* A second context for the name replaces the first; a handshake that
	 * holds the first keeps it until it lets go. */
	ck_assert_int_eq(acme_chal_put_alpn("a.test", two), 0);
	ck_assert_int_eq(ctx_freed, 0);
	SSL_CTX *now = acme_chal_alpn("a.test", 6);
	ck_assert_ptr_eq(now, two);
	SSL_CTX_free(now);
	SSL_CTX_free(got);
	ck_assert_int_eq(ctx_freed, 1); /* one: the table let it go at the replace */

	/* HTTP-01 and TLS-ALPN-01 for one name at once; a drop takes both. */
	ck_assert_int_eq(acme_chal_put_http("a.test", "tok", "tok.k"), 0);
	ck_assert_int_eq(http("a.test", "tok", out, sizeof(out)), 5);
	got = acme_chal_alpn("a.test", 6);
	acme_chal_drop("a.test");
	ck_assert(!acme_chal_active());
	ck_assert_ptr_null(acme_chal_alpn("a.test", 6));
	ck_assert_int_eq(http("a.test", "tok", out, sizeof(out)), -1);
	ck_assert_int_eq(ctx_freed, 1); /* got still holds two */
	SSL_CTX_free(two);
	ck_assert_int_eq(ctx_freed, 1);
	SSL_CTX_free(got);
	ck_assert_int_eq(ctx_freed, 2);
}
END_TEST

START_TEST(test_full)
{
	char name[32], out[64];
	SSL_CTX *ctx = tagged_ctx("full");

	for (int i = 0; i < ACME_CHAL_MAX; i++) {
		snprintf(name, sizeof(name), "n%d.test", i);
		if (i % 2)
			ck_assert_int_eq(acme_chal_put_http(name, "t", "t.k"), 0);
		else
			ck_assert_int_eq(acme_chal_put_alpn(name, ctx), 0);
	}
	ck_assert_int_eq(acme_chal_put_http("more.test", "t", "t.k"), -ENOSPC);
	ck_assert_int_eq(acme_chal_put_alpn("more.test", ctx), -ENOSPC);
	/* What is there can still be replaced. */
	ck_assert_int_eq(acme_chal_put_http("n1.test", "t", "t.k2"), 0);
	ck_assert_int_eq(http("n1.test", "t", out, sizeof(out)), 4);
	ck_assert_int_eq(acme_chal_put_alpn("n0.test", ctx), 0);
	/* A drop makes room, and every entry is still found. */
	acme_chal_drop("n5.test");
	ck_assert_int_eq(acme_chal_put_http("more.test", "t", "t.m"), 0);
	for (int i = 0; i < ACME_CHAL_MAX; i++) {
		snprintf(name, sizeof(name), "n%d.test", i);
		if (i == 5) {
			ck_assert_int_eq(http(name, "t", out, sizeof(out)), -1);
		} else if (i % 2) {
			ck_assert_int_eq(http(name, "t", out, sizeof(out)), i == 1 ? 4 : 3);
		} else {
			SSL_CTX *got = acme_chal_alpn(name, strlen(name));
			ck_assert_ptr_eq(got, ctx);
			SSL_CTX_free(got);
		}
		acme_chal_drop(name);
	}
	acme_chal_drop("more.test");
	ck_assert(!acme_chal_active());
	ck_assert_int_eq(ctx_freed, 0);
	SSL_CTX_free(ctx); /* the last reference: each the table took went */
	ck_assert_int_eq(ctx_freed, 1);
}
END_TEST

START_TEST(test_counts)
{
	SSL_CTX *ctx = tagged_ctx("count");
	char out[64];
	uint64_t h, a, h0, a0;

	acme_chal_counts(&h0, &a0);
	ck_assert_int_eq(acme_chal_put_http("a.test", "t", "t.k"), 0);
	ck_assert_int_eq(acme_chal_put_alpn("a.test", ctx), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(http("a.test", "t", out, sizeof(out)), 3);
	ck_assert_int_eq(http("a.test", "u", out, sizeof(out)), -1); /* a miss: not counted */
	SSL_CTX_free(acme_chal_alpn("a.test", 6));
	ck_assert_ptr_null(acme_chal_alpn("b.test", 6));
	acme_chal_counts(&h, &a);
	ck_assert_uint_eq(h - h0, 3);
	ck_assert_uint_eq(a - a0, 1);
	acme_chal_drop("a.test");
	SSL_CTX_free(ctx);
}
END_TEST

/* Workers look up while the ACME thread puts, replaces and drops: every
 * answer found is the one put for that name and token (never another
 * entry's, never a torn copy), every context found is the name's and
 * alive until it is let go, and once all is dropped every context was
 * freed exactly once. */
#define NAMES 8
#define READERS 4
#define ROUNDS 4000

static atomic_bool stop;
static atomic_int wrong, hits;
static SSL_CTX *ctxs[NAMES];
static const char *tags[NAMES] = {"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"};

static void *reader(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	char name[32], token[32], want[64], out[256];

	while (!atomic_load(&stop)) {
		unsigned i = (seed = seed * 1103515245 + 12345) % NAMES;
		snprintf(name, sizeof(name), "N%u.Test.", i);
		snprintf(token, sizeof(token), "tok%u", i);
		snprintf(want, sizeof(want), "tok%u.key-of-%u", i, i);
		int n = http(name, token, out, sizeof(out));
		if (n >= 0 && (n != (int)strlen(want) || strcmp(out, want) != 0))
			atomic_fetch_add(&wrong, 1);
		SSL_CTX *ctx = acme_chal_alpn(name, strlen(name));
		if (ctx) {
			if (ctx != ctxs[i] || tag_of(ctx) != tags[i])
				atomic_fetch_add(&wrong, 1);
			SSL_CTX_free(ctx);
		}
		if (n >= 0 || ctx)
			atomic_fetch_add(&hits, 1);
		/* Lets the writer in: under valgrind, which runs one thread at a
		 * time, readers that never block held it off for minutes. */
		sched_yield();
	}
	return NULL;
}

START_TEST(test_threads)
{
	pthread_t r[READERS];
	char name[32], token[32], ka[64];

	for (int i = 0; i < NAMES; i++)
		ctxs[i] = tagged_ctx(tags[i]);
	for (uintptr_t t = 0; t < READERS; t++)
		ck_assert_int_eq(pthread_create(&r[t], NULL, reader, (void *)(t + 1)), 0);
	/* At least ROUNDS, and on until the readers found enough to say
	 * something (threads start late on a busy machine). */
	for (unsigned k = 0; k < ROUNDS || (atomic_load(&hits) < 1000 && k < 100 * ROUNDS); k++) {
		unsigned i = k % NAMES;
		snprintf(name, sizeof(name), "n%u.test", i);
		snprintf(token, sizeof(token), "tok%u", i);
		snprintf(ka, sizeof(ka), "tok%u.key-of-%u", i, i);
		if ((k / NAMES) % 3 == 2) {
			acme_chal_drop(name);
			continue;
		}
		ck_assert_int_eq(acme_chal_put_http(name, token, ka), 0);
		ck_assert_int_eq(acme_chal_put_alpn(name, ctxs[i]), 0);
		/* A decoy of the name that readers never ask for. */
		ck_assert_int_eq(acme_chal_put_http(name, "decoy", "decoy.x"), 0);
	}
	atomic_store(&stop, true);
	for (int t = 0; t < READERS; t++)
		ck_assert_int_eq(pthread_join(r[t], NULL), 0);
	ck_assert_int_eq(wrong, 0);
	ck_assert_int_ge(hits, 1000);
	for (int i = 0; i < NAMES; i++) {
		snprintf(name, sizeof(name), "n%d.test", i);
		acme_chal_drop(name);
	}
	ck_assert(!acme_chal_active());
	ck_assert_int_eq(ctx_freed, 0); /* ours still hold each */
	for (int i = 0; i < NAMES; i++)
		SSL_CTX_free(ctxs[i]);
	ck_assert_int_eq(ctx_freed, NAMES);
}
END_TEST

/* Before each test (a checked fixture: in one process too). */
static void reset(void)
{
	ctx_freed = 0;
	stop = false;
	wrong = hits = 0;
	ck_assert(!acme_chal_active());
}

static Suite *acme_chal_suite(void)
{
	Suite *s = suite_create("acme_chal");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, reset, NULL);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_http_found);
	tcase_add_test(tc, test_http_replace_and_drop);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_alpn_references);
	tcase_add_test(tc, test_full);
	tcase_add_test(tc, test_counts);
	tcase_add_test(tc, test_threads);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(acme_chal_suite());
}
