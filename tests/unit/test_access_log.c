/* Tests server/core/access_log.c: the combined line field by field, the escapes,
 * the caps that keep a line within one PIPE_BUF write, and the flush in
 * whole lines. The log writes to one end of a socket pair; the test reads
 * the other. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/core/access_log.h"
#include "tests/unit/check_run.h"

struct sink {
	int rd;
	struct access_log_file file;
	struct access_log *al;
};

/* A log whose file is a SOCK_SEQPACKET socket: each write arrives as one
 * message, so the test sees where the writes were cut. */
static void sink_open(struct sink *k)
{
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	k->rd = sv[0];
	k->file.fd = sv[1];
	k->file.whole_writes = false;
	k->al = malloc(sizeof(*k->al));
	ck_assert_ptr_nonnull(k->al);
	access_log_init(k->al, &k->file, ACCESS_LOG_COMBINED);
}

static void sink_close(struct sink *k)
{
	close(k->rd);
	close(k->file.fd);
	free(k->al);
}

/* The next write's bytes, NUL-terminated, into buf. */
static size_t next_write(struct sink *k, char *buf, size_t cap)
{
	ssize_t n = recv(k->rd, buf, cap - 1, MSG_DONTWAIT);

	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	return (size_t)n;
}

/* One record's line, written and flushed, into buf (newline included). */
static void line_in(enum access_log_format format, const struct access_record *r, char *buf,
		    size_t cap)
{
	struct sink k;

	sink_open(&k);
	access_log_set_format(k.al, format);
	access_log_write(k.al, r);
	access_log_flush(k.al);
	next_write(&k, buf, cap);
	sink_close(&k);
}

static void line_of(const struct access_record *r, char *buf, size_t cap)
{
	line_in(ACCESS_LOG_COMBINED, r, buf, cap);
}

static const struct access_record full = {
    .client = "192.0.2.7",
    .method = "GET",
    .method_len = 3,
    .target = "/a.txt?x=1",
    .target_len = 10,
    .version = "HTTP/1.1",
    .referer = "https://example.com/",
    .referer_len = 20,
    .user_agent = "curl/7.88.1",
    .user_agent_len = 11,
    .host = "example.com",
    .host_len = 11,
    .status = 200,
    .body_bytes = 1000,
    .sent_bytes = 1239,
    .duration_ms = 1234,
    .protocol = "HTTP/1.1",
    .tls_version = "TLSv1.3",
    .tls_cipher = "TLS_AES_128_GCM_SHA256",
    .ktls_tx = true,
    .body_path = "splice",
    .end = ACCESS_END_COMPLETE,
};

/* The line without its time, which is checked for its shape only. */
static const char *without_time(char *line)
{
	static char out[8192];
	regex_t re;
	regmatch_t m;

	ck_assert_int_eq(regcomp(&re, "\\[[0-9]{2}/[A-Z][a-z]{2}/[0-9]{4}:[0-9]{2}:[0-9]{2}:"
				      "[0-9]{2} \\+0000\\]",
				 REG_EXTENDED),
			 0);
	ck_assert_int_eq(regexec(&re, line, 1, &m, 0), 0);
	regfree(&re);
	snprintf(out, sizeof(out), "%.*s[T]%s", (int)m.rm_so, line, line + m.rm_eo);
	return out;
}

START_TEST(test_combined)
{
	char buf[8192];

	line_of(&full, buf, sizeof(buf));
	ck_assert_str_eq(without_time(buf),
			 "192.0.2.7 - - [T] \"GET /a.txt?x=1 HTTP/1.1\" 200 1000 "
			 "\"https://example.com/\" \"curl/7.88.1\" 1.234 HTTP/1.1 TLSv1.3 "
			 "TLS_AES_128_GCM_SHA256 ktls=tx body=splice enc=- site=\"-\" "
			 "host=\"example.com\" sent=1239 end=complete\n");
}
END_TEST

