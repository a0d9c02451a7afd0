/* Tests proto/static_target.c: from a request-target to what to serve, on a
 * made-up tree opened through the callbacks. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "proto/static_target.h"
#include "tests/unit/check_run.h"

/* The tree: "a.txt" (a file), "dir" (a directory with index.html),
 * "bare" (a directory without one), "secret" (not readable), and the
 * sidecars of "Sidecars" below. */
static int opened, closed;
#define NOW 100000 /* the wall clock: every file is settled but "recent.txt" */
/* With memos on, the opener keeps one for "a.txt", "a.txt.br" and
 * "recent.txt", as the server's open-file cache does per entry. */
static bool with_memos;
static struct static_memo memos[3];
static char tried[512]; /* the names opened, each followed by a space */

/* Sidecars: each a regular file of size 10 + its index, inode 20 + its
 * index, but for the kinds named. */
static const struct {
	const char *rel;
	int kind; /* 0: a file, 'd': a directory, 'x': leaves the root, 'm': EMFILE */
} sidecars[] = {
    {"a.txt.br", 0},      {"a.txt.zst", 0},  {"a.txt.gz", 0},    {"dir/index.html.gz", 0},
    {"lonely.txt.br", 0}, {"b.txt.br", 'd'}, {"b.txt.zst", 'x'}, {"b.txt.gz", 'm'},
    {"c.txt.gz", 0},      {".hid.br", 0},
};

static int fake_open(void *ctx, const char *rel, struct static_opened *f)
{
	struct stat *st = &f->st;

	(void)ctx;
	f->mem = NULL;
	f->memo = NULL;
	memset(st, 0, sizeof(*st));
	if (with_memos) {
		static const char *const kept[] = {"a.txt", "a.txt.br", "recent.txt"};
		for (size_t i = 0; i < 3; i++)
			if (strcmp(rel, kept[i]) == 0)
				f->memo = &memos[i];
	}
	if (strcmp(rel, "recent.txt") == 0) {
		st->st_mode = S_IFREG | 0644;
		st->st_size = 7;
		st->st_mtim.tv_sec = NOW - 1;
		return 100 + opened++;
	}
	if (strlen(tried) + strlen(rel) + 2 < sizeof(tried)) {
		strcat(tried, rel);
		strcat(tried, " ");
	}
	for (size_t i = 0; i < sizeof(sidecars) / sizeof(sidecars[0]); i++) {
		if (strcmp(rel, sidecars[i].rel) != 0)
			continue;
		switch (sidecars[i].kind) {
		case 'd':
			st->st_mode = S_IFDIR | 0755;
			return 100 + opened++;
		case 'x':
			return -EACCES;
		case 'm':
			return -EMFILE;
		}
		st->st_mode = S_IFREG | 0644;
		st->st_size = (off_t)(10 + i);
		st->st_ino = 20 + i;
		st->st_mtim.tv_sec = 1000 + (time_t)i;
		return 100 + opened++;
	}
	if (strcmp(rel, "a.txt") == 0 || strcmp(rel, "dir/index.html") == 0 ||
	    strncmp(rel, "aaaa", 4) == 0 || strcmp(rel, "b.txt") == 0 ||
	    strcmp(rel, "c.txt") == 0 || strcmp(rel, ".hid") == 0) {
		st->st_mode = S_IFREG | 0644;
		st->st_size = 5;
		st->st_ino = 9;
	} else if (strcmp(rel, "dir") == 0 || strcmp(rel, "bare") == 0 ||
		   strcmp(rel, "a b") == 0 || strcmp(rel, ".") == 0) {
		st->st_mode = S_IFDIR | 0755;
	} else if (strcmp(rel, "secret") == 0) {
		return -EACCES;
	} else if (strcmp(rel, "busy") == 0) {
		return -EMFILE;
	} else {
		return -ENOENT;
	}
	return 100 + opened++;
}

static void fake_close(void *ctx, int fd)
{
	(void)ctx;
	(void)fd;
	closed++;
}

static struct static_target out;
static struct mime_table *mime;
static bool autoindex;

