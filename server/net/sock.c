/* The transport's lifecycle: a sock made, held, released, failed and
 * freed; --limit-rate's pacing and the count of what the socket took;
 * the buffers a quiet connection gives back. */
#include "server/net/sock-int.h"

#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ktls/ktls.h"
#include "ktls/tls_seal.h"
#include "ktls/tls.h"
#include "server/core/bufpool.h"
#include "server/core/log.h"
#include "server/core/pipepool.h"
#include "server/core/ring.h"
#include "server/net/pace.h"
#include "server/net/sock.h"

static void *pool_alloc(void *ctx, size_t want, size_t *cap)
{
	return bufpool_get(ctx, want, cap);
}

static void pool_free(void *ctx, void *buf, size_t cap)
{
	bufpool_put(ctx, buf, cap);
}

/* ---- completions ---- */

static void pace_done(struct ring_op *op, int res, uint32_t flags);

struct sock *sock_new(const struct sock_env *env, int fd, const struct sock_tls *tls,
		      const struct sock_handler *h, void *ctx)
{
	struct sock *s = calloc(1, sizeof(*s));

	if (!s)
		goto sock_fail;
	s->env = env;
	s->h = h;
	s->ctx = ctx;
	s->fd = fd;
	s->splice_fd = -1;
	s->rx_bid = -1;
	s->room = 0; /* asked of the kernel before the first chunk (sock_room) */
	s->take = SOCK_TAKE_FIRST;
	s->follow_room = true; /* until it shows it is fast (sock_tick) */
	s->tick_ms = *env->now_ms;
	s->wire.fd = fd;
	s->wire.tx_alloc = pool_alloc;
	s->wire.tx_free = pool_free;
	s->wire.alloc_ctx = env->bufs;
	s->recv_op.complete = sock_recv_done;
	s->send_op.complete = sock_send_done;
	s->ctrl_op.complete = sock_ctrl_done;
	s->splice_in_op.complete = sock_splice_in_done;
	s->splice_out_op.complete = sock_splice_out_done;
	s->poll_op.complete = sock_poll_done;
	s->pace_op.complete = pace_done;
	s->hup_op.complete = sock_hup_done;
	s->pipe_wait.ready = sock_pipe_ready;
	if (tls) {
		s->wire.ktls_allowed = tls->ktls;
		s->wire.seal_allowed = tls->seal;
		s->ssl = tls_conn_new(tls->srv, &s->wire);
		if (!s->ssl)
			goto sock_fail;
		s->tls_srv = tls->srv;
	}
	return s;
sock_fail:
	free(s);
	close(fd);
	return NULL;
}

static void sock_free(struct sock *s)
{
	struct bufpool *bp = s->env->bufs;

	free(s->holes);
	if (s->pipe_waiting)
		pipepool_cancel(s->env->pipes, &s->pipe_wait);
	if (s->pipe) {
		if (s->splice_len || s->splice_want)
			pipepool_give_back_dirty(s->env->pipes, s->pipe);
		else
			pipepool_give_back(s->env->pipes, s->pipe);
	}
	if (s->ssl) {
		SSL_free(s->ssl);
		tls_server_put(s->tls_srv);
	}
	close(s->fd);
	s->wire.tx_len = 0;
	tls_wire_release_tx(&s->wire);
	tls_wire_free_ctrl(&s->wire);
	free(s->ctrl_rec);
	sock_discard_input(s);
	sock_rx_give_back_if_empty(s);
	bufpool_put(bp, s->plain, s->plain_cap);
	bufpool_put(bp, s->stage, s->stage_cap);
	bufpool_put(bp, s->ct, s->ct_cap);
	tls_sealer_free(s->wire.sealer);
	free(s);
}

void sock_hold(struct sock *s)
{
	s->inflight++;
}

void sock_release(struct sock *s)
{
	if (--s->inflight == 0 && s->closing) {
		s->h->released(s->ctx);
		sock_free(s);
	}
}

bool sock_closed(const struct sock *s)
{
	return s->closing;
}

