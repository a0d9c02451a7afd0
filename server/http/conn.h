/* A client connection: its states (PROXY header, handshake, a protocol,
 * linger) and its deadlines, on top of its transport (sock.h), which it
 * owns. The protocol that runs it (HTTP/1.1 in h1_conn.c and body_send.c,
 * HTTP/2 in h2_conn.c) keeps its own state behind c->proto_state, which
 * the connection code never looks into; none of them touches the
 * transport's fields. */
#ifndef KTLSD_SERVER_CONN_H
#define KTLSD_SERVER_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "proto/static_file.h"
#include "server/core/access_log.h"
#include "server/net/addr_limit.h"
#include "server/core/stats-t.h"

struct conn;
struct sock;
struct worker;
struct worker_conn_ops;

enum conn_state {
	CONN_PROXY, /* waiting for the PROXY header (a proxy-protocol listener) */
	CONN_HANDSHAKE,
	CONN_PROTO,   /* a protocol (HTTP/1.1 or HTTP/2) runs the connection */
	CONN_LINGER,  /* answered, our side shut: drain the peer briefly, then close */
	CONN_CLOSING, /* waiting for operations in flight to end */
};

/* A protocol on a connection. conn.c calls it, never its functions by
 * name: the table comes from the server state (main.c puts HTTP/1.1's and
 * HTTP/2's there), so the connection code includes no protocol and no
 * protocol file includes another in a circle. */
struct conn_proto {
	/* Makes the protocol's state for c (c->proto_state), or NULL: out of
	 * memory, and the connection closes. Called once, when the protocol
	 * is chosen; every other function below finds the state made. */
	void *(*create)(struct conn *c);
	/* The connection is the protocol's now (after the handshake, with ALPN
	 * chosen; at accept for plain HTTP). */
	void (*start)(struct conn *c);
	/* Input, a completed send or splice: move on. */
	void (*drive)(struct conn *c);
	/* The transport's splice of file bytes into its pipe ended. */
	void (*spliced)(struct conn *c, int res);
	/* The connection is being aborted (c->abort_end says why): work
	 * waiting on another thread is called off; a protocol whose lines
	 * need no more than it knows now writes them now. */
	void (*aborted)(struct conn *c);
	/* Or NULL. The access-log lines of responses the abort cut, once the
	 * sock is released: a send the kernel took whose completion was
	 * still in the ring is counted by then (sock_bytes_sent). Sooner if
	 * SIGINT's exit cannot wait for the release (worker_conn_ops.log_cut).
	 * Called at most once. */
	void (*log_cut)(struct conn *c);
	/* Graceful stop (SIGTERM): finish what is under way, start nothing. */
	void (*shutdown)(struct conn *c);
	/* The timer: recompute c->deadline_ms, give back idle buffers. NULL:
	 * nothing to do at a tick (each call touches the protocol's state of
	 * every connection, 4 times a second). */
	void (*tick)(struct conn *c);
	/* c->deadline_ms passed (it counts which deadline it was). */
	void (*timeout)(struct conn *c);
	/* What the connection is doing: reading a request, owing a
	 * response, or idle (for the status listener's gauges). NULL: the
	 * protocol keeps c->activity up to date instead. */
	enum stat_conn (*activity)(const struct conn *c);
	/* Frees the protocol's state (nothing of it is in flight). */
	void (*release)(struct conn *c);
};

/* Its fields in an order that leaves no padding between them: a server
 * holds thousands of idle connections (168 bytes each on x86_64). */
struct conn {
	struct conn *prev, *next;    /* the worker's list, for timeouts and shutdown */
	struct worker *w;
	/* The configuration it was accepted under, held (server.h) for its
	 * whole life: its TLS context points into it, and its responses into
	 * its sites. A reload changes what new connections get. */
	const struct server *srv;
	struct sock *sock;           /* the transport: owned, opaque */
	const struct conn_proto *proto;
	void *proto_state;           /* the protocol's own (proto->create), opaque here */
	enum conn_state state;
	enum access_end abort_end;   /* why it is being aborted, for the access log */
	uint64_t deadline_ms;
	/* The client's address, for the access log and every log line: the
	 * socket's peer, or the one a PROXY header named; "unix:" on a Unix
	 * socket (as nginx writes it). */
	char peer_text[64];
	struct addr_key peer_key;    /* ... and as --limit-conn counts it */
	unsigned site;               /* its index in the server's sites (resolve_conn_site) */
	bool peer_known;             /* peer_key holds an IPv4 or IPv6 address */
	bool limit_counted;          /* --limit-conn counted it: uncounted when released */
	bool over_limit;             /* --limit-conn refused it: its requests get 429 */
	bool close_after;            /* close once the current response is out */
	bool notify_pending;         /* close_notify to queue once sends are done */
	bool shut_wr;
	bool cut_unlogged;           /* aborted; proto->log_cut not yet called */
	/* enum stat_conn, for a protocol without an activity hook: read at
	 * every tick, where a hook would touch the protocol's state of every
	 * connection (h1_activity was 0.8-1.3% of the worker at 1,000 and
	 * 10,000 slow downloads). */
	uint8_t activity;
};

/* Takes ownership of fd (accepted, nonblocking). proxy: a PROXY protocol
 * header comes first, and names the client instead of peer. -ENOMEM if
 * out of memory (fd is then closed). */
int conn_new(struct worker *w, int fd, bool tls, bool proxy, const struct sockaddr *peer,
             socklen_t peerlen);

/* Timer tick: closes the conn if its deadline passed. */
void conn_check_deadline(struct conn *c, uint64_t now_ms);

/* Adds c to the counts of open connections by state and by who encrypts
 * for it (the worker's gauges, each tick). */
void conn_tally(const struct conn *c, uint64_t by_state[STAT_CONN_STATES],
		uint64_t by_tls[STAT_TLS_PATHS]);

/* Graceful shutdown: idle conns close now, busy ones after their response. */
void conn_shutdown(struct conn *c);

/* Abortive: stop everything, free once the ring has let go. A response
 * under way is logged as lost (the client went away, a send failed)... */
void conn_abort(struct conn *c, const char *why);
/* ... or as end says (a timeout, the server stopping, our own failure). */
void conn_abort_as(struct conn *c, enum access_end end, const char *why);

/* What the worker makes, stops and ticks its connections with
 * (worker-t.h): conn_new and loops over its connections. main.c hands it
 * to worker_prepare. */
extern const struct worker_conn_ops conn_worker_ops;

/* Answered: close_notify, half-close, drain the peer briefly, close. */
void conn_close_graceful(struct conn *c);

void conn_set_deadline(struct conn *c, unsigned ms);

/* Resolves a request on c (resolve.h): its site by the connection's SNI and
 * the request's host, then the target's file. */
void conn_resolve(struct conn *c, const struct static_ask *ask, struct static_target *out);

/* Moves the conn on now (after an event of one of its protocol's own
 * operations, e.g. an HTTP/2 file read). */
void conn_drive(struct conn *c);

#endif
