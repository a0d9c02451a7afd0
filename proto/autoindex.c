/* Directory listings: negotiation, order and rendering. See
 * proto/autoindex.h for the rules. */
#include "proto/autoindex.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "proto/accept_enc.h"
#include "proto/httpdate.h"
#include "proto/numfmt.h"

/* ---- the output buffer ---- */

void autoindex_out_free(struct autoindex_out *o)
{
	free(o->p);
	o->p = NULL;
	o->len = o->cap = 0;
}

/* Room for n more bytes: the place to write them, or NULL (o->failed). */
static char *room(struct autoindex_out *o, size_t n)
{
	if (o->failed)
		return NULL;
	if (o->cap - o->len < n) {
		size_t cap = o->cap ? o->cap : 4096;
		while (cap - o->len < n)
			cap *= 2;
		char *p = realloc(o->p, cap);
		if (!p) {
			o->failed = true;
			return NULL;
		}
		o->p = p;
		o->cap = cap;
	}
	return o->p + o->len;
}

static void put(struct autoindex_out *o, const char *s, size_t n)
{
	char *at = room(o, n);

	if (at) {
		memcpy(at, s, n);
		o->len += n;
	}
}

static void puts_(struct autoindex_out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* ---- names ---- */

/* The length of the well-formed UTF-8 sequence at p (RFC 3629 table 3-7),
 * or 0 when p[0] does not start one. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	unsigned char c = p[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0; /* a continuation byte, C0, C1 (overlong), F5 and up */
	if (len > n)
		return 0;
	if (c == 0xe0)
		lo = 0xa0; /* overlong */
	else if (c == 0xed)
		hi = 0x9f; /* surrogates */
	else if (c == 0xf0)
		lo = 0x90; /* overlong */
	else if (c == 0xf4)
		hi = 0x8f; /* over U+10FFFF */
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return len;
}

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

static void html_text(struct autoindex_out *o, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		size_t len = utf8_len(p + i, n - i);

		if (len == 0 || p[i] < 0x20 || p[i] == 0x7f) {
			put(o, REPLACEMENT, 3);
			i++;
			continue;
		}
		switch (p[i]) {
		case '&':
			puts_(o, "&amp;");
			break;
		case '<':
			puts_(o, "&lt;");
			break;
		case '>':
			puts_(o, "&gt;");
			break;
		case '"':
			puts_(o, "&quot;");
			break;
		case '\'':
			puts_(o, "&#39;");
			break;
		default:
			put(o, s + i, len);
			break;
		}
		i += len;
	}
}

static void json_text(struct autoindex_out *o, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		size_t len = utf8_len(p + i, n - i);
		char esc[6] = {'\\', 'u', '0', '0', 0, 0};

		if (len == 0) {
			puts_(o, "\\ufffd");
			i++;
			continue;
		}
		switch (p[i]) {
		case '"':
			puts_(o, "\\\"");
			break;
		case '\\':
			puts_(o, "\\\\");
			break;
		case '\n':
			puts_(o, "\\n");
			break;
		case '\r':
			puts_(o, "\\r");
			break;
		case '\t':
			puts_(o, "\\t");
			break;
		default:
			/* < > & too: JSON that a browser sniffs as HTML stays inert. */
			if (p[i] < 0x20 || p[i] == '<' || p[i] == '>' || p[i] == '&') {
				esc[4] = hex[p[i] >> 4];
				esc[5] = hex[p[i] & 15];
				put(o, esc, 6);
			} else {
				put(o, s + i, len);
			}
			break;
		}
		i += len;
	}
}

/* Every byte but the unreserved ones (RFC 3986 2.3) is %-encoded: the link
 * is then safe as an HTML attribute and a JSON string as it is, never read
 * as a scheme ("a:b"), a query or a fragment, and decodes (proto/path.c
 * decodes once) to exactly the name. */
