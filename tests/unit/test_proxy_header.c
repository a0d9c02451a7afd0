/* Tests for proto/proxy_header.c. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/un.h>

#include "proto/proxy_header.h"
#include "tests/unit/check_run.h"

static struct proxy_header h;

static int parse(const char *s)
{
	return proxy_header_parse(s, strlen(s), &h);
}

static const char *src_text(void)
{
	static char buf[INET6_ADDRSTRLEN];

	if (h.src.ss_family == AF_INET)
		return inet_ntop(AF_INET, &((struct sockaddr_in *)&h.src)->sin_addr, buf,
		                 sizeof(buf));
	return inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&h.src)->sin6_addr, buf, sizeof(buf));
}

static unsigned src_port(void)
{
	if (h.src.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&h.src)->sin_port);
	return ntohs(((struct sockaddr_in6 *)&h.src)->sin6_port);
}

/* Every proper prefix of a valid header asks for more. */
static void assert_prefixes_again(const void *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		ck_assert_int_eq(proxy_header_parse(buf, i, &h), PROXY_HEADER_AGAIN);
}

START_TEST(v1_tcp4)
{
	const char *s = "PROXY TCP4 192.0.2.7 198.51.100.1 56324 443\r\nGET /";

	ck_assert_int_eq(parse(s), (int)(strlen(s) - 5));
	ck_assert_int_eq(h.version, 1);
	ck_assert(!h.local);
	ck_assert_str_eq(src_text(), "192.0.2.7");
	ck_assert_uint_eq(src_port(), 56324);
	ck_assert_uint_eq(ntohs(((struct sockaddr_in *)&h.dst)->sin_port), 443);
	ck_assert_uint_eq(h.addrlen, sizeof(struct sockaddr_in));
	assert_prefixes_again(s, strlen(s) - 5);
}
END_TEST

START_TEST(v1_tcp6)
{
	const char *s = "PROXY TCP6 2001:db8::1 ::1 65535 0\r\n";

	ck_assert_int_eq(parse(s), (int)strlen(s));
	ck_assert_str_eq(src_text(), "2001:db8::1");
	ck_assert_uint_eq(src_port(), 65535);
	ck_assert_uint_eq(h.addrlen, sizeof(struct sockaddr_in6));
}
END_TEST

START_TEST(v1_unknown)
{
	ck_assert_int_eq(parse("PROXY UNKNOWN\r\n"), 15);
	ck_assert(h.local);
	ck_assert_int_eq(parse("PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n"), 35);
	ck_assert(h.local);
}
END_TEST

