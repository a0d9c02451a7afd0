#include "server/h1_conn.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proto/resp_head.h"
#include "proto/status.h"
#include "server/body_send.h"
#include "server/conn.h"
#include "server/resolve.h"
#include "server/sock.h"
#include "server/log.h"
#include "server/worker.h"

#define HEAD_MAX 2048

/* The Connection field HTTP/1.1 needs, or NULL. */
static const char *connection_value(const struct conn *c)
{
	const struct h1_request *req = &c->parser->req;
	if (c->close_after)
		return "close";
	if (req->version_major == 1 && req->version_minor == 0)
		return "keep-alive";
	return NULL;
}

/* Serializes h, with the Connection field, into the room reserved at out;
 * -ENOSPC when it does not fit (nothing is committed then). */
static ssize_t head_write(struct conn *c, struct resp_head *h, char *out, size_t cap)
{
	const char *connection = connection_value(c);

	if (connection)
		resp_head_add(h, RESP_CONNECTION, connection);
	return resp_head_h1(h, out, cap);
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
 * The head has room for a Location whatever its length (it can be 12 KiB). */
static void respond_page(struct conn *c, int status, const char *location)
{
	char page[512];
	size_t plen = status_page(status, page, sizeof(page));
	bool head = c->parser->req.method == H1_HEAD && c->parser->error_status == 0;
	size_t cap = HEAD_MAX + (location ? strlen(location) : 0);
	char *out = conn_out_reserve(c, cap + plen);
	struct resp_head h;

	c->resp.status = status;
	if (!out) {
		conn_abort(c, "no room for a response head");
		return;
	}
	resp_head_page(&h, status, worker_date(c->w), plen, location);
	ssize_t len = head_write(c, &h, out, cap);
	if (len < 0) { /* cannot happen: HEAD_MAX covers the fixed part */
		conn_abort(c, "response head too large");
		return;
	}
	if (!head) {
		memcpy(out + len, page, plen);
		len += (ssize_t)plen;
	}
	conn_out_commit(c, (size_t)len);
}

static void respond_file(struct conn *c, const struct static_target *res)
{
	struct response *r = &c->resp;
	struct static_response *sr = &r->sr;
	struct static_request sreq;
	int fd = res->fd;
	struct resp_head h;
	char *out;

	r->file = res->file;
	h1_static_request(&c->parser->req, &sreq);
	static_file_respond(&sreq, &r->file, c->w->boundary_seed++, sr);
	r->status = sr->status;

	out = conn_out_reserve(c, HEAD_MAX);
	if (!out) {
		close(fd);
		conn_abort(c, "no room for a response head");
		return;
	}
	resp_head_file(&h, sr, worker_date(c->w));
	ssize_t len = head_write(c, &h, out, HEAD_MAX);
	if (len < 0) {
		/* Only a Content-Type from --mime-types can be this long:
		 * nothing of this head was committed, so answer 500 in its
		 * place and keep the connection as it was. */
		close(fd);
		log_msg(LOG_ERROR, "\"%s\": response head over %d bytes (Content-Type?): 500",
			r->request_line, HEAD_MAX);
		respond_page(c, 500, NULL);
		return;
	}
	conn_out_commit(c, (size_t)len);

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
		respond_page(c, 400, NULL);
		return;
	}
	if (req->method == H1_OTHER) {
		c->close_after = c->close_after || req->has_body;
		respond_page(c, 405, NULL);
		return;
	}
	resolve_target(c->w->srv, req->target.ptr, req->target.len, res);
	if (res->status) {
		respond_page(c, res->status, res->status == 301 ? res->location : NULL);
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
	respond_page(c, status ? status : 400, NULL);
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
			(unsigned long long)conn_resp_bytes(c),
			(double)(c->w->now_ms - c->resp.start_ms) / 1000.0,
			sock_tls_version(c->sock), sock_tls_cipher(c->sock), conn_path_name(c),
			aborted ? " aborted" : (c->resp.truncated ? " truncated" : ""));
}
