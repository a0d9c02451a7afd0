/* proto/autoindex.c: negotiation, order, escaping, and that every name's
 * link decodes (through proto/path.c, as the server does) to the name. */
#include <check.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "proto/autoindex.h"
#include "proto/path.h"
#include "check_run.h"

static enum autoindex_format neg(const char *target, const char *accept)
{
	return autoindex_negotiate(target, strlen(target), accept, accept ? strlen(accept) : 0);
}

START_TEST(test_negotiate)
{
	ck_assert_int_eq(neg("/", NULL), AUTOINDEX_HTML);
	ck_assert_int_eq(neg("/", "*/*"), AUTOINDEX_HTML);
	ck_assert_int_eq(neg("/", "application/json"), AUTOINDEX_JSON);
	ck_assert_int_eq(neg("/", "Application/JSON"), AUTOINDEX_JSON);
	ck_assert_int_eq(neg("/", "text/html, application/json;q=0.9"), AUTOINDEX_HTML);
	ck_assert_int_eq(neg("/", "text/html;q=0.5, application/json"), AUTOINDEX_JSON);
	ck_assert_int_eq(neg("/", "application/json;q=0"), AUTOINDEX_HTML);
	ck_assert_int_eq(neg("/", "application/json ; q=0.000, text/*"), AUTOINDEX_HTML);
	ck_assert_int_eq(neg("/", "application/json, text/plain, */*"), AUTOINDEX_JSON);
	ck_assert_int_eq(neg("/", "application/*"), AUTOINDEX_JSON);
	/* a browser's */
	ck_assert_int_eq(neg("/", "text/html,application/xhtml+xml,application/xml;q=0.9,"
	                          "*/*;q=0.8"),
	                 AUTOINDEX_HTML);
	/* not a substring match */
	ck_assert_int_eq(neg("/", "application/jsonx"), AUTOINDEX_HTML);
	ck_assert_int_eq(neg("/", "application/json-seq"), AUTOINDEX_HTML);
	ck_assert_int_eq(neg("/", "xapplication/json"), AUTOINDEX_HTML);
	/* a member with a malformed q is skipped */
	ck_assert_int_eq(neg("/", "application/json;q=2"), AUTOINDEX_HTML);
	ck_assert_int_eq(neg("/", "application/json;q=abc"), AUTOINDEX_HTML);
	ck_assert_int_eq(neg("/", ",,, application/json ,"), AUTOINDEX_JSON);
	ck_assert_int_eq(neg("/", ""), AUTOINDEX_HTML);
	/* the query wins */
	ck_assert_int_eq(neg("/a/?format=json", NULL), AUTOINDEX_JSON);
	ck_assert_int_eq(neg("/a/?x=1&format=json", "text/html"), AUTOINDEX_JSON);
	ck_assert_int_eq(neg("/a/?format=html", "application/json"), AUTOINDEX_HTML);
	ck_assert_int_eq(neg("/a/?format=jsonx", NULL), AUTOINDEX_HTML);
	ck_assert_int_eq(neg("/a/#?format=json", NULL), AUTOINDEX_HTML);
	ck_assert_int_eq(neg("/a/?q#format=json", NULL), AUTOINDEX_HTML);
	ck_assert_int_eq(neg("/format=json", NULL), AUTOINDEX_HTML);
}
END_TEST

static struct autoindex_entry ent(const char *name, bool dir)
{
	return (struct autoindex_entry){
	    .name = name, .name_len = strlen(name), .is_dir = dir, .size = 7, .mtime = 0};
}

START_TEST(test_sort)
{
	struct autoindex_entry e[] = {ent("b", false),        ent("a", false), ent("z", true),
	                              ent("\xc3\xa9", false), ent("B", false), ent("ab", false),
	                              ent("c", true)};

	autoindex_sort(e, sizeof(e) / sizeof(e[0]));
	const char *want[] = {"c", "z", "B", "a", "ab", "b", "\xc3\xa9"};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_str_eq(e[i].name, want[i]);
}
END_TEST

static char *render(enum autoindex_format f, const char *rel, const struct autoindex_entry *e,
                    size_t n)
{
	struct autoindex_out o = {0};

	autoindex_begin(&o, f, rel);
	for (size_t i = 0; i < n; i++)
		autoindex_entry(&o, f, &e[i], i);
	autoindex_end(&o, f);
	ck_assert(!o.failed);
	char *s = strndup(o.p, o.len);
	autoindex_out_free(&o);
	return s;
}

START_TEST(test_json)
{
	struct autoindex_entry e[] = {ent("sub", true), ent("a \"q\"\\<&>\n\x01.txt", false),
	                              ent("bad\xff\xc0\xaf\xed\xa0\x80!", false),
	                              ent("\xe2\x82\xac\xf0\x9f\x98\x80", false)};
	e[1].size = 1234567890123ull;
	e[1].mtime = 1764574433; /* 2025-12-01T07:33:53Z */
	char *s = render(AUTOINDEX_JSON, "x", e, 4);

	ck_assert_str_eq(s,
	                 "[\n"
	                 "{\"name\":\"sub\",\"href\":\"sub/\",\"type\":\"directory\",\"size\":null,"
	                 "\"mtime\":\"1970-01-01T00:00:00Z\"},\n"
	                 "{\"name\":\"a \\\"q\\\"\\\\\\u003c\\u0026\\u003e\\n\\u0001.txt\","
	                 "\"href\":\"a%20%22q%22%5C%3C%26%3E%0A%01.txt\",\"type\":\"file\","
	                 "\"size\":1234567890123,\"mtime\":\"2025-12-01T07:33:53Z\"},\n"
	                 "{\"name\":\"bad\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd!\","
	                 "\"href\":\"bad%FF%C0%AF%ED%A0%80%21\",\"type\":\"file\",\"size\":7,"
	                 "\"mtime\":\"1970-01-01T00:00:00Z\"},\n"
	                 "{\"name\":\"\xe2\x82\xac\xf0\x9f\x98\x80\","
	                 "\"href\":\"%E2%82%AC%F0%9F%98%80\",\"type\":\"file\",\"size\":7,"
	                 "\"mtime\":\"1970-01-01T00:00:00Z\"}\n"
	                 "]\n");
	free(s);
	s = render(AUTOINDEX_JSON, ".", NULL, 0);
	ck_assert_str_eq(s, "[\n]\n");
	free(s);
}
END_TEST