/* ae: the Accept-Encoding value, with --precompressed on; NULL: off. */
static int resolve_ae(const char *target, bool dotfiles, const char *ae)
{
	static const struct static_opener op = {.open = fake_open, .close = fake_close};
	struct accept_enc parsed;

	opened = closed = 0;
	tried[0] = '\0';
	if (ae)
		accept_enc_parse(ae, strlen(ae), &parsed);
	static_target_resolve(target, strlen(target), dotfiles, autoindex, mime, &op,
			      ae ? &parsed : NULL, NOW, &out);
	return out.status;
}

static int resolve(const char *target, bool dotfiles)
{
	return resolve_ae(target, dotfiles, NULL);
}

START_TEST(file)
{
	ck_assert_int_eq(resolve("/a.txt", false), 0);
	ck_assert_int_ge(out.fd, 100);
	ck_assert_str_eq(out.rel, "a.txt");
	ck_assert_uint_eq(out.file.size, 5);
}
END_TEST

START_TEST(directory_index_and_redirect)
{
	ck_assert_int_eq(resolve("/dir/", false), 0);
	ck_assert_str_eq(out.rel, "dir/index.html");
	ck_assert_int_eq(closed, 1); /* the directory's own fd */
	ck_assert_int_eq(resolve("/dir", false), 301);
	ck_assert_str_eq(out.location, "/dir/");
	ck_assert_int_eq(out.fd, -1);
	ck_assert_int_eq(resolve("/a%20b", false), 301);
	ck_assert_str_eq(out.location, "/a%20b/");
	ck_assert_int_eq(resolve("/bare/", false), 404); /* no listings */
}
END_TEST

START_TEST(directory_listing)
{
	autoindex = true;
	ck_assert_int_eq(resolve("/bare/", false), STATIC_LIST_DIR);
	ck_assert_str_eq(out.rel, "bare");
	ck_assert(!out.list_dotfiles);
	ck_assert_int_eq(resolve("/bare/", true), STATIC_LIST_DIR);
	ck_assert(out.list_dotfiles);
	ck_assert_int_eq(out.fd, -1);
	ck_assert_int_eq(closed, opened); /* nothing left open */
	ck_assert_int_eq(resolve("/bare/?format=json", false), STATIC_LIST_DIR);
	ck_assert_str_eq(out.rel, "bare");
	ck_assert_int_eq(resolve("/", false), STATIC_LIST_DIR);
	ck_assert_str_eq(out.rel, ".");
	/* index.html still wins; the slash is still added first */
	ck_assert_int_eq(resolve("/dir/", false), 0);
	ck_assert_str_eq(out.rel, "dir/index.html");
	ck_assert_int_eq(resolve("/bare", false), 301);
	ck_assert_int_eq(resolve("/secret/", false), 403);
	ck_assert_int_eq(resolve("/.git/", false), 404);
	autoindex = false;
}
END_TEST

START_TEST(errors)
{
	ck_assert_int_eq(resolve("/missing", false), 404);
	ck_assert_int_eq(resolve("/secret", false), 403);
	ck_assert_int_eq(resolve("/busy", false), 503);
	ck_assert_int_eq(resolve("/.git/config", false), 404);
	ck_assert_int_eq(opened, 0); /* a dotfile is never opened */
	ck_assert_int_eq(resolve("/../etc/passwd", false), 400);
}
END_TEST

START_TEST(precompressed_off)
{
	ck_assert_int_eq(resolve("/a.txt", false), 0);
	ck_assert_str_eq(tried, "a.txt "); /* no sidecar is looked for */
	ck_assert_ptr_null(out.file.content_encoding);
	ck_assert(!out.file.vary);
	ck_assert_str_eq(out.file.content_type, "text/plain; charset=utf-8");
}
END_TEST

