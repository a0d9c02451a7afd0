#include "server/http/conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ktls/tls_acme.h"
#include "proto/proxy_header.h"
#include "server/core/log.h"
#include "server/http/resolve.h"
#include "server/conf/server.h"
#include "server/conf/site.h"
#include "server/net/sock.h"
#include "server/core/stats.h"
#include "server/http/worker-t.h"

#define LINGER_MS 2000

static void drive(void *ctx);
static void spliced(void *ctx, int res);
static void released(void *ctx);
static void failed(void *ctx, const char *why);

static const struct sock_handler conn_handler = {
	.drive = drive,
	.spliced = spliced,
	.failed = failed,
	.released = released,
};

void conn_set_deadline(struct conn *c, unsigned ms)
{
	c->deadline_ms = ms ? c->w->clock.now_ms + ms : 0;
}

/* Every entry point holds the conn like an operation in flight, so that a
 * close deep inside cannot free it under our feet; release frees it if it
 * closed meanwhile. */
static void hold(struct conn *c)
{
	sock_hold(c->sock);
}

static void release(struct conn *c)
{
	sock_release(c->sock);
}

/* The worker's list of its connections, for the timer and shutdown. */
static void link_conn(struct worker *w, struct conn *c)
{
	c->prev = NULL;
	c->next = w->conns;
	if (w->conns)
		w->conns->prev = c;
	w->conns = c;
	w->nconns++;
	if (w->nconns > w->nconns_high)
		w->nconns_high = w->nconns;
}

static void unlink_conn(struct worker *w, struct conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		w->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	w->nconns--;
}

/* The client's address as the logs write it and as --limit-conn counts
 * it. This is the one place it is set, from the socket or a PROXY header. */
static void set_peer(struct conn *c, const struct sockaddr *peer, socklen_t peerlen)
{
	c->peer_known = addr_key_from(&c->peer_key, peer, peerlen);
	if (peer->sa_family == AF_UNIX) {
		snprintf(c->peer_text, sizeof(c->peer_text), "unix:");
	} else if (peer->sa_family == AF_INET6 && peerlen >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *a = (const void *)peer;
		inet_ntop(AF_INET6, &a->sin6_addr, c->peer_text, sizeof(c->peer_text));
	} else if (peer->sa_family == AF_INET && peerlen >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *a = (const void *)peer;
		inet_ntop(AF_INET, &a->sin_addr, c->peer_text, sizeof(c->peer_text));
	}
}

/* The connection's site is decided: the TLS handshake is done (its SNI
 * names it), or a plain connection was accepted (each of its requests
 * names a site anew: it counts against the first, the default one). The
 * per-site limits apply from here, read in this one place. --limit-conn counts the connection from now until it is released;
 * over the limit it is not counted, and its protocol answers 429. A plain
 * connection is counted from its accept, so one that holds a connection
 * without asking anything counts too. */
static void apply_site_limits(struct conn *c)
{
	struct worker *w = c->w;

	c->site = resolve_conn_site(c->srv, sock_tls_servername(c->sock));
	const struct config_site *cfg = c->srv->sites[c->site].cfg;

	if (cfg->limit_rate)
		sock_set_rate(c->sock, cfg->limit_rate, cfg->limit_rate_after);
	if (!cfg->limit_conn || !c->peer_known || !w->conn_limits)
		return;
	switch (addr_limit_enter(w->conn_limits, c->site, &c->peer_key, cfg->limit_conn)) {
	case ADDR_LIMIT_COUNTED:
		c->limit_counted = true;
		break;
	case ADDR_LIMIT_OVER:
		/* Counted in the metrics; one debug line, not a warning per
		 * refusal a client can cause at will. */
		c->over_limit = true;
		w->stats.limits[STAT_LIMIT_CONN]++;
		log_msg(LOG_DEBUG, "%s: over --limit-conn %u: 429", c->peer_text, cfg->limit_conn);
		break;
	case ADDR_LIMIT_UNTRACKED:
		w->stats.conn_limit_untracked++;
		break;
	}
}

/* The protocol takes over: HTTP/2 when ALPN chose it, else HTTP/1.1. Its
 * state is made first: a protocol never runs without it. */
