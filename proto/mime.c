/* File name to Content-Type.
 *
 * /etc/mime.types (Debian media-types: "type ext1 ext2 ...", '#' comments),
 * as bytes the server read, goes once into an open-addressing hash table keyed by the lowercased
 * extension. After mime_table_load() returns nothing writes to the table, so
 * workers share it without locks.
 *
 * The built-in list covers what a static web site serves. It fills in any of
 * its extensions the file lacks (or all of them when the file is missing), so
 * a minimal container without media-types still sends correct types; where
 * the file has an extension, the file wins. An extension listed twice in the
 * file keeps its first type.
 *
 * The text types browsers need a charset for come back with
 * "; charset=utf-8" appended. Those strings are static, shared by every
 * entry, so a lookup never allocates. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/mime.h"

#define MIME_DEFAULT "application/octet-stream"
#define MIME_EXT_MAX 64 /* longest in Debian's file: 30 ("sarif-external-properties.json") */
#define POOL_BLOCK 16384

struct mime_entry {
	const char *ext; /* lowercased; NULL marks a free slot */
	const char *type;
};

struct pool_block {
	struct pool_block *next;
	size_t used;
	char data[POOL_BLOCK];
};

struct mime_table {
	struct mime_entry *slots;
	size_t cap; /* a power of two */
	size_t count;
	struct pool_block *pool; /* every ext and type string lives here */
};

static const struct mime_entry builtin[] = {
    {"html", "text/html"},
    {"htm", "text/html"},
    {"css", "text/css"},
    {"js", "text/javascript"},
    {"mjs", "text/javascript"},
    {"json", "application/json"},
    {"txt", "text/plain"},
    {"xml", "application/xml"},
    {"svg", "image/svg+xml"},
    {"png", "image/png"},
    {"jpg", "image/jpeg"},
    {"jpeg", "image/jpeg"},
    {"gif", "image/gif"},
    {"webp", "image/webp"},
    {"avif", "image/avif"},
    {"ico", "image/vnd.microsoft.icon"},
    {"woff", "font/woff"},
    {"woff2", "font/woff2"},
    {"ttf", "font/ttf"},
    {"pdf", "application/pdf"},
    {"zip", "application/zip"},
    {"gz", "application/gzip"},
    {"tar", "application/x-tar"},
    {"mp4", "video/mp4"},
    {"webm", "video/webm"},
    {"mp3", "audio/mpeg"},
    {"wasm", "application/wasm"},
    {"iso", "application/x-iso9660-image"},
    {"bin", "application/octet-stream"},
};

static const char *const utf8_types[][2] = {
    {"text/html", "text/html; charset=utf-8"},
    {"text/plain", "text/plain; charset=utf-8"},
    {"text/css", "text/css; charset=utf-8"},
    {"application/javascript", "application/javascript; charset=utf-8"},
    {"text/javascript", "text/javascript; charset=utf-8"},
    {"application/json", "application/json; charset=utf-8"},
    {"image/svg+xml", "image/svg+xml; charset=utf-8"},
};

/* ASCII only: tolower() would follow the locale. */
static char lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c + ('a' - 'A')) : c;
}

static uint32_t hash_ext(const char *s, size_t n)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)lower(s[i])) * 16777619u;
	return h;
}

static const char *with_charset(const char *type)
{
	for (size_t i = 0; i < sizeof(utf8_types) / sizeof(utf8_types[0]); i++)
		if (strcmp(type, utf8_types[i][0]) == 0)
			return utf8_types[i][1];
	return NULL;
}

/* A copy of s[0..n) in the pool, lowercased when asked. */
static char *pool_dup(struct mime_table *t, const char *s, size_t n, bool lowercase)
{
	struct pool_block *b = t->pool;

	if (n + 1 > POOL_BLOCK)
		return NULL;
	if (!b || POOL_BLOCK - b->used < n + 1) {
		b = malloc(sizeof(*b));
		if (!b)
			return NULL;
		b->next = t->pool;
		b->used = 0;
		t->pool = b;
	}
	char *p = b->data + b->used;
	for (size_t i = 0; i < n; i++)
		p[i] = lowercase ? lower(s[i]) : s[i];
	p[n] = '\0';
	b->used += n + 1;
	return p;
}

/* The slot holding ext, or the free slot where it would go. */
static struct mime_entry *find_slot(struct mime_entry *slots, size_t cap, const char *ext, size_t n)
{
	size_t i = hash_ext(ext, n) & (cap - 1);

	for (;; i = (i + 1) & (cap - 1)) {
		const char *k = slots[i].ext;
		if (!k)
			return &slots[i];
		size_t j = 0;
		while (j < n && k[j] == lower(ext[j]))
			j++;
		if (j == n && k[n] == '\0')
			return &slots[i];
	}
}

