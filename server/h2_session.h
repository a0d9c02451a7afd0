/* An HTTP/2 session: nghttp2, its streams, and what to answer them, with no
 * I/O of its own. The connection glue (h2_conn.c) hands it received bytes
 * and a batch buffer to fill; the session writes whole frames into the
 * batch, leaves the place of each DATA payload as a hole, and lists per
 * stream the file range (one readv) that fills its holes. The glue reads,
 * sends, and reports back. The fuzz target drives the same code.
 *
 * The types are open to the glue, which owns the batch and the reads. */
#ifndef KTLSD_SERVER_H2_SESSION_H
#define KTLSD_SERVER_H2_SESSION_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <nghttp2/nghttp2.h>

#include "proto/static_file.h"
#include "server/body.h"

struct conn;

#define FRAME_HEADER 9
/* Holes one stream may have in one batch: a 256 KiB buffer holds 16 frames
 * of 16 KiB, so one readv per stream and batch fills them all. */
#define MAX_IOV 64
#define ARENA 8192

struct h2_str {
	const char *p;
	size_t len;
};

enum pending { PEND_NONE, PEND_LITERAL, PEND_FILE };

struct h2_stream {
	struct h2_stream *next, *prev;   /* all streams of the session */
	struct h2_stream *next_reading;  /* streams with a readv in this batch */
	struct h2_session *hs;
	int32_t id;
	bool closed;                     /* nghttp2 is done with it */
	bool read_posted;
	bool truncated;                  /* the file shrank under the response */

	/* request */
	struct h2_str method, path, authority, range, if_match, if_none_match, if_modified_since,
	    if_unmodified_since, if_range;
	size_t arena_used;
	bool bad;                        /* header too large for the arena */
	char arena[ARENA];

	/* response */
	int status;
	int file_fd;
	struct static_file file;
	struct static_response sr;
	struct body body;
	const char *page;                /* a generated body (error pages) */
	size_t page_len, page_off;
	char page_buf[512];
	char location[PATH_MAX * 3 + 4];

	/* the DATA payload that read_cb promised and send_data_cb writes */
	enum pending pend;
	size_t pend_len;
	char lit[STATIC_PART_HEADER_MAX];
	size_t header_bytes;             /* of the request, for --h2-max-header-list */

	/* this batch's readv */
	struct iovec iov[MAX_IOV];
	int niov;
	uint64_t read_off;
	size_t read_len;
	size_t first_frame;              /* offset of its first DATA frame in the batch */

	uint64_t bytes_out;
	uint64_t start_ms;
} __attribute__((aligned(16)));

struct h2_session {
	nghttp2_session *ng;
	struct conn *c;
	struct h2_stream *streams;
	struct h2_stream *reading;
	unsigned reads_pending;
	char *out;                       /* the batch; with kTLS it is wire.tx itself */
	size_t out_len, out_cap;
	bool cut;                        /* a file came short: send out[0, cut_at), then close */
	size_t cut_at;
	bool stopping;

	/* --h2-sendfile (expert, kTLS only): each DATA frame leaves as its
	 * header alone, then its payload spliced, as nginx does with sendfile,
	 * so the cost of that pattern can be measured. */
	bool sendfile;
	struct h2_stream *sf;            /* the frame whose payload goes next */
	uint64_t sf_off;
	size_t sf_len;                   /* payload not yet in the pipe */
};

/* Creates the session of c with the limits of the configuration and queues
 * our SETTINGS. 0 or -ENOMEM. */
int h2_session_new(struct h2_session **out, struct conn *c);
void h2_session_free(struct h2_session *hs);

/* Packs what nghttp2 has to send into hs->out[hs->out_len, hs->out_cap)
 * (the caller sets the three), leaving holes for file bytes and listing the
 * streams to read in hs->reading. 0 or an nghttp2 error. */
int h2_session_fill(struct h2_session *hs);

/* The readv of s for this batch ended with res: a short read cuts the batch
 * before this stream's first frame (never a hole on the wire). May free s. */
void h2_session_read_done(struct h2_stream *s, int res);

/* Queues GOAWAY (no error, last processed stream): open streams finish,
 * no new ones start. false if it was queued already. */
bool h2_session_goaway(struct h2_session *hs);

/* Frees s once nothing refers to it any more. */
void h2_stream_release(struct h2_stream *s);

#endif
