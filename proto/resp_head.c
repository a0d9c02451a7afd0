#include "proto/resp_head.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "proto/status.h"

static const struct {
	const char *h1, *h2;
} names[] = {
    [RESP_SERVER] = {"Server", "server"},
    [RESP_DATE] = {"Date", "date"},
    [RESP_CONTENT_TYPE] = {"Content-Type", "content-type"},
    [RESP_CONTENT_LENGTH] = {"Content-Length", "content-length"},
    [RESP_LAST_MODIFIED] = {"Last-Modified", "last-modified"},
    [RESP_ETAG] = {"ETag", "etag"},
    [RESP_CONTENT_RANGE] = {"Content-Range", "content-range"},
    [RESP_ACCEPT_RANGES] = {"Accept-Ranges", "accept-ranges"},
    [RESP_ALLOW] = {"Allow", "allow"},
    [RESP_LOCATION] = {"Location", "location"},
    [RESP_CONNECTION] = {"Connection", "connection"},
};

const char *resp_name_h1(enum resp_name name)
{
	return names[name].h1;
}

const char *resp_name_h2(enum resp_name name)
{
	return names[name].h2;
}

void resp_head_init(struct resp_head *h, int status, const char *date)
{
	h->status = status;
	/* Our statuses have three digits; anything else would be a bug, and
	 * snprintf cuts it rather than overflow. */
	snprintf(h->status_text, sizeof(h->status_text), "%d", status);
	h->content_length[0] = '\0';
	h->n = 0;
	h->overflow = false;
	resp_head_add(h, RESP_SERVER, "ktlsd");
	resp_head_add(h, RESP_DATE, date);
}

void resp_head_add(struct resp_head *h, enum resp_name name, const char *value)
{
	if (h->n == RESP_HEAD_MAX_FIELDS) {
		h->overflow = true;
		return;
	}
	h->f[h->n].name = name;
	h->f[h->n].value = value;
	h->f[h->n].value_len = strlen(value);
	h->n++;
}

static void add_length(struct resp_head *h, unsigned long long len)
{
	snprintf(h->content_length, sizeof(h->content_length), "%llu", len);
	resp_head_add(h, RESP_CONTENT_LENGTH, h->content_length);
}

void resp_head_file(struct resp_head *h, const struct static_response *sr, const char *date)
{
	resp_head_init(h, sr->status, date);
	if (sr->content_type)
		resp_head_add(h, RESP_CONTENT_TYPE, sr->content_type);
	/* A 304 describes the representation without a length (RFC 9110 15.4.5). */
	if (sr->status != 304)
		add_length(h, (unsigned long long)sr->content_length);
	if (sr->status == 200 || sr->status == 206 || sr->status == 304) {
		resp_head_add(h, RESP_LAST_MODIFIED, sr->last_modified);
		resp_head_add(h, RESP_ETAG, sr->etag);
	}
	if (sr->content_range[0])
		resp_head_add(h, RESP_CONTENT_RANGE, sr->content_range);
	resp_head_add(h, RESP_ACCEPT_RANGES, "bytes");
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
	int n;

	if (h->overflow || cap == 0)
		return -ENOSPC;
	n = snprintf(out, cap, "HTTP/1.1 %d %s\r\n", h->status, status_reason(h->status));
	if (n < 0 || (size_t)n >= cap)
		return -ENOSPC;
	len = (size_t)n;
	for (size_t i = 0; i < h->n; i++) {
		const char *name = names[h->f[i].name].h1;
		if (!put(out, cap, &len, name, strlen(name)) || !put(out, cap, &len, ": ", 2) ||
		    !put(out, cap, &len, h->f[i].value, h->f[i].value_len) ||
		    !put(out, cap, &len, "\r\n", 2))
			return -ENOSPC;
	}
	if (!put(out, cap, &len, "\r\n", 2))
		return -ENOSPC;
	out[len] = '\0';
	return (ssize_t)len;
}