static void start_proto(struct conn *c)
{
	const struct server *srv = c->srv;

	/* A TLS-ALPN-01 validation (ktls/tls_acme.h) is its handshake: the
	 * validator closes after it (RFC 8737 3), and so do we, with
	 * close_notify. No protocol runs, so no access-log line is written. */
	if (sock_alpn_is(c->sock, TLS_ACME_ALPN)) {
		log_msg(LOG_DEBUG, "%s: ACME tls-alpn-01 validation for %s; closing", c->peer_text,
			sock_tls_servername(c->sock) ? sock_tls_servername(c->sock) : "-");
		conn_close_graceful(c);
		return;
	}
	c->proto = sock_alpn_is(c->sock, "h2") ? srv->h2 : srv->h1;
	c->proto_state = c->proto->create(c);
	if (!c->proto_state) {
		conn_abort(c, "out of memory for the protocol's state");
		return;
	}
	c->state = CONN_PROTO;
	apply_site_limits(c);
	c->proto->start(c);
}

/* The connection's own start, once a PROXY header (if any) is read: the
 * TLS handshake, or straight to HTTP. The handshake deadline set at accept
 * covers both the header and the handshake. */
static void begin(struct conn *c)
{
	if (sock_is_tls(c->sock)) {
		c->state = CONN_HANDSHAKE;
		drive(c);
	} else {
		start_proto(c);
	}
}

/* Without the header a proxy-protocol listener owes nothing: no response,
 * just the close. A scanner or a misconfigured balancer would fill the
 * log, so one line per worker a minute says it at info, the rest debug. */
static void refuse_proxy(struct conn *c, const char *why)
{
	struct worker *w = c->w;

	w->stats.limits[STAT_LIMIT_PROXY_HEADER]++;
	if (!w->proxy_logged_ms || w->clock.now_ms - w->proxy_logged_ms >= 60000) {
		w->proxy_logged_ms = w->clock.now_ms;
		log_msg(LOG_INFO,
		        "%s: proxy-protocol listener: %s; closed (worker %u: %llu so far; for a "
		        "minute, more are logged at debug only)",
		        c->peer_text, why, w->id,
		        (unsigned long long)w->stats.limits[STAT_LIMIT_PROXY_HEADER]);
	} else {
		log_msg(LOG_DEBUG, "%s: proxy-protocol listener: %s; closed", c->peer_text, why);
	}
	conn_abort(c, NULL);
}

static void proxy_header(struct conn *c)
{
	struct proxy_header h;

	switch (sock_take_proxy_header(c->sock, &h)) {
	case SOCK_PROXY_AGAIN:
		sock_recv(c->sock);
		return;
	case SOCK_PROXY_BAD:
		refuse_proxy(c, h.why);
		return;
	case SOCK_PROXY_DONE:
		if (!h.local)
			set_peer(c, (const struct sockaddr *)&h.src, h.addrlen);
		begin(c);
		return;
	}
}

int conn_new(struct worker *w, int fd, bool tls, bool proxy, const struct sockaddr *peer,
             socklen_t peerlen)
{
	struct conn *c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	c->w = w;
	c->abort_end = ACCESS_END_LOST;
	/* The sock takes its TLS context from the worker now: the same
	 * configuration as w->srv (a reload swaps both at once). */
	const struct sock_tls st = {w->tls, w->srv->use_ktls, w->srv->seal_records};
	c->sock = sock_new(&w->sock_env, fd, tls ? &st : NULL, &conn_handler, c);
	if (!c->sock) {
		free(c);
		return -ENOMEM;
	}
	c->srv = server_get(w->srv);
	set_peer(c, peer, peerlen);
	link_conn(w, c);
	hold(c);
	if (tls || proxy)
		conn_set_deadline(c, c->srv->cfg->handshake_timeout_ms);
	if (proxy) {
		c->state = CONN_PROXY;
		drive(c);
	} else {
		begin(c);
	}
	release(c);
	return 0;
}

static void log_cut(struct conn *c)
{
	if (!c->cut_unlogged)
		return;
	c->cut_unlogged = false;
	c->proto->log_cut(c);
}

