/* The HTTP/2 session: nghttp2 set up with our limits, the connection-level
 * policy (resets, --keepalive-requests, GOAWAY) and the pump that moves
 * batches. What the client sends is followed in h2_input.c (with the
 * header-block timer); the streams are in h2_stream.c. */
#include "proto/h2_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- output ---- */

/* Frames other than DATA (and DATA headers, see h2_stream_send_data) go
 * into the batch; what does not fit waits for the next one. */
static ssize_t send_cb(nghttp2_session *ng, const uint8_t *data, size_t len, int flags, void *ud)
{
	struct h2_session *hs = ud;
	size_t room = hs->out_cap - hs->out_len;

	if (room == 0)
		return NGHTTP2_ERR_WOULDBLOCK;
	if (len > room)
		len = room;
	memcpy(hs->out + hs->out_len, data, len);
	hs->out_len += len;
	return (ssize_t)len;
}

/* ---- resets: the client's and those it makes us send ---- */

/* One budget of --h2-reset-rate per second (a burst of ten seconds' worth)
 * for every stream reset either side sends because of the client: its own
 * RST_STREAMs (rapid reset, CVE-2023-44487) and the ones its misbehaviour
 * forces on us (window overflows, stream protocol errors: "MadeYouReset",
 * CVE-2025-8671). nghttp2 1.52 counts only the former. false: the budget is
 * spent and the session is being terminated. */
static bool reset_charge(struct h2_session *hs)
{
	unsigned rate = hs->env.limits.reset_rate;
	uint64_t now = h2_now(hs);
	uint64_t burst = (uint64_t)rate * 10;

	if (now - hs->reset_refill_ms >= 1000) {
		uint64_t secs = (now - hs->reset_refill_ms) / 1000;
		uint64_t t = hs->reset_tokens + secs * rate;
		hs->reset_tokens = (unsigned)(t < burst ? t : burst);
		hs->reset_refill_ms += secs * 1000;
	}
	if (hs->reset_tokens > 0) {
		hs->reset_tokens--;
		return true;
	}
	if (!hs->terminated) {
		hs->env.event(hs->env.ctx, H2_EV_RESET_FLOOD, NULL, 0);
		hs->stopping = true;
		hs->terminated = true;
		nghttp2_session_terminate_session(hs->ng, NGHTTP2_ENHANCE_YOUR_CALM);
	}
	return false;
}

static int frame_send_cb(nghttp2_session *ng, const nghttp2_frame *frame, void *ud)
{
	struct h2_session *hs = ud;

	if (frame->hd.type == NGHTTP2_RST_STREAM) {
		struct h2_stream *s = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);
		h2_closed_mark(&hs->closed, frame->hd.stream_id, H2_CLOSED_OUR_RST);
		if (!s || !s->reset_ours)
			reset_charge(hs);
	} else if (frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) {
		hs->packed_ms = h2_now(hs); /* a response moved (see the send timeout) */
	}
	if (frame->hd.type == NGHTTP2_HEADERS) {
		/* A response head, for the access log (DATA frames are counted
		 * as h2_stream_send_data writes them). */
		struct h2_stream *s = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);
		if (s)
			s->frame_bytes += FRAME_HEADER + frame->hd.length;
	}
	return 0;
}

/* ---- requests ---- */

/* Remembers the stream of the header block that begins, so that each of
 * its fields finds it without a lookup in nghttp2's stream map (a lookup
 * per field was ~1% of a small request's CPU). */
static int begin_headers_cb(nghttp2_session *ng, const nghttp2_frame *frame, void *ud)
{
	struct h2_session *hs = ud;
	struct h2_stream *s;

	hs->receiving = NULL;
	if (frame->hd.type != NGHTTP2_HEADERS)
		return 0;
	if (frame->headers.cat != NGHTTP2_HCAT_REQUEST) {
		hs->receiving = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);
		return 0;
	}
	s = h2_stream_new(hs, frame->hd.stream_id);
	if (!s)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	nghttp2_session_set_stream_user_data(ng, s->id, s);
	hs->receiving = s;
	return 0;
}

/* The stream whose header block frame belongs to, or NULL. */
static struct h2_stream *receiving(struct h2_session *hs, const nghttp2_frame *frame)
{
	struct h2_stream *s = hs->receiving;

	return s && s->id == frame->hd.stream_id ? s : NULL;
}

static int header_cb(nghttp2_session *ng, const nghttp2_frame *frame, const uint8_t *name,
		     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags, void *ud)
{
	struct h2_stream *s = receiving(ud, frame);

	if (!s || frame->hd.type != NGHTTP2_HEADERS)
		return 0;
	return h2_stream_header(s, name, namelen, value, valuelen);
}

