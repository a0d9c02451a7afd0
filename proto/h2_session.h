/* An HTTP/2 session: nghttp2, its streams, and what to answer them, with no
 * I/O of its own. It takes received bytes (h2_session_recv) and, from an
 * environment the glue gives it at h2_session_new, the clock, the Date, the
 * static-file resolution and the lazy reopen of a file; it says what it did
 * through callbacks (a finished stream for the access log, events to log)
 * and counters.
 *
 * Output is batches: h2_session_pump fills a batch the glue provides with
 * whole frames, leaves the place of each DATA payload as a hole, asks the
 * glue for one readv per stream to fill them, and hands the batch back to
 * be sent once the reads are reported (h2_session_read_done). The server
 * (server/http/h2_conn.c) does that I/O on its ring; the fuzz target does it at
 * once with preadv. Both run the same pump.
 *
 * The glue owns the batch and the reads; the session and its streams are
 * opaque to it (their insides are proto/'s, h2_session-int.h): what it
 * needs of them, it asks the functions below. */
#ifndef KTLSD_PROTO_H2_SESSION_H
#define KTLSD_PROTO_H2_SESSION_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <nghttp2/nghttp2.h>

#include "proto/autoindex.h"
#include "proto/static_file.h"

#define FRAME_HEADER 9
/* Holes one stream may have in one batch: a 256 KiB buffer holds 16 frames
 * of 16 KiB, so one readv per stream and batch fills them all. */
#define MAX_IOV 64

struct h2_session;
struct h2_stream;

/* ---- the environment ---- */

/* The limits of the configuration the connection started with. */
struct h2_limits {
	unsigned max_streams;        /* --h2-max-streams */
	unsigned max_header_list;    /* --h2-max-header-list */
	unsigned reset_rate;         /* --h2-reset-rate */
	unsigned max_continuations;  /* --h2-max-continuations */
	unsigned keepalive_requests; /* --keepalive-requests (streams); 0: no limit */
};

/* A stream that ended, for the access log. The request fields are the
 * client's bytes as it sent them (NULL when absent): escape them. */
struct h2_stream_record {
	int32_t id;
	const char *method, *path, *authority, *referer, *user_agent;
	size_t method_len, path_len, authority_len, referer_len, user_agent_len;
	int status;
	uint64_t body_bytes;         /* of its DATA payloads (padding: none is sent) */
	uint64_t frame_bytes;        /* of its HEADERS and DATA frames, frame headers included */
	uint64_t duration_ms;
	bool file_body;              /* its body came from a file */
	const char *encoding;        /* a precompressed sidecar's coding ("br"), else NULL */
	const void *site;            /* the site it named (static_target's root), else NULL */
	bool mapped;                 /* some of it left from the file's pages (h2_io.send_mapped) */
	bool sendfile;               /* the session splices file payloads (h2_env.sendfile) */
	bool truncated;              /* the file came short */
	bool reset;                  /* closed by RST_STREAM, either side's */
	bool reset_ours;             /* ... ours, by policy (a file that changed, no memory) */
	bool cut;                    /* still open when the connection ended */
};

/* What the session reports as it happens (the glue logs it). */
enum h2_event {
	H2_EV_FILE_CHANGED, /* s's file changed or went away before its body: s is reset */
	H2_EV_FILE_SHORT,   /* s's readv came short (err 0) or failed (-errno): the batch
			     * is cut before s's frames, the connection closes after it */
	H2_EV_RESET_FLOOD,  /* resets over --h2-reset-rate: GOAWAY(ENHANCE_YOUR_CALM); s NULL */
};