void sock_abort(struct sock *s)
{
	struct io_uring *ring = s->env->ring;

	if (s->closing)
		return;
	s->closing = true;
	/* Wakes a recv or send waiting in the kernel; the cancels cover the
	 * rest (a splice on an io-wq thread). */
	shutdown(s->fd, SHUT_RDWR);
	if (s->recv_posted)
		ring_cancel(ring, &s->recv_op);
	if (s->send_posted)
		ring_cancel(ring, &s->send_op);
	if (s->ctrl_posted)
		ring_cancel(ring, &s->ctrl_op);
	if (s->splice_posted) {
		ring_cancel(ring, &s->splice_in_op);
		ring_cancel(ring, &s->splice_out_op);
		ring_cancel(ring, &s->poll_op);
	}
	if (s->pace_posted)
		ring_cancel(ring, &s->pace_op);
	if (s->hup_posted)
		ring_cancel(ring, &s->hup_op);
	if (s->pipe_waiting) {
		pipepool_cancel(s->env->pipes, &s->pipe_wait);
		s->pipe_waiting = false;
		s->inflight--; /* the hold taken while waiting; ours follows */
	}
	/* Nothing in flight (the caller holds no reference either): free now. */
	sock_hold(s);
	sock_release(s);
}

/* An owner broke one of the transport's rules (sock.h): a debug build
 * stops here, so that the tests see it; a release build says so once and
 * fails the connection, so that nothing more of it leaves. */
void sock_bug(struct sock *s, const char *what)
{
	log_msg(LOG_ERROR, "BUG: transport: %s; closing the connection", what);
#ifdef KTLSD_DEBUG
	abort();
#endif
	sock_fail(s, what);
}

/* Fails the connection from inside the transport: the owner hears why
 * (its access log line, its state) and aborts. */
void sock_fail(struct sock *s, const char *why)
{
	if (s->closing)
		return;
	sock_hold(s);
	s->h->failed(s->ctx, why);
	sock_abort(s); /* in case the owner did not */
	sock_release(s);
}

/* ---- pacing (--limit-rate) ---- */

void sock_set_rate(struct sock *s, uint64_t rate, uint64_t after)
{
	pace_init(&s->pace, rate, after, *s->env->now_ms);
}

bool sock_throttled(const struct sock *s)
{
	return s->throttled;
}

/* How many of want bytes may go into the socket now. 0: none, and the
 * timer is armed; pace_done moves the queue on when it fires (or the sock
 * failed: the kernel's TLS key may seal no more). The one place where
 * sends and splices are paced, so HTTP/1.1 and HTTP/2 (the whole
 * connection) share one bucket. Unlimited: one branch. */
size_t sock_pace_allow(struct sock *s, size_t want)
{
	if (ktls_tx_key_spent(&s->wire)) { /* the kernel's key: tls_limit.h */
		sock_fail(s, "TLS key usage limit");
		return 0;
	}
	if (!s->pace.rate)
		return want;
	size_t n = pace_grant(&s->pace, want, *s->env->now_ms);
	if (n < want)
		s->throttled = true;
	if (n)
		return n;
	uint64_t ms = pace_wait_ms(&s->pace, want);
	struct io_uring_sqe *sqe = ring_sqe(s->env->ring);
	s->pace_ts.tv_sec = (long long)(ms / 1000);
	s->pace_ts.tv_nsec = (long long)(ms % 1000) * 1000000;
	io_uring_prep_timeout(sqe, &s->pace_ts, 0, 0);
	ring_op_attach(sqe, &s->pace_op);
	s->pace_posted = true;
	s->inflight++;
	return 0;
}

void sock_account_sent(struct sock *s, enum stat_via via, int res)
{
	enum stat_tls tls = stats_tls_path(s->ssl != NULL, sock_ktls_tx(s));

	s->bytes_sent += (uint64_t)res;
	if (res > 0) {
		s->room = (size_t)res < s->room ? s->room - (size_t)res : 0;
		if (!s->found_slow)
			s->room_asked = false; /* sock_room */
	}
	s->env->stats->bytes_out[via][tls] += (uint64_t)res;
	if (res > 0)
		ktls_account_tx(&s->wire, (size_t)res);
	if (s->pace.rate && res > 0)
		pace_spend(&s->pace, (size_t)res);
	if (res > 0)
		s->sent_ms = *s->env->now_ms;
}

void sock_shutdown_write(struct sock *s)
{
	s->shut_wr = true;
	shutdown(s->fd, SHUT_WR);
}