/* --keepalive-requests on HTTP/2 counts streams, as nginx does: the last
 * one allowed is answered and GOAWAY names it, so the client retries the
 * rest on a new connection. Streams it opened before it saw the GOAWAY
 * are refused (REFUSED_STREAM: never processed, safe to retry). */
static bool over_request_limit(struct h2_session *hs, struct h2_stream *s)
{
	unsigned limit = hs->env.limits.keepalive_requests;

	if (!limit)
		return false;
	if (++hs->requests <= limit)
		return false;
	s->reset_ours = true;
	nghttp2_submit_rst_stream(hs->ng, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_REFUSED_STREAM);
	return true;
}

static void goaway_at(struct h2_session *hs, int32_t last)
{
	if (hs->stopping)
		return;
	hs->stopping = true;
	nghttp2_submit_goaway(hs->ng, NGHTTP2_FLAG_NONE, last, NGHTTP2_NO_ERROR, NULL, 0);
}

static int frame_recv_cb(nghttp2_session *ng, const nghttp2_frame *frame, void *ud)
{
	struct h2_session *hs = ud;
	struct h2_stream *s;

	if (frame->hd.type == NGHTTP2_RST_STREAM) {
		h2_closed_mark(&hs->closed, frame->hd.stream_id, H2_CLOSED_PEER_RST);
		reset_charge(hs);
		return 0;
	}
	if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	s = receiving(hs, frame);
	hs->receiving = NULL;
	if (!s || over_request_limit(hs, s))
		return 0;
	/* Answer at the end of the head; a request body, if any, is not read
	 * (only GET and HEAD are served). */
	if (h2_stream_respond(s) != 0) {
		s->reset_ours = true;
		nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_INTERNAL_ERROR);
	}
	unsigned limit = hs->env.limits.keepalive_requests;
	if (limit && hs->requests == limit)
		goaway_at(hs, s->id);
	return 0;
}

static int stream_close_cb(nghttp2_session *ng, int32_t id, uint32_t error, void *ud)
{
	struct h2_session *hs = ud;
	struct h2_stream *s = nghttp2_session_get_stream_user_data(ng, id);

	hs->idle_since_ms = h2_now(hs);
	/* Unless a reset came first (frame_send_cb, frame_recv_cb): both
	 * sides sent END_STREAM. */
	h2_closed_mark(&hs->closed, id, H2_CLOSED_ENDED);
	if (!s)
		return 0;
	h2_stream_done(s, error, false);
	nghttp2_session_set_stream_user_data(ng, id, NULL);
	s->closed = true;
	if (s->listing)
		hs->env.list_cancel(hs->env.ctx, s->listing); /* kept until it is back */
	h2_stream_release(s);
	/* else: its holes are in the batch; freed when the readv completes */
	return 0;
}

/* Streams whose response is not yet all handed to a batch. */
static bool streams_owe(const struct h2_session *hs)
{
	for (const struct h2_stream *s = hs->streams; s; s = s->next)
		if (s->status && !s->closed &&
		    !nghttp2_session_get_stream_local_close(hs->ng, s->id))
			return true;
	return false;
}

/* ---- the session ---- */

