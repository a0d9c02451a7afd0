/* Tests proto/status.c by what its answers must be, not against a copy of
 * its table: every code ktlsd sends has a phrase (RFC 9110 section 15's
 * grammar: letters, blanks, a hyphen), every page, known code or not, is
 * whole in the 512 bytes its callers give it, names its status and nothing
 * else, needs no HTML escaping, and is what the head's Content-Length and
 * status line say. */
#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/resp_head.h"
#include "proto/status.h"
#include "tests/unit/check_run.h"

/* The buffer both callers give status_page (server/http/h1_conn.c's
 * respond_page, proto/h2_response.c's respond_page). */
#define PAGE_ROOM 512

/* Every code ktlsd answers with, and who sends it. Codes only: the phrases
 * are status.c's. */
static const int sent[] = {
    200, 206, 304, 412, 416, /* proto/static_file.c */
    301, 403, 404, 414,      /* proto/static_target.c */
    400, 421, 431, 501, 505, /* proto/h1_parser.c */
    405, 429, 500, 503,      /* server/http/h1_conn.c, server/http/h2_conn.c, server/status/status_listen.c */
};

/* A phrase as RFC 9110 writes them: words of letters (and hyphens), each
 * starting upper case, one blank between them ("Content Too Large",
 * "HTTP Version Not Supported"). */
static bool phrase_shaped(const char *r)
{
	if (!*r)
		return false;
	for (const char *w = r; *w; w++) {
		if (w == r || w[-1] == ' ') {
			if (!isupper((unsigned char)*w))
				return false;
		} else if (*w == ' ' ? w[1] == '\0' || w[1] == ' '
				      : !isalpha((unsigned char)*w) && *w != '-') {
			return false;
		}
	}
	return true;
}

START_TEST(test_sent_codes_have_phrases)
{
	for (size_t i = 0; i < sizeof(sent) / sizeof(sent[0]); i++) {
		const char *r = status_reason(sent[i]);

		ck_assert_msg(strcmp(r, "Unknown") != 0, "%d has no phrase", sent[i]);
		ck_assert_msg(phrase_shaped(r), "%d: \"%s\"", sent[i], r);
	}
}
END_TEST

/* Every code has an answer: a phrase shaped like one, or "Unknown" (which
 * is shaped like one too), and the same one each time. */
START_TEST(test_every_code_answers)
{
	static const int odd[] = {0, -1, -404, 99, 600, 1000, 2147483647, -2147483647 - 1};
	size_t known = 0;

	for (int code = 100; code <= 599; code++) {
		const char *r = status_reason(code);

		ck_assert_ptr_nonnull(r);
		ck_assert_msg(phrase_shaped(r), "%d: \"%s\"", code, r);
		ck_assert_ptr_eq(status_reason(code), r);
		known += strcmp(r, "Unknown") != 0;
	}
	ck_assert_uint_ge(known, sizeof(sent) / sizeof(sent[0]));
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
		ck_assert_str_eq(status_reason(odd[i]), "Unknown");
}
END_TEST

/* The text between tags, and checks that the markup is only tags: no
 * character a browser would read as markup stands in the text. */
static void page_text(const char *page, char *text, size_t cap)
{
	size_t n = 0;
	bool in_tag = false;

	for (const char *p = page; *p; p++) {
		if (*p == '<') {
			ck_assert_msg(!in_tag, "'<' inside a tag: %s", page);
			in_tag = true;
		} else if (*p == '>') {
			ck_assert_msg(in_tag, "'>' outside a tag: %s", page);
			in_tag = false;
		} else if (!in_tag) {
			ck_assert_msg(*p != '&' && *p != '"' && *p != '\'', "unescaped %c: %s", *p, page);
			ck_assert_uint_lt(n, cap - 1);
			text[n++] = *p;
		}
	}
	ck_assert(!in_tag);
	text[n] = '\0';
}

