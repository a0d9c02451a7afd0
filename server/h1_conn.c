#include "server/h1_conn.h"

#include <errno.h>
#include <limits.h>
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
 * go out together; the connection may stay open unless the caller said so. */
static void respond_page(struct conn *c, int status, const char *extra_headers)
{
	char page[512];
	size_t plen = status_page(status, page, sizeof(page));
	bool head = c->parser->req.method == H1_HEAD && c->parser->error_status == 0;
	char *out = conn_out_reserve(c, HEAD_MAX + plen);

	c->resp.status = status;
	if (!out) {
		conn_abort(c, "no room for a response head");
		return;
	}
	int n = snprintf(out, HEAD_MAX,
			 "HTTP/1.1 %d %s\r\nServer: ktlsd\r\nDate: %s\r\n"
			 "Content-Type: text/html; charset=utf-8\r\nContent-Length: %zu\r\n%s%s\r\n",
			 status, status_reason(status), worker_date(c->w), plen, extra_headers,
			 connection_header(c));
	if (n < 0 || n >= HEAD_MAX) {
		conn_abort(c, "response head too large");
		return;
	}
	if (!head) {
		memcpy(out + n, page, plen);
		n += (int)plen;
	}
	conn_out_commit(c, (size_t)n);
}

static void respond_file(struct conn *c, const struct resolved *res)
{
	struct response *r = &c->resp;
	struct static_response *sr = &r->sr;
	struct static_request sreq;
	int fd = res->fd;
	char *out;
	int n;

	resolve_static_file(c->w->srv, res, &r->file);
	h1_static_request(&c->parser->req, &sreq);
	static_file_respond(&sreq, &r->file, c->w->boundary_seed++, sr);
	r->status = sr->status;

	out = conn_out_reserve(c, HEAD_MAX);
	if (!out) {
		close(fd);
		conn_abort(c, "no room for a response head");
		return;
	}
	n = snprintf(out, HEAD_MAX, "HTTP/1.1 %d %s\r\nServer: ktlsd\r\nDate: %s\r\n", sr->status,
		     status_reason(sr->status), worker_date(c->w));
	if (sr->content_type)
		n += snprintf(out + n, HEAD_MAX - (size_t)n, "Content-Type: %s\r\n",
			      sr->content_type);
	if (sr->status != 304)
		n += snprintf(out + n, HEAD_MAX - (size_t)n, "Content-Length: %llu\r\n",
			      (unsigned long long)sr->content_length);
	if (sr->status == 200 || sr->status == 206 || sr->status == 304)
		n += snprintf(out + n, HEAD_MAX - (size_t)n, "Last-Modified: %s\r\nETag: %s\r\n",
			      sr->last_modified, sr->etag);
	if (sr->content_range[0])
		n += snprintf(out + n, HEAD_MAX - (size_t)n, "Content-Range: %s\r\n",
			      sr->content_range);
	n += snprintf(out + n, HEAD_MAX - (size_t)n, "Accept-Ranges: bytes\r\n%s\r\n",
		      connection_header(c));
	conn_out_commit(c, (size_t)n);

	if (sr->send_body && sr->content_length > 0) {
		body_send_start(c, fd);
	} else {
		close(fd);
	}
}

void h1_on_request(struct conn *c)
{
	const struct h1_request *req = &c->parser->req;
	struct resolved resbuf, *res = &resbuf;

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
		snprintf(loc, sizeof(loc), "Location: %s\r\n", res->location);
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