static void href(struct autoindex_out *o, const struct autoindex_entry *e)
{
	static const char hex[] = "0123456789ABCDEF";
	char *at = room(o, e->name_len * 3 + 1);
	size_t n = 0;

	if (!at)
		return;
	for (size_t i = 0; i < e->name_len; i++) {
		unsigned char c = (unsigned char)e->name[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~') {
			at[n++] = (char)c;
		} else {
			at[n++] = '%';
			at[n++] = hex[c >> 4];
			at[n++] = hex[c & 15];
		}
	}
	if (e->is_dir)
		at[n++] = '/';
	o->len += n;
}

/* Years 0 to 9999: what four digits hold. */
#define RFC3339_MIN (-62167219200LL) /* 0000-01-01T00:00:00Z */
#define RFC3339_MAX 253402300799LL   /* 9999-12-31T23:59:59Z */

/* "2026-12-01T07:33:53Z"; a time no calendar of four digits holds: the
 * epoch. httpdate's fields, not gmtime_r, which takes glibc's time-zone
 * lock for every entry of a listing. */
static void rfc3339(struct autoindex_out *o, int64_t t)
{
	char buf[24];

	if (t < RFC3339_MIN || t > RFC3339_MAX)
		t = 0;
	httpdate_rfc3339((time_t)t, buf);
	puts_(o, buf);
}

static void number(struct autoindex_out *o, uint64_t v)
{
	char buf[NUMFMT_U64_MAX];

	put(o, buf, numfmt_u64(buf, v));
}

/* ---- negotiation ---- */

static bool is_ows(char c)
{
	return c == ' ' || c == '\t';
}

/* How specifically range (type/subtype) matches type/sub: 3 exactly, 2 by
 * "type/ *", 1 by "* / *" (without the spaces), 0 not at all. */
static int specificity(const char *r, size_t n, const char *type, const char *sub)
{
	const char *slash = memchr(r, '/', n);
	size_t tl = strlen(type), sl = strlen(sub);

	if (!slash)
		return 0;
	size_t rt = (size_t)(slash - r), rs = n - rt - 1;
	if (rt == 1 && r[0] == '*')
		return rs == 1 && slash[1] == '*' ? 1 : 0;
	if (rt != tl || strncasecmp(r, type, tl) != 0)
		return 0;
	if (rs == 1 && slash[1] == '*')
		return 2;
	return rs == sl && strncasecmp(slash + 1, sub, sl) == 0 ? 3 : 0;
}

struct weight {
	int spec; /* of the range that gave q */
	int q;
};

/* Each member of Accept: a media range, then parameters; q is the one we
 * read. A member we cannot read is skipped. */
static void weigh(const char *a, size_t n, struct weight *html, struct weight *json)
{
	size_t i = 0;

	while (i < n) {
		size_t end = i;
		while (end < n && a[end] != ',')
			end++;
		size_t s = i, e;
		while (s < end && is_ows(a[s]))
			s++;
		e = s;
		while (e < end && a[e] != ';' && !is_ows(a[e]))
			e++;
		const char *range = a + s;
		size_t rlen = e - s;
		int q = 1000;

		/* Parameters: ";q=0.5" (any case, OWS around ';'). */
		for (size_t k = e; k < end;) {
			while (k < end && (is_ows(a[k]) || a[k] == ';'))
				k++;
			size_t pe = k;
			while (pe < end && a[pe] != ';')
				pe++;
			size_t vt = pe;
			while (vt > k && is_ows(a[vt - 1]))
				vt--;
			if (vt - k >= 2 && (a[k] == 'q' || a[k] == 'Q') && a[k + 1] == '=')
				q = accept_enc_qvalue(a + k + 2, vt - k - 2);
			k = pe;
		}
		if (q >= 0 && rlen > 0) {
			int sh = specificity(range, rlen, "text", "html");
			int sj = specificity(range, rlen, "application", "json");
			if (sh > html->spec)
				*html = (struct weight){sh, q};
			if (sj > json->spec)
				*json = (struct weight){sj, q};
		}
		i = end + 1;
	}
}

