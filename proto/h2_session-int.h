/* The insides of an HTTP/2 session and its streams (h2_session.h has
 * what the glue sees): proto/'s own, included by proto/h2_*.c and the unit
 * tests of their parts (tests/unit/test_h2_*.c), nothing else
 * (tests/layers/check.py). The glue (server/http/h2_conn.c, the fuzz
 * target) asks h2_session.h's functions instead, so these fields can
 * change without it. */
#ifndef KTLSD_PROTO_H2_SESSION_INT_H
#define KTLSD_PROTO_H2_SESSION_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <nghttp2/nghttp2.h>

#include "proto/body.h"
#include "proto/h2_closed.h"
#include "proto/h2_mem.h"
#include "proto/h2_session.h"
#include "proto/static_file.h"

/* Freed streams a session keeps (with their field arena) for the next
 * ones: a stream costs no malloc of its own in steady state. */
#define H2_SPARE_STREAMS 16
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
	struct h2_stream *next_mapped;   /* streams whose holes the batch sends from pages */
	void *map;                       /* its file's pages, the glue's (send_mapped) */
	uint64_t resident_to;            /* the glue found its pages in memory up to here */
	bool sent_mapped;                /* some bytes left from the mapping */
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
	bool reported;                   /* stream_done was called */
	void *listing;                   /* the glue's listing job under way (env.list_dir):
					  * the response waits, and s is kept until it is back */

	/* request; referer and user_agent only for the log; accept_encoding's
	 * repeats are joined with ", " (a list, RFC 9110 5.3) */
	struct h2_field method, path, authority, host, range, if_match, if_none_match,
	    if_modified_since, if_unmodified_since, if_range, referer, user_agent, accept_encoding,
	    accept;
	char *arena;
	uint32_t arena_used, arena_cap;
	size_t header_bytes;             /* of the request, for --h2-max-header-list */

	/* response */
	int status;
	int file_fd;                     /* -1 until the stream can send (see read_cb) */
	const unsigned char *mem;        /* its bytes, when the glue keeps them: no readv */
	char *rel;                       /* the file beneath the root, to open it then */
	const void *root;                /* which root: static_target's, for reopen */
	const void *site;                /* the same, for its record (any response) */
	struct resp_extras extras;       /* a listing's site fields, while it is made */
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

	uint64_t body_bytes;             /* DATA payloads handed to the batch */
	uint64_t frame_bytes;            /* HEADERS and DATA frames, with their headers */
	uint64_t start_ms;
};

/* Where the client's frames begin and end, so the header timeout can run
 * from the first byte of a header block (nghttp2 says nothing of partial
 * frames), and a frame on a closed stream is seen before nghttp2 drops it. */
struct h2_frame_scan {
	size_t skip;                     /* of the preface, or the current payload */
	uint8_t head[FRAME_HEADER];
	size_t head_have;
	uint64_t frame_start_ms;         /* first byte of the current frame */
	bool ends_block;                 /* the current frame carries END_HEADERS */
	bool looked;                     /* the frame whose header is in head was looked at */
	bool look;                       /* ... is to be, before nghttp2 takes its last byte */
};

struct h2_session {
	nghttp2_session *ng;
	struct h2_mem mem;               /* nghttp2's small allocations */
	struct h2_env env;
	struct h2_counters counters;
	struct h2_stream *streams;
	struct h2_stream *spare;         /* freed streams kept for the next ones */
	unsigned nspare;
	struct h2_stream *reading;
	struct h2_stream *mapped;        /* kept until the batch that sends from their pages left */
	struct h2_stream *receiving;     /* whose header block nghttp2 is handing us */
	struct h2_stream *waiting, *waiting_tail; /* for a file slot, in order */
	unsigned reads_pending;
	unsigned open_files;             /* streams holding a file open */
	char *out;                       /* the batch: the transport's (sock_batch_open) */
	size_t out_len, out_cap;
	bool cut;                        /* a file came short: send out[0, cut_at), then close */
	size_t cut_at;
	bool stopping;                   /* GOAWAY queued */
	bool timed_out;                  /* a timeout queued it: close soon whatever */
	bool terminated;                 /* GOAWAY with an error: nothing more is read */

	/* Timers (ms): a header block in progress, work we owe, idleness. */
	struct h2_frame_scan scan;
	struct h2_closed closed;         /* what frames on closed streams get */
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

#endif