START_TEST(sidecar_chosen)
{
	ck_assert_int_eq(resolve_ae("/a.txt", false, "gzip, deflate, br, zstd"), 0);
	ck_assert_str_eq(tried, "a.txt a.txt.br "); /* br exists: no further look */
	ck_assert_str_eq(out.rel, "a.txt.br");
	ck_assert_str_eq(out.file.content_encoding, "br");
	ck_assert_str_eq(out.file.content_type, "text/plain; charset=utf-8"); /* the original's */
	ck_assert(out.file.vary);
	ck_assert_uint_eq(out.file.size, 10); /* the sidecar's */
	ck_assert_uint_eq(out.file.ino, 20);
	ck_assert_int_eq(out.file.mtime_sec, 1000);
	ck_assert_int_eq(closed, 1); /* the original's fd */
	ck_assert_int_eq(out.fd, 101);

	ck_assert_int_eq(resolve_ae("/a.txt", false, "gzip;q=0.9, zstd;q=0.5"), 0);
	ck_assert_str_eq(out.file.content_encoding, "gzip");
	ck_assert_str_eq(out.rel, "a.txt.gz");
	ck_assert_uint_eq(out.file.size, 12);
	ck_assert_int_eq(resolve_ae("/a.txt", false, "gzip;q=0.4, zstd;q=0.5"), 0);
	ck_assert_str_eq(out.file.content_encoding, "zstd");
	ck_assert_str_eq(out.rel, "a.txt.zst");

	/* A directory's index.html has its sidecars too. */
	ck_assert_int_eq(resolve_ae("/dir/", false, "br, gzip"), 0);
	ck_assert_str_eq(tried, "dir dir/index.html dir/index.html.br dir/index.html.gz ");
	ck_assert_str_eq(out.rel, "dir/index.html.gz");
	ck_assert_str_eq(out.file.content_type, "text/html; charset=utf-8");
	ck_assert_str_eq(out.file.content_encoding, "gzip");
}
END_TEST

START_TEST(sidecar_passed_over)
{
	/* None accepted: nothing looked for, yet the answer varies. */
	ck_assert_int_eq(resolve_ae("/a.txt", false, "identity"), 0);
	ck_assert_str_eq(tried, "a.txt ");
	ck_assert_ptr_null(out.file.content_encoding);
	ck_assert(out.file.vary);
	ck_assert_int_eq(resolve_ae("/a.txt", false, "br;q=0, identity;q=0"), 0);
	ck_assert_ptr_null(out.file.content_encoding); /* identity anyway */
	ck_assert_str_eq(out.rel, "a.txt");

	/* A directory, a name that leaves the root, a full fd table: each
	 * passed over, the original served, every fd given back. */
	ck_assert_int_eq(resolve_ae("/b.txt", false, "br, zstd, gzip"), 0);
	ck_assert_str_eq(tried, "b.txt b.txt.br b.txt.zst b.txt.gz ");
	ck_assert_str_eq(out.rel, "b.txt");
	ck_assert_ptr_null(out.file.content_encoding);
	ck_assert_uint_eq(out.file.size, 5);
	ck_assert_int_eq(opened - closed, 1);
	ck_assert_int_eq(out.fd, 100);

	/* Missing ones are tried in order, the existing one taken. */
	ck_assert_int_eq(resolve_ae("/c.txt", false, "br, zstd, gzip"), 0);
	ck_assert_str_eq(tried, "c.txt c.txt.br c.txt.zst c.txt.gz ");
	ck_assert_str_eq(out.file.content_encoding, "gzip");

	/* A sidecar without its original is no file at all. */
	ck_assert_int_eq(resolve_ae("/lonely.txt", false, "br"), 404);
	ck_assert_int_eq(opened, 0);
	/* The original's name decides for dotfiles. */
	ck_assert_int_eq(resolve_ae("/.hid", false, "br"), 404);
	ck_assert_str_eq(tried, "");
	ck_assert_int_eq(resolve_ae("/.hid", true, "br"), 0);
	ck_assert_str_eq(out.file.content_encoding, "br");
	/* No sidecar for a 404, a 301 or an error: nothing varies there. */
	ck_assert_int_eq(resolve_ae("/dir", false, "br"), 301);
	ck_assert_int_eq(resolve_ae("/missing", false, "br"), 404);
	ck_assert_str_eq(tried, "missing ");
}
END_TEST

/* "/aaa...a/aaa..." whose path is len bytes, in 200-byte components. */
static const char *long_target(size_t len)
{
	static char t[PATH_MAX + 2];
	t[0] = '/';
	for (size_t i = 0; i < len; i++)
		t[1 + i] = i % 201 == 200 ? '/' : 'a';
	t[1 + len] = '\0';
	return t;
}