int h2_session_new(struct h2_session **out, const struct h2_env *env)
{
	const struct h2_limits *lim = &env->limits;
	nghttp2_session_callbacks *cb = NULL;
	nghttp2_option *opt = NULL;
	struct h2_session *hs = calloc(1, sizeof(*hs));
	int rc = -1;

	if (!hs || nghttp2_session_callbacks_new(&cb) != 0 || nghttp2_option_new(&opt) != 0)
		goto out;
	hs->env = *env;
	hs->sendfile = env->sendfile;
	hs->scan.skip = NGHTTP2_CLIENT_MAGIC_LEN;
	hs->idle_since_ms = h2_now(hs);
	hs->reset_tokens = lim->reset_rate * 10;
	hs->reset_refill_ms = h2_now(hs);
	nghttp2_session_callbacks_set_send_callback(cb, send_cb);
	nghttp2_session_callbacks_set_send_data_callback(cb, h2_stream_send_data);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, begin_headers_cb);
	nghttp2_session_callbacks_set_on_header_callback(cb, header_cb);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, frame_recv_cb);
	nghttp2_session_callbacks_set_on_frame_send_callback(cb, frame_send_cb);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, stream_close_cb);

	/* The floods of 2019 and 2023: nghttp2 counts them, we set the limits.
	 * (Resets are also counted here, with those we are made to send.) */
	nghttp2_option_set_max_continuations(opt, lim->max_continuations);
	nghttp2_option_set_stream_reset_rate_limit(opt, (uint64_t)lim->reset_rate * 10,
						   lim->reset_rate);
	nghttp2_option_set_max_outbound_ack(opt, 1000);
	nghttp2_option_set_max_settings(opt, 32);
	nghttp2_option_set_max_deflate_dynamic_table_size(opt, 4096);
	/* Frames on closed streams are answered from h2_closed.h's two bits
	 * per stream, not from nghttp2's records (a stream each). */
	nghttp2_option_set_no_closed_streams(opt, 1);
	nghttp2_mem mem = h2_mem_allocator(&hs->mem); /* copied by nghttp2 */
	if (nghttp2_session_server_new3(&hs->ng, cb, hs, opt, &mem) != 0)
		goto out;

	nghttp2_settings_entry iv[] = {
	    {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, lim->max_streams},
	    {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, lim->max_header_list},
	    {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
	};
	if (nghttp2_submit_settings(hs->ng, NGHTTP2_FLAG_NONE, iv, sizeof(iv) / sizeof(iv[0])) != 0)
		goto out;
	rc = 0;
out:
	if (cb)
		nghttp2_session_callbacks_del(cb);
	if (opt)
		nghttp2_option_del(opt);
	if (rc < 0) {
		if (hs && hs->ng)
			nghttp2_session_del(hs->ng);
		if (hs)
			h2_mem_trim(&hs->mem);
		free(hs);
		return -ENOMEM;
	}
	*out = hs;
	return 0;
}

bool h2_session_goaway(struct h2_session *hs)
{
	if (hs->stopping)
		return false;
	goaway_at(hs, nghttp2_session_get_last_proc_stream_id(hs->ng));
	return true;
}

void h2_session_take_counters(struct h2_session *hs, struct h2_counters *out)
{
	out->body_copy += hs->counters.body_copy;
	out->truncated += hs->counters.truncated;
	out->header_list += hs->counters.header_list;
	hs->counters = (struct h2_counters){0};
}

/* ---- the pump ---- */

/* The glue's batch to fill (h2_io.batch_open): false, not now. */
static bool open_batch(struct h2_session *hs, const struct h2_io *io)
{
	size_t room;
	char *out = io->batch_open(hs->env.ctx, &room);

	if (!out)
		return false;
	hs->out = out;
	hs->out_cap = room;
	return true;
}

static void post_reads(struct h2_session *hs, const struct h2_io *io)
{
	struct h2_stream *next;

	for (struct h2_stream *s = hs->reading; s; s = next) {
		next = s->next_reading;
		if (io->send_mapped && io->send_mapped(hs->env.ctx, s, &s->map, &s->resident_to)) {
			s->sent_mapped = true;
			s->next_mapped = hs->mapped;
			hs->mapped = s;
			continue;
		}
		s->read_posted = true;
		hs->reads_pending++;
		io->post_read(hs->env.ctx, s);
	}
	hs->reading = NULL;
}

/* The batch that sent from these streams' pages has left. */
static void release_mapped(struct h2_session *hs)
{
	struct h2_stream *next;

	for (struct h2_stream *s = hs->mapped; s; s = next) {
		next = s->next_mapped;
		h2_stream_batch_left(s);
	}
	hs->mapped = NULL;
}

/* Batches with holes: fill one, read its holes, send it, and fill the next
 * while it leaves if the glue can take another. A batch never leaves with
 * reads pending (never a hole on the wire); once a read came short, the
 * batch goes up to the cut and nothing more is filled. */
static int pump_batches(struct h2_session *hs, const struct h2_io *io)
{
	void *ctx = hs->env.ctx;

	for (;;) {
		/* The streams the last batch sent from mapped pages go once
		 * it has left: a connection that goes quiet opens no new
		 * batch to say so, and its last streams would keep their
		 * mappings, and streams waiting for their file slots would
		 * wait for ever. Not while that batch is still ours: filled,
		 * its holes mapped, and waiting for the transport to take it
		 * (out_len), when the transport has nothing in flight either;
		 * its pages would go before it was sealed or sent. */
		if (hs->mapped && hs->out_len == 0 && hs->reads_pending == 0 && io->batch_left &&
		    io->batch_left(ctx))
			release_mapped(hs);
		/* Nothing to write, no batch: a batch asked of a full socket
		 * would wait for room (sock_batch_open) with nothing for it. */
		if (hs->reads_pending == 0 && !hs->cut && nghttp2_session_want_write(hs->ng) &&
		    open_batch(hs, io)) {
			release_mapped(hs);
			int rv = nghttp2_session_send(hs->ng);
			io->batch_close(ctx, hs->out_len);
			if (rv != 0)
				return rv;
			post_reads(hs, io);
		}
		if (hs->reads_pending > 0 || hs->out_len == 0)
			return 0;
		int rc = io->send(ctx, hs->cut ? hs->cut_at : hs->out_len, hs->cut);
		if (rc <= 0)
			return rc;
		hs->out_len = 0;
		if (hs->cut)
			return 0;
	}
}