static int grow(struct mime_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024;
	struct mime_entry *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i].ext)
			*find_slot(slots, cap, t->slots[i].ext, strlen(t->slots[i].ext)) =
			    t->slots[i];
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

/* Adds ext (any case) -> type unless ext is already known. type must outlive
 * the table (pool or static). */
static int add(struct mime_table *t, const char *ext, size_t n, const char *type)
{
	if (n == 0 || n > MIME_EXT_MAX)
		return 0;                               /* no lookup can ask for it */
	if ((t->count + 1) * 2 > t->cap && grow(t) < 0) /* keep the load under 1/2 */
		return -ENOMEM;
	struct mime_entry *e = find_slot(t->slots, t->cap, ext, n);
	if (e->ext)
		return 0;
	e->ext = pool_dup(t, ext, n, true);
	if (!e->ext)
		return -ENOMEM;
	e->type = type;
	t->count++;
	return 0;
}

int mime_table_override(struct mime_table *t, const char *ext, const char *type)
{
	size_t n = strlen(ext);
	const char *stored;

	if (n == 0 || n > MIME_EXT_MAX)
		return -EINVAL;
	if ((t->count + 1) * 2 > t->cap && grow(t) < 0)
		return -ENOMEM;
	struct mime_entry *e = find_slot(t->slots, t->cap, ext, n);
	stored = pool_dup(t, type, strlen(type), false);
	if (!stored)
		return -ENOMEM;
	if (!e->ext) {
		e->ext = pool_dup(t, ext, n, true);
		if (!e->ext)
			return -ENOMEM;
		t->count++;
	}
	e->type = stored; /* as given: no charset added, the user said what they want */
	return 0;
}

/* One line of mime.types. Lines without a '/' in the type are not Debian's
 * format and are skipped rather than trusted. */
static int parse_line(struct mime_table *t, char *line)
{
	static const char ws[] = " \t\r\n";
	char *save, *type, *ext;
	const char *stored;

	line[strcspn(line, "#")] = '\0';
	type = strtok_r(line, ws, &save);
	if (!type || !strchr(type, '/'))
		return 0;
	stored = with_charset(type);
	for (ext = strtok_r(NULL, ws, &save); ext; ext = strtok_r(NULL, ws, &save)) {
		if (!stored) {
			stored = pool_dup(t, type, strlen(type), false);
			if (!stored)
				return -ENOMEM;
		}
		if (add(t, ext, strlen(ext), stored) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Each line of the n bytes at text (NULL: none), as parse_line wants it:
 * NUL-terminated, in a copy it may cut up. */
static int load_text(struct mime_table *t, const char *text, size_t n)
{
	char *line = text && n ? malloc(n + 1) : NULL;
	int rc = 0;

	if (text && n && !line)
		return -ENOMEM;
	for (size_t off = 0; rc == 0 && off < n;) {
		const char *nl = memchr(text + off, '\n', n - off);
		size_t len = nl ? (size_t)(nl - (text + off)) + 1 : n - off;

		memcpy(line, text + off, len);
		line[len] = '\0';
		off += len;
		rc = parse_line(t, line);
	}
	free(line);
	return rc;
}

int mime_table_load(struct mime_table **out, const char *text, size_t len)
{
	struct mime_table *t = calloc(1, sizeof(*t));
	int rc;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	rc = load_text(t, text, len);
	for (size_t i = 0; rc == 0 && i < sizeof(builtin) / sizeof(builtin[0]); i++) {
		const char *type = with_charset(builtin[i].type);
		rc = add(t, builtin[i].ext, strlen(builtin[i].ext), type ? type : builtin[i].type);
	}
	if (rc < 0) {
		mime_table_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

void mime_table_free(struct mime_table *t)
{
	if (!t)
		return;
	while (t->pool) {
		struct pool_block *next = t->pool->next;
		free(t->pool);
		t->pool = next;
	}
	free(t->slots);
	free(t);
}

/* The extension is what follows the last '.' of the last segment; a leading
 * '.' (".bashrc") names a hidden file, not an extension. */
const char *mime_lookup(const struct mime_table *t, const char *filename)
{
	const char *base = strrchr(filename, '/');
	const char *dot;

	base = base ? base + 1 : filename;
	dot = strrchr(base, '.');
	if (!t || !dot || dot == base || dot[1] == '\0')
		return MIME_DEFAULT;
	const char *ext = dot + 1;
	size_t n = strlen(ext);
	if (n > MIME_EXT_MAX)
		return MIME_DEFAULT;
	const struct mime_entry *e = find_slot(t->slots, t->cap, ext, n);
	return e->ext ? e->type : MIME_DEFAULT;
}
