/* An HTTP/2 stream's answer: the static-file decision, an error page, a
 * redirect or a directory listing, submitted to nghttp2 as a head and a
 * data provider (h2_stream.c answers for the DATA). See proto/h2_stream.h. */
#include "proto/h2_stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/authority.h"
#include "proto/resp_head.h"
#include "proto/status.h"

/* name is a static string (nghttp2 need not copy it); the value is copied. */
static void add_nv(nghttp2_nv *nv, size_t *n, const char *name, size_t name_len,
		   const char *value, size_t value_len)
{
	nv[*n].name = (uint8_t *)name;
	nv[*n].namelen = name_len;
	nv[*n].value = (uint8_t *)value;
	nv[*n].valuelen = value_len;
	nv[*n].flags = NGHTTP2_NV_FLAG_NO_COPY_NAME;
	(*n)++;
}

/* Hands the head to HPACK (nghttp2 copies the values) and, with body, the
 * data provider that answers for the rest. */
static int submit(struct h2_session *hs, struct h2_stream *s, const struct resp_head *h,
		  bool body)
{
	nghttp2_data_provider prd = {.source.ptr = s, .read_callback = h2_stream_read_data};
	nghttp2_nv nv[RESP_HEAD_MAX_FIELDS + RESP_EXTRA_MAX + 1];
	size_t n = 0;

	if (h->overflow)
		return NGHTTP2_ERR_INVALID_ARGUMENT; /* cannot happen: sized for our heads */
	add_nv(nv, &n, ":status", sizeof(":status") - 1, h->status_text, 3);
	for (size_t i = 0; i < h->n; i++)
		add_nv(nv, &n, resp_name_h2(h->f[i].name), resp_name_len(h->f[i].name),
		       h->f[i].value, h->f[i].value_len);
	for (size_t i = 0; i < h->extras.n; i++)
		add_nv(nv, &n, h->extras.f[i].name_h2, h->extras.f[i].name_len, h->extras.f[i].value,
		       h->extras.f[i].value_len);
	return nghttp2_submit_response(hs->ng, s->id, nv, n, body ? &prd : NULL);
}

static int respond_page(struct h2_session *hs, struct h2_stream *s, int status, bool head,
			const struct resp_extras *extras)
{
	struct resp_head h;

	const struct resp_page *site_page = resp_extras_page(extras, status);

	s->status = status;
	if (site_page) {
		/* The site's bytes: its configuration outlives the session's
		 * streams (the connection holds it). */
		s->page = site_page->body;
		s->page_len = site_page->len;
	} else {
		s->page_buf = malloc(512);
		if (!s->page_buf)
			return NGHTTP2_ERR_NOMEM;
		s->page_len = status_page(status, s->page_buf, 512);
		s->page = s->page_buf;
	}
	s->body.done = true;
	resp_head_page(&h, status, hs->env.date(hs->env.ctx), s->page_len,
		       s->location);
	if (extras)
		resp_head_extras(&h, extras);
	return submit(hs, s, &h, !head);
}

/* An ACME HTTP-01 answer (STATIC_ACME_CHALLENGE): the key authorization
 * as a page, copied, since res is gone when nghttp2 asks for the DATA. */
static int respond_challenge(struct h2_session *hs, struct h2_stream *s,
			     const struct static_target *res, bool head)
{
	struct resp_head h;

	s->status = 200;
	s->page_buf = malloc(res->key_authz_len + 1);
	if (!s->page_buf)
		return NGHTTP2_ERR_NOMEM;
	memcpy(s->page_buf, res->key_authz, res->key_authz_len);
	s->page = s->page_buf;
	s->page_len = res->key_authz_len;
	s->body.done = true;
	resp_head_challenge(&h, hs->env.date(hs->env.ctx), s->page_len);
	return submit(hs, s, &h, !head);
}

/* The stream can send now (its window and the connection's are open) and
 * a file slot is free: keep the fd the resolution opened. Otherwise close
 * it and open again when nghttp2 asks for the body. */
static bool can_keep_file(struct h2_session *hs, const struct h2_stream *s)
{
	return hs->open_files < H2_MAX_OPEN_FILES &&
	       nghttp2_session_get_stream_remote_window_size(hs->ng, s->id) > 0 &&
	       nghttp2_session_get_remote_window_size(hs->ng) > 0;
}