START_TEST(v1_longest)
{
	/* The spec's worst case is 107 bytes, CRLF included. */
	const char *s = "PROXY UNKNOWN ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff "
	                "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n";

	ck_assert_uint_eq(strlen(s), PROXY_V1_MAX);
	ck_assert_int_eq(parse(s), PROXY_V1_MAX);
	ck_assert(h.local);
	/* The same addresses as TCP6: 104 bytes. */
	s = "PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff "
	    "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n";
	ck_assert_int_eq(parse(s), (int)strlen(s));
	ck_assert_str_eq(src_text(), "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
}
END_TEST

START_TEST(v1_bad_syntax)
{
	static const char *const bad[] = {
	    "PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n",     /* LF alone */
	    "PROXY TCP4 1.2.3.4 5.6.7.8 1 2\rX",    /* CR without LF */
	    "PROXY TCP4  1.2.3.4 5.6.7.8 1 2\r\n",  /* two spaces */
	    "PROXY TCP4 1.2.3.4 5.6.7.8 1 2 \r\n",  /* trailing space */
	    "PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n",     /* a field missing */
	    "PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n", /* one too many */
	    "PROXY TCP4 ::1 ::1 1 2\r\n",           /* family mismatch */
	    "PROXY TCP6 1.2.3.4 5.6.7.8 1 2\r\n",
	    "PROXY TCP4 1.2.3.256 5.6.7.8 1 2\r\n",
	    "PROXY TCP4 localhost 5.6.7.8 1 2\r\n",
	    "PROXY TCP4 1.2.3.4 5.6.7.8 65536 2\r\n", /* port out of range */
	    "PROXY TCP4 1.2.3.4 5.6.7.8 01 2\r\n",    /* leading zero */
	    "PROXY TCP4 1.2.3.4 5.6.7.8 -1 2\r\n",
	    "PROXY TCP4 1.2.3.4 5.6.7.8 1 +2\r\n",
	    "PROXY UDP4 1.2.3.4 5.6.7.8 1 2\r\n",
	    "PROXY tcp4 1.2.3.4 5.6.7.8 1 2\r\n",
	    "PROXY UNKNOWNX\r\n",
	    "PROXY \r\n",
	    "PROXY\r\n",
	    "proxy TCP4 1.2.3.4 5.6.7.8 1 2\r\n",
	    "PROXY TCP4 1.2.3.4\t5.6.7.8 1 2\r\n", /* a control character */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(parse(bad[i]) == PROXY_HEADER_BAD, "accepted: %s", bad[i]);
		ck_assert_ptr_nonnull(h.why);
	}
}
END_TEST

START_TEST(v1_oversize)
{
	char s[200];

	memset(s, 'A', sizeof(s));
	memcpy(s, "PROXY UNKNOWN ", 14);
	/* 106 bytes without CR: still a possible beginning; 107: not. */
	ck_assert_int_eq(proxy_header_parse(s, PROXY_V1_MAX - 1, &h), PROXY_HEADER_AGAIN);
	ck_assert_int_eq(proxy_header_parse(s, PROXY_V1_MAX, &h), PROXY_HEADER_BAD);
	ck_assert_int_eq(proxy_header_parse(s, sizeof(s), &h), PROXY_HEADER_BAD);
	/* A CRLF just past the limit does not help. */
	s[PROXY_V1_MAX] = '\r';
	s[PROXY_V1_MAX + 1] = '\n';
	ck_assert_int_eq(proxy_header_parse(s, sizeof(s), &h), PROXY_HEADER_BAD);
}
END_TEST

START_TEST(garbage)
{
	static const unsigned char hello[] = {0x16, 0x03, 0x01, 0x00, 0xc8, 0x01};

	ck_assert_int_eq(parse("GET / HTTP/1.1\r\n\r\n"), PROXY_HEADER_BAD);
	ck_assert_str_eq(h.why, "no PROXY header");
	ck_assert_int_eq(parse("PRI * HTTP/2.0\r\n"), PROXY_HEADER_BAD);
	ck_assert_int_eq(proxy_header_parse(hello, sizeof(hello), &h), PROXY_HEADER_BAD);
	ck_assert_int_eq(parse("\r\n\r\nX"), PROXY_HEADER_BAD);
	ck_assert_int_eq(proxy_header_parse("", 0, &h), PROXY_HEADER_AGAIN);
	ck_assert_int_eq(parse("P"), PROXY_HEADER_AGAIN);
	ck_assert_int_eq(parse("PROX"), PROXY_HEADER_AGAIN);
	ck_assert_int_eq(parse("PROXX"), PROXY_HEADER_BAD);
}
END_TEST

/* ---- v2 ---- */

static const unsigned char sig[12] = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d,
                                      0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a};

/* A v2 header in buf: ver_cmd, fam, then body of blen bytes. */
static size_t v2(unsigned char *buf, unsigned ver_cmd, unsigned fam, const void *body, size_t blen)
{
	memcpy(buf, sig, 12);
	buf[12] = (unsigned char)ver_cmd;
	buf[13] = (unsigned char)fam;
	buf[14] = (unsigned char)(blen >> 8);
	buf[15] = (unsigned char)blen;
	memcpy(buf + 16, body, blen);
	return 16 + blen;
}

static const unsigned char inet4[12] = {192, 0, 2, 9, 198, 51, 100, 1, 0xdc, 0x04, 0x01, 0xbb};

