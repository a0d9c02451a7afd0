/* The transport: one client socket with its TLS, its buffers, its ring
 * operations, the one send in flight, the pipe lease and the switch to
 * kernel TLS. HTTP/1.1 and HTTP/2 (conn.c, h1_conn.c, body_send.c,
 * h2_conn.c) sit on top and use only this API; the struct is opaque.
 *
 *   protocol handlers   h1_conn.c  body_send.c  h2_conn.c   (HTTP meaning)
 *          |                 conn.c                           (state machine,
 *          v                   |                               deadlines)
 *   transport           sock*.c <- the only files that touch the fd, the
 *          |                       SSL object, the wire buffers, the pipe
 *          v
 *   ring (worker.c)     each operation carries its completion (ring.h)
 *
 * The rules that keep the wire ordered live here and only here:
 *  - at most one send (or splice into the socket, or control record) in
 *    flight; bytes leave in the order they were queued;
 *  - with user-space TLS, OpenSSL is never called while a send is in flight
 *    (what it writes must follow what is already on its way, and the send
 *    buffer must not move under the kernel);
 *  - under kTLS, what OpenSSL sealed before the switch leaves first, then
 *    the kernel gets its keys, then plaintext and control records follow in
 *    queue order (no synchronous send on a worker, except sock_sendfile of
 *    cached file bytes into the nonblocking socket: io_uring has no
 *    sendfile and runs every splice on an io-wq thread);
 *  - the sock, and its owner, are freed only when nothing of it is in
 *    flight (sock_hold / sock_release around every entry point).
 *
 * Resources: tx, the plaintext stage and the plaintext input come from the
 * worker's buffer pool and go back when the connection is quiet; received
 * bytes sit in a buffer of the worker's receive ring or pool only until
 * they are consumed (a recv waiting for a client holds none); a pipe is
 * leased from the worker's pool for one chunk of a splice at a time. */
#ifndef KTLSD_SERVER_SOCK_H
#define KTLSD_SERVER_SOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/conf/config-t.h"

struct access_record;
struct bufpool;
struct io_uring;
struct iovec;
struct pipepool;
struct ring_features;
struct rxring;
struct sock;
struct tls_server;
struct worker_stats;
struct ring_op;
struct proxy_header;

struct sock_handler {
	/* Input arrived, a send or splice completed: move the protocol on.
	 * Called with the sock held. */
	void (*drive)(void *ctx);
	/* A splice of file bytes into the pipe ended with res bytes (0: the
	 * file is shorter than promised; < 0: an error). The sock then moves
	 * them to the socket by itself. Also 0 when a send from mapped file
	 * pages (sock_out_map) found them past the file's end. */
	void (*spliced)(void *ctx, int res);
	/* The transport failed (the peer went away, a send or splice failed):
	 * the owner must abort (sock_abort), after logging what it needs. */
	void (*failed)(void *ctx, const char *why);
	/* The sock is closed and nothing of it is in flight: free the owner
	 * (the sock frees itself after this returns). */
	void (*released)(void *ctx);
};

/* What the transport uses of the worker it runs on: the worker embeds one
 * and hands it to every sock_new, so that the transport sees none of the
 * worker's own types. */
struct sock_env {
	struct io_uring *ring;        /* each operation carries its completion (ring.h) */
	struct bufpool *bufs;         /* send, stage and receive buffers */
	struct rxring *rx_ring;       /* where idle connections' recvs land */
	struct pipepool *pipes;       /* pipes for splice, leased a chunk at a time */
	const struct ring_features *feat; /* what the ring can do (splice, buffer rings) */
	struct worker_stats *stats;   /* the worker's counters (stats-t.h) */
	const uint64_t *now_ms;       /* the worker's clock, read once a loop turn */
	/* Since the last tick a socket that follows its room took less than
	 * half of a send its room said it would take (sock_env_tick): the
	 * machine's TCP memory is spent (net.ipv4.tcp_mem), and such sockets
	 * are offered small sends (SOCK_TAKE_FIRST). */
	bool tcp_tight;
	uint64_t refused_seen;        /* stats->refused_sends at the last tick */
	/* How much the sealer takes at once (seal_slice.h); NULL: SEAL_MAX. */
	struct seal_slice *seal_slice;
};

/* The worker's timer (every 250 ms), for what its transports share. */
void sock_env_tick(struct sock_env *env);

