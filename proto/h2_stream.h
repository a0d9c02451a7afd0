/* The streams of an HTTP/2 session: a request's fields (h2_request.c), its
 * answer from the static-file code (h2_response.c), its file (opened when
 * it may send, within the session's file slots) and its DATA payloads
 * (h2_stream.c). The inside of h2_session.c, split off to keep each file to
 * one job: proto/'s own, as h2_session-int.h (tests/layers/check.py). */
#ifndef KTLSD_PROTO_H2_STREAM_H
#define KTLSD_PROTO_H2_STREAM_H

#include <string.h>

#include "proto/h2_session-int.h"

/* A HEADERS frame opened stream id: NULL on no memory. */
struct h2_stream *h2_stream_new(struct h2_session *hs, int32_t id);
/* Ends s: its file and allocations go back, the struct (with its field
 * arena) is kept as a spare for the next stream while there is room. */
void h2_stream_free(struct h2_stream *s);
/* Frees a spare for good. */
void h2_stream_discard(struct h2_stream *s);
/* Frees s once nothing refers to it any more. */
void h2_stream_release(struct h2_stream *s);

/* The file bytes of s in a batch are in (read) or out (sent from its
 * pages): its holes are done with. */
void h2_stream_batch_left(struct h2_stream *s);

/* A request field of s (nghttp2's on_header_callback). 0, or
 * NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE past --h2-max-header-list (nghttp2
 * resets the stream). */
int h2_stream_header(struct h2_stream *s, const uint8_t *name, size_t namelen,
		     const uint8_t *value, size_t valuelen);

/* The request head of s is complete: submit the response. 0 or an
 * nghttp2 error (the caller resets the stream). */
int h2_stream_respond(struct h2_stream *s);

/* nghttp2's data source read_callback for the body of s (h2_response.c
 * hands it to nghttp2): the next DATA payload's length and flags. */
ssize_t h2_stream_read_data(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length,
			    uint32_t *flags, nghttp2_data_source *src, void *ud);

/* nghttp2's send_data_callback: writes the frame header and the literal
 * payload, or leaves the file payload's place as a hole. */
int h2_stream_send_data(nghttp2_session *ng, nghttp2_frame *frame, const uint8_t *framehd,
			size_t length, nghttp2_data_source *src, void *ud);

/* s ended: nghttp2 closed it with error (0: it ended normally), or, cut,
 * the connection ended under it. Tells the glue, once per stream. */
void h2_stream_done(struct h2_stream *s, uint32_t error, bool cut);

/* The value of request field f of s, or NULL when the request did not
 * carry it. */
static inline const char *h2_field_value(const struct h2_stream *s, const struct h2_field *f)
{
	return f->set ? s->arena + f->off : NULL;
}

/* Request field f of s is exactly word. */
static inline bool h2_field_is(const struct h2_stream *s, const struct h2_field *f,
			       const char *word)
{
	return f->set && f->len == strlen(word) && memcmp(s->arena + f->off, word, f->len) == 0;
}

static inline uint64_t h2_now(const struct h2_session *hs)
{
	return *hs->env.now_ms;
}

#endif