struct h2_env {
	struct h2_limits limits;
	/* --h2-sendfile, where the transport can splice: a file's DATA frame
	 * ends its batch with its header, and its payload follows by
	 * h2_io.splice. */
	bool sendfile;
	const uint64_t *now_ms;      /* the glue's clock, read at each event */
	uint64_t *boundary_seed;     /* multipart boundaries: read, then incremented */
	void *ctx;                   /* the first argument of every callback */
	/* The Date header value (lives until the next call). */
	const char *(*date)(void *ctx);
	/* Resolves a request beneath its site's root (out->fd, when status is
	 * 0, becomes the session's). */
	void (*resolve)(void *ctx, const struct static_ask *ask, struct static_target *out);
	/* Opens rel again for a stream that could not keep its fd: the fd,
	 * or -1 when it is gone or no longer the file expect describes (its
	 * bytes must not go out under validators of another). The session
	 * owns the fd; *mem as in static_target. */
	int (*reopen)(void *ctx, const void *root, const char *rel, const struct static_file *expect,
		      const void **mem);
	/* Gives back an fd that resolve or reopen gave (its mem with it). */
	void (*close_file)(void *ctx, int fd);
	/* Gives back what send_mapped made of a stream's *map. */
	void (*unmap)(void *ctx, void *map);
	/* A stream with a response ended, once per stream, however it ended:
	 * closed, reset, or cut with the connection (never called for a
	 * stream without a response). */
	void (*stream_done)(void *ctx, const struct h2_stream_record *rec);
	void (*event)(void *ctx, enum h2_event ev, const struct h2_stream *s, int err);
	/* Optional (NULL: a folder to list is a 404): starts listing the
	 * folder res (from resolve, status STATIC_LIST_DIR) for s, as f
	 * (--autoindex). 0: under way, *job is the glue's until it calls
	 * h2_session_listing_done (list_cancel gets it); else the HTTP status
	 * to answer now (503: too many listings under way). */
	int (*list_dir)(void *ctx, struct h2_stream *s, const struct static_target *res,
			enum autoindex_format f, void **job);
	/* s went (reset, or the connection ends) while its listing is made:
	 * the glue stops it; it still comes back through listing_done. */
	void (*list_cancel)(void *ctx, void *job);
};

/* Counts for the worker's statistics; the glue takes them
 * (h2_session_take_counters). */
struct h2_counters {
	uint64_t body_copy;          /* file bodies framed */
	uint64_t truncated;          /* responses cut because a file came short */
	uint64_t header_list;        /* streams reset over --h2-max-header-list */
};

/* The I/O the pump asks of the glue; every callback gets env.ctx. */
struct h2_io {
	/* The batch to fill, *room bytes from its start (a batch that did
	 * not leave yet comes back with the bytes the session put in it
	 * first), or NULL: not now (a send still owns it, or the socket is
	 * full; the glue drives the session again when that changes). */
	char *(*batch_open)(void *ctx, size_t *room);
	/* The fill ended: the first len bytes of the batch are taken. */
	void (*batch_close)(void *ctx, size_t len);
	/* Reads the holes of s (h2_stream_readv says where), reported later
	 * by h2_session_read_done, never from within this call. */
	void (*post_read)(void *ctx, struct h2_stream *s);
	/* The first len bytes of the batch are complete; last: a file came
	 * short and the connection closes after them. 1: sent or on its way,
	 * the batch may be filled again from its start; 0: not now (a send
	 * or splice in flight); negative: failed, the connection is done. */
	int (*send)(void *ctx, size_t len, bool last);
	/* --h2-sendfile only: the payload of s (h2_session_splice says which
	 * bytes) follows the batch that ended with its frame header. 1: all
	 * of it is out; 0: in progress (pump again when it moves); negative:
	 * failed. */
	int (*splice)(void *ctx, struct h2_stream *s);
	/* Optional, where the kernel encrypts, ktlsd's sealer does or
	 * nothing does: the holes of s (h2_stream_readv) leave from its
	 * file's pages as the batch is sent, with no read into user memory.
	 * *map is the glue's, for the stream's mapping (NULL at first;
	 * env.unmap gets it when s ends), *resident_to the stream's residency
	 * hint, the glue's to move on (0 at first). true: done so (the
	 * session keeps s until the batch has left); false: read them with
	 * post_read (pages not in memory, no mapping, no room). */
	bool (*send_mapped)(void *ctx, struct h2_stream *s, void **map, uint64_t *resident_to);
	/* With send_mapped: the last batch has left (no send owns any of
	 * it, nothing of it waits to be sent), so nothing reads the pages it
	 * took any more. */
	bool (*batch_left)(void *ctx);
};

