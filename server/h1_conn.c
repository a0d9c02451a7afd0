#include "server/h1_conn.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ktls/tls.h"
#include "proto/status.h"
#include "server/body_send.h"
#include "server/conn.h"
#include "server/resolve.h"
#include "server/log.h"
#include "server/worker.h"

#define HEAD_MAX 2048

/* A response head being written into a reserved buffer: every piece is
 * checked against the room left, and once one does not fit the head is
 * marked too long and nothing more is written. */
struct head {
	char *buf;
	size_t cap, len;
	bool too_long;
};

__attribute__((format(printf, 2, 3))) static void head_add(struct head *h, const char *fmt, ...)
{
	va_list ap;

	if (h->too_long)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(h->buf + h->len, h->cap - h->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= h->cap - h->len) {
		h->too_long = true;
		return;
	}
	h->len += (size_t)n;
}

static const char *connection_header(const struct conn *c)
{
	const struct h1_request *req = &c->parser->req;
	if (c->close_after)
		return "Connection: close\r\n";
	if (req->version_major == 1 && req->version_minor == 0)
		return "Connection: keep-alive\r\n";
	return "";
}

/* "METHOD TARGET HTTP/x.y" for the access log and error messages, the
 * client's bytes escaped (access_log_escape) so they cannot forge fields or
 * lines; a long target is cut so the version always fits. */
static void log_request_line(struct conn *c, const char *method)
{
	const struct h1_request *req = &c->parser->req;
	char *out = c->resp.request_line;
	char version[16];
	int vn = snprintf(version, sizeof(version), " HTTP/%u.%u", req->version_major,
			  req->version_minor);

	if (vn < 0 || (size_t)vn >= sizeof(version))
		vn = 0; /* cannot happen: two small numbers */
	version[vn] = '\0';
	size_t room = sizeof(c->resp.request_line) - (size_t)vn;
	size_t n = access_log_escape(out, room - 1, method, strlen(method));
	out[n++] = ' ';
	if (req->target.ptr)
		n += access_log_escape(out + n, room - n, req->target.ptr, req->target.len);
	else
		n += access_log_escape(out + n, room - n, "-", 1);
	memcpy(out + n, version, (size_t)vn + 1);
}

/* A response with a small generated body (errors, redirects): head and body
 * go out together; the connection may stay open unless the caller said so.
 * The head has room for extra_headers whatever their length (a Location
 * can be 12 KiB). */
static void respond_page(struct conn *c, int status, const char *extra_headers)
{
	char page[512];
	size_t plen = status_page(status, page, sizeof(page));
	bool head = c->parser->req.method == H1_HEAD && c->parser->error_status == 0;
	size_t cap = HEAD_MAX + strlen(extra_headers);
	char *out = conn_out_reserve(c, cap + plen);
	struct head h = {.buf = out, .cap = cap};

	c->resp.status = status;
	if (!out) {
		conn_abort(c, "no room for a response head");
		return;
	}
	head_add(&h,
		 "HTTP/1.1 %d %s\r\nServer: ktlsd\r\nDate: %s\r\n"
		 "Content-Type: text/html; charset=utf-8\r\nContent-Length: %zu\r\n%s%s\r\n",
		 status, status_reason(status), worker_date(c->w), plen, extra_headers,
		 connection_header(c));
	if (h.too_long) { /* cannot happen: HEAD_MAX covers the fixed part */
		conn_abort(c, "response head too large");
		return;
	}
	if (!head) {
		memcpy(out + h.len, page, plen);
		h.len += plen;
	}
	conn_out_commit(c, h.len);
}