/* A TLS session to start on the socket: the context of the configuration
 * it is accepted under (a reference is taken), and what it may switch to. */
struct sock_tls {
	struct tls_server *srv;
	bool ktls;                    /* the kernel may encrypt (--ktls) */
	bool seal;                    /* without it, ktlsd seals records (--tls-records) */
};

/* Takes ownership of fd (accepted, nonblocking). tls: start a server-side
 * TLS session on it (NULL: plain). NULL if out of memory (fd is then
 * closed). env must outlive the sock. */
struct sock *sock_new(const struct sock_env *env, int fd, const struct sock_tls *tls,
		      const struct sock_handler *h, void *ctx);

/* Lifetime: every entry point and every ring operation of the owner (a
 * file read) holds the sock; the last release of a closed sock frees it. */
void sock_hold(struct sock *s);
void sock_release(struct sock *s);
/* Stops everything: the socket is shut, operations in flight cancelled. */
void sock_abort(struct sock *s);
bool sock_closed(const struct sock *s);

/* ---- TLS (sock_tls.c) ---- */
enum sock_handshake { SOCK_HS_AGAIN, SOCK_HS_DONE, SOCK_HS_FAILED };
/* Moves the handshake on (nothing happens while a send is in flight). */
enum sock_handshake sock_handshake(struct sock *s);
bool sock_is_tls(const struct sock *s);
bool sock_ktls_tx(const struct sock *s);   /* the kernel encrypts what we send */
const char *sock_tls_version(const struct sock *s); /* "-" without TLS */
const char *sock_tls_cipher(const struct sock *s);
const char *sock_tls_servername(const struct sock *s); /* SNI; NULL: none or no TLS */
bool sock_alpn_is(const struct sock *s, const char *proto);
/* What the access log says of the TLS under a response. */
void sock_log_tls(const struct sock *s, struct access_record *rec);
/* The TLS keys must go and cannot be replaced (tls_rekey_needed): finish
 * the responses in progress, take no new request, then close. */
bool sock_rekey_needed(const struct sock *s);
/* Queues close_notify behind everything already queued. */
void sock_close_notify(struct sock *s);

/* ---- input (sock_input.c) ---- */
/* Makes sure a receive is posted (none while one is, or the buffer is full). */
void sock_recv(struct sock *s);
enum sock_input {
	SOCK_IN_NEW,     /* new plaintext is in sock_input() */
	SOCK_IN_AGAIN,   /* nothing new: receive more (or wait for the send) */
	SOCK_IN_STOP,    /* the sock is closing, or OpenSSL's answer is being sent: return */
	SOCK_IN_CLOSED,  /* close_notify: close gracefully */
};
/* Decrypts what was received (TLS). Plain sockets: NEW when received bytes
 * are waiting. */
enum sock_input sock_decrypt(struct sock *s);
/* The plaintext received and not yet consumed. */
const char *sock_input(const struct sock *s, size_t *len);
void sock_consume(struct sock *s, size_t n);
/* Drops what was received (a connection that lingers before closing). */
void sock_discard_input(struct sock *s);
bool sock_peer_eof(const struct sock *s);

/* ---- PROXY protocol (sock_input.c) ---- */
enum sock_proxy {
	SOCK_PROXY_DONE,  /* *out holds the header; what followed it waits for TLS or HTTP */
	SOCK_PROXY_AGAIN, /* a valid beginning: receive more */
	SOCK_PROXY_BAD,   /* not a PROXY header, or the peer closed before its end (out->why) */
};
/* Takes a PROXY protocol header (proto/proxy_header.h) off the front of
 * the bytes received, before TLS or HTTP has seen any: bytes that came
 * behind it in the same read stay in the receive buffer for them. Call
 * before the handshake or the protocol's start, and before anything else
 * consumed input. */
enum sock_proxy sock_take_proxy_header(struct sock *s, struct proxy_header *out);

/* ---- output (sock_send.c) ----
 * Every byte committed is written: a buffer range is handed over only when
 * every byte of it holds what the response says (pooled buffers hold
 * anything from before, another connection's data included). Bytes that a
 * ring operation of the owner still writes (a file read into the room
 * reserved) are a fill: sock_fill_begin before the operation is posted,
 * sock_fill_end when it completed, then commit what it wrote. While a fill
 * is open the buffer it writes neither moves nor goes back to the pool,
 * nothing else is queued into it, and a commit is refused (the connection
 * fails, and in a debug build the process stops: it is a bug). */