START_TEST(test_html)
{
	struct autoindex_entry e[] = {ent("d<i>r", true), ent("x&'\"\n\xfe.html", false)};
	char *s = render(AUTOINDEX_HTML, "a&b/<c>", e, 2);

	ck_assert_ptr_nonnull(strstr(s, "<meta charset=\"utf-8\">"));
	ck_assert_ptr_nonnull(strstr(s, "<title>Index of /a&amp;b/&lt;c&gt;/</title>"));
	ck_assert_ptr_nonnull(strstr(s, "<h1>Index of /a&amp;b/&lt;c&gt;/</h1>"));
	ck_assert_ptr_nonnull(strstr(s, "<a href=\"../\">../</a>"));
	ck_assert_ptr_nonnull(
	    strstr(s, "<tr><td><a href=\"d%3Ci%3Er/\">d&lt;i&gt;r/</a></td><td>-</td>"
	              "<td>1970-01-01T00:00:00Z</td></tr>\n"));
	ck_assert_ptr_nonnull(strstr(s, "<tr><td><a href=\"x%26%27%22%0A%FE.html\">"
	                                "x&amp;&#39;&quot;\xef\xbf\xbd\xef\xbf\xbd.html</a></td>"
	                                "<td>7</td>"));
	ck_assert_ptr_null(strstr(s, "<script"));
	ck_assert_ptr_null(strstr(s, "\n\xfe"));
	free(s);

	/* the root has no link up */
	s = render(AUTOINDEX_HTML, ".", e, 1);
	ck_assert_ptr_nonnull(strstr(s, "<title>Index of /</title>"));
	ck_assert_ptr_null(strstr(s, "../"));
	free(s);
}
END_TEST

/* Every byte value but '/' and NUL in a name: its href, decoded as the
 * server decodes a request-target, is the name. */
START_TEST(test_href_round_trip)
{
	char name[256];
	size_t n = 0;

	for (int c = 1; c < 256; c++)
		if (c != '/' && c != '.')
			name[n++] = (char)c;
	name[n] = '\0';
	const char *names[] = {name, "a b", "?x=1#y", "%2e%2e", "..."};
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		struct autoindex_entry e = ent(names[k], false);
		struct autoindex_out o = {0};
		char target[1024], rel[PATH_MAX];
		struct path_info info;

		autoindex_entry(&o, AUTOINDEX_JSON, &e, 0);
		char *h = strstr(o.p, "\"href\":\"") + 8;
		char *end = strchr(h, '"');
		ck_assert(end && (size_t)(end - h) < sizeof(target) - 3);
		target[0] = '/';
		memcpy(target + 1, h, (size_t)(end - h));
		target[end - h + 1] = '\0';
		ck_assert_int_eq(path_from_target(target, strlen(target), rel, sizeof(rel), &info),
		                 0);
		ck_assert_str_eq(rel, names[k]);
		autoindex_out_free(&o);
	}
}
END_TEST

START_TEST(test_utf8_edges)
{
	/* truncated sequences at the end, a lone continuation byte, F5 */
	struct autoindex_entry e[] = {
	    ent("\xe2\x82", false), ent("\x80", false), ent("\xf5\x80\x80\x80", false),
	    ent("\xf4\x90\x80\x80", false), ent("\xf4\x8f\xbf\xbf", false)};
	struct autoindex_out o = {0};

	for (size_t i = 0; i < 5; i++)
		autoindex_entry(&o, AUTOINDEX_JSON, &e[i], i);
	ck_assert_ptr_nonnull(o.p);
	char *s = strndup(o.p, o.len);
	ck_assert_ptr_nonnull(strstr(s, "\"name\":\"\\ufffd\\ufffd\""));
	ck_assert_ptr_nonnull(strstr(s, "\"name\":\"\\ufffd\""));
	ck_assert_ptr_nonnull(strstr(s, "\"name\":\"\\ufffd\\ufffd\\ufffd\\ufffd\""));
	ck_assert_ptr_nonnull(strstr(s, "\"name\":\"\xf4\x8f\xbf\xbf\""));
	free(s);
	autoindex_out_free(&o);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("autoindex");
	TCase *tc = tcase_create("autoindex");

	tcase_add_test(tc, test_negotiate);
	tcase_add_test(tc, test_sort);
	tcase_add_test(tc, test_json);
	tcase_add_test(tc, test_html);
	tcase_add_test(tc, test_href_round_trip);
	tcase_add_test(tc, test_utf8_edges);
	suite_add_tcase(s, tc);

	return check_run(s);
}