static int respond_file(struct h2_session *hs, struct h2_stream *s, struct static_target *res,
			bool head)
{
	struct static_request req = {.head = head};
	struct static_response *sr = &s->sr;
	struct resp_head h;

	req.cond.if_match = h2_field_value(s, &s->if_match);
	req.cond.if_match_len = s->if_match.len;
	req.cond.if_none_match = h2_field_value(s, &s->if_none_match);
	req.cond.if_none_match_len = s->if_none_match.len;
	req.cond.if_modified_since = h2_field_value(s, &s->if_modified_since);
	req.cond.if_modified_since_len = s->if_modified_since.len;
	req.cond.if_unmodified_since = h2_field_value(s, &s->if_unmodified_since);
	req.cond.if_unmodified_since_len = s->if_unmodified_since.len;
	req.range = h2_field_value(s, &s->range);
	req.range_len = s->range.len;
	req.if_range = h2_field_value(s, &s->if_range);
	req.if_range_len = s->if_range.len;

	s->file = res->file;
	static_file_respond(&req, &s->file, (*hs->env.boundary_seed)++, sr);
	s->status = sr->status;
	bool body = sr->send_body && sr->content_length > 0;
	if (body && sr->nranges > 1 && !(s->lit = malloc(STATIC_PART_HEADER_MAX))) {
		hs->env.close_file(hs->env.ctx, res->fd);
		return NGHTTP2_ERR_NOMEM;
	}
	if (body && can_keep_file(hs, s)) {
		s->file_fd = res->fd;
		s->mem = res->mem;
		s->counted_file = true;
		hs->open_files++;
	} else {
		hs->env.close_file(hs->env.ctx, res->fd);
		if (body && !(s->rel = strdup(res->rel)))
			return NGHTTP2_ERR_NOMEM;
		s->root = res->root;
	}
	resp_head_file(&h, sr, hs->env.date(hs->env.ctx));
	resp_head_extras(&h, &res->extras);
	if (body) {
		body_start(&s->body, sr, &s->file);
		hs->counters.body_copy++;
	}
	return submit(hs, s, &h, body);
}

/* The response waits for the glue's listing (h2_session_listing_done);
 * the stream's other work, and the session's other streams, go on. */
static int start_listing(struct h2_session *hs, struct h2_stream *s,
			 const struct static_target *res, bool head)
{
	if (!hs->env.list_dir)
		return respond_page(hs, s, 404, head, NULL);
	s->extras = res->extras;
	enum autoindex_format f = autoindex_negotiate(h2_field_value(s, &s->path), s->path.len,
						      h2_field_value(s, &s->accept), s->accept.len);
	void *job = NULL;
	int status = hs->env.list_dir(hs->env.ctx, s, res, f, &job);
	if (status)
		return respond_page(hs, s, status, head, NULL);
	s->listing = job;
	/* The status the log gives it if it ends before the listing is
	 * back; with it the session owes the client a response meanwhile
	 * (h2_session_owes: the send timeout, not the idle one, runs). */
	s->status = 200;
	return 0;
}

/* Submits a made listing: its head, and its body from fd as a file's. */
static int respond_listing(struct h2_session *hs, struct h2_stream *s, int fd, uint64_t size,
			   const char *content_type)
{
	bool head = h2_field_is(s, &s->method, "HEAD");
	struct resp_head h;

	memset(&s->sr, 0, sizeof(s->sr));
	s->sr.status = s->status = 200;
	s->sr.content_type = content_type;
	s->sr.content_length = size;
	s->sr.send_body = !head && size > 0;
	s->file = (struct static_file){.size = size, .content_type = content_type};
	resp_head_listing(&h, hs->env.date(hs->env.ctx), content_type, size);
	resp_head_extras(&h, &s->extras);
	if (s->sr.send_body) {
		/* Not counted in the file slots: a memfd cannot be reopened
		 * by name, and the worker's queue bounds listings already. */
		s->file_fd = fd;
		body_start(&s->body, &s->sr, &s->file);
		hs->counters.body_copy++;
	} else {
		hs->env.close_file(hs->env.ctx, fd);
	}
	return submit(hs, s, &h, s->sr.send_body);
}

