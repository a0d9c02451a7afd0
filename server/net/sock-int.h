/* The transport's insides: struct sock and what its files share. For
 * sock.c (lifecycle, pacing), sock_tls.c (the handshake and the session),
 * sock_send.c (the send queue), sock_input.c (receiving and decrypting),
 * sock_body.c (how a body travels) and sock_splice.c (file -> pipe ->
 * socket) only, and their unit tests (tests/unit/test_sock*.c); the
 * protocols above see sock.h and nothing of this. */
#ifndef KTLSD_SERVER_SOCK_INT_H
#define KTLSD_SERVER_SOCK_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "ktls/tls.h"
#include "server/net/pace.h"
#include "server/core/pipepool.h"
#include "server/core/ring.h"
#include "server/core/rxring.h"
#include "server/core/stats-t.h"

struct sock_env;
struct sock_handler;

/* Ranges of tx a batch may take from mapped pages (sock_out_map). */
#define SOCK_HOLES_MAX 64

/* Every receive buffer, from the ring or the pool (see rxring.h). */
#define RX_CAP RXRING_BUF_SIZE
/* The user-space TLS stage: one file read and one send move this much, and
 * the read of the next chunk overlaps the send of this one. */
#define STAGE_CAP (128 * 1024)

/* Ranges of tx whose bytes leave from elsewhere (a file's mapped pages,
 * sock_out_map), sorted by position. Kept from batch to batch, given back
 * with tx when the socket goes idle. */
struct tx_holes {
	unsigned n;
	struct {
		size_t at, len;
		const char *src;
	} h[SOCK_HOLES_MAX];
	struct msghdr msg;
	struct iovec iov[2 * SOCK_HOLES_MAX + 1];
};

struct sock {
	const struct sock_env *env;
	const struct sock_handler *h;
	void *ctx;
	int fd;
	SSL *ssl;
	struct tls_server *tls_srv;   /* the context ssl was made from (a reference) */
	struct tls_wire wire;         /* rx: received bytes (RX_CAP, only while some wait
				       * to be consumed); tx: bytes to send */
	int rx_bid;                   /* rx is this ring buffer (in a completion only), or -1 */
	bool rx_pinned;               /* a recv writes into rx */
	size_t tx_sent;               /* of wire.tx, already accepted by the socket */
	int send_flags;               /* of the send in progress (MSG_MORE) */

	/* Decrypted input waiting for the protocol (TLS only; plain sockets
	 * are read straight from wire.rx). */
	char *plain;
	size_t plain_start, plain_end, plain_cap;

	/* Plaintext waiting for user-space encryption. */
	char *stage;
	size_t stage_len, stage_cap;
	unsigned stage_fills;         /* reads in flight into the stage (wire.tx_fills: into tx) */

	struct ring_op recv_op, send_op, ctrl_op, splice_in_op, splice_out_op, poll_op;
	bool recv_posted, send_posted, ctrl_posted, splice_posted;
	bool turn_posted;             /* poll_op is a no-op: a turn's wait, not room's */
	unsigned inflight;            /* operations in flight and holds */
	bool closing;
	bool peer_eof;

	/* The control record being sent (kTLS): its message and type. */
	struct tls_ctrl_record *ctrl_rec;
	struct msghdr ctrl_msg;
	struct iovec ctrl_iov;
	char ctrl_cmsg[CMSG_SPACE(1)];

	/* Splice: the file range asked for, and the pipe leased for it. */
	struct pipe_lease *pipe;
	struct pipe_waiter pipe_wait;
	bool pipe_waiting;
	int splice_fd;
	uint64_t splice_off;
	size_t splice_want;           /* to move into the pipe */
	size_t splice_len;            /* in the pipe, still to go to the socket */
	bool splice_more;

	uint64_t bytes_sent;
	uint64_t sent_ms;
	struct tx_holes *holes;

	/* Records ktlsd sealed (wire.sealer) from tx, ct[ct_sent, ct_len) still
	 * to send; the plaintext they came from is already past tx_sent, so tx
	 * takes the next chunk while they are sent. */
	unsigned char *ct;
	size_t ct_len, ct_sent, ct_cap;
	bool ct_posted;               /* the send in flight is of ct */
	/* The send in flight may not wait in the kernel (MSG_DONTWAIT: a
	 * socket that follows the room, sock_send_park), how many bytes it
	 * offered, and whether the room said the socket takes them all. */
	bool send_nowait;
	size_t send_len;
	bool send_promised;
	bool resend;                  /* the next send follows a wait for POLLOUT */
	bool ring_waits;              /* sends wait in the ring until one takes bytes */

	/* --limit-rate: the bucket every send and splice into the socket asks
	 * first, and the timer a send waits on for its tokens. */
	struct pace pace;
	struct ring_op pace_op;
	struct __kernel_timespec pace_ts;
	bool pace_posted;             /* the timer runs: the next send waits for it */
	bool throttled;               /* the queue waited for tokens since it was last empty */