static void respond_file(struct conn *c, const struct static_target *res)
{
	struct response *r = &c->resp;
	struct static_response *sr = &r->sr;
	struct static_request sreq;
	int fd = res->fd;
	struct head h = {.cap = HEAD_MAX};

	r->file = res->file;
	h1_static_request(&c->parser->req, &sreq);
	static_file_respond(&sreq, &r->file, c->w->boundary_seed++, sr);
	r->status = sr->status;

	h.buf = conn_out_reserve(c, HEAD_MAX);
	if (!h.buf) {
		close(fd);
		conn_abort(c, "no room for a response head");
		return;
	}
	head_add(&h, "HTTP/1.1 %d %s\r\nServer: ktlsd\r\nDate: %s\r\n", sr->status,
		 status_reason(sr->status), worker_date(c->w));
	if (sr->content_type)
		head_add(&h, "Content-Type: %s\r\n", sr->content_type);
	if (sr->status != 304)
		head_add(&h, "Content-Length: %llu\r\n", (unsigned long long)sr->content_length);
	if (sr->status == 200 || sr->status == 206 || sr->status == 304)
		head_add(&h, "Last-Modified: %s\r\nETag: %s\r\n", sr->last_modified, sr->etag);
	if (sr->content_range[0])
		head_add(&h, "Content-Range: %s\r\n", sr->content_range);
	head_add(&h, "Accept-Ranges: bytes\r\n%s\r\n", connection_header(c));
	if (h.too_long) {
		/* Only a Content-Type from --mime-types can be this long:
		 * nothing of this head was committed, so answer 500 in its
		 * place and keep the connection as it was. */
		close(fd);
		log_msg(LOG_ERROR, "\"%s\": response head over %d bytes (Content-Type?): 500",
			r->request_line, HEAD_MAX);
		respond_page(c, 500, "");
		return;
	}
	conn_out_commit(c, h.len);

	if (sr->send_body && sr->content_length > 0) {
		body_send_start(c, fd);
	} else {
		close(fd);
	}
}

void h1_on_request(struct conn *c)
{
	const struct h1_request *req = &c->parser->req;
	struct static_target resbuf, *res = &resbuf;

	c->w->stats.requests++;
	log_request_line(c, req->method_name);
	c->close_after = !req->keep_alive || req->has_body;

	/* RFC 9112 3.2: a 1.1 request without Host is answered 400. */
	if (req->version_minor >= 1 && !req->host.ptr) {
		c->close_after = true;
		respond_page(c, 400, "");
		return;
	}
	if (req->method == H1_OTHER) {
		c->close_after = c->close_after || req->has_body;
		respond_page(c, 405, "Allow: GET, HEAD\r\n");
		return;
	}
	resolve_target(c->w->srv, req->target.ptr, req->target.len, res);
	if (res->status == 301) {
		char loc[sizeof(res->location) + 16];
		int n = snprintf(loc, sizeof(loc), "Location: %s\r\n", res->location);
		if (n < 0 || (size_t)n >= sizeof(loc)) /* cannot happen: sized for it */
			respond_page(c, 500, "");
		else
			respond_page(c, 301, loc);
	} else if (res->status) {
		respond_page(c, res->status, "");
	} else {
		respond_file(c, res);
	}
}

void h1_on_parse_error(struct conn *c, int status)
{
	const struct h1_request *req = &c->parser->req;
	c->w->stats.requests++;
	log_request_line(c, req->method_name[0] ? req->method_name : "-");
	log_msg(LOG_DEBUG, "%s: bad request (%d): %s", c->peer_text, status,
		c->parser->error_reason ? c->parser->error_reason : "?");
	c->close_after = true;
	respond_page(c, status ? status : 400, "");
}

void h1_on_response_done(struct conn *c, bool aborted)
{
	struct access_log *al = &c->w->alog;
	char when[32];

	if (al->fd < 0)
		return;
	access_log_time(when);
	access_log_line(al, "%s [%s] \"%s\" %d %llu %.3f HTTP/1.1 %s %s %s%s", c->peer_text, when,
			c->resp.request_line, c->resp.status,
			(unsigned long long)c->resp.bytes_out,
			(double)(c->w->now_ms - c->resp.start_ms) / 1000.0,
			c->ssl ? tls_version_name(c->ssl) : "-",
			c->ssl ? tls_cipher_name(c->ssl) : "-", conn_path_name(c),
			aborted ? " aborted" : (c->resp.truncated ? " truncated" : ""));
}
