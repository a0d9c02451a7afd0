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
#include "proto/body.h"

struct conn;

#define FRAME_HEADER 9
/* Holes one stream may have in one batch: a 256 KiB buffer holds 16 frames
 * of 16 KiB, so one readv per stream and batch fills them all. */
#define MAX_IOV 64
/* Files a session keeps open at once: streams beyond wait for a slot, so a
 * client cannot turn --h2-max-streams streams into as many fds. */
#define H2_MAX_OPEN_FILES 16

/* A request field we act on: where its value sits in the stream's arena
 * (offsets, because the arena grows by realloc). */
struct h2_field {
	uint32_t off, len;
	bool set;
};

enum pending { PEND_NONE, PEND_LITERAL, PEND_FILE };

/* Per-stream state is sized to what the stream uses: a 128-stream
 * connection held at a zero window must cost little, so the parts few
 * responses need (the multipart framing, an error page, a 301 Location,
 * the readv's holes) are allocated when needed. */
struct h2_stream {
	struct h2_stream *next, *prev;   /* all streams of the session */
	struct h2_stream *next_reading;  /* streams with a readv in this batch */
	struct h2_stream *next_waiting;  /* streams waiting for a file slot */
	struct h2_session *hs;
	int32_t id;
	bool closed;                     /* nghttp2 is done with it */
	bool read_posted;
	bool truncated;                  /* the file shrank under the response */
	bool waiting;                    /* on the session's file-slot queue */
	bool counted_file;               /* file_fd holds one of the session's slots */
	bool reset_ours;                 /* our RST (policy), not the client's doing */
	bool bad;                        /* a repeated or oversized field we act on */

	/* request */
	struct h2_field method, path, authority, range, if_match, if_none_match,
	    if_modified_since, if_unmodified_since, if_range;
	char *arena;
	uint32_t arena_used, arena_cap;
	size_t header_bytes;             /* of the request, for --h2-max-header-list */

	/* response */
	int status;
	int file_fd;                     /* -1 until the stream can send (see read_cb) */
	char *rel;                       /* the file beneath the root, to open it then */
	struct static_file file;
	struct static_response sr;
	struct body body;
	const char *page;                /* a generated body (error pages) */
	size_t page_len, page_off;
	char *page_buf;
	char *location;                  /* 301 only */

	/* the DATA payload that read_cb promised and send_data_cb writes */
	enum pending pend;
	size_t pend_len;
	char *lit;                       /* multipart framing, STATIC_PART_HEADER_MAX */

	/* this batch's readv */
	struct iovec *iov;               /* MAX_IOV, from the first read on */
	int niov;
	uint64_t read_off;
	size_t read_len;
	size_t first_frame;              /* offset of its first DATA frame in the batch */

	uint64_t bytes_out;
	uint64_t start_ms;
};

/* Where the client's frames begin and end, so the header timeout can run
 * from the first byte of a header block (nghttp2 says nothing of partial
 * frames). */
struct h2_frame_scan {
	size_t skip;                     /* of the preface, or the current payload */
	uint8_t head[FRAME_HEADER];
	size_t head_have;
	uint64_t frame_start_ms;         /* first byte of the current frame */
	bool ends_block;                 /* the current frame carries END_HEADERS */
};

struct h2_session {
	nghttp2_session *ng;
	struct conn *c;
	struct h2_stream *streams;
	struct h2_stream *reading;
	struct h2_stream *waiting, *waiting_tail; /* for a file slot, in order */
	unsigned reads_pending;
	unsigned open_files;             /* streams holding a file open */
	char *out;                       /* the batch; with kTLS it is wire.tx itself */
	size_t out_len, out_cap;
	bool cut;                        /* a file came short: send out[0, cut_at), then close */
	size_t cut_at;
	bool stopping;                   /* GOAWAY queued */
	bool timed_out;                  /* a timeout queued it: close soon whatever */
	bool terminated;                 /* GOAWAY with an error: nothing more is read */

	/* Timers (ms): a header block in progress, work we owe, idleness. */
	struct h2_frame_scan scan;
	uint64_t header_block_ms;        /* first byte of an unfinished header block, or 0 */
	uint64_t idle_since_ms;          /* the last stream completed (or the session began) */
	uint64_t owed_since_ms;          /* we began to owe bytes, with none owed before */
	uint64_t packed_ms;              /* response bytes last went into a batch */
	bool owed;

	unsigned requests;               /* streams answered, for --keepalive-requests */
	unsigned reset_tokens;           /* resets either side may still cause (--h2-reset-rate) */
	uint64_t reset_refill_ms;

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

/* Feeds nghttp2 received plaintext. Returns the bytes taken or an nghttp2
 * error (a connection error: close). */
ssize_t h2_session_recv(struct h2_session *hs, const uint8_t *data, size_t len);

/* Streams whose response is not yet all handed to the batch. */
bool h2_session_owes(const struct h2_session *hs);

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