/* Room for len bytes of plaintext where the next send takes it from: the
 * stage that OpenSSL seals (user-space TLS), or the send buffer itself
 * (kTLS, plain). NULL when it cannot be had now (a send in flight owns the
 * send buffer, a fill is open and the room is too small, or out of
 * memory). *room says how much there is. */
char *sock_out_reserve(struct sock *s, size_t len, size_t *room);
/* The next n bytes of the room are written: they are the transport's. */
void sock_out_commit(struct sock *s, size_t n);
/* The owner is about to have the ring write into the room just reserved. */
void sock_fill_begin(struct sock *s);
/* That write ended (whatever it wrote: commit it now, or not at all). */
void sock_fill_end(struct sock *s);

/* Plaintext reserved/committed and not yet sent. */
size_t sock_out_len(const struct sock *s);
/* Seals (user-space TLS) or copies (kTLS, plain) len bytes into the send
 * buffer. 0, -EBUSY (a send in flight, or a fill open), -ENOMEM or -EIO. */
int sock_write(struct sock *s, const void *data, size_t len);
/* Sends what is queued (sealing the stage first with user-space TLS).
 * msg_flags: MSG_MORE when more bytes follow at once. No-op while a send
 * is in flight. */
void sock_send(struct sock *s, int msg_flags);
/* A send, splice or control record in flight. */
bool sock_busy(const struct sock *s);
/* Nothing queued, in flight or in the pipe. */
bool sock_drained(const struct sock *s);
/* The send buffer holds bytes not yet handed to the socket. */
bool sock_tx_pending(const struct sock *s);
/* ---- bodies (sock_body.c) ----
 * A protocol says which bytes a body is made of; the transport picks how
 * they travel (copy, sendfile, splice, the file's mapped pages) from its
 * TLS mode, which nothing above it asks. Every buffer they pass through is
 * the transport's, in every mode, under the fill rule above. */

/* Buffers follow the socket. A send handed more than the socket takes
 * waits in the kernel with its buffer, and a slow client's socket is
 * always full: 1,000 downloads at 64 KiB/s each held 582 KiB of pooled
 * send buffers apiece (bench/tools/slowload.c), nginx 121 KiB. So before
 * a body's bytes go through a buffer (a chunk read from the file, an
 * HTTP/2 batch), the socket gets TCP_NOTSENT_LOWAT, with which the kernel
 * accepts bytes only while fewer than this many are queued unsent
 * (tcp_stream_memory_free in include/net/tcp.h) and says POLLOUT below
 * half of it (without it the kernel itself queued 3.8 MB unsent for each
 * such client, its send buffer autotuned to 4 MiB); the transport asks how
 * many are unsent (SIOCOUTQNSD) when the room it last heard of is spent
 * (a socket found slow is not asked again: each POLLOUT says its room;
 * sock_room) and fills no more than the socket takes, and a socket that
 * takes nothing more waits for POLLOUT holding no buffer: the bytes are
 * still in the file. Twice the sealer's largest send (SEAL_MAX), so that
 * a socket that says POLLOUT takes one whole send. The first room is asked too, not assumed, and
 * such a socket's sends never wait inside the ring: what it does not take
 * of one waits for POLLOUT in a buffer its own size, and its next sends
 * are no larger than it has shown it takes (sock_send.c, send_nowait).
 *
 * Only while the client is not shown fast: a fast socket is full for a
 * moment many times a second, and reads cut to its room were smaller and
 * cost 1 GiB loopback downloads ~25% more server CPU per byte (AMD EPYC
 * family 25, 0.83 -> 1.14 CPU-s/GB); the mark itself cost cold-file and
 * 1,000-download cells 20-45% (more, smaller sends). HTTP/1.1 bodies
 * sent by sendfile or splice hold no buffer of ours while they wait, and
 * never set it: their kernel queue is the same as nginx's. An HTTP/2
 * connection's batches set it whatever carries their payloads. */
#define SOCK_NOTSENT_LOWAT (512 * 1024)
/* Slow: at a worker tick, a send (or a wait for room) still in the kernel
 * and fewer than this many bytes per second accepted since the last tick,
 * which is a client's pace, not the server's (a 32 Mbit/s line). Fast:
 * four times this. */
