/* Tests proto/mime.c with a mime.types we write, with none, and with the
 * system's /etc/mime.types (read here: the module takes bytes). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/mime.h"
#include "tests/unit/check_run.h"

static const char sample[] = "# comment line with text/html html\n"
                             "\n"
                             "application/x-foo\tfoo FOO2 # trailing comment bar\n"
                             "text/x-custom   cust\n"
                             "text/html  html   htm shtml\n"
                             "application/pdf  pdf\r\n"
                             "text/x-second  cust\n" /* duplicate: the first wins */
                             "notatype  nope\n"      /* no '/': skipped */
                             "image/x-lonely\n"      /* no extensions */
                             "application/javascript js\n"
                             "   \t \n";

START_TEST(test_own_file)
{
	struct mime_table *t;

	ck_assert_int_eq(mime_table_load(&t, sample, strlen(sample)), 0);

	ck_assert_str_eq(mime_lookup(t, "a.foo"), "application/x-foo");
	ck_assert_str_eq(mime_lookup(t, "a.foo2"), "application/x-foo");
	ck_assert_str_eq(mime_lookup(t, "a.FoO2"), "application/x-foo");
	ck_assert_str_eq(mime_lookup(t, "x.cust"), "text/x-custom");
	ck_assert_str_eq(mime_lookup(t, "x.shtml"), "text/html; charset=utf-8");
	ck_assert_str_eq(mime_lookup(t, "x.pdf"), "application/pdf");
	/* the file wins over the built-in list where it has the extension */
	ck_assert_str_eq(mime_lookup(t, "app.js"), "application/javascript; charset=utf-8");
	/* comments, type-less lines and lonely types add nothing */
	ck_assert_str_eq(mime_lookup(t, "x.bar"), "application/octet-stream");
	ck_assert_str_eq(mime_lookup(t, "x.nope"), "application/octet-stream");
	ck_assert_str_eq(mime_lookup(t, "x.text/html"), "application/octet-stream");
	/* the built-in list fills what the file lacks */
	ck_assert_str_eq(mime_lookup(t, "x.png"), "image/png");
	ck_assert_str_eq(mime_lookup(t, "x.css"), "text/css; charset=utf-8");
	ck_assert_str_eq(mime_lookup(t, "x.mjs"), "text/javascript; charset=utf-8");
	ck_assert_str_eq(mime_lookup(t, "x.wasm"), "application/wasm");
	mime_table_free(t);
}
END_TEST