void sock_release_idle_buffers(struct sock *s)
{
	sock_release_buffers(s);
	if (s->ct_len == 0 && !s->ct_posted)
		tls_sealer_idle(s->wire.sealer);
}

void sock_release_tx(struct sock *s)
{
	if (s->wire.tx_len == 0 && !s->wire.tx_busy && !s->wire.tx_fills && s->wire.tx) {
		tls_wire_release_tx(&s->wire);
		s->tx_sent = 0;
		free(s->holes);
		s->holes = NULL;
	}
}

void sock_release_buffers(struct sock *s)
{
	struct bufpool *bp = s->env->bufs;

	sock_rx_give_back_if_empty(s);

	if (s->stage_len == 0 && s->stage && !s->stage_fills) {
		bufpool_put(bp, s->stage, s->stage_cap);
		s->stage = NULL;
		s->stage_cap = 0;
	}
	if (!s->send_posted)
		sock_release_tx(s);
	if (s->ct_len == 0 && !s->ct_posted && s->ct) {
		bufpool_put(bp, s->ct, s->ct_cap);
		s->ct = NULL;
		s->ct_cap = 0;
	}
	if (s->plain_start == s->plain_end && s->plain) {
		bufpool_put(bp, s->plain, s->plain_cap);
		s->plain = NULL;
		s->plain_start = s->plain_end = s->plain_cap = 0;
	}
}

/* Bytes per second the socket took since the last tick, up to now_ms. */
static uint64_t rate_since_tick(const struct sock *s, uint64_t now_ms)
{
	uint64_t ms = now_ms - s->tick_ms;

	return ms ? (s->bytes_sent - s->tick_sent) * 1000 / ms : 0;
}

void sock_env_tick(struct sock_env *env)
{
	env->tcp_tight = env->stats->refused_sends != env->refused_seen;
	env->refused_seen = env->stats->refused_sends;
}

void sock_tick(struct sock *s, uint64_t now_ms)
{
	uint64_t ms = now_ms - s->tick_ms, rate = rate_since_tick(s, now_ms);
	/* A sendfile's wait for the next turn (sock_splice.c) is no wait for
	 * the client: such a download fills no socket. */
	bool waiting = s->send_posted || (s->splice_posted && !s->turn_posted);

	s->tick_sent = s->bytes_sent;
	s->tick_ms = now_ms;
	if (s->room_unbounded || ms == 0 || ms > 10 * 1000)
		return; /* the first tick, or a worker that stood still */
	if (waiting && rate < SOCK_SLOW_BYTES_PER_S) {
		if (!s->follow_room) {
			s->room = 0; /* ask the kernel */
			s->room_asked = false;
		}
		s->follow_room = true;
		if (!s->found_slow)
			s->env->stats->slow_socks++;
		s->found_slow = true;
	} else if (rate >= SOCK_FAST_BYTES_PER_S) {
		sock_stop_following_room(s);
	}
}

bool sock_shown_fast(const struct sock *s)
{
	uint64_t now_ms = *s->env->now_ms;

	return now_ms - s->tick_ms >= SOCK_FAST_PROBE_MS &&
	       s->bytes_sent - s->tick_sent >= SOCK_FAST_PROBE_BYTES &&
	       rate_since_tick(s, now_ms) >= SOCK_FAST_BYTES_PER_S;
}

uint64_t sock_bytes_sent(const struct sock *s)
{
	return s->bytes_sent;
}

/* Waiting for --limit-rate's tokens is not the client being slow: the
 * send timeout does not run meanwhile. */
uint64_t sock_sent_ms(const struct sock *s)
{
	return s->pace_posted ? *s->env->now_ms : s->sent_ms;
}

/* The tokens a send or splice waited for are there (or the sock closed:
 * the cancel). */
static void pace_done(struct ring_op *op, int res, uint32_t flags)
{
	struct sock *s = container_of(op, struct sock, pace_op);

	(void)res;
	(void)flags;
	s->pace_posted = false;
	if (s->closing)
		goto out;
	if (s->splice_len > 0) {
		sock_post_splice(s, &s->splice_out_op, false);
		goto out;
	}
	sock_move_on(s);
out:
	sock_release(s);
}