START_TEST(test_absent_fields)
{
	struct access_record r = full;
	char buf[8192];

	r.method = r.target = r.referer = r.user_agent = r.host = NULL;
	r.tls_version = r.tls_cipher = "-";
	r.ktls_tx = false;
	r.body_path = "none";
	r.status = 400;
	r.body_bytes = 0;
	r.duration_ms = 5;
	r.end = ACCESS_END_LOST;
	line_of(&r, buf, sizeof(buf));
	ck_assert_str_eq(without_time(buf),
			 "192.0.2.7 - - [T] \"- - HTTP/1.1\" 400 0 \"-\" \"-\" 0.005 HTTP/1.1 - - "
			 "ktls=off body=none enc=- site=\"-\" host=\"-\" sent=1239 end=lost\n");
}
END_TEST

START_TEST(test_ends)
{
	static const char *const names[] = {"complete", "reset",    "lost", "timeout",
					    "shutdown", "truncated", "error"};
	struct access_record r = full;
	char buf[8192], want[64];

	for (int e = ACCESS_END_COMPLETE; e <= ACCESS_END_ERROR; e++) {
		r.end = (enum access_end)e;
		line_of(&r, buf, sizeof(buf));
		snprintf(want, sizeof(want), " end=%s\n", names[e]);
		ck_assert_str_eq(buf + strlen(buf) - strlen(want), want);
	}
}
END_TEST

/* nginx's escapes: the client cannot close a quoted field or the line. */
START_TEST(test_escapes)
{
	static const char target[] = "/a\"b\\c\n\x01\x7f\xff d";
	struct access_record r = full;
	char buf[8192];

	r.target = target;
	r.target_len = sizeof(target) - 1;
	r.user_agent = "x\" \"forged";
	r.user_agent_len = strlen(r.user_agent);
	line_of(&r, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "\"GET /a\\x22b\\x5Cc\\x0A\\x01\\x7F\\xFF d HTTP/1.1\""));
	ck_assert_ptr_nonnull(strstr(buf, "\"x\\x22 \\x22forged\""));
	ck_assert_ptr_eq(strchr(buf, '\n'), buf + strlen(buf) - 1);
}
END_TEST

/* Whatever the client sends, a line fits in one PIPE_BUF write, and an
 * escape is never cut in half. */
START_TEST(test_caps)
{
	static char huge[20000];
	struct access_record r = full;
	char buf[8192];

	memset(huge, '"', sizeof(huge));
	r.method = r.target = r.referer = r.user_agent = r.host = huge;
	r.method_len = r.target_len = r.referer_len = r.user_agent_len = r.host_len = sizeof(huge);
	line_of(&r, buf, sizeof(buf));
	ck_assert_uint_le(strlen(buf), PIPE_BUF);
	ck_assert_ptr_nonnull(strstr(buf, "\\x22 HTTP/1.1\" 200 1000 \""));
	ck_assert_str_eq(buf + strlen(buf) - strlen(" end=complete\n"), " end=complete\n");
	/* Every backslash starts a whole \x22. */
	for (const char *p = buf; (p = strchr(p, '\\')) != NULL; p++)
		ck_assert(strncmp(p, "\\x22", 4) == 0);
}
END_TEST

START_TEST(test_escape_api)
{
	char out[8];

	ck_assert_uint_eq(access_log_escape(out, sizeof(out), "ab\"c", 4), 7);
	ck_assert_str_eq(out, "ab\\x22c");
	/* No half escape: "a" fits, "\x22" does not. */
	ck_assert_uint_eq(access_log_escape(out, 4, "a\"", 2), 1);
	ck_assert_str_eq(out, "a");
	ck_assert_uint_eq(access_log_escape(out, 0, "a", 1), 0);
}
END_TEST

/* A pipe or a socket gets whole lines, at most PIPE_BUF bytes per write;
 * nothing is lost when the buffer fills. */