START_TEST(sidecar_name_too_long)
{
	/* Every name starting "aaaa" is a file here, sidecars too: whether a
	 * suffix is tried depends only on its room in rel[PATH_MAX]. */
	ck_assert_int_eq(resolve_ae(long_target(PATH_MAX - 3), false, "zstd, br"), 0);
	ck_assert_ptr_null(out.file.content_encoding); /* neither fits */
	ck_assert_int_eq(opened, 1);
	ck_assert_int_eq(resolve_ae(long_target(PATH_MAX - 4), false, "zstd, br"), 0);
	ck_assert_str_eq(out.file.content_encoding, "br"); /* ".zst" does not fit, ".br" does */
	ck_assert_uint_eq(strlen(out.rel), PATH_MAX - 1);
}
END_TEST

/* What the opener keeps is made once and used after; a recent file's
 * validators are made per response, not kept. */
START_TEST(memo_kept)
{
	char want[ETAG_MAX];

	with_memos = true;
	memset(memos, 0, sizeof(memos));
	ck_assert_int_eq(resolve("/a.txt", false), 0);
	ck_assert(memos[0].validators);
	etag_format(want, sizeof(want), 9, 5, 0, 0, false);
	ck_assert_ptr_eq(out.file.etag, memos[0].etag);
	ck_assert_str_eq(memos[0].etag, want);
	ck_assert_ptr_eq(out.file.last_modified, memos[0].last_modified);
	ck_assert_str_eq(memos[0].last_modified, "Thu, 01 Jan 1970 00:00:00 GMT");
	ck_assert_ptr_eq(memos[0].types, mime);
	ck_assert_str_eq(memos[0].content_type, "text/plain; charset=utf-8");
	ck_assert(!out.file.recent);

	/* Made once: what the memo says is what is served. */
	strcpy(memos[0].etag, "\"kept\"");
	memos[0].content_type = "x/kept";
	ck_assert_int_eq(resolve("/a.txt", false), 0);
	ck_assert_str_eq(out.file.etag, "\"kept\"");
	ck_assert_str_eq(out.file.content_type, "x/kept");

	/* A sidecar: its own validators, the original's type. */
	ck_assert_int_eq(resolve_ae("/a.txt", false, "br"), 0);
	ck_assert_str_eq(out.rel, "a.txt.br");
	ck_assert_ptr_eq(out.file.etag, memos[1].etag);
	etag_format(want, sizeof(want), 20, 10, 1000, 0, false);
	ck_assert_str_eq(memos[1].etag, want);
	ck_assert_str_eq(out.file.content_type, "x/kept");
	ck_assert_ptr_null(memos[1].content_type); /* never looked up */

	/* Another table: looked up again. */
	struct mime_table *other;
	ck_assert_int_eq(mime_table_load(&other, NULL, 0), 0);
	struct mime_table *was = mime;
	mime = other;
	ck_assert_int_eq(resolve("/a.txt", false), 0);
	ck_assert_str_eq(out.file.content_type, "text/plain; charset=utf-8");
	ck_assert_ptr_eq(memos[0].types, other);
	mime = was;
	mime_table_free(other);

	/* Recent: the validators are not kept. */
	ck_assert_int_eq(resolve("/recent.txt", false), 0);
	ck_assert(out.file.recent);
	ck_assert_ptr_null(out.file.etag);
	ck_assert_ptr_null(out.file.last_modified);
	ck_assert(!memos[2].validators);
	ck_assert_ptr_nonnull(memos[2].content_type);
	with_memos = false;
}
END_TEST

int main(void)
{
	Suite *s = suite_create("static_target");
	TCase *tc = tcase_create("resolve");
	if (mime_table_load(&mime, NULL, 0) < 0)
		return 1;
	tcase_add_test(tc, file);
	tcase_add_test(tc, directory_listing);
	tcase_add_test(tc, directory_index_and_redirect);
	tcase_add_test(tc, errors);
	tcase_add_test(tc, precompressed_off);
	tcase_add_test(tc, sidecar_chosen);
	tcase_add_test(tc, sidecar_passed_over);
	tcase_add_test(tc, sidecar_name_too_long);
	tcase_add_test(tc, memo_kept);
	suite_add_tcase(s, tc);
	return check_run(s);
}
