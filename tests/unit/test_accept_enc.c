/* Tests proto/accept_enc.c: Accept-Encoding's q-values and the order in
 * which sidecars are looked for. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/accept_enc.h"
#include "tests/unit/check_run.h"

static struct accept_enc ae;

static void parse(const char *v)
{
	memset(&ae, 0xa5, sizeof(ae));
	accept_enc_parse(v, v ? strlen(v) : 0, &ae);
}

/* The order for v as the names joined by spaces ("" for none). */
static const char *order(const char *v)
{
	static char buf[64];
	enum coding o[CODING_N];

	parse(v);
	size_t n = accept_enc_order(&ae, o);
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(buf, " ");
		strcat(buf, accept_enc_name(o[i]));
	}
	return buf;
}

START_TEST(names_and_suffixes)
{
	ck_assert_str_eq(accept_enc_name(CODING_BR), "br");
	ck_assert_str_eq(accept_enc_name(CODING_ZSTD), "zstd");
	ck_assert_str_eq(accept_enc_name(CODING_GZIP), "gzip");
	ck_assert_str_eq(accept_enc_suffix(CODING_BR), ".br");
	ck_assert_str_eq(accept_enc_suffix(CODING_ZSTD), ".zst");
	ck_assert_str_eq(accept_enc_suffix(CODING_GZIP), ".gz");
}
END_TEST

START_TEST(absent_and_empty)
{
	/* Absent: no preference, but a coding the client may not decode is
	 * never guessed (nginx's gzip_static does the same). Empty: "no
	 * coding, please" (RFC 9110 12.5.3). */
	ck_assert_str_eq(order(NULL), "");
	ck_assert(!ae.identity_named);
	ck_assert_uint_eq(ae.identity_q, 1000);
	ck_assert_str_eq(order(""), "");
	ck_assert_str_eq(order(" , ,, "), "");
	ck_assert_str_eq(order("identity"), "");
	ck_assert_str_eq(order("deflate, compress"), "");
}
END_TEST

START_TEST(plain_lists)
{
	/* Equal q: br, zstd, gzip, whatever the client's order. */
	ck_assert_str_eq(order("gzip, deflate, br, zstd"), "br zstd gzip"); /* Chrome */
	ck_assert_str_eq(order("deflate, gzip, br, zstd"), "br zstd gzip"); /* curl --compressed */
	ck_assert_str_eq(order("gzip"), "gzip");
	ck_assert_str_eq(order("x-gzip"), "gzip");
	ck_assert_str_eq(order("zstd,gzip"), "zstd gzip");
	ck_assert_str_eq(order("br"), "br");
}
END_TEST

START_TEST(qvalues)
{
	ck_assert_str_eq(order("br;q=0.5, gzip"), "gzip br");
	ck_assert_uint_eq(ae.q[CODING_BR], 500);
	ck_assert_uint_eq(ae.q[CODING_GZIP], 1000);
	ck_assert_str_eq(order("gzip;q=1.0, zstd;q=0.999, br;q=0.001"), "gzip zstd br");
	ck_assert_str_eq(order("gzip;q=0.8, br;q=0.8, zstd;q=0.9"), "zstd br gzip");
	ck_assert_str_eq(order("br;q=0, gzip"), "gzip");
	ck_assert_str_eq(order("br;q=0.000, gzip;q=0."), "");
	ck_assert_str_eq(order("gzip;q=1."), "gzip");
	ck_assert_str_eq(order("gzip;q=1.000"), "gzip");
	ck_assert_str_eq(order("gzip;Q=0.5"), "gzip"); /* parameter names are case-insensitive */
	ck_assert_uint_eq(ae.q[CODING_GZIP], 500);
	ck_assert_str_eq(order("gzip;q=0.5;q=0"), ""); /* the last weight counts */
}
END_TEST

START_TEST(malformed_members_accept_nothing)
{
	/* Each bad member is dropped; its neighbours still count. */
	static const char *const bad[] = {
	    "br;q=2",        "br;q=1.5",   "br;q=1.001",  "br;q=0.5x",  "br;q=.5", "br;q=",
	    "br;q",          "br;q=-1",    "br;q=0.1234", "br;level=1", "br;",     "br junk",
	    "br;q=0.5 junk", "br;q = 0.5", "br;q=0,5",    "br;q=\"1\"", "br;;",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char v[64];
		snprintf(v, sizeof(v), "gzip;q=0.5, %s, zstd;q=0.4", bad[i]);
		ck_assert_msg(strcmp(order(v), "gzip zstd") == 0, "%s: got \"%s\"", v, order(v));
	}
	/* "br;q=0,5" is "br;q=0" and a member "5". */
	ck_assert_str_eq(order("br;q=0,5"), "");
}
END_TEST