#define SOCK_SLOW_BYTES_PER_S (4u << 20)
#define SOCK_FAST_BYTES_PER_S (4 * (uint64_t)SOCK_SLOW_BYTES_PER_S)
/* Fast is also told between ticks, when the room is asked, over at least
 * this long and this many bytes: a 1 GiB download lasts about a second
 * here, and a quarter of it in reads cut to the room, until the first
 * tick, showed in its cost. The bytes are more than a slow client takes
 * at first (the low-water mark and its receive buffer), or that burst
 * passed for fast: 85 KiB a download instead of 58 (1,000 at 64 KiB/s). */
#define SOCK_FAST_PROBE_MS 10
#define SOCK_FAST_PROBE_BYTES (4u << 20)

/* --sendfile auto goes zero copy from this body size up, and only where the
 * kernel encrypts (kTLS): below it one read and one send (the head in the
 * same record) beat a send and two splices through a pipe; on plain HTTP,
 * 32 KiB bodies ran 37% and 64 KiB ones 23% more requests per server
 * CPU-second by copy. */
#define SOCK_ZERO_COPY_MIN (64 * 1024)

/* Whether a body of size file bytes leaves without a copy through user
 * space (sock_send_file) rather than through the send buffer
 * (sock_body_room and a file read). want is --sendfile: off never, on
 * wherever this socket can, auto where that was measured to win. */
bool sock_body_zero_copy(const struct sock *s, enum config_tristate want, uint64_t size);

/* Room for the next chunk of a copied body (a file read, or bytes the
 * file cache keeps), where the next send takes it from, no more than the
 * socket takes now (SOCK_NOTSENT_LOWAT), or NULL when a chunk waits to
 * leave already or there is no room now: send first, or, with nothing
 * queued, the sock waits for room (busy; drive() follows) and gives back
 * the buffers it does not hold bytes in. A file read into it is a fill. */
char *sock_body_room(struct sock *s, size_t *room);

/* File bytes a body is made of. */
struct sock_file {
	int fd;
	/* The bytes wanted of the file end here: how far the transport may
	 * ask ahead whether its pages are cached. */
	uint64_t end;
	/* The residency hint: up to where its pages were last found cached
	 * (0 at first; the transport moves it on), or NULL: do not ask, the
	 * bytes go by the ring, which waits for the disk off the worker. */
	uint64_t *resident_to;
};

enum sock_file_result {
	SOCK_FILE_SENT,   /* *sent bytes went; call again while not busy */
	SOCK_FILE_QUEUED, /* on their way: spliced() says how many, drive() follows */
	SOCK_FILE_WAIT,   /* the socket is full or --limit-rate waits: drive() follows */
	SOCK_FILE_EOF,    /* the file ends before off: it shrank */
	SOCK_FILE_FAILED, /* the transport failed (the handler heard it) */
};
/* Moves up to len bytes of f at off to the socket without a copy (only
 * where sock_body_zero_copy said so); it takes as many as one step moves.
 * more: bytes follow these at once (so kTLS fills whole records). Cached
 * pages go by sendfile(2) on the worker, the others by splices through a
 * leased pipe on the ring's threads: a sendfile that waits for the disk
 * would stall every connection of the worker. */
enum sock_file_result sock_send_file(struct sock *s, const struct sock_file *f, uint64_t off,
				     size_t len, bool more, size_t *sent);

/* ---- batches: frame headers around file bytes, sent as one ----
 * A batch is room in a buffer of the transport that the protocol fills
 * with frames and, in the holes it leaves, file bytes (a ring read into
 * each, a fill, or the file's pages: sock_batch_map). It is one fill from
 * sock_batch_open to sock_batch_send or sock_batch_drop: nothing of it
 * leaves, moves or goes back before, and it cannot leave while a read into
 * it is open. */
/* Room for up to want bytes, and no more than the socket takes while its
 * room is followed (SOCK_NOTSENT_LOWAT; at least a whole DATA frame's). A
 * batch that did not leave yet (sock_batch_send said not now) comes back
 * with the bytes already in it, where the mode lets it grow and the room
 * is not followed; otherwise NULL: not now (the last one has not left far
 * enough: drive() follows its send, which this posts if nothing else
 * would; or the socket is full: drive() follows POLLOUT), or out of
 * memory. */
