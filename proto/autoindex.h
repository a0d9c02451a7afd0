/* Directory listings (--autoindex): from a directory's entries to an HTML
 * page or a JSON array, and which of the two a request asks for. Sans-I/O:
 * the server reads the directory (server/http/lister.c) and hands the entries
 * here.
 *
 * The rules, for both formats:
 *  - order: directories first, then files, each by name compared bytewise
 *    (memcmp, no locale), so a listing is the same on every machine;
 *  - a name is any bytes but '/' and NUL. Its link (HTML href, JSON "href")
 *    percent-encodes every byte but ALPHA, DIGIT and "-._~", so following
 *    it gives back exactly those bytes (quotes, '<', '%', '?', '#', newlines
 *    and invalid UTF-8 included); a directory's ends in '/';
 *  - the text shown (HTML text, JSON "name") is the name as UTF-8: every
 *    byte that is not part of a well-formed UTF-8 sequence (RFC 3629: no
 *    overlongs, no surrogates, nothing over U+10FFFF) becomes U+FFFD, so the
 *    page and the JSON are always valid; HTML also shows control characters
 *    as U+FFFD and escapes & < > " '; JSON escapes " \ and control
 *    characters as RFC 8259 says, and < > & as \u003c \u003e \u0026;
 *  - mtime is RFC 3339 in UTC to the second ("2026-12-01T07:33:53Z"); size
 *    is in bytes, null (JSON) or "-" (HTML) for a directory;
 *  - HTML: a table with a link to "../" except at the root, no script, no
 *    style sheet, UTF-8. JSON: an array of objects
 *    {"name", "href", "type": "file"|"directory", "size", "mtime"}. */
#ifndef KTLSD_PROTO_AUTOINDEX_H
#define KTLSD_PROTO_AUTOINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum autoindex_format { AUTOINDEX_HTML, AUTOINDEX_JSON };

struct autoindex_entry {
	const char *name; /* not NUL-terminated necessarily: name_len bytes */
	size_t name_len;
	bool is_dir;
	uint64_t size;
	int64_t mtime; /* seconds since the epoch */
};

/* Where a listing is written: a buffer that grows (malloc). The caller
 * takes bytes out of it as it likes (o->len = 0 after writing them
 * somewhere) and frees it with autoindex_out_free. failed: a realloc
 * failed; what was written since is lost. */
struct autoindex_out {
	char *p;
	size_t len, cap;
	bool failed;
};

void autoindex_out_free(struct autoindex_out *o);

/* The format a request asks for: "format=json" or "format=html" in the
 * query of target wins; else Accept (NULL: absent), where application/json
 * wins over text/html only with a higher q (RFC 9110 12.5.1: the most
 * specific media range that matches gives a type its q), or the same q
 * from a more specific range (application/json beside a wildcard range is
 * JSON); else HTML. */
enum autoindex_format autoindex_negotiate(const char *target, size_t target_len, const char *accept,
                                          size_t accept_len);

const char *autoindex_content_type(enum autoindex_format f);

/* Sorts as the listing shows them (see the top). */
void autoindex_sort(struct autoindex_entry *e, size_t n);

/* A listing is begin, each entry in order (i counts from 0), end. rel is
 * the directory as path_from_target gives it ("." for the root, "a/b"). */
void autoindex_begin(struct autoindex_out *o, enum autoindex_format f, const char *rel);
void autoindex_entry(struct autoindex_out *o, enum autoindex_format f,
                     const struct autoindex_entry *e, size_t i);
void autoindex_end(struct autoindex_out *o, enum autoindex_format f);

#endif