START_TEST(v2_inet)
{
	unsigned char buf[64];
	size_t n = v2(buf, 0x21, 0x11, inet4, sizeof(inet4));

	memcpy(buf + n, "\x16\x03\x01", 3); /* a ClientHello follows */
	ck_assert_int_eq(proxy_header_parse(buf, n + 3, &h), (int)n);
	ck_assert_int_eq(h.version, 2);
	ck_assert(!h.local);
	ck_assert_str_eq(src_text(), "192.0.2.9");
	ck_assert_uint_eq(src_port(), 56324);
	ck_assert_uint_eq(ntohs(((struct sockaddr_in *)&h.dst)->sin_port), 443);
	assert_prefixes_again(buf, n);
	/* UDP over IPv4 (0x12) gives the same addresses. */
	n = v2(buf, 0x21, 0x12, inet4, sizeof(inet4));
	ck_assert_int_eq(proxy_header_parse(buf, n, &h), (int)n);
	ck_assert_str_eq(src_text(), "192.0.2.9");
}
END_TEST

START_TEST(v2_inet6)
{
	unsigned char body[36] = {0x20, 0x01, 0x0d, 0xb8}, buf[64];
	size_t n;

	body[15] = 0x42;
	body[31] = 1;
	body[32] = 0x30;
	body[33] = 0x39;
	n = v2(buf, 0x21, 0x21, body, sizeof(body));
	ck_assert_int_eq(proxy_header_parse(buf, n, &h), (int)n);
	ck_assert_str_eq(src_text(), "2001:db8::42");
	ck_assert_uint_eq(src_port(), 12345);
	ck_assert_uint_eq(h.addrlen, sizeof(struct sockaddr_in6));
	assert_prefixes_again(buf, n);
}
END_TEST

START_TEST(v2_unix)
{
	unsigned char body[216] = {0}, buf[256];
	size_t n;

	memcpy(body, "/run/client.sock", 16);
	memcpy(body + 108, "/run/ktlsd.sock", 15);
	n = v2(buf, 0x21, 0x31, body, sizeof(body));
	ck_assert_int_eq(proxy_header_parse(buf, n, &h), (int)n);
	ck_assert_int_eq(h.src.ss_family, AF_UNIX);
	ck_assert_str_eq(((struct sockaddr_un *)&h.src)->sun_path, "/run/client.sock");
	ck_assert_str_eq(((struct sockaddr_un *)&h.dst)->sun_path, "/run/ktlsd.sock");
	/* A path filling all 108 bytes stays NUL-terminated. */
	memset(body, 'a', 108);
	n = v2(buf, 0x21, 0x31, body, sizeof(body));
	ck_assert_int_eq(proxy_header_parse(buf, n, &h), (int)n);
	ck_assert_uint_eq(strlen(((struct sockaddr_un *)&h.src)->sun_path), 107);
}
END_TEST

START_TEST(v2_local_and_unspec)
{
	unsigned char buf[64];
	size_t n;

	/* LOCAL with no address block, and with one that is ignored. */
	n = v2(buf, 0x20, 0x00, "", 0);
	ck_assert_int_eq(proxy_header_parse(buf, n, &h), 16);
	ck_assert(h.local);
	n = v2(buf, 0x20, 0x11, inet4, sizeof(inet4));
	ck_assert_int_eq(proxy_header_parse(buf, n, &h), (int)n);
	ck_assert(h.local);
	/* PROXY with family or transport UNSPEC: no address either. */
	n = v2(buf, 0x21, 0x00, "", 0);
	ck_assert_int_eq(proxy_header_parse(buf, n, &h), 16);
	ck_assert(h.local);
	n = v2(buf, 0x21, 0x10, inet4, sizeof(inet4));
	ck_assert_int_eq(proxy_header_parse(buf, n, &h), (int)n);
	ck_assert(h.local);
}
END_TEST

START_TEST(v2_tlvs)
{
	unsigned char body[64], buf[128];
	size_t n, blen;

	memcpy(body, inet4, 12);
	/* PP2_TYPE_ALPN "h2", then an AWS-style TLV (0xEA) of 9 bytes, then
	 * an empty NOOP (0x04). */
	memcpy(body + 12, "\x01\x00\x02h2", 5);
	memcpy(body + 17, "\xea\x00\x09\x01vpce-123", 12);
	memcpy(body + 29, "\x04\x00\x00", 3);
	blen = 32;
	n = v2(buf, 0x21, 0x11, body, blen);
	ck_assert_int_eq(proxy_header_parse(buf, n, &h), (int)n);
	ck_assert_str_eq(src_text(), "192.0.2.9");
	/* The last TLV claims one byte more than there is. */
	body[31] = 1;
	n = v2(buf, 0x21, 0x11, body, blen);
	ck_assert_int_eq(proxy_header_parse(buf, n, &h), PROXY_HEADER_BAD);
	/* Two stray bytes: too short for a TLV's own header. */
	n = v2(buf, 0x21, 0x11, body, 12 + 2);
	ck_assert_int_eq(proxy_header_parse(buf, n, &h), PROXY_HEADER_BAD);
}
END_TEST

