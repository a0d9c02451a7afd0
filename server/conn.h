/* A client connection: its buffers, its TLS, its ring operations and its
 * state machine (handshake, read a request head, send a response, close).
 * The HTTP/1.1 meaning of requests and responses lives in h1_conn.c.
 *
 * Invariants that keep the wire ordered:
 *  - at most one send (or splice into the socket) in flight;
 *  - OpenSSL is never called while a send is in flight, because OpenSSL may
 *    write (tickets, alerts, the flush before the kernel TLS switch) and what
 *    it writes must follow what is already on its way;
 *  - the conn is freed only when no operation of it is in flight. */
#ifndef KTLSD_SERVER_CONN_H
#define KTLSD_SERVER_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <openssl/ssl.h>

#include "ktls/tls_bio.h"
#include "proto/h1_parser.h"
#include "proto/static_file.h"
#include "proto/body.h"

struct worker;

enum conn_state {
	CONN_HANDSHAKE,
	CONN_READ_HEAD,
	CONN_RESPOND,
	CONN_H2,      /* an HTTP/2 session runs the connection */
	CONN_LINGER,  /* answered, our side shut: drain the peer briefly, then close */
	CONN_CLOSING, /* waiting for operations in flight to end */
};

/* ring_tag kinds of a connection's operations */
enum conn_op {
	CONN_OP_RECV = 1,
	CONN_OP_SEND = 2,
	CONN_OP_READ = 3,
	CONN_OP_SPLICE_IN = 4,
	CONN_OP_SPLICE_OUT = 5,
	CONN_OP_POLL_OUT = 6, /* socket full under a splice: wait for room */
	CONN_OP_H2_READ = 7,  /* owner: struct h2_stream */
};

enum body_path { BODY_PATH_NONE, BODY_PATH_COPY, BODY_PATH_SPLICE };

/* The response being sent. */
struct response {
	int file_fd;                 /* -1 when the body is not from a file */
	struct static_file file;
	struct static_response sr;
	struct body body;
	enum body_path path;
	bool truncated;              /* the file shrank under us: close after what we have */
	int status;
	uint64_t bytes_out;          /* response bytes handed to the socket (headers + body) */
	uint64_t start_ms;
	char request_line[256];      /* for the access log */
};

struct conn {
	struct conn *prev, *next;    /* the worker's list, for timeouts and shutdown */
	struct worker *w;
	int fd;
	enum conn_state state;
	bool tls;                    /* accepted on a TLS listener */
	SSL *ssl;
	struct tls_server *tls_srv;  /* the context ssl was made from (a reference) */
	struct tls_wire wire;        /* rx: received bytes; tx: bytes to send */
	size_t rx_cap;
	size_t tx_sent;              /* of wire.tx, already accepted by the socket */

	/* Request bytes in plaintext (decrypted) waiting for the parser; plain
	 * connections parse straight from wire.rx. */
	char *plain;
	size_t plain_start, plain_end, plain_cap;

	/* Plaintext being prepared for user-space encryption, so the next file
	 * read overlaps the send of the previous chunk. */
	char *stage;
	size_t stage_len, stage_cap;

	struct h1_parser *parser;
	struct response resp;
	struct h2_session *h2;

	int pipe[2];                 /* for splice, created on first use */
	size_t pipe_size;
	size_t splice_len;           /* bytes in the pipe, still to go to the socket */

	unsigned inflight;           /* ring operations not yet completed */
	bool recv_posted, send_posted, read_posted, splice_posted;
	bool peer_eof;
	bool close_after;            /* close once the current response is out */
	bool notify_pending;         /* close_notify to queue once sends are done */
	bool head_started;           /* bytes of the next request head have arrived */
	unsigned requests;
	uint64_t deadline_ms;
	uint64_t sent_ms;            /* the socket last accepted bytes of ours */

	struct sockaddr_storage peer;
	char peer_text[64];
};

/* Takes ownership of fd (accepted, nonblocking). -ENOMEM if out of memory (fd
 * is then closed). */
int conn_new(struct worker *w, int fd, bool tls, const struct sockaddr *peer,
	     socklen_t peerlen);

/* A completion of one of this conn's operations. */
void conn_complete(struct conn *c, enum conn_op op, int res, uint32_t cqe_flags);

/* Timer tick: closes the conn if its deadline passed. */
void conn_check_deadline(struct conn *c, uint64_t now_ms);

/* Graceful shutdown: idle conns close now, busy ones after their response. */
void conn_shutdown(struct conn *c);

/* Abortive: stop everything, free once the ring has let go. */
void conn_abort(struct conn *c, const char *why);

/* "ktls=.. body=.." for the access log */
const char *conn_path_name(const struct conn *c);

/* Decrypts received bytes into plain[plain_end..]. 1: new bytes; 0: more
 * must be received; -1: the conn is closing or waits for a send (return). */
int conn_read_plain(struct conn *c);

/* For HTTP/2: an operation of c completed elsewhere (its inflight count was
 * taken when posted): drive the conn, free it if it closed. */
void conn_op_done(struct conn *c);
void conn_post_recv(struct conn *c);
void conn_close_graceful(struct conn *c);

/* For the body senders (body_send.c). */
bool conn_user_tls(const struct conn *c);          /* OpenSSL encrypts (no kTLS) */
void conn_post_send(struct conn *c, int msg_flags); /* sends wire.tx from tx_sent */
void conn_response_finish(struct conn *c);         /* last byte out: keep-alive or close */
void conn_release_idle_buffers(struct conn *c);    /* nothing to send: free what can be */

#endif