/* "format=json" among the query's '&'-separated parameters. */
static int query_format(const char *t, size_t n)
{
	const char *hash = memchr(t, '#', n);
	const char *q = memchr(t, '?', hash ? (size_t)(hash - t) : n);

	if (!q)
		return -1;
	size_t i = (size_t)(q - t) + 1;
	int found = -1;
	while (i < n && t[i] != '#') {
		size_t e = i;
		while (e < n && t[e] != '&' && t[e] != '#')
			e++;
		if (e - i == 11 && memcmp(t + i, "format=json", 11) == 0)
			found = AUTOINDEX_JSON;
		else if (e - i == 11 && memcmp(t + i, "format=html", 11) == 0)
			found = AUTOINDEX_HTML;
		i = e < n && t[e] == '&' ? e + 1 : e;
	}
	return found;
}

enum autoindex_format autoindex_negotiate(const char *target, size_t target_len, const char *accept,
                                          size_t accept_len)
{
	struct weight html = {0, 0}, json = {0, 0};
	int f = target ? query_format(target, target_len) : -1;

	if (f >= 0)
		return (enum autoindex_format)f;
	if (!accept)
		return AUTOINDEX_HTML;
	weigh(accept, accept_len, &html, &json);
	if (json.q > html.q || (json.q > 0 && json.q == html.q && json.spec > html.spec))
		return AUTOINDEX_JSON;
	return AUTOINDEX_HTML;
}

const char *autoindex_content_type(enum autoindex_format f)
{
	return f == AUTOINDEX_JSON ? "application/json" : "text/html; charset=utf-8";
}

/* ---- order ---- */

static int cmp_entry(const void *pa, const void *pb)
{
	const struct autoindex_entry *a = pa, *b = pb;
	size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
	int c;

	if (a->is_dir != b->is_dir)
		return a->is_dir ? -1 : 1;
	c = memcmp(a->name, b->name, n);
	if (c)
		return c;
	return a->name_len < b->name_len ? -1 : a->name_len > b->name_len;
}

void autoindex_sort(struct autoindex_entry *e, size_t n)
{
	if (n > 1)
		qsort(e, n, sizeof(*e), cmp_entry);
}

/* ---- rendering ---- */

void autoindex_begin(struct autoindex_out *o, enum autoindex_format f, const char *rel)
{
	bool root = strcmp(rel, ".") == 0;

	if (f == AUTOINDEX_JSON) {
		puts_(o, "[");
		return;
	}
	for (int i = 0; i < 2; i++) {
		puts_(o, i == 0 ? "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n"
		                  "<title>Index of /"
		                : "</title>\n</head>\n<body>\n<h1>Index of /");
		if (!root) {
			html_text(o, rel, strlen(rel));
			puts_(o, "/");
		}
	}
	puts_(o, "</h1>\n<table>\n<thead><tr><th>Name</th><th>Size</th>"
	         "<th>Modified (UTC)</th></tr></thead>\n<tbody>\n");
	if (!root)
		puts_(o, "<tr><td><a href=\"../\">../</a></td><td>-</td><td></td></tr>\n");
}

void autoindex_entry(struct autoindex_out *o, enum autoindex_format f,
                     const struct autoindex_entry *e, size_t i)
{
	if (f == AUTOINDEX_JSON) {
		puts_(o, i ? ",\n{\"name\":\"" : "\n{\"name\":\"");
		json_text(o, e->name, e->name_len);
		puts_(o, "\",\"href\":\"");
		href(o, e);
		puts_(o, e->is_dir ? "\",\"type\":\"directory\",\"size\":null"
		                   : "\",\"type\":\"file\",\"size\":");
		if (!e->is_dir)
			number(o, e->size);
		puts_(o, ",\"mtime\":\"");
		rfc3339(o, e->mtime);
		puts_(o, "\"}");
		return;
	}
	puts_(o, "<tr><td><a href=\"");
	href(o, e);
	puts_(o, "\">");
	html_text(o, e->name, e->name_len);
	puts_(o, e->is_dir ? "/</a></td><td>-" : "</a></td><td>");
	if (!e->is_dir)
		number(o, e->size);
	puts_(o, "</td><td>");
	rfc3339(o, e->mtime);
	puts_(o, "</td></tr>\n");
}

void autoindex_end(struct autoindex_out *o, enum autoindex_format f)
{
	puts_(o, f == AUTOINDEX_JSON ? "\n]\n" : "</tbody>\n</table>\n</body>\n</html>\n");
}