START_TEST(test_flush_whole_lines)
{
	struct sink k;
	struct access_record r = full;
	char buf[PIPE_BUF + 16];
	size_t got = 0, lines = 0;
	int n = 300; /* more than the buffer holds */

	sink_open(&k);
	for (int i = 0; i < n; i++) {
		r.status = 200 + i % 100;
		access_log_write(k.al, &r);
		/* The socket pair's buffer is small: read as we go. */
		for (ssize_t m; (m = recv(k.rd, buf, sizeof(buf) - 1, MSG_DONTWAIT)) > 0;) {
			ck_assert_int_le(m, PIPE_BUF);
			ck_assert_int_eq(buf[m - 1], '\n');
			got += (size_t)m;
			for (ssize_t j = 0; j < m; j++)
				lines += buf[j] == '\n';
		}
	}
	access_log_flush(k.al);
	for (ssize_t m; (m = recv(k.rd, buf, sizeof(buf) - 1, MSG_DONTWAIT)) > 0;) {
		ck_assert_int_le(m, PIPE_BUF);
		ck_assert_int_eq(buf[m - 1], '\n');
		got += (size_t)m;
		for (ssize_t j = 0; j < m; j++)
			lines += buf[j] == '\n';
	}
	ck_assert_uint_eq(lines, (size_t)n);
	ck_assert_uint_gt(got, 0);
	sink_close(&k);
}
END_TEST

START_TEST(test_off)
{
	struct access_log_file f;
	struct access_log *al = malloc(sizeof(*al));

	ck_assert_int_eq(access_log_file_open(&f, NULL), 0);
	ck_assert_int_eq(f.fd, -1);
	access_log_init(al, &f, ACCESS_LOG_COMBINED);
	access_log_write(al, &full);
	ck_assert_uint_eq(al->len, 0);
	access_log_file_close(&f);
	ck_assert_int_eq(access_log_file_open(&f, "stderr"), 0);
	ck_assert_int_eq(f.fd, 2);
	access_log_file_close(&f);
	ck_assert_int_eq(access_log_file_open(&f, "/nonexistent-dir/access.log"), -ENOENT);
	free(al);
}
END_TEST

/* The JSON line without its time, checked for its shape only. */
static const char *json_without_time(char *line)
{
	static char out[8192];
	regex_t re;
	regmatch_t m;

	ck_assert_int_eq(regcomp(&re,
				 "\"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\+00:00\"",
				 REG_EXTENDED),
			 0);
	ck_assert_int_eq(regexec(&re, line, 1, &m, 0), 0);
	regfree(&re);
	snprintf(out, sizeof(out), "%.*s\"T\"%s", (int)m.rm_so, line, line + m.rm_eo);
	return out;
}

START_TEST(test_json)
{
	char buf[8192];

	line_in(ACCESS_LOG_JSON, &full, buf, sizeof(buf));
	ck_assert_str_eq(json_without_time(buf),
			 "{\"time\":\"T\",\"client\":\"192.0.2.7\",\"method\":\"GET\","
			 "\"target\":\"/a.txt?x=1\",\"version\":\"HTTP/1.1\",\"status\":200,"
			 "\"body_bytes\":1000,\"referer\":\"https://example.com/\","
			 "\"user_agent\":\"curl/7.88.1\",\"request_time\":1.234,"
			 "\"protocol\":\"HTTP/1.1\",\"tls_version\":\"TLSv1.3\","
			 "\"tls_cipher\":\"TLS_AES_128_GCM_SHA256\",\"ktls\":true,"
			 "\"body\":\"splice\",\"site\":null,\"host\":\"example.com\",\"sent\":1239,"
			 "\"end\":\"complete\"}\n");
}
END_TEST

/* Absent fields are null; the client's bytes are escaped so that the line
 * is JSON whatever they are, and never cut inside an escape. */
