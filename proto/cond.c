/* Validators and conditional requests for GET/HEAD (RFC 9110 8.8, 13). */
#include "proto/cond.h"

#include <string.h>

#include "proto/httpdate.h"
#include "proto/numfmt.h"

/* An entity-tag split into its weakness and its opaque-tag (quotes included). */
struct etag_view {
	const char *opaque;
	size_t len;
	bool weak;
};

void etag_format(char *out, size_t outsz, uint64_t ino, uint64_t size, int64_t mtime_sec,
                 long mtime_nsec, bool recent)
{
	char tag[ETAG_MAX];
	size_t n = 0;

	if (outsz == 0)
		return;
	tag[n++] = '"';
	/* Unsigned: a pre-1970 mtime wraps (still a stable tag). */
	n += numfmt_hex64(tag + n, (uint64_t)mtime_sec);
	tag[n++] = '-';
	n += numfmt_hex64(tag + n, size);
	if (recent) {
		tag[n++] = '-';
		n += numfmt_hex64(tag + n, ino);
		tag[n++] = '-';
		n += numfmt_hex64(tag + n, (uint64_t)mtime_nsec);
	}
	tag[n++] = '"';
	if (n >= outsz)
		n = outsz - 1;
	memcpy(out, tag, n);
	out[n] = '\0';
}

static bool is_ows(char c)
{
	return c == ' ' || c == '\t';
}

static void trim_ows(const char **p, const char **end)
{
	while (*p < *end && is_ows(**p))
		(*p)++;
	while (*end > *p && is_ows((*end)[-1]))
		(*end)--;
}

/* entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE, etagc = %x21 / %x23-7E / obs-text. */
static bool parse_etag(const char **pp, const char *end, struct etag_view *t)
{
	const char *p = *pp, *start;

	t->weak = end - p >= 2 && p[0] == 'W' && p[1] == '/';
	if (t->weak)
		p += 2;
	if (p == end || *p != '"')
		return false;
	start = p++;
	for (; p < end && *p != '"'; p++) {
		unsigned char c = (unsigned char)*p;

		if (c < 0x21 || c == 0x7f)
			return false;
	}
	if (p == end)
		return false;
	p++;
	t->opaque = start;
	t->len = (size_t)(p - start);
	*pp = p;
	return true;
}

/* The current tag as given by the caller; tolerated if it is not well formed
 * (compared byte for byte) so a bad tag can never make us crash or match "". */
static void current_etag(const char *etag, struct etag_view *t)
{
	const char *p = etag;

	if (parse_etag(&p, etag + strlen(etag), t) && *p == '\0')
		return;
	t->opaque = etag;
	t->len = strlen(etag);
	t->weak = false;
}

/* RFC 9110 8.8.3.2: strong comparison needs both tags strong; weak comparison
 * only looks at the opaque-tags. */
static bool etag_equal(const struct etag_view *a, const struct etag_view *b, bool strong)
{
	if (strong && (a->weak || b->weak))
		return false;
	return a->len == b->len && memcmp(a->opaque, b->opaque, a->len) == 0;
}

/* "*" / #entity-tag. "*" matches whenever a representation exists, which it
 * does here. A malformed list matches nothing: for If-Match that means 412,
 * the safe side; for If-None-Match a full 200, which is always correct. */
static bool etag_list_matches(const char *v, size_t len, const char *etag, bool strong)
{
	const char *p = v, *end = v + len;
	struct etag_view cur, t;
	bool matched = false;

	trim_ows(&p, &end);
	if (end - p == 1 && *p == '*')
		return true;
	if (etag == NULL)
		return false;
	current_etag(etag, &cur);
	while (p < end) {
		if (*p == ',' || is_ows(*p)) {
			p++;
			continue;
		}
		if (!parse_etag(&p, end, &t))
			return false;
		if (etag_equal(&t, &cur, strong))
			matched = true;
		while (p < end && is_ows(*p))
			p++;
		if (p < end && *p != ',')
			return false;
	}
	return matched;
}

static bool parse_date(const char *v, size_t len, time_t *out)
{
	const char *p = v, *end = v + len;

	trim_ows(&p, &end);
	return httpdate_parse(p, (size_t)(end - p), out) == 0;
}

enum cond_result cond_evaluate(const struct cond_headers *h, const char *etag, time_t mtime)
{
	time_t date;

	if (h->if_match) {
		if (!etag_list_matches(h->if_match, h->if_match_len, etag, true))
			return COND_PRECONDITION_FAILED;
	} else if (h->if_unmodified_since &&
	           parse_date(h->if_unmodified_since, h->if_unmodified_since_len, &date) &&
	           mtime > date) {
		return COND_PRECONDITION_FAILED;
	}
	if (h->if_none_match) {
		if (etag_list_matches(h->if_none_match, h->if_none_match_len, etag, false))
			return COND_NOT_MODIFIED;
	} else if (h->if_modified_since &&
	           parse_date(h->if_modified_since, h->if_modified_since_len, &date) &&
	           date <= time(NULL) && mtime <= date) {
		/* RFC 9110 13.1.3: a date later than our clock is invalid and
		 * ignored, else a client with a fast clock would get 304s for
		 * files changed after its bogus date. */
		return COND_NOT_MODIFIED;
	}
	return COND_PROCEED;
}

/* RFC 9110 13.1.5: an entity-tag is told from a date by its first characters
 * (DQUOTE or W/; a date may start with "Wed"). Only strong tags count; a date
 * counts when it equals Last-Modified to the second. A date cannot tell two
 * writes within one second apart — that is the weakness of date validators,
 * and why clients should prefer the ETag, which carries nanoseconds. */
bool cond_if_range_matches(const char *value, size_t len, const char *etag, time_t mtime)
{
	const char *p = value, *end = value + len;
	struct etag_view t, cur;
	time_t date;

	trim_ows(&p, &end);
	if (p < end && (*p == '"' || (end - p >= 2 && p[0] == 'W' && p[1] == '/'))) {
		if (etag == NULL || !parse_etag(&p, end, &t) || p != end)
			return false;
		current_etag(etag, &cur);
		return etag_equal(&t, &cur, true);
	}
	return parse_date(p, (size_t)(end - p), &date) && date == mtime;
}