/* The sock is closed and idle: nothing of the conn is in flight either
 * (the protocols' own operations hold the sock). */
static void released(void *ctx)
{
	struct conn *c = ctx;

	log_cut(c);
	if (c->proto_state)
		c->proto->release(c);
	/* Every way a connection ends comes here, once. */
	if (c->limit_counted)
		addr_limit_leave(c->w->conn_limits, c->site, &c->peer_key);
	unlink_conn(c->w, c);
	server_put(c->srv);
	free(c);
}

static void failed(void *ctx, const char *why)
{
	conn_abort(ctx, why);
}

void conn_drive(struct conn *c)
{
	drive(c);
}

void conn_abort(struct conn *c, const char *why)
{
	conn_abort_as(c, ACCESS_END_LOST, why);
}

void conn_abort_as(struct conn *c, enum access_end end, const char *why)
{
	if (c->state == CONN_CLOSING)
		return;
	if (why)
		log_msg(LOG_DEBUG, "%s: closing: %s", c->peer_text, why);
	c->abort_end = end;
	if (c->state == CONN_PROTO) {
		c->proto->aborted(c);
		c->cut_unlogged = c->proto->log_cut != NULL;
	}
	c->state = CONN_CLOSING;
	sock_abort(c->sock);
}

static void handshake(struct conn *c)
{
	struct sock *s = c->sock;
	enum sock_handshake st = sock_handshake(s);

	if (st == SOCK_HS_FAILED) {
		/* Flush the alert OpenSSL queued, then close. */
		if (sock_busy(s) || sock_tx_pending(s)) {
			c->close_after = true;
			c->state = CONN_LINGER;
			conn_set_deadline(c, LINGER_MS);
			drive(c);
			return;
		}
		conn_abort(c, "TLS handshake failed");
		return;
	}
	if (st == SOCK_HS_DONE) {
		start_proto(c);
		return;
	}
	if (sock_busy(s))
		return; /* the handshake's flight is on its way; drive() follows */
	if (sock_peer_eof(s)) {
		conn_abort(c, NULL);
		return;
	}
	sock_recv(s);
}

/* Answered and our side shut: everything queued (close_notify last) goes
 * out, then half-close, then read until the peer closes too, so that a
 * pipelined request behind an error does not turn our answer into a
 * reset. */
static void linger(struct conn *c)
{
	struct sock *s = c->sock;

	if (c->notify_pending && !sock_busy(s)) {
		c->notify_pending = false;
		sock_close_notify(s);
	}
	sock_send(s, 0);
	if (!sock_drained(s))
		return;
	if (!c->shut_wr) {
		sock_shutdown_write(s);
		c->shut_wr = true;
	}
	sock_discard_input(s);
	if (sock_peer_eof(s)) {
		conn_abort(c, NULL);
		return;
	}
	sock_recv(s);
}

static void drive(void *ctx)
{
	struct conn *c = ctx;

	if (sock_closed(c->sock))
		return;
	switch (c->state) {
	case CONN_PROXY:
		proxy_header(c);
		break;
	case CONN_HANDSHAKE:
		handshake(c);
		break;
	case CONN_PROTO:
		c->proto->drive(c);
		break;
	case CONN_LINGER:
		linger(c);
		break;
	case CONN_CLOSING:
		break;
	}
}

static void spliced(void *ctx, int res)
{
	struct conn *c = ctx;

	if (c->state == CONN_PROTO)
		c->proto->spliced(c, res);
}

void conn_close_graceful(struct conn *c)
{
	if (c->state == CONN_CLOSING || c->state == CONN_LINGER)
		return;
	c->state = CONN_LINGER;
	conn_set_deadline(c, LINGER_MS);
	/* close_notify goes after everything already on its way. */
	c->notify_pending = sock_is_tls(c->sock);
	drive(c);
}

void conn_shutdown(struct conn *c)
{
	hold(c);
	if (c->state == CONN_PROTO)
		c->proto->shutdown(c);
	else if (c->state == CONN_HANDSHAKE || c->state == CONN_PROXY)
		conn_abort(c, "shutting down");
	release(c);
}