	/* Bytes the socket accepts before it is full, as last asked
	 * (sock_room) or told by POLLOUT, less what it accepted since; the
	 * kernel is asked when this is too little, at most once between two
	 * sends, and a socket found slow not again after it takes bytes: each
	 * POLLOUT sets it. */
	size_t room;
	bool room_unbounded;          /* not TCP (a Unix socket): not asked */
	bool room_polled;             /* POLLOUT came since: the next chunk goes */
	/* The room was asked (or POLLOUT told it) since the socket last took
	 * bytes (a socket found slow: at all); a wait for POLLOUT sets the
	 * room to 0, and POLLOUT sets it again (sock_room). */
	bool room_asked;
	/* Reads and batches follow the room: from the start until the socket
	 * is shown fast, and again from a tick that finds it slow (sock.h,
	 * SOCK_SLOW_BYTES_PER_S). */
	bool follow_room;
	/* The most one send offers while the room is followed: what the
	 * socket has shown it takes at once (sock_send_done). */
	size_t take;
	bool lowat_set;               /* the socket has TCP_NOTSENT_LOWAT */
	/* A tick found it slow (counted once in stats->slow_socks): its room
	 * is not asked again after it takes bytes, each POLLOUT sets it
	 * (sock_room). */
	bool found_slow;
	uint64_t tick_sent;           /* bytes_sent at the last tick */
	uint64_t tick_ms;             /* and when that was */

	/* A batch (sock_batch_open) is open: its one fill holds the room. */
	bool batch_open;

	/* Kernel TLS: a poll that completes only when the connection hangs up
	 * or fails (sock_send.c's watch_hangup says why a write cannot tell). */
	struct ring_op hup_op;
	bool hup_posted;
	bool peer_fin;                /* the watch saw the peer's FIN: writes ask first */
	bool shut_wr;                 /* sock_shutdown_write: our FIN is out */
};

/* What the transport's files share, by the file that has it. */

/* sock.c: the lifecycle, pacing */
void sock_fail(struct sock *s, const char *why);
/* An owner broke one of the transport's rules: a debug build stops. */
void sock_bug(struct sock *s, const char *what);
void sock_account_sent(struct sock *s, enum stat_via via, int res);
/* How many of want bytes --limit-rate lets into the socket now (0: the
 * timer is armed, or the sock failed: its kernel TLS key is spent). */
size_t sock_pace_allow(struct sock *s, size_t want);

/* sock_tls.c */
bool sock_openssl_may_run(const struct sock *s);
/* OpenSSL left something to send that no protocol step will. */
bool sock_openssl_output_waits(const struct sock *s);
/* OpenSSL encrypts (TLS without kTLS): what is sent is staged, then sealed. */
bool sock_user_tls(const struct sock *s);

/* sock_send.c: the send queue */
void sock_post_next_send(struct sock *s);
/* After a send, a control record or a wait for tokens: posts what comes
 * next and lets the protocol move on. */
void sock_move_on(struct sock *s);
/* The completions of a send, a control record and the kTLS hang-up
 * watch: sock_new attaches them. */
void sock_send_done(struct ring_op *op, int res, uint32_t flags);
void sock_ctrl_done(struct ring_op *op, int res, uint32_t flags);
void sock_hup_done(struct ring_op *op, int res, uint32_t flags);
/* Kernel TLS, after the peer's FIN: whether the connection has hung up
 * since (then it is failed, and true). A write into it would succeed. */
bool sock_ktls_hung_up(struct sock *s);

/* The len bytes reserved at hole (and committed later) leave from src
 * instead (a file's pages, mapped), in their place: nothing is copied in
 * user space; they count as written.
 * src must stay mapped until those bytes left (!sock_tx_pending). Ask
 * sock_out_map_room first: as many ranges as it says (0 with user-space
 * TLS, or without memory for the list) are then taken; more are refused
 * (false). */
bool sock_out_map(struct sock *s, const char *hole, const void *src, size_t len);
/* Some hole of tx not yet sent (or sealed) takes its bytes from
 * [base, base + len). */
bool sock_out_maps_into(const struct sock *s, const char *base, size_t len);
unsigned sock_out_map_room(struct sock *s);
/* The same for ranges ktlsd's sealer reads (under page_guard.h), which
 * the kernel never does: 0 where the sealer does not seal this socket. */
unsigned sock_out_seal_map_room(struct sock *s);

/* How many more bytes the socket accepts now without waiting (SIZE_MAX:
 * no limit known), asking the kernel only when fewer than want are known
 * to fit. */
size_t sock_room(struct sock *s, size_t want);
/* Since the last tick the socket took bytes at a fast client's pace. */
bool sock_shown_fast(const struct sock *s);
/* Shown fast: reads no longer follow the room, and the socket loses its
 * low-water mark. */