START_TEST(test_missing_file)
{
	struct mime_table *t;
	static const char *const cases[][2] = {
	    {"index.html", "text/html; charset=utf-8"},
	    {"a.htm", "text/html; charset=utf-8"},
	    {"s.css", "text/css; charset=utf-8"},
	    {"a.js", "text/javascript; charset=utf-8"},
	    {"a.mjs", "text/javascript; charset=utf-8"},
	    {"a.json", "application/json; charset=utf-8"},
	    {"a.txt", "text/plain; charset=utf-8"},
	    {"a.xml", "application/xml"},
	    {"a.svg", "image/svg+xml; charset=utf-8"},
	    {"a.png", "image/png"},
	    {"a.jpg", "image/jpeg"},
	    {"a.jpeg", "image/jpeg"},
	    {"a.gif", "image/gif"},
	    {"a.webp", "image/webp"},
	    {"a.avif", "image/avif"},
	    {"favicon.ico", "image/vnd.microsoft.icon"},
	    {"f.woff", "font/woff"},
	    {"f.woff2", "font/woff2"},
	    {"f.ttf", "font/ttf"},
	    {"d.pdf", "application/pdf"},
	    {"a.zip", "application/zip"},
	    {"a.tar.gz", "application/gzip"},
	    {"a.tar", "application/x-tar"},
	    {"v.mp4", "video/mp4"},
	    {"v.webm", "video/webm"},
	    {"s.mp3", "audio/mpeg"},
	    {"m.wasm", "application/wasm"},
	    {"d.iso", "application/x-iso9660-image"},
	    {"f.bin", "application/octet-stream"},
	};

	ck_assert_int_eq(mime_table_load(&t, NULL, 0), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_str_eq(mime_lookup(t, cases[i][0]), cases[i][1]);
	ck_assert_str_eq(mime_lookup(t, "a.foo"), "application/octet-stream");
	mime_table_free(t);

	/* an empty file: the built-in table alone, as with none */
	ck_assert_int_eq(mime_table_load(&t, "", 0), 0);
	ck_assert_str_eq(mime_lookup(t, "a.png"), "image/png");
	mime_table_free(t);
}
END_TEST

START_TEST(test_extension_rules)
{
	struct mime_table *t;

	ck_assert_int_eq(mime_table_load(&t, NULL, 0), 0);
	ck_assert_str_eq(mime_lookup(t, "INDEX.HTML"), "text/html; charset=utf-8");
	ck_assert_str_eq(mime_lookup(t, "a/b.c/index.Html"), "text/html; charset=utf-8");
	/* the last segment's last dot decides */
	ck_assert_str_eq(mime_lookup(t, "a.html/readme"), "application/octet-stream");
	ck_assert_str_eq(mime_lookup(t, "archive.png.zip"), "application/zip");
	/* dotfiles have no extension */
	ck_assert_str_eq(mime_lookup(t, ".html"), "application/octet-stream");
	ck_assert_str_eq(mime_lookup(t, "dir/.png"), "application/octet-stream");
	ck_assert_str_eq(mime_lookup(t, ".config.json"), "application/json; charset=utf-8");
	/* no extension at all */
	ck_assert_str_eq(mime_lookup(t, "Makefile"), "application/octet-stream");
	ck_assert_str_eq(mime_lookup(t, "file."), "application/octet-stream");
	ck_assert_str_eq(mime_lookup(t, ""), "application/octet-stream");
	ck_assert_str_eq(mime_lookup(t, "dir/"), "application/octet-stream");
	ck_assert_str_eq(mime_lookup(t, "."), "application/octet-stream");
	/* near misses */
	ck_assert_str_eq(mime_lookup(t, "a.htmlx"), "application/octet-stream");
	ck_assert_str_eq(mime_lookup(t, "a.htm_"), "application/octet-stream");
	ck_assert_str_eq(mime_lookup(t, "a.ht"), "application/octet-stream");
	char longname[300];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[0] = 'a';
	longname[1] = '.';
	longname[sizeof(longname) - 1] = '\0';
	ck_assert_str_eq(mime_lookup(t, longname), "application/octet-stream");
	/* the charset strings are shared, not built per call */
	ck_assert_ptr_eq(mime_lookup(t, "a.html"), mime_lookup(t, "b.htm"));
	mime_table_free(t);
}
END_TEST

START_TEST(test_system_file)
{
	struct mime_table *t;
	char *text = NULL;
	size_t cap = 0;
	FILE *f = fopen("/etc/mime.types", "re");

	if (!f)
		return; /* not installed here: nothing to compare with */
	ssize_t n = getdelim(&text, &cap, '\0', f); /* it has no NUL: it comes whole */
	fclose(f);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(mime_table_load(&t, text, (size_t)n), 0);
	free(text);
	ck_assert_str_eq(mime_lookup(t, "index.html"), "text/html; charset=utf-8");
	ck_assert_str_eq(mime_lookup(t, "a.css"), "text/css; charset=utf-8");
	ck_assert_str_eq(mime_lookup(t, "a.svg"), "image/svg+xml; charset=utf-8");
	ck_assert_str_eq(mime_lookup(t, "a.png"), "image/png");
	ck_assert_str_eq(mime_lookup(t, "a.woff2"), "font/woff2");
	ck_assert_str_eq(mime_lookup(t, "a.wasm"), "application/wasm");
	/* types only the file knows */
	ck_assert_str_eq(mime_lookup(t, "a.odt"), "application/vnd.oasis.opendocument.text");
	ck_assert_str_eq(mime_lookup(t, "a.flac"), "audio/flac");
	ck_assert_str_eq(mime_lookup(t, "a.DEB"), "application/vnd.debian.binary-package");
	ck_assert_str_eq(mime_lookup(t, "a.no-such-ext"), "application/octet-stream");
	mime_table_free(t);
}
END_TEST

START_TEST(test_free_null)
{
	mime_table_free(NULL);
	ck_assert_str_eq(mime_lookup(NULL, "a.html"), "application/octet-stream");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mime");
	TCase *tc = tcase_create("mime");

	tcase_add_test(tc, test_own_file);
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_extension_rules);
	tcase_add_test(tc, test_system_file);
	tcase_add_test(tc, test_free_null);
	suite_add_tcase(s, tc);

	return check_run(s);
}