char *sock_batch_open(struct sock *s, size_t want, size_t *room);
/* Nothing went into the batch: it ends. */
void sock_batch_drop(struct sock *s);
/* The first len bytes of the batch are all written: they leave, in one
 * send. 1: on their way (the next batch may be opened); 0: not now (a send
 * in flight: drive() follows); -1: the transport failed. */
int sock_batch_send(struct sock *s, size_t len);
/* Bodies smaller than this (HTTP/1.1: the body; HTTP/2: the file a
 * stream sends from) are read, never mapped: a mapping costs an
 * mmap, a munmap and page faults per response, which a read does not, and
 * only a read teaches the file cache a small file's bytes (filecache_learn).
 * The bound is a cautious choice, not a measured break-even. */
#define SOCK_MAP_MIN (256 * 1024)
/* A window of a file's pages mapped for one response or stream to send
 * from (sock_batch_map, sock_body_map), zeroed at first; its owner gives
 * it back with sock_map_release once its bytes have left. A window, not
 * the whole file: a mapping keeps the page tables of every page it
 * touched, so one of a whole file grew with the download (9.6 MiB of
 * them at 1,000 slow downloads 1.7 MB in, some 4 KiB per 2 MiB sent
 * each, for as long as a slow client takes). The window before stays
 * while holes not yet sent point into it. */
struct sock_map {
	const char *base;
	uint64_t off;                 /* of base in the file */
	size_t len;
	const char *old;              /* the window before */
	size_t old_len;
	/* Some of the file's pages were not in memory when asked: this
	 * response or stream reads from the disk, and ktlsd's sealer seals
	 * its cached pages from here on from the mapping (sock_body.c). */
	bool met_disk;
};
void sock_map_release(struct sock_map *m);
/* The n holes of the open batch hold f's bytes from off on: they leave
 * from the file's pages as the batch is sent, with no read and no copy,
 * where this socket can send from pages (the kernel's TLS, plain TCP, or
 * ktlsd's sealer, which seals them from there, for a download whose file
 * came from the disk: sock_body.c, map_holes) and they are cached, mapped
 * into *m. false: fill the holes by reads. */
bool sock_batch_map(struct sock *s, const struct sock_file *f, struct sock_map *m,
		    uint64_t off, const struct iovec *holes, int n);
/* sock_batch_map for a copied body's chunk (f->end: the file's size): the
 * len bytes of room at at (sock_body_room) hold f's bytes from off on, to
 * be committed as if read (sock_out_commit). Only where ktlsd's sealer
 * reads them (the kernel's sends from pages take the zero-copy path,
 * sock_send_file), for a download whose file came from the disk: one copy
 * of every byte less than a read. false: read them. */
bool sock_body_map(struct sock *s, const struct sock_file *f, struct sock_map *m, char *at,
		   uint64_t off, size_t len);

/* Half-close: everything is out, nothing more will be sent. */
void sock_shutdown_write(struct sock *s);
/* Gives back buffers a quiet connection does not need, and the sealer's
 * cipher context (tls_sealer_idle). */
void sock_release_idle_buffers(struct sock *s);
/* The buffers only: a download that waits for room keeps its cipher
 * context, which it needs again at the next POLLOUT (sock_wait_room). */
void sock_release_buffers(struct sock *s);
/* The worker's timer (every 250 ms): tells slow connections from fast
 * ones by the bytes the socket accepted since (SOCK_SLOW_BYTES_PER_S). */
void sock_tick(struct sock *s, uint64_t now_ms);

/* Bytes the socket accepted in all, and when it last accepted some (or
 * now, while a send waits for --limit-rate's tokens). */
uint64_t sock_bytes_sent(const struct sock *s);
uint64_t sock_sent_ms(const struct sock *s);

/* --limit-rate: at most rate bytes a second into the socket from now on
 * (0: no limit), after the first after bytes. Every send and splice is
 * paced here, in chunks of about a tenth of a second's worth (pace.h);
 * while a send waits for its tokens the sock is busy, as with a send in
 * flight, and a ring timeout, not a loop, does the waiting. */
void sock_set_rate(struct sock *s, uint64_t rate, uint64_t after);
/* What is queued had to wait for tokens since the queue was last empty:
 * its slowness is ours, not the client's. */
bool sock_throttled(const struct sock *s);

#endif