void sock_stop_following_room(struct sock *s);
/* How many bytes a new body chunk or batch of want may hold
 * (sock_body_room, sock_batch_open): SIZE_MAX (no limit), or what the
 * socket takes beyond what is queued; 0 when that is too little
 * (SOCK_ROOM_MIN), after sock_wait_room if nothing is queued whose send
 * would bring the next turn. */
size_t sock_fits(struct sock *s, size_t want);
/* Bytes queued in the transport that the socket has not accepted yet. */
size_t sock_queued(const struct sock *s);
/* The socket takes too little: wait for POLLOUT (busy until then; drive()
 * follows), giving back the empty buffers. Nothing is queued (sock_fits),
 * or what is queued is the rest of a send (sock_send_park). */
void sock_wait_room(struct sock *s);
/* Gives tx back to the pool when it holds nothing and nothing reads or
 * writes it (a send of ct may be in flight). */
void sock_release_tx(struct sock *s);
/* Less than this much room is not worth a read and a send: wait. */
#define SOCK_ROOM_MIN (16 * 1024)
/* What a socket that said POLLOUT is taken to hold at least: a chunk of
 * SOCK_ROOM_MIN after sock_fits' margins. */
#define SOCK_POLLED_ROOM (2 * SOCK_ROOM_MIN)
/* The least room a batch that follows the room is given: an HTTP/2 DATA
 * frame (16,384 bytes and its 9-byte header, nghttp2's largest) must fit
 * whole, or a batch would close empty with nothing in flight to bring the
 * next turn. What the socket does not take of it waits for POLLOUT
 * (sock_send_park). --h2-buffer is at least this large. */
#define SOCK_BATCH_MIN SOCK_POLLED_ROOM
_Static_assert(SOCK_BATCH_MIN >= 16384 + 9, "a batch holds a whole DATA frame");
/* A socket that follows its room is first offered this much in one send;
 * each send it takes whole doubles it, up to the low-water mark, and one
 * it takes only part of brings it down to that part (no less than
 * SOCK_POLLED_ROOM): its room as the kernel counts it says nothing of
 * the machine's TCP memory, which at 10,000 slow downloads was spent, so
 * that sockets with room took a few KiB a send. */
#define SOCK_TAKE_FIRST (64 * 1024)

/* sock_input.c */
void sock_rx_give_back_if_empty(struct sock *s);
void sock_recv_done(struct ring_op *op, int res, uint32_t flags);

/* sock_splice.c */
/* Splice is possible here (plain or kTLS, ring SPLICE, pipes). */
bool sock_can_splice(const struct sock *s);
/* Moves len file bytes at off (at most a pipe's worth) to the socket
 * without a copy: file -> a leased pipe -> socket. The handler's spliced()
 * hears how many entered the pipe; drive() runs once the pipe is empty
 * again. more: more bytes follow (SPLICE_F_MORE, so kTLS fills whole
 * records). */
void sock_splice_file(struct sock *s, int fd, uint64_t off, size_t len, bool more);

/* What sock_sendfile did. */
enum sock_sendfile_result {
	SOCK_SENDFILE_SENT,   /* *sent bytes went; drive() runs when it may go on */
	SOCK_SENDFILE_WAIT,   /* the socket is full or --limit-rate waits:
			       * drive() runs when it may go on */
	SOCK_SENDFILE_EOF,    /* the file ends before off: it shrank */
	SOCK_SENDFILE_FAILED, /* the transport failed (the handler heard it) */
};
/* Moves up to len file bytes at off to the socket without a copy, by one
 * sendfile(2) on the worker. Only for bytes in the page cache
 * (file_resident): a sendfile that waits for the disk stalls every
 * connection of the worker. After any send the sock is busy until
 * drive(): a short one means the socket is full, and a whole one waits
 * for the worker's next turn. */
enum sock_sendfile_result sock_sendfile(struct sock *s, int fd, uint64_t off, size_t len,
					size_t *sent);
/* Largest len for one sock_sendfile: how long the worker's other
 * connections wait for one. Behind eight cold plain downloads a sendfile
 * of 2 MiB took 0.1-5.6 ms, of 512 KiB at most 1.4; a single cached
 * download cost 0.60 CPU-s per GB (median of 5) by 512 KiB, 0.67 by
 * 2 MiB. */
#define SOCK_SENDFILE_MAX (512u << 10)
/* A splice's ring operations and their completions, and the wake-up of a
 * sock waiting for a pipe. */
void sock_post_splice(struct sock *s, struct ring_op *op, bool in);
/* A poll for POLLOUT: the sock is busy until sock_poll_done moves on. */
void sock_poll_out(struct sock *s);
void sock_splice_in_done(struct ring_op *op, int res, uint32_t flags);
void sock_splice_out_done(struct ring_op *op, int res, uint32_t flags);
void sock_poll_done(struct ring_op *op, int res, uint32_t flags);
void sock_pipe_ready(struct pipe_waiter *wt, struct pipe_lease *p);

#endif
