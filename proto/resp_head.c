#include "proto/resp_head.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

#include "proto/httpdate.h"
#include "proto/numfmt.h"
#include "proto/status.h"

#define NAME(h1, h2) {h1, h2, sizeof(h1) - 1}
/* A string literal's length, known at compile time. */
#define LIT(s) (s), (sizeof(s) - 1)
static const struct {
	const char *h1, *h2;
	size_t len; /* the same for both spellings */
} names[] = {
    [RESP_SERVER] = NAME("Server", "server"),
    [RESP_DATE] = NAME("Date", "date"),
    [RESP_CONTENT_TYPE] = NAME("Content-Type", "content-type"),
    [RESP_CONTENT_LENGTH] = NAME("Content-Length", "content-length"),
    [RESP_LAST_MODIFIED] = NAME("Last-Modified", "last-modified"),
    [RESP_ETAG] = NAME("ETag", "etag"),
    [RESP_CONTENT_RANGE] = NAME("Content-Range", "content-range"),
    [RESP_ACCEPT_RANGES] = NAME("Accept-Ranges", "accept-ranges"),
    [RESP_ALLOW] = NAME("Allow", "allow"),
    [RESP_LOCATION] = NAME("Location", "location"),
    [RESP_CONNECTION] = NAME("Connection", "connection"),
    [RESP_CONTENT_ENCODING] = NAME("Content-Encoding", "content-encoding"),
    [RESP_VARY] = NAME("Vary", "vary"),
    [RESP_CACHE_CONTROL] = NAME("Cache-Control", "cache-control"),
};
#undef NAME

const char *resp_name_h1(enum resp_name name)
{
	return names[name].h1;
}

const char *resp_name_h2(enum resp_name name)
{
	return names[name].h2;
}

size_t resp_name_len(enum resp_name name)
{
	return names[name].len;
}

static void resp_head_add_len(struct resp_head *h, enum resp_name name, const char *value,
			      size_t len)
{
	if (h->n == RESP_HEAD_MAX_FIELDS) {
		h->overflow = true;
		return;
	}
	h->f[h->n].name = name;
	h->f[h->n].value = value;
	h->f[h->n].value_len = len;
	h->n++;
}

void resp_head_init(struct resp_head *h, int status, const char *date)
{
	/* Our statuses have three digits; anything else would be a bug, and
	 * is written as 500 rather than overflow. */
	if (status < 100 || status > 999)
		status = 500;
	h->status = status;
	h->status_text[0] = (char)('0' + status / 100);
	h->status_text[1] = (char)('0' + status / 10 % 10);
	h->status_text[2] = (char)('0' + status % 10);
	h->status_text[3] = '\0';
	h->content_length[0] = '\0';
	h->n = 0;
	h->overflow = false;
	h->extras = (struct resp_extras){0};
	resp_head_add_len(h, RESP_SERVER, LIT("ktlsd"));
	resp_head_add(h, RESP_DATE, date);
}

void resp_head_add(struct resp_head *h, enum resp_name name, const char *value)
{
	resp_head_add_len(h, name, value, strlen(value));
}

static void add_length(struct resp_head *h, unsigned long long len)
{
	size_t n = numfmt_u64(h->content_length, len);

	h->content_length[n] = '\0';
	resp_head_add_len(h, RESP_CONTENT_LENGTH, h->content_length, n);
}

void resp_head_file(struct resp_head *h, const struct static_response *sr, const char *date)
{
	resp_head_init(h, sr->status, date);
	if (sr->content_type)
		resp_head_add(h, RESP_CONTENT_TYPE, sr->content_type);
	if (sr->content_encoding)
		resp_head_add(h, RESP_CONTENT_ENCODING, sr->content_encoding);
	/* A 304 describes the representation without a length (RFC 9110 15.4.5). */
	if (sr->status != 304)
		add_length(h, (unsigned long long)sr->content_length);
	if (sr->status == 200 || sr->status == 206 || sr->status == 304) {
		resp_head_add_len(h, RESP_LAST_MODIFIED, sr->last_modified, HTTPDATE_LEN);
		resp_head_add(h, RESP_ETAG, sr->etag);
	}
	/* 15.4.5 wants Vary on a 304 too: it is what the 200 would say. */
	if (sr->vary)
		resp_head_add_len(h, RESP_VARY, LIT("Accept-Encoding"));
	if (sr->content_range[0])
		resp_head_add(h, RESP_CONTENT_RANGE, sr->content_range);
	resp_head_add_len(h, RESP_ACCEPT_RANGES, LIT("bytes"));
}