START_TEST(test_json_escapes)
{
	static const char target[] = "/a\"b\\c\n\x01\x7f\xff d";
	static char huge[20000];
	struct access_record r = full;
	char buf[8192];

	r.target = target;
	r.target_len = sizeof(target) - 1;
	r.referer = r.user_agent = r.host = NULL;
	r.tls_version = r.tls_cipher = "-";
	line_in(ACCESS_LOG_JSON, &r, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "\"target\":\"/a\\\"b\\\\c\\u000A\\u0001\\u007F\\u00FF d\""));
	ck_assert_ptr_nonnull(strstr(buf, "\"referer\":null,\"user_agent\":null,"));
	ck_assert_ptr_nonnull(strstr(buf, "\"tls_version\":null,\"tls_cipher\":null,"));
	ck_assert_ptr_nonnull(strstr(buf, "\"host\":null,"));

	memset(huge, 0x01, sizeof(huge));
	r.method = r.target = r.referer = r.user_agent = r.host = huge;
	r.method_len = r.target_len = r.referer_len = r.user_agent_len = r.host_len = sizeof(huge);
	line_in(ACCESS_LOG_JSON, &r, buf, sizeof(buf));
	ck_assert_uint_le(strlen(buf), PIPE_BUF);
	ck_assert_str_eq(buf + strlen(buf) - strlen("\"end\":\"complete\"}\n"),
			 "\"end\":\"complete\"}\n");
	for (const char *p = buf; (p = strchr(p, '\\')) != NULL; p++)
		ck_assert(strncmp(p, "\\u0001", 6) == 0);
}
END_TEST

/* A precompressed sidecar served: enc= after body= (JSON: "encoding");
 * without one enc=- (JSON: no key), so that every line has the same
 * columns. */
START_TEST(test_encoding)
{
	struct access_record r = full;
	char buf[8192];

	r.encoding = "br";
	line_of(&r, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, " ktls=tx body=splice enc=br site=\"-\" host=\"example.com\" "));
	line_in(ACCESS_LOG_JSON, &r, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, ",\"body\":\"splice\",\"encoding\":\"br\",\"site\":"));
	r.encoding = NULL;
	line_of(&r, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, " body=splice enc=- site="));
	line_in(ACCESS_LOG_JSON, &r, buf, sizeof(buf));
	ck_assert_ptr_null(strstr(buf, "encoding"));
}
END_TEST

/* The site's section name; the host without its port, an IP literal
 * with its brackets; a host that does not parse as sent. */
START_TEST(test_site_and_host)
{
	static const struct {
		const char *host, *logged;
	} hosts[] = {{"example.com:8443", "example.com"}, {"[::1]:443", "[::1]"},
		     {"[::1]", "[::1]"},                  {"192.0.2.1:80", "192.0.2.1"},
		     {"example.com:", "example.com"},     {"a b:1", "a b:1"}};
	struct access_record r = full;
	char buf[8192], want[128];

	r.site = "mirror";
	line_of(&r, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, " enc=- site=\"mirror\" host=\"example.com\" "));
	line_in(ACCESS_LOG_JSON, &r, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, ",\"site\":\"mirror\",\"host\":\"example.com\","));
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		r.host = hosts[i].host;
		r.host_len = strlen(r.host);
		line_of(&r, buf, sizeof(buf));
		snprintf(want, sizeof(want), " host=\"%s\" ", hosts[i].logged);
		ck_assert_msg(strstr(buf, want), "%s: %s", hosts[i].host, buf);
		line_in(ACCESS_LOG_JSON, &r, buf, sizeof(buf));
		snprintf(want, sizeof(want), ",\"host\":\"%s\",", hosts[i].logged);
		ck_assert_msg(strstr(buf, want), "%s: %s", hosts[i].host, buf);
	}
}
END_TEST

static Suite *access_log_suite(void)
{
	Suite *s = suite_create("access_log");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_combined);
	tcase_add_test(tc, test_absent_fields);
	tcase_add_test(tc, test_ends);
	tcase_add_test(tc, test_escapes);
	tcase_add_test(tc, test_caps);
	tcase_add_test(tc, test_escape_api);
	tcase_add_test(tc, test_flush_whole_lines);
	tcase_add_test(tc, test_off);
	tcase_add_test(tc, test_json);
	tcase_add_test(tc, test_json_escapes);
	tcase_add_test(tc, test_encoding);
	tcase_add_test(tc, test_site_and_host);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(access_log_suite());
}