/* ---- the API ---- */

/* Creates a session with env (copied; env->now_ms and env->boundary_seed
 * must outlive it) and queues our SETTINGS. 0 or -ENOMEM. */
int h2_session_new(struct h2_session **out, const struct h2_env *env);
/* The connection ends under the open streams: each one with a response
 * is reported now (stream_done, cut), so the access log has it even if the
 * session is never freed (an exit). Idempotent. */
void h2_session_cut(struct h2_session *hs);
/* Frees the session, its streams and their files (no read in flight),
 * reporting the streams still open as cut. The batch is the glue's. */
void h2_session_free(struct h2_session *hs);
/* A quiet session (h2_session_owes false) gives back what it keeps: its
 * hold on the batch, which the glue may take back (the next fill asks
 * batch_open again), and, with no stream left, the spare streams and
 * nghttp2's pooled memory. */
void h2_session_release_idle(struct h2_session *hs);

/* Feeds nghttp2 received plaintext. Returns the bytes taken or an nghttp2
 * error (a connection error: close). */
ssize_t h2_session_recv(struct h2_session *hs, const uint8_t *data, size_t len);

/* Moves output along as far as it can without waiting: fills a batch,
 * posts its reads, sends it when they are in; with --h2-sendfile, sends a
 * batch up to a DATA frame's header, then that frame's payload by splice.
 * Returns 0 (call again after any event), an nghttp2 error from the fill,
 * or the negative value of an io callback. */
int h2_session_pump(struct h2_session *hs, const struct h2_io *io);

/* The readv of s for this batch ended with res: a short read cuts the batch
 * before this stream's first frame (never a hole on the wire). May free s. */
void h2_session_read_done(struct h2_stream *s, int res);

/* The listing of s (env.list_dir) is back: status 0 and the listing in fd
 * (size bytes of content_type, the session's now, closed through
 * env.close_file), or an HTTP status to answer (fd -1), or -1: the
 * connection is going, drop it. Submits the response (or resets s when
 * that fails), or drops it if s was reset meanwhile; may free s. */
void h2_session_listing_done(struct h2_stream *s, int status, int fd, uint64_t size,
			     const char *content_type);

/* Queues GOAWAY (no error, last processed stream): open streams finish,
 * no new ones start. false if it was queued already. */
bool h2_session_goaway(struct h2_session *hs);

/* ---- what the glue asks ---- */

/* The session owes the client bytes: a batch not yet sent, reads into
 * it in flight, a payload to splice, or streams whose response is not all
 * handed to a batch yet. */
bool h2_session_owes(const struct h2_session *hs);

/* Nothing more to do: nghttp2 wants neither to read nor to write (the
 * peer gone, peer_gone: not to write), and no batch, read or splice is
 * under way. The connection may close. */
bool h2_session_finished(const struct h2_session *hs, bool peer_gone);

/* nghttp2 has frames to send (as far as the windows let it). */
bool h2_session_wants_write(const struct h2_session *hs);

/* A pump would move something now, waiting on nobody: no read of the
 * session's is in flight, and nghttp2 has frames to send, a batch is
 * complete, or a payload is next to splice. The glue asks it when nothing
 * of the transport's is in flight either: then nothing will bring the
 * next pump (a stall; h2_conn.c's h2_tick). */
bool h2_session_can_move(const struct h2_session *hs);

/* The client has opened a stream (nghttp2 processed one). */
bool h2_session_took_request(const struct h2_session *hs);

/* A file came short (h2_session_read_done) and every read is in: the
 * batch up to the cut is the session's last, and the connection closes
 * once it has left. */
bool h2_session_ended_short(const struct h2_session *hs);

/* The readvs posted (h2_io.post_read) and not yet reported. */
unsigned h2_session_reads_pending(const struct h2_session *hs);

/* --h2-sendfile: the DATA payload that follows the batch that ended with
 * its frame header: len more bytes (0: all of them are in the pipe) of
 * stream's file fd at off. stream NULL: none. */
struct h2_splice {
	const struct h2_stream *stream;
	int fd;
	uint64_t off;
	size_t len;
};
struct h2_splice h2_session_splice(const struct h2_session *hs);
/* n more bytes of that payload went (n at most its len). */
void h2_session_spliced(struct h2_session *hs, size_t n);