void resp_head_page(struct resp_head *h, int status, const char *date, size_t page_len,
		    const char *location)
{
	resp_head_init(h, status, date);
	resp_head_add(h, RESP_CONTENT_TYPE, "text/html; charset=utf-8");
	add_length(h, (unsigned long long)page_len);
	if (status == 405)
		resp_head_add(h, RESP_ALLOW, "GET, HEAD");
	if (location)
		resp_head_add(h, RESP_LOCATION, location);
}

void resp_head_extras(struct resp_head *h, const struct resp_extras *x)
{
	if (h->status < 200 || h->status >= 400)
		return;
	h->extras = *x;
	/* A site's field replaces ktlsd's own of the same name (a listing's
	 * Cache-Control: no-cache under a site's "Cache-Control: public,
	 * max-age=300"): two would contradict, and RFC 9111 5.2 leaves a
	 * cache to pick. The others ktlsd sets a site may not name
	 * (config_value_header). */
	for (size_t j = 0; j < x->n; j++)
		for (size_t i = 0; i < h->n; i++) {
			const char *ours = names[h->f[i].name].h1;
			if (names[h->f[i].name].len != x->f[j].name_len ||
			    strncasecmp(ours, x->f[j].name_h1, x->f[j].name_len) != 0)
				continue;
			memmove(&h->f[i], &h->f[i + 1], (h->n - i - 1) * sizeof(h->f[0]));
			h->n--;
			break;
		}
}

void resp_head_listing(struct resp_head *h, const char *date, const char *content_type,
		       unsigned long long body_len)
{
	resp_head_init(h, 200, date);
	resp_head_add(h, RESP_CONTENT_TYPE, content_type);
	add_length(h, body_len);
	resp_head_add_len(h, RESP_VARY, LIT("Accept"));
	resp_head_add_len(h, RESP_CACHE_CONTROL, LIT("no-cache"));
}

void resp_head_challenge(struct resp_head *h, const char *date, size_t body_len)
{
	resp_head_init(h, 200, date);
	resp_head_add_len(h, RESP_CONTENT_TYPE, LIT("text/plain"));
	add_length(h, (unsigned long long)body_len);
	resp_head_add_len(h, RESP_CACHE_CONTROL, LIT("no-store"));
}

/* Appends n bytes of p at *len if they fit with a NUL after them. */
static bool put(char *out, size_t cap, size_t *len, const char *p, size_t n)
{
	if (n >= cap - *len)
		return false;
	memcpy(out + *len, p, n);
	*len += n;
	return true;
}

ssize_t resp_head_h1(const struct resp_head *h, char *out, size_t cap)
{
	size_t len = 0;
	const char *reason = status_reason(h->status);

	if (h->overflow || cap == 0)
		return -ENOSPC;
	if (!put(out, cap, &len, "HTTP/1.1 ", 9) || !put(out, cap, &len, h->status_text, 3) ||
	    !put(out, cap, &len, " ", 1) || !put(out, cap, &len, reason, strlen(reason)) ||
	    !put(out, cap, &len, "\r\n", 2))
		return -ENOSPC;
	for (size_t i = 0; i < h->n; i++) {
		const char *name = names[h->f[i].name].h1;
		if (!put(out, cap, &len, name, names[h->f[i].name].len) ||
		    !put(out, cap, &len, ": ", 2) ||
		    !put(out, cap, &len, h->f[i].value, h->f[i].value_len) ||
		    !put(out, cap, &len, "\r\n", 2))
			return -ENOSPC;
	}
	for (size_t i = 0; i < h->extras.n; i++) {
		const struct resp_extra *x = &h->extras.f[i];
		if (!put(out, cap, &len, x->name_h1, x->name_len) || !put(out, cap, &len, ": ", 2) ||
		    !put(out, cap, &len, x->value, x->value_len) || !put(out, cap, &len, "\r\n", 2))
			return -ENOSPC;
	}
	if (!put(out, cap, &len, "\r\n", 2))
		return -ENOSPC;
	out[len] = '\0';
	return (ssize_t)len;
}