START_TEST(v2_bad)
{
	unsigned char buf[64];
	size_t n;

	n = v2(buf, 0x11, 0x11, inet4, sizeof(inet4)); /* version 1 in binary */
	ck_assert_int_eq(proxy_header_parse(buf, n, &h), PROXY_HEADER_BAD);
	ck_assert_str_eq(h.why, "PROXY v2: unknown version");
	n = v2(buf, 0x31, 0x11, inet4, sizeof(inet4));
	ck_assert_int_eq(proxy_header_parse(buf, n, &h), PROXY_HEADER_BAD);
	n = v2(buf, 0x22, 0x11, inet4, sizeof(inet4)); /* command 2 */
	ck_assert_int_eq(proxy_header_parse(buf, n, &h), PROXY_HEADER_BAD);
	n = v2(buf, 0x21, 0x41, inet4, sizeof(inet4)); /* family 4 */
	ck_assert_int_eq(proxy_header_parse(buf, n, &h), PROXY_HEADER_BAD);
	n = v2(buf, 0x21, 0x13, inet4, sizeof(inet4)); /* transport 3 */
	ck_assert_int_eq(proxy_header_parse(buf, n, &h), PROXY_HEADER_BAD);
	n = v2(buf, 0x21, 0x11, inet4, 11); /* address block cut short */
	ck_assert_int_eq(proxy_header_parse(buf, n, &h), PROXY_HEADER_BAD);
	n = v2(buf, 0x21, 0x21, inet4, sizeof(inet4)); /* INET6 needs 36 */
	ck_assert_int_eq(proxy_header_parse(buf, n, &h), PROXY_HEADER_BAD);
	/* The signature wrong in its last byte. */
	n = v2(buf, 0x21, 0x11, inet4, sizeof(inet4));
	buf[11] = 0x0b;
	ck_assert_int_eq(proxy_header_parse(buf, 12, &h), PROXY_HEADER_BAD);
}
END_TEST

START_TEST(v2_oversize)
{
	static unsigned char buf[2048];
	size_t n;

	memset(buf, 0, sizeof(buf));
	/* Exactly the limit: addresses and one TLV of the rest. */
	unsigned char body[PROXY_HEADER_MAX - 16] = {0};
	memcpy(body, inet4, 12);
	body[12] = 0xe0;
	body[13] = (unsigned char)((sizeof(body) - 15) >> 8);
	body[14] = (unsigned char)(sizeof(body) - 15);
	n = v2(buf, 0x21, 0x11, body, sizeof(body));
	ck_assert_uint_eq(n, PROXY_HEADER_MAX);
	ck_assert_int_eq(proxy_header_parse(buf, n, &h), PROXY_HEADER_MAX);
	/* One byte more is refused from its first 16 bytes on. */
	buf[15]++;
	ck_assert_int_eq(proxy_header_parse(buf, 16, &h), PROXY_HEADER_BAD);
	/* The largest length the field can say. */
	buf[14] = buf[15] = 0xff;
	ck_assert_int_eq(proxy_header_parse(buf, 16, &h), PROXY_HEADER_BAD);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("proxy_header");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, v1_tcp4);
	tcase_add_test(tc, v1_tcp6);
	tcase_add_test(tc, v1_unknown);
	tcase_add_test(tc, v1_longest);
	tcase_add_test(tc, v1_bad_syntax);
	tcase_add_test(tc, v1_oversize);
	tcase_add_test(tc, garbage);
	tcase_add_test(tc, v2_inet);
	tcase_add_test(tc, v2_inet6);
	tcase_add_test(tc, v2_unix);
	tcase_add_test(tc, v2_local_and_unspec);
	tcase_add_test(tc, v2_tlvs);
	tcase_add_test(tc, v2_bad);
	tcase_add_test(tc, v2_oversize);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(suite());
}