void conn_check_deadline(struct conn *c, uint64_t now_ms)
{
	if (c->state == CONN_CLOSING)
		return;
	hold(c);
	sock_tick(c->sock, now_ms);
	if (c->state == CONN_PROTO && c->proto->tick)
		c->proto->tick(c);
	if (c->state != CONN_CLOSING && c->deadline_ms && now_ms >= c->deadline_ms) {
		switch (c->state) {
		case CONN_PROXY:
			refuse_proxy(c, "no complete PROXY header within --handshake-timeout");
			break;
		case CONN_HANDSHAKE:
			c->w->stats.timeouts[STAT_TO_HANDSHAKE]++;
			conn_abort(c, "handshake timeout");
			break;
		case CONN_PROTO:
			c->proto->timeout(c);
			break;
		default:
			c->w->stats.timeouts[STAT_TO_LINGER]++;
			conn_abort(c, NULL);
			break;
		}
	}
	release(c);
}

void conn_tally(const struct conn *c, uint64_t by_state[STAT_CONN_STATES],
		uint64_t by_tls[STAT_TLS_PATHS])
{
	switch (c->state) {
	case CONN_PROXY:
	case CONN_HANDSHAKE:
		by_state[STAT_CONN_HANDSHAKE]++;
		break;
	case CONN_PROTO:
		by_state[c->proto->activity ? c->proto->activity(c) : c->activity]++;
		break;
	case CONN_LINGER:
	case CONN_CLOSING:
		by_state[STAT_CONN_CLOSING]++;
		break;
	}
	by_tls[stats_tls_path(sock_is_tls(c->sock), sock_ktls_tx(c->sock))]++;
}

void conn_resolve(struct conn *c, const struct static_ask *ask, struct static_target *out)
{
	const struct site *site = &c->srv->sites[c->site];
	unsigned per_s = site->cfg->limit_req;

	/* An ACME validation first, as nginx-acme answers it (in nginx's
	 * POST_READ phase, before limit_req's PREACCESS): a CA's validators
	 * ask several at once, pebble's 3 from one address, and a hit needs
	 * a token only the CA was told. A miss is limited as any request. */
	if (resolve_challenge(c->srv, sock_is_tls(c->sock), c->site, ask, out))
		return;
	/* --limit-req: one debug line, as --limit-conn's, not a warning per
	 * refusal a client can cause at will. */
	if (per_s && c->peer_known && c->w->req_rates &&
	    !addr_rate_take(c->w->req_rates, c->site, &c->peer_key, per_s, c->w->clock.now_ms)) {
		c->w->stats.limits[STAT_LIMIT_REQ]++;
		log_msg(LOG_DEBUG, "%s: over --limit-req %u/s: 429", c->peer_text, per_s);
		out->status = 429;
		out->fd = -1;
		out->mem = NULL;
		out->extras = site->extras; /* its error pages; a 429 sends no field */
		out->root = site;
		return;
	}
	resolve_target(c->srv, &c->w->files, c->w->clock.now_sec, sock_is_tls(c->sock), c->site,
		       c->peer_known ? c->peer_key.a : NULL, ask, out);
}

static void shutdown_all(struct worker *w)
{
	for (struct conn *c = w->conns, *next; c; c = next) {
		next = c->next;
		conn_shutdown(c);
	}
}

static void abort_all(struct worker *w, const char *why)
{
	for (struct conn *c = w->conns, *next; c; c = next) {
		next = c->next;
		conn_abort_as(c, ACCESS_END_SHUTDOWN, why);
	}
}

static void log_cut_all(struct worker *w)
{
	for (struct conn *c = w->conns; c; c = c->next)
		log_cut(c);
}

static void tick_all(struct worker *w, struct worker_snapshot *snap, const char *cut)
{
	for (struct conn *c = w->conns, *next; c; c = next) {
		next = c->next;
		conn_tally(c, snap->conns, snap->conns_tls);
		if (cut)
			conn_abort_as(c, ACCESS_END_SHUTDOWN, cut);
		else
			conn_check_deadline(c, w->clock.now_ms);
	}
}

const struct worker_conn_ops conn_worker_ops = {
	.accept = conn_new,
	.shutdown = shutdown_all,
	.abort = abort_all,
	.log_cut = log_cut_all,
	.tick = tick_all,
};