/* --h2-sendfile: a batch ends with the header of a file's DATA frame
 * (h2_stream_send_data pauses nghttp2 there); it leaves, then the payload
 * is spliced, then the next batch is filled. */
static int pump_sendfile(struct h2_session *hs, const struct h2_io *io)
{
	void *ctx = hs->env.ctx;

	for (;;) {
		if (hs->out_len > 0) {
			int rc = io->send(ctx, hs->out_len, false);
			if (rc <= 0)
				return rc;
			hs->out_len = 0;
		}
		if (hs->sf) {
			int rc = io->splice(ctx, hs->sf);
			if (rc <= 0)
				return rc;
			struct h2_stream *s = hs->sf;
			hs->sf = NULL;
			h2_stream_release(s);
		}
		if (!nghttp2_session_want_write(hs->ng) || !open_batch(hs, io))
			return 0;
		int rv = nghttp2_session_send(hs->ng);
		io->batch_close(ctx, hs->out_len);
		if (rv != 0)
			return rv;
		if (hs->out_len == 0 && !hs->sf)
			return 0;
	}
}

int h2_session_pump(struct h2_session *hs, const struct h2_io *io)
{
	return hs->sendfile ? pump_sendfile(hs, io) : pump_batches(hs, io);
}

/* ---- what the glue asks ---- */

bool h2_session_owes(const struct h2_session *hs)
{
	return hs->reads_pending || hs->out_len || hs->sf || streams_owe(hs);
}

bool h2_session_finished(const struct h2_session *hs, bool peer_gone)
{
	bool idle = !nghttp2_session_want_read(hs->ng) && !nghttp2_session_want_write(hs->ng);

	return (idle || (peer_gone && !nghttp2_session_want_write(hs->ng))) &&
	       hs->reads_pending == 0 && hs->out_len == 0 && !hs->sf;
}

bool h2_session_wants_write(const struct h2_session *hs)
{
	return nghttp2_session_want_write(hs->ng);
}

bool h2_session_can_move(const struct h2_session *hs)
{
	return hs->reads_pending == 0 &&
	       (nghttp2_session_want_write(hs->ng) || hs->out_len > 0 || hs->sf);
}

bool h2_session_took_request(const struct h2_session *hs)
{
	return nghttp2_session_get_last_proc_stream_id(hs->ng) > 0;
}

bool h2_session_ended_short(const struct h2_session *hs)
{
	return hs->cut && hs->reads_pending == 0;
}

unsigned h2_session_reads_pending(const struct h2_session *hs)
{
	return hs->reads_pending;
}

struct h2_splice h2_session_splice(const struct h2_session *hs)
{
	if (!hs->sf)
		return (struct h2_splice){.fd = -1};
	return (struct h2_splice){hs->sf, hs->sf->file_fd, hs->sf_off, hs->sf_len};
}

void h2_session_spliced(struct h2_session *hs, size_t n)
{
	hs->sf_off += (uint64_t)n;
	hs->sf_len -= n;
}

const struct h2_stream *h2_session_unread_stream(const struct h2_session *hs,
						 const struct h2_stream *after)
{
	if (hs->sf)
		return after ? NULL : hs->sf;
	return after ? after->next_mapped : hs->mapped;
}

void h2_session_release_idle(struct h2_session *hs)
{
	hs->out = NULL; /* the glue's: it may take it back */
	hs->out_cap = 0;
	if (hs->streams)
		return;
	while (hs->spare) {
		struct h2_stream *s = hs->spare;
		hs->spare = s->next;
		h2_stream_discard(s);
	}
	hs->nspare = 0;
	h2_mem_trim(&hs->mem);
}

void h2_session_cut(struct h2_session *hs)
{
	for (struct h2_stream *s = hs->streams; s; s = s->next) {
		if (!s->closed)
			h2_stream_done(s, 0, true);
		if (s->listing)
			hs->env.list_cancel(hs->env.ctx, s->listing);
	}
}

void h2_session_free(struct h2_session *hs)
{
	/* nghttp2_session_del drops its streams without a callback. */
	h2_session_cut(hs);
	nghttp2_session_del(hs->ng);
	while (hs->streams)
		h2_stream_free(hs->streams);
	h2_session_release_idle(hs);
	free(hs);
}
