/* A client connection: the protocol state machine (handshake, read a
 * request head, send a response, HTTP/2, linger) and its deadlines, on top
 * of its transport (sock.h), which it owns. The HTTP/1.1 meaning of
 * requests and responses lives in h1_conn.c and body_send.c, HTTP/2 in
 * h2_conn.c; none of them touches the transport's fields. */
#ifndef KTLSD_SERVER_CONN_H
#define KTLSD_SERVER_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "proto/h1_parser.h"
#include "proto/static_file.h"
#include "proto/body.h"
#include "server/ring.h"

struct sock;
struct worker;

enum conn_state {
	CONN_HANDSHAKE,
	CONN_READ_HEAD,
	CONN_RESPOND,
	CONN_H2,      /* an HTTP/2 session runs the connection */
	CONN_LINGER,  /* answered, our side shut: drain the peer briefly, then close */
	CONN_CLOSING, /* waiting for operations in flight to end */
};

enum body_path { BODY_PATH_NONE, BODY_PATH_COPY, BODY_PATH_SPLICE };

/* The HTTP/1.1 response being sent. */
struct response {
	int file_fd;                 /* -1 when the body is not from a file */
	struct static_file file;
	struct static_response sr;
	struct body body;
	enum body_path path;
	bool truncated;              /* the file shrank under us: close after what we have */
	int status;
	uint64_t bytes_base;         /* the sock's bytes sent when the response began */
	uint64_t start_ms;
	struct ring_op read_op;      /* the file read of the copy path */
	bool read_posted;
	char request_line[256];      /* for the access log */
};

struct conn {
	struct conn *prev, *next;    /* the worker's list, for timeouts and shutdown */
	struct worker *w;
	struct sock *sock;
	enum conn_state state;
	struct h1_parser *parser;
	struct response resp;
	struct h2_session *h2;
	bool close_after;            /* close once the current response is out */
	bool notify_pending;         /* close_notify to queue once sends are done */
	bool head_started;           /* bytes of the next request head have arrived */
	bool shut_wr;
	unsigned requests;
	uint64_t deadline_ms;
	struct sockaddr_storage peer;
	char peer_text[64];
};

/* Takes ownership of fd (accepted, nonblocking). -ENOMEM if out of memory (fd
 * is then closed). */
int conn_new(struct worker *w, int fd, bool tls, const struct sockaddr *peer,
	     socklen_t peerlen);

/* Timer tick: closes the conn if its deadline passed. */
void conn_check_deadline(struct conn *c, uint64_t now_ms);

/* Graceful shutdown: idle conns close now, busy ones after their response. */
void conn_shutdown(struct conn *c);

/* Abortive: stop everything, free once the ring has let go. */
void conn_abort(struct conn *c, const char *why);

/* Answered: close_notify, half-close, drain the peer briefly, close. */
void conn_close_graceful(struct conn *c);

/* "ktls=.. body=.." for the access log */
const char *conn_path_name(const struct conn *c);

/* Body bytes of the HTTP/1.1 response the socket accepted so far (head
 * included). */
uint64_t conn_resp_bytes(const struct conn *c);

/* The last byte of an HTTP/1.1 response is out: keep-alive or close. */
void conn_response_finish(struct conn *c);

/* Moves the conn on now (after an event of one of its protocol's own
 * operations, e.g. an HTTP/2 file read). */
void conn_drive(struct conn *c);

#endif