/* The streams whose file bytes the batch in flight sends without a read
 * into it (the one being spliced, or those sent from their pages): a send
 * that finds a file short names them. The first (after NULL), or the one
 * after after; NULL at the end. */
const struct h2_stream *h2_session_unread_stream(const struct h2_session *hs,
						 const struct h2_stream *after);

/* ---- ... and of a stream (h2_stream.c) ---- */

/* The readv that fills the holes of s in this batch: preadv(fd, iov,
 * niov, off), len bytes in all. iov lives until h2_session_read_done. */
struct h2_readv {
	int fd;
	const struct iovec *iov;
	int niov;
	uint64_t off;
	size_t len;
};
struct h2_readv h2_stream_readv(const struct h2_stream *s);

/* The stream's id. */
int32_t h2_stream_id(const struct h2_stream *s);
/* The file s serves (its validators and size, as its head described it). */
const struct static_file *h2_stream_file(const struct h2_stream *s);
/* Its name beneath the site's root, or NULL (not a file, or not to be
 * opened again). */
const char *h2_stream_file_name(const struct h2_stream *s);

/* ---- timeouts (h2_timeout.c) ---- */

/* --send-timeout, --idle-timeout, --header-timeout, in ms. */
struct h2_timeouts {
	uint64_t send_ms, idle_ms, header_ms;
};

/* What the glue knows of the bytes the session owes: */
struct h2_sending {
	bool owes;          /* bytes are owed: not all sent, read or handed to a batch */
	bool busy;          /* a send is in flight */
	bool throttled;     /* --limit-rate holds a batch back */
	uint64_t sent_ms;   /* the socket last accepted bytes */
};

/* After GOAWAY for a timeout, how long the client has to go. */
#define H2_LINGER_MS 2000

/* The moment the session times out, from three clocks none of which the
 * client can wind by sending (PING, SETTINGS, WINDOW_UPDATE of 0, a byte of
 * a frame):
 *  - while we owe bytes: the send timeout from the moment responses last
 *    moved, the earlier of two: response bytes last went into a batch (a
 *    window held at zero stops that, PING ACKs do not count), and, with a
 *    send in flight, the socket last accepted bytes (a reader that stopped);
 *    neither earlier than the moment we began to owe (the socket's alone
 *    while --limit-rate holds the batch back);
 *  - otherwise: the idle timeout from the last completed stream;
 *  - and while a header block is unfinished: the header timeout from its
 *    first byte.
 * Call after every event. false, *deadline left alone, once the session
 * has timed out (the linger's deadline stands). */
bool h2_session_deadline(struct h2_session *hs, const struct h2_timeouts *t,
			 const struct h2_sending *out, uint64_t *deadline);

/* Which of the clocks ran out. */
enum h2_timeout {
	H2_TIMEOUT_HEADER,
	H2_TIMEOUT_SEND,
	H2_TIMEOUT_IDLE,
	H2_TIMEOUT_LINGER,  /* the client did not go after our GOAWAY: close now */
};

/* The deadline passed: says which clock ran out and, the first time,
 * queues GOAWAY (RFC 9113 6.8) and sets *deadline H2_LINGER_MS ahead;
 * after that, H2_TIMEOUT_LINGER. */
enum h2_timeout h2_session_time_out(struct h2_session *hs, const struct h2_timeouts *t,
				    uint64_t *deadline);

/* What the session waits for, as the last h2_session_deadline saw it: to
 * send what it owes, the rest of a header block, or a new stream. */
enum h2_wait {
	H2_WAIT_IDLE,
	H2_WAIT_HEAD,
	H2_WAIT_SEND,
};
enum h2_wait h2_session_waits(const struct h2_session *hs);

/* A header block of the client's is unfinished: its first byte came,
 * END_HEADERS did not (the clock --header-timeout runs on). */
bool h2_session_reading_head(const struct h2_session *hs);

/* Adds the counters to out and zeroes them. */
void h2_session_take_counters(struct h2_session *hs, struct h2_counters *out);

#endif
