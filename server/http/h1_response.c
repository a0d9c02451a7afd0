/* HTTP/1.1's responses: from a parsed request to its status line, headers
 * and body (a file by body_send.c, a listing by the lister, a page), and
 * the access log line once it is done (h1_conn-int.h). */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/autoindex.h"
#include "proto/resp_head.h"
#include "proto/status.h"
#include "server/core/access_log.h"
#include "server/core/filecache.h"
#include "server/core/log.h"
#include "server/core/stats.h"
#include "server/http/body_send.h"
#include "server/http/conn.h"
#include "server/http/h1_conn-int.h"
#include "server/http/lister.h"
#include "server/http/resolve.h"
#include "server/http/worker-t.h"
#include "server/net/sock.h"

#define HEAD_MAX 2048

static char *h1_out_reserve(struct conn *c, size_t need)
{
	size_t room;
	return sock_out_reserve(c->sock, need, &room);
}


/* The Connection field HTTP/1.1 needs, or NULL. */
static const char *connection_value(const struct conn *c)
{
	const struct h1_request *req = &h1_exchange_of(c)->parser->req;
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

/* "HTTP/x.y", as the request line said it (llhttp takes one digit each),
 * NUL-terminated, into 9 bytes; returns its length. */
static size_t request_version(const struct h1_request *req, char *out)
{
	memcpy(out, "HTTP/", 5);
	out[5] = (char)('0' + req->version_major % 10);
	out[6] = '.';
	out[7] = (char)('0' + req->version_minor % 10);
	out[8] = '\0';
	return 8;
}

/* "METHOD TARGET HTTP/x.y" for error messages, the
 * client's bytes escaped (access_log_escape) so they cannot forge fields or
 * lines; a long target is cut so the version always fits. */
static void log_request_line(struct conn *c, const char *method)
{
	struct h1_exchange *x = h1_exchange_of(c);
	const struct h1_request *req = &x->parser->req;
	char *out = x->resp->request_line;
	char version[16] = " ";
	size_t vn = 1 + request_version(req, version + 1);

	size_t room = sizeof(x->resp->request_line) - vn;
	size_t n = access_log_escape(out, room - 1, method, strlen(method));
	out[n++] = ' ';
	if (req->target.ptr)
		n += access_log_escape(out + n, room - n, req->target.ptr, req->target.len);
	else
		n += access_log_escape(out + n, room - n, "-", 1);
	memcpy(out + n, version, vn + 1);
}

/* A response with a small generated body (errors, redirects): head and body
 * go out together; the connection may stay open unless the caller said so.
 * The head has room for a Location whatever its length (it can be 12 KiB). */
/* A generated page: an error, or a 301 to location with the site's extra
 * fields (extras, NULL for an error). */
static void respond_page(struct conn *c, int status, const char *location,
			 const struct resp_extras *extras)
{
	struct h1_exchange *x = h1_exchange_of(c);
	char own[512];
	const struct resp_page *site_page = resp_extras_page(extras, status);
	const char *page = site_page ? site_page->body : own;
	size_t plen = site_page ? site_page->len : status_page(status, own, sizeof(own));
	bool head = x->parser->req.method == H1_HEAD && x->parser->error_status == 0;
	size_t cap = HEAD_MAX + (location ? strlen(location) : 0) + (extras ? extras->h1_bytes : 0);
	char *out = h1_out_reserve(c, cap + plen);
	struct resp_head h;

	x->resp->status = status;
	if (!out) {
		conn_abort_as(c, ACCESS_END_ERROR, "no room for a response head");
		return;
	}
	resp_head_page(&h, status, clock_date(&c->w->clock), plen, location);
	if (extras)
		resp_head_extras(&h, extras);
	ssize_t len = head_write(c, &h, out, cap);
	if (len < 0) { /* cannot happen: HEAD_MAX covers the fixed part */
		conn_abort_as(c, ACCESS_END_ERROR, "response head too large");
		return;
	}
	x->resp->head_len = (uint64_t)len;
	x->resp->body_len = head ? 0 : plen;
	if (!head) {
		memcpy(out + len, page, plen);
		len += (ssize_t)plen;
	}
	sock_out_commit(c->sock, (size_t)len);
}

/* An ACME HTTP-01 answer (resolve_challenge): head and key authorization
 * go out together, as a page does. */
static void respond_challenge(struct conn *c, const struct static_target *res)
{
	struct h1_exchange *x = h1_exchange_of(c);
	bool head = x->parser->req.method == H1_HEAD;
	char *out = h1_out_reserve(c, HEAD_MAX + res->key_authz_len);
	struct resp_head h;

	x->resp->status = 200;
	if (!out) {
		conn_abort_as(c, ACCESS_END_ERROR, "no room for a response head");
		return;
	}
	resp_head_challenge(&h, clock_date(&c->w->clock), res->key_authz_len);
	ssize_t len = head_write(c, &h, out, HEAD_MAX);
	if (len < 0) { /* cannot happen: a fixed set of short fields */
		conn_abort_as(c, ACCESS_END_ERROR, "response head too large");
		return;
	}
	x->resp->head_len = (uint64_t)len;
	x->resp->body_len = head ? 0 : res->key_authz_len;
	if (!head) {
		memcpy(out + len, res->key_authz, res->key_authz_len);
		len += (ssize_t)res->key_authz_len;
	}
	sock_out_commit(c->sock, (size_t)len);
}

static void respond_file(struct conn *c, const struct static_target *res)
{
	struct h1_exchange *x = h1_exchange_of(c);
	struct response *r = x->resp;
	struct static_response *sr = &r->sr;
	struct static_request sreq;
	int fd = res->fd;
	struct resp_head h;
	char *out;

	r->file = res->file;
	h1_static_request(&x->parser->req, &sreq);
	static_file_respond(&sreq, &r->file, c->w->boundary_seed++, sr);
	r->status = sr->status;

	size_t cap = HEAD_MAX + res->extras.h1_bytes;
	out = h1_out_reserve(c, cap);
	if (!out) {
		filecache_release(&c->w->files, fd);
		conn_abort_as(c, ACCESS_END_ERROR, "no room for a response head");
		return;
	}
	resp_head_file(&h, sr, clock_date(&c->w->clock));
	resp_head_extras(&h, &res->extras);
	ssize_t len = head_write(c, &h, out, cap);
	if (len < 0) {
		/* Only a Content-Type from --mime-types can be this long:
		 * nothing of this head was committed, so answer 500 in its
		 * place and keep the connection as it was. */
		filecache_release(&c->w->files, fd);
		log_msg(LOG_ERROR, "\"%s\": response head over %d bytes (Content-Type?): 500",
			r->request_line, HEAD_MAX);
		respond_page(c, 500, NULL, NULL);
		return;
	}
	sock_out_commit(c->sock, (size_t)len);
	r->head_len = (uint64_t)len;

	if (sr->send_body && sr->content_length > 0) {
		r->body_len = sr->content_length;
		body_send_start(c, fd, res->mem);
	} else {
		filecache_release(&c->w->files, fd);
	}
}

/* The listing is made (lister.h): its head now, its body from the memfd
 * as a file's, by body_send.c. Ranges and validators do not apply: a
 * listing is made afresh for each request (200, no ETag). */
static void respond_listing(struct conn *c, struct lister_job *job)
{
	struct h1_exchange *x = h1_exchange_of(c);
	struct response *r = x->resp;
	const char *type = autoindex_content_type(job->format);
	bool head = x->parser->req.method == H1_HEAD;
	struct resp_head h;
	char *out;

	memset(&r->sr, 0, sizeof(r->sr));
	r->sr.status = r->status = 200;
	r->sr.content_type = type;
	r->sr.content_length = job->size;
	r->sr.send_body = !head;
	r->file = (struct static_file){.size = job->size, .content_type = type};
	size_t cap = HEAD_MAX + r->extras.h1_bytes;
	out = h1_out_reserve(c, cap);
	if (!out) {
		conn_abort_as(c, ACCESS_END_ERROR, "no room for a response head");
		return;
	}
	resp_head_listing(&h, clock_date(&c->w->clock), type, job->size);
	resp_head_extras(&h, &r->extras);
	ssize_t len = head_write(c, &h, out, cap);
	if (len < 0) { /* cannot happen: a fixed set of short fields */
		conn_abort_as(c, ACCESS_END_ERROR, "response head too large");
		return;
	}
	sock_out_commit(c->sock, (size_t)len);
	r->head_len = (uint64_t)len;
	if (!head && job->size > 0) {
		r->body_len = job->size;
		filecache_adopt(&c->w->files, job->fd);
		body_send_start(c, job->fd, NULL);
		job->fd = -1; /* the response's now */
	}
}

/* The listing thread is done with job (on the worker's thread). */
static void listing_back(struct lister_job *job)
{
	struct conn *c = job->owner;
	struct sock *s = c->sock;

	h1_exchange_of(c)->resp->listing = NULL;
	if (!sock_closed(s) && c->state == CONN_PROTO) {
		if (job->status)
			respond_page(c, job->status, NULL, NULL);
		else
			respond_listing(c, job);
		conn_drive(c); /* the exchange pumps, and finishes when all is out */
	}
	lister_job_free(job);
	sock_release(s); /* may free c */
}

/* Hands the folder to the worker's listing thread; the response waits. */
static void start_listing(struct conn *c, const struct static_target *res)
{
	struct h1_exchange *x = h1_exchange_of(c);
	const struct h1_request *req = &x->parser->req;
	enum autoindex_format f =
	    autoindex_negotiate(req->target.ptr, req->target.len, req->accept.ptr, req->accept.len);
	struct lister_job *job = resolve_listing(res, f);
	int rc = job ? 0 : -ENOMEM;

	if (job) {
		job->done = listing_back;
		job->owner = c;
		rc = lister_submit(&c->w->lister, job);
	}
	if (rc < 0) {
		lister_job_free(job);
		respond_page(c, rc == -EAGAIN ? 503 : 500, NULL, NULL);
		return;
	}
	x->resp->listing = job;
	x->resp->extras = res->extras;
	x->resp->status = 200; /* what the log says if the client goes first */
	sock_hold(c->sock);
}

/* A status whose answer names a Location (static_target's). */
static bool is_redirect(int status)
{
	return status == 301 || status == 302 || status == 307 || status == 308;
}

void h1_on_request(struct conn *c)
{
	const struct h1_request *req = &h1_exchange_of(c)->parser->req;
	struct static_target resbuf, *res = &resbuf;

	log_request_line(c, req->method_name);
	c->close_after = !req->keep_alive || req->has_body;

	/* --limit-conn: this client has its connections already. */
	if (c->over_limit) {
		c->close_after = true;
		respond_page(c, 429, NULL, NULL);
		return;
	}

	/* What names the site: Host, or an absolute-form target (400 or 421
	 * when neither can, see h1_request_authority). */
	const char *host;
	size_t host_len;
	int refused = h1_request_authority(req, sock_is_tls(c->sock), &host, &host_len);
	if (refused) {
		c->close_after = c->close_after || refused == 400;
		respond_page(c, refused, NULL, NULL);
		return;
	}
	if (req->method == H1_OTHER) {
		c->close_after = c->close_after || req->has_body;
		respond_page(c, 405, NULL, NULL);
		return;
	}
	const struct static_ask ask = {
	    .target = req->target.ptr,
	    .target_len = req->target.len,
	    .host = host,
	    .host_len = host_len,
	    .accept_encoding = req->accept_encoding.ptr,
	    .ae_len = req->accept_encoding.len,
	};
	conn_resolve(c, &ask, res);
	h1_exchange_of(c)->resp->site = res->root;
	if (res->status == STATIC_LIST_DIR) {
		start_listing(c, res);
	} else if (res->status == STATIC_ACME_CHALLENGE) {
		respond_challenge(c, res);
	} else if (res->status) {
		respond_page(c, res->status, is_redirect(res->status) ? res->location : NULL, &res->extras);
	} else {
		respond_file(c, res);
	}
}

void h1_on_parse_error(struct conn *c, int status)
{
	const struct h1_exchange *x = h1_exchange_of(c);
	const struct h1_request *req = &x->parser->req;

	log_request_line(c, req->method_name[0] ? req->method_name : "-");
	if (status == 431)
		c->w->stats.limits[STAT_LIMIT_HEADER]++;
	else if (status == 414)
		c->w->stats.limits[STAT_LIMIT_URI]++;
	log_msg(LOG_DEBUG, "%s: bad request (%d): %s", c->peer_text, status,
		x->parser->error_reason ? x->parser->error_reason : "?");
	c->close_after = true;
	respond_page(c, status ? status : 400, NULL, NULL);
}

/* The response's access-log line, however it ended. Bytes are counted as
 * the body produced them; a response that did not finish is held to what
 * the socket took. With user-space TLS the socket's count is ciphertext,
 * 22 to 29 bytes per 16 KiB record more than the plaintext (0.2% at most):
 * an unfinished body is logged that much long. */
void h1_on_response_done(struct conn *c, enum access_end end)
{
	static const char *const path_names[] = {
	    [BODY_PATH_NONE] = "none", [BODY_PATH_COPY] = "copy", [BODY_PATH_SPLICE] = "splice"};
	const struct h1_exchange *x = h1_exchange_of(c);
	const struct h1_request *req = &x->parser->req;
	const struct response *r = x->resp;
	char version[9];

	uint64_t left = r->body.remaining < r->body_len ? r->body.remaining : r->body_len;
	uint64_t sent = r->head_len + r->body_len - left;
	if (end != ACCESS_END_COMPLETE && end != ACCESS_END_TRUNCATED) {
		uint64_t wire = sock_bytes_sent(c->sock) - r->bytes_base;
		sent = wire < sent ? wire : sent;
	}
	uint64_t body_bytes = sent > r->head_len ? sent - r->head_len : 0;
	uint64_t duration_ms = c->w->clock.now_ms - r->start_ms;

	stats_count_response(&c->w->stats, STAT_HTTP1, r->status);
	stats_count_site(&c->w->stats, resolve_site_slot(r->site), r->status, body_bytes,
			 duration_ms);
	if (c->w->alog.fd < 0)
		return;
	request_version(req, version);
	struct access_record rec = {
	    .when = (time_t)c->w->clock.now_sec,
	    .client = c->peer_text,
	    .method = req->method_name[0] ? req->method_name : NULL,
	    .method_len = strlen(req->method_name),
	    .target = req->target.ptr,
	    .target_len = req->target.len,
	    .version = version,
	    .referer = req->referer.ptr,
	    .referer_len = req->referer.len,
	    .user_agent = req->user_agent.ptr,
	    .user_agent_len = req->user_agent.len,
	    .host = req->host.ptr,
	    .host_len = req->host.len,
	    .status = r->status,
	    .body_bytes = body_bytes,
	    .sent_bytes = sent,
	    .duration_ms = duration_ms,
	    .protocol = "HTTP/1.1",
	    .body_path = path_names[r->path],
	    .encoding = r->file.content_encoding,
	    .site = resolve_site_name(r->site),
	    .end = end,
	};
	sock_log_tls(c->sock, &rec);
	access_log_write(&c->w->alog, &rec);
}