START_TEST(case_and_whitespace)
{
	ck_assert_str_eq(order("GZIP, Br, ZsTd"), "br zstd gzip");
	ck_assert_str_eq(order("\tgzip ; q=0.5 ,  br\t;\tq=0.6\t"), "br gzip");
	ck_assert_str_eq(order("  br  "), "br");
	ck_assert_str_eq(order(",,,br,,,"), "br");
	ck_assert_str_eq(order("b r"), ""); /* a token "b", then stray bytes */
	ck_assert_str_eq(order("brotli, gzipx, gzi, xgzip"), "");
}
END_TEST

START_TEST(star_and_identity)
{
	ck_assert_str_eq(order("*"), "br zstd gzip");
	ck_assert_str_eq(order("*;q=0.5, gzip"), "gzip br zstd");
	ck_assert_str_eq(order("*;q=0"), ""); /* identity is served anyway */
	ck_assert_str_eq(order("*;q=0, br"), "br");
	ck_assert_str_eq(order("gzip;q=0, *"), "br zstd");
	/* "*" does not make identity a competitor: only a named identity does. */
	ck_assert_str_eq(order("*, br;q=0.5"), "zstd gzip br");
	ck_assert(!ae.identity_named);
	/* A named identity with a higher q than a coding wins over it; equal
	 * q goes to the coding (smaller). */
	ck_assert_str_eq(order("identity;q=1, br;q=0.5, gzip;q=1"), "gzip");
	ck_assert_str_eq(order("br;q=0.5, identity;q=0.5"), "br");
	ck_assert_str_eq(order("identity;q=0, gzip"), "gzip");
	ck_assert(ae.identity_named);
	ck_assert_uint_eq(ae.identity_q, 0);
	/* identity;q=0 and nothing acceptable: the caller serves identity. */
	ck_assert_str_eq(order("identity;q=0"), "");
	ck_assert_str_eq(order("identity;q=0, *;q=0"), "");
}
END_TEST

START_TEST(repeats_keep_the_lower_q)
{
	ck_assert_str_eq(order("gzip, gzip;q=0"), "");
	ck_assert_str_eq(order("gzip;q=0, gzip"), "");
	ck_assert_str_eq(order("br;q=0.3, zstd;q=0.4, br;q=0.9"), "zstd br");
	ck_assert_uint_eq(ae.q[CODING_BR], 300);
	ck_assert_str_eq(order("x-gzip;q=0, gzip"), "");
	/* Two fields joined (HTTP/1.1 joins repeats with ", "). */
	ck_assert_str_eq(order("gzip, br, br;q=0"), "gzip");
}
END_TEST

START_TEST(long_and_many)
{
	/* 100,000 members and a 1 MB value: linear, no allocation, and the
	 * last member still counts. */
	size_t cap = 1 << 20, len = 0;
	char *v = malloc(cap + 1);

	ck_assert_ptr_nonnull(v);
	while (len + 16 < cap) {
		memcpy(v + len, "deflate;q=0.1, ", 15);
		len += 15;
	}
	memcpy(v + len, "zstd", 4);
	len += 4;
	v[len] = '\0';
	ck_assert_str_eq(order(v), "zstd");
	/* One huge token and one huge run of whitespace. */
	memset(v, 'a', cap);
	v[cap] = '\0';
	ck_assert_str_eq(order(v), "");
	memset(v, ' ', cap);
	memcpy(v + cap - 2, "br", 2);
	ck_assert_str_eq(order(v), "br");
	/* Not NUL-terminated: only len bytes are read (ASan watches). */
	char *exact = malloc(4);
	ck_assert_ptr_nonnull(exact);
	memcpy(exact, "gzip", 4);
	accept_enc_parse(exact, 4, &ae);
	ck_assert_uint_eq(ae.q[CODING_GZIP], 1000);
	accept_enc_parse(exact, 3, &ae); /* "gzi" */
	ck_assert_uint_eq(ae.q[CODING_GZIP], 0);
	free(exact);
	free(v);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("accept_enc");
	TCase *tc = tcase_create("parse");
	tcase_add_test(tc, names_and_suffixes);
	tcase_add_test(tc, absent_and_empty);
	tcase_add_test(tc, plain_lists);
	tcase_add_test(tc, qvalues);
	tcase_add_test(tc, malformed_members_accept_nothing);
	tcase_add_test(tc, case_and_whitespace);
	tcase_add_test(tc, star_and_identity);
	tcase_add_test(tc, repeats_keep_the_lower_q);
	tcase_add_test(tc, long_and_many);
	suite_add_tcase(s, tc);
	return check_run(s);
}