static void check_page(int code)
{
	const char *reason = status_reason(code);
	char page[PAGE_ROOM], want[64], text[PAGE_ROOM], tag[128];
	size_t n = status_page(code, page, sizeof(page));

	ck_assert_uint_eq(n, strlen(page));
	ck_assert_msg(n < sizeof(page) - 1, "%d: the page may have been cut at %zu", code, n);
	ck_assert_msg(strncmp(page, "<html>", 6) == 0 && strcmp(page + n - 8, "</html>\n") == 0,
		      "%d: %s", code, page);
	snprintf(want, sizeof(want), "%d %s", code, reason);
	/* The status as the title and as the heading, and no other text. */
	snprintf(tag, sizeof(tag), "<title>%s</title>", want);
	ck_assert_msg(strstr(page, tag), "%d: %s", code, page);
	snprintf(tag, sizeof(tag), "<h1>%s</h1>", want);
	ck_assert_msg(strstr(page, tag), "%d: %s", code, page);
	page_text(page, text, sizeof(text));
	snprintf(tag, sizeof(tag), "%s%s\n", want, want);
	ck_assert_str_eq(text, tag);
}

START_TEST(test_pages)
{
	for (int code = 100; code <= 599; code++)
		check_page(code);
	check_page(0);
	check_page(-404);
	check_page(2147483647);
	check_page(-2147483647 - 1);
}
END_TEST

/* The HTTP/1.1 head of a page says its length and its status as the page
 * does. */
START_TEST(test_head_matches_page)
{
	for (size_t i = 0; i < sizeof(sent) / sizeof(sent[0]); i++) {
		int code = sent[i];
		char page[PAGE_ROOM], out[1024], want[128];
		size_t n = status_page(code, page, sizeof(page));
		struct resp_head h;

		resp_head_page(&h, code, "Thu, 01 Jan 1970 00:00:00 GMT", n,
			       code == 301 ? "https://example.test/" : NULL);
		ck_assert(!h.overflow);
		ck_assert_int_gt(resp_head_h1(&h, out, sizeof(out)), 0);
		snprintf(want, sizeof(want), "HTTP/1.1 %d %s\r\n", code, status_reason(code));
		ck_assert_msg(strncmp(out, want, strlen(want)) == 0, "%s", out);
		snprintf(want, sizeof(want), "\r\nContent-Length: %zu\r\n", n);
		ck_assert_msg(strstr(out, want), "%d: %s", code, out);
		ck_assert_msg(strstr(out, "\r\nContent-Type: text/html"), "%s", out);
	}
}
END_TEST

/* A small buffer gets a prefix of the page, NUL-terminated, and its
 * length; none at all gets nothing written. */
START_TEST(test_page_cut)
{
	char full[PAGE_ROOM], buf[PAGE_ROOM];
	size_t len = status_page(416, full, sizeof(full));

	for (size_t room = 1; room <= len + 2; room++) {
		memset(buf, 'X', sizeof(buf));
		size_t n = status_page(416, buf, room);
		size_t want = len < room ? len : room - 1;

		ck_assert_uint_eq(n, want);
		ck_assert_int_eq(buf[n], '\0');
		ck_assert_int_eq(memcmp(buf, full, n), 0);
		ck_assert_int_eq(buf[room], 'X'); /* nothing past the room given */
	}
	buf[0] = 'X';
	ck_assert_uint_eq(status_page(416, buf, 0), 0);
	ck_assert_int_eq(buf[0], 'X');
}
END_TEST

/* No server name or version for a scanner to fingerprint. */
START_TEST(test_page_names_no_server)
{
	char page[PAGE_ROOM];

	for (size_t i = 0; i < sizeof(sent) / sizeof(sent[0]); i++) {
		status_page(sent[i], page, sizeof(page));
		ck_assert_ptr_null(strstr(page, "ktlsd"));
		ck_assert_ptr_null(strstr(page, PACKAGE_VERSION));
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("status");
	TCase *tc = tcase_create("status");

	tcase_add_test(tc, test_sent_codes_have_phrases);
	tcase_add_test(tc, test_every_code_answers);
	tcase_add_test(tc, test_pages);
	tcase_add_test(tc, test_head_matches_page);
	tcase_add_test(tc, test_page_cut);
	tcase_add_test(tc, test_page_names_no_server);
	suite_add_tcase(s, tc);

	return check_run(s);
}