void h2_session_listing_done(struct h2_stream *s, int status, int fd, uint64_t size,
			     const char *content_type)
{
	struct h2_session *hs = s->hs;
	int rv;

	s->listing = NULL;
	if (s->closed || status < 0) {
		if (fd >= 0)
			hs->env.close_file(hs->env.ctx, fd);
		h2_stream_release(s);
		return;
	}
	if (status)
		rv = respond_page(hs, s, status, h2_field_is(s, &s->method, "HEAD"), NULL);
	else
		rv = respond_listing(hs, s, fd, size, content_type);
	if (rv != 0) {
		s->reset_ours = true;
		nghttp2_submit_rst_stream(hs->ng, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_INTERNAL_ERROR);
	}
}

/* The field that names the site of s: :authority, else Host (RFC 9113
 * 8.3.1). NULL: the request is malformed: an authority that is not one
 * (proto/authority.h: "b.test:abc", userinfo), or a Host that names
 * another origin than :authority (ktlsd's HTTP/2 is https: port 443 by
 * default). nghttp2 has refused a request with neither, an empty one, a
 * second Host and bytes no authority has. */
static const struct h2_field *stream_authority(const struct h2_stream *s)
{
	struct authority a, h;

	if (s->authority.set &&
	    authority_parse(h2_field_value(s, &s->authority), s->authority.len, &a) < 0)
		return NULL;
	if (s->host.set && authority_parse(h2_field_value(s, &s->host), s->host.len, &h) < 0)
		return NULL;
	if (s->authority.set && s->host.set && !authority_same(&a, &h, "443"))
		return NULL;
	return s->authority.set ? &s->authority : &s->host;
}

int h2_stream_respond(struct h2_stream *s)
{
	struct h2_session *hs = s->hs;
	struct static_target res;
	bool head = h2_field_is(s, &s->method, "HEAD");
	const struct h2_field *host = stream_authority(s);

	/* RFC 9113 8.1.1: a malformed request is a stream error; the client
	 * made us reset it, so it counts against --h2-reset-rate. */
	if (!host)
		return nghttp2_submit_rst_stream(hs->ng, NGHTTP2_FLAG_NONE, s->id,
						 NGHTTP2_PROTOCOL_ERROR);
	if (s->bad || !s->path.set)
		return respond_page(hs, s, 400, head, NULL);
	if (!head && !h2_field_is(s, &s->method, "GET"))
		return respond_page(hs, s, 405, false, NULL);
	const struct static_ask ask = {
	    .target = h2_field_value(s, &s->path),
	    .target_len = s->path.len,
	    .host = host->set ? h2_field_value(s, host) : NULL,
	    .host_len = host->len,
	    .accept_encoding = h2_field_value(s, &s->accept_encoding),
	    .ae_len = s->accept_encoding.len,
	};
	hs->env.resolve(hs->env.ctx, &ask, &res);
	s->site = res.root;
	if (res.status == STATIC_LIST_DIR)
		return start_listing(hs, s, &res, head);
	if (res.status == STATIC_ACME_CHALLENGE)
		return respond_challenge(hs, s, &res, head);
	if (res.status >= 300 && res.status < 400 && !(s->location = strdup(res.location)))
		return NGHTTP2_ERR_NOMEM;
	if (res.status)
		return respond_page(hs, s, res.status, head, &res.extras);
	return respond_file(hs, s, &res, head);
}

void h2_stream_done(struct h2_stream *s, uint32_t error, bool cut)
{
	struct h2_session *hs = s->hs;

	if (!s->status || s->reported)
		return;
	s->reported = true;

	const struct h2_stream_record rec = {
	    .id = s->id,
	    .method = h2_field_value(s, &s->method),
	    .method_len = s->method.len,
	    .path = h2_field_value(s, &s->path),
	    .path_len = s->path.len,
	    .authority = h2_field_value(s, &s->authority),
	    .authority_len = s->authority.len,
	    .referer = h2_field_value(s, &s->referer),
	    .referer_len = s->referer.len,
	    .user_agent = h2_field_value(s, &s->user_agent),
	    .user_agent_len = s->user_agent.len,
	    .status = s->status,
	    .body_bytes = s->body_bytes,
	    .frame_bytes = s->frame_bytes,
	    .duration_ms = h2_now(hs) - s->start_ms,
	    .file_body = s->file.size || s->rel || s->file_fd >= 0,
	    .encoding = s->file.content_encoding,
	    .site = s->site,
	    .mapped = s->sent_mapped,
	    .sendfile = hs->sendfile,
	    .truncated = s->truncated,
	    .reset = error != 0,
	    .reset_ours = s->reset_ours,
	    .cut = cut,
	};
	hs->env.stream_done(hs->env.ctx, &rec);
}
