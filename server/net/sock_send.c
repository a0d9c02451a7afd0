/* The transport's send queue: room reserved, filled and committed,
 * then posted in order, one send in flight: tx up to the kTLS switch,
 * the switch, tx up to a control record, the record, the rest; holes
 * sent from mapped file pages; records ktlsd seals itself; and the
 * kTLS hang-up watch (sock.h's "output" part). */
#include "server/net/sock-int.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "ktls/ktls.h"
#include "ktls/tls_seal.h"
#include "ktls/tls.h"
#include "server/core/bufpool.h"
#include "server/core/clock.h"
#include "server/core/log.h"
#include "server/core/page_guard.h"
#include "server/core/ring.h"
#include "server/net/seal_slice.h"
#include "server/net/sock.h"

/* ---- output ---- */

bool sock_busy(const struct sock *s)
{
	return s->send_posted || s->ctrl_posted || s->splice_posted || s->pipe_waiting ||
	       s->pace_posted;
}

bool sock_tx_pending(const struct sock *s)
{
	return s->wire.tx_len > s->tx_sent || s->wire.ctrl || s->wire.switch_pending ||
	       s->ct_len > s->ct_sent;
}

bool sock_drained(const struct sock *s)
{
	return !sock_busy(s) && !sock_tx_pending(s) && s->stage_len == 0 && s->splice_len == 0 &&
	       s->splice_want == 0;
}

size_t sock_out_len(const struct sock *s)
{
	return sock_user_tls(s) ? s->stage_len : s->wire.tx_len - s->tx_sent;
}

size_t sock_queued(const struct sock *s)
{
	return s->wire.tx_len - s->tx_sent + (s->ct_len - s->ct_sent) + s->stage_len +
	       s->splice_len;
}

/* TCP_NOTSENT_LOWAT on, or off (0 is the sysctl's default, no mark:
 * tcp_notsent_lowat in include/net/tcp.h); false on a socket without it
 * (a Unix one). */
static bool sock_set_lowat(struct sock *s, bool on)
{
	int mark = on ? SOCK_NOTSENT_LOWAT : 0;

	if (setsockopt(s->fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &mark, sizeof(mark)) < 0)
		return false;
	s->lowat_set = on;
	return true;
}

void sock_stop_following_room(struct sock *s)
{
	s->follow_room = false;
	if (s->lowat_set)
		sock_set_lowat(s, false);
}

/* The room no more than what the socket's send buffer has left: its limit
 * less what it queues, in the kernel's accounting (SO_MEMINFO, linux/
 * sock_diag.h). Under TCP memory pressure (net.ipv4.tcp_mem, reached at
 * 10,000 slow downloads on a 24 GB machine) the kernel lowers that limit
 * to half of what a socket queues (sk_stream_moderate_sndbuf in
 * include/net/sock.h) long before the low-water mark is reached: a send
 * cut to the mark alone waited in the ring holding its buffers (bench/run
 * --slow 10000: 490 KiB of PSS a download near the end, 141 with this).
 * Left as it is where the kernel does not say. */
static void room_within_memory(struct sock *s)
{
	uint32_t mem[SK_MEMINFO_VARS];
	socklen_t len = sizeof(mem);

	if (getsockopt(s->fd, SOL_SOCKET, SO_MEMINFO, mem, &len) < 0 ||
	    len < (SK_MEMINFO_WMEM_QUEUED + 1) * sizeof(mem[0]))
		return;
	size_t left = mem[SK_MEMINFO_SNDBUF] > mem[SK_MEMINFO_WMEM_QUEUED]
			      ? mem[SK_MEMINFO_SNDBUF] - mem[SK_MEMINFO_WMEM_QUEUED]
			      : 0;
	if (left < s->room)
		s->room = left;
}

size_t sock_room(struct sock *s, size_t want)
{
	int unsent;

	if (!s->follow_room || s->room_unbounded)
		return SIZE_MAX;
	if (!s->lowat_set && !sock_set_lowat(s, true)) {
		s->room_unbounded = true;
		return SIZE_MAX;
	}
	if (s->room_polled) {
		/* POLLOUT: below half the low-water mark unsent, so at least
		 * that much fits, unless the memory limit woke it (the socket's
		 * queue fell to two thirds of a limit lowered under pressure:
		 * sk_stream_is_writeable); once, then the count is asked
		 * again after the socket takes bytes, but for a socket found
		 * slow, which waits for the next POLLOUT. */
		s->room_polled = false;
		s->room_asked = true;
		if (s->room < SOCK_NOTSENT_LOWAT / 2)
			s->room = SOCK_NOTSENT_LOWAT / 2;
		room_within_memory(s);
		/* Writable says some fits: a chunk goes, or each POLLOUT
		 * would bring another at once. */
		if (s->room < SOCK_POLLED_ROOM)
			s->room = SOCK_POLLED_ROOM;
		return s->room;
	}
	if (s->room >= want)
		return s->room;
	if (sock_shown_fast(s)) {
		sock_stop_following_room(s);
		return SIZE_MAX;
	}
	/* Asked already, and the socket took nothing since: asked again, the
	 * kernel would say little more. A socket found slow is not asked again after it takes
	 * bytes either: its client reads little meanwhile, and POLLOUT says
	 * when it has (sock_fits waits for it). At 10,000 slow HTTP/1.1
	 * downloads each send came with 2.6 SIOCOUTQNSD and 3.5 SO_MEMINFO
	 * calls, 8% of the server's CPU; over HTTP/2 the asks between two
	 * POLLOUTs found a little room each, and the sends were smaller (28 a
	 * MB, 21 with one ask). Any other socket is asked again once it took
	 * bytes: a fast client has read them by then, and 1 GiB downloads
	 * that waited for POLLOUT instead until they were shown fast cost 8%
	 * more CPU (twice the sends, and 25-65 waits each). */
	if (s->room_asked)
		return s->room;
	s->room_asked = true;
	if (ioctl(s->fd, SIOCOUTQNSD, &unsent) < 0) {
		s->room_unbounded = true; /* a Unix socket: no such question */
		return SIZE_MAX;
	}
	s->room = unsent >= 0 && (size_t)unsent < SOCK_NOTSENT_LOWAT
			  ? SOCK_NOTSENT_LOWAT - (size_t)unsent
			  : 0;
	if (s->room > 0)
		room_within_memory(s);
	return s->room;
}

size_t sock_fits(struct sock *s, size_t want)
{
	size_t queued = sock_queued(s), fits = sock_room(s, queued + want);

	if (fits == SIZE_MAX)
		return SIZE_MAX;
	size_t take = s->env->tcp_tight && s->take > SOCK_TAKE_FIRST ? SOCK_TAKE_FIRST : s->take;
	if (fits > take)
		fits = take;
	/* What the socket takes beyond what is queued, less the records'
	 * headers and tags (22 bytes of 16 KiB under TLS 1.3). */
	fits = fits > queued ? fits - queued : 0;
	fits -= fits / 512;
	if (fits >= SOCK_ROOM_MIN)
		return fits;
	if (queued == 0 && !sock_busy(s))
		sock_wait_room(s);
	return 0;
}

/* The cipher context stays: made again at every POLLOUT, its allocation
 * and key setup were 3.5% of the server's CPU at 10,000 slow HTTP/2
 * downloads (malloc, free and OpenSSL's init under tls_seal), for some
 * 1 KiB a download. */
void sock_wait_room(struct sock *s)
{
	sock_release_buffers(s);
	s->room = 0; /* POLLOUT says how much (sock_room) */
	s->env->stats->room_waits++;
	sock_poll_out(s);
}

char *sock_out_reserve(struct sock *s, size_t len, size_t *room)
{
	if (sock_user_tls(s)) {
		if (!s->stage) {
			s->stage = bufpool_get(s->env->bufs, STAGE_CAP, &s->stage_cap);
			if (!s->stage)
				return NULL;
		}
		if (s->stage_cap - s->stage_len < len)
			return NULL;
		*room = s->stage_cap - s->stage_len;
		return s->stage + s->stage_len;
	}
	/* The send buffer itself: not while a send reads it (a send of
	 * sealed records reads ct, not tx). */
	if ((s->send_posted && !s->ct_posted) || tls_wire_reserve(&s->wire, len) < 0)
		return NULL;
	*room = s->wire.tx_cap - s->wire.tx_len;
	return s->wire.tx + s->wire.tx_len;
}

void sock_out_commit(struct sock *s, size_t n)
{
	bool stage = sock_user_tls(s);

	if (stage ? s->stage_fills : s->wire.tx_fills) {
		sock_bug(s, "a commit of bytes a read may still be writing");
		return;
	}
	if (stage)
		s->stage_len += n;
	else
		s->wire.tx_len += n;
}

void sock_fill_begin(struct sock *s)
{
	if (sock_user_tls(s))
		s->stage_fills++;
	else
		s->wire.tx_fills++;
}

void sock_fill_end(struct sock *s)
{
	unsigned *fills = sock_user_tls(s) ? &s->stage_fills : &s->wire.tx_fills;

	if (*fills == 0) {
		sock_bug(s, "a fill ended that never began");
		return;
	}
	(*fills)--;
}

int sock_write(struct sock *s, const void *data, size_t len)
{
	if (s->send_posted || s->stage_fills || s->wire.tx_fills)
		return -EBUSY;
	if (sock_user_tls(s))
		return tls_write(s->ssl, data, len) == TLS_DONE ? 0 : -EIO;
	return tls_wire_append(&s->wire, data, len);
}

void sock_send(struct sock *s, int msg_flags)
{
	/* Busy includes a wait for POLLOUT (sock_send_park, sock_wait_room):
	 * a send posted beside it would find the socket full and park again,
	 * a second poll on the one poll_op. */
	if (s->closing || sock_busy(s))
		return;
	/* User-space TLS: seal the stage into tx once the previous chunk's
	 * ciphertext has left, so the next file read fills the stage while
	 * this one is sent; never under an open fill, which writes at
	 * stage_len (as tx_restart never moves tx under one). */
	if (sock_user_tls(s) && s->stage_len > 0 && !s->stage_fills &&
	    s->wire.tx_len == s->tx_sent) {
		if (tls_write(s->ssl, s->stage, s->stage_len) != TLS_DONE) {
			sock_fail(s, "TLS write failed");
			return;
		}
		s->stage_len = 0;
	}
	s->send_flags = msg_flags;
	sock_post_next_send(s);
}

/* The first queued control record, off the queue. */
static struct tls_ctrl_record *ctrl_pop(struct tls_wire *wi)
{
	struct tls_ctrl_record *r = wi->ctrl;

	wi->ctrl = r->next;
	if (!wi->ctrl)
		wi->ctrl_tail = NULL;
	return r;
}

static void post_ctrl(struct sock *s)
{
	struct tls_ctrl_record *r = ctrl_pop(&s->wire);
	struct cmsghdr *c;

	s->ctrl_rec = r;
	memset(&s->ctrl_msg, 0, sizeof(s->ctrl_msg));
	memset(s->ctrl_cmsg, 0, sizeof(s->ctrl_cmsg));
	s->ctrl_iov.iov_base = r->data;
	s->ctrl_iov.iov_len = r->len;
	s->ctrl_msg.msg_iov = &s->ctrl_iov;
	s->ctrl_msg.msg_iovlen = 1;
	s->ctrl_msg.msg_control = s->ctrl_cmsg;
	s->ctrl_msg.msg_controllen = sizeof(s->ctrl_cmsg);
	c = CMSG_FIRSTHDR(&s->ctrl_msg);
	c->cmsg_level = KTLS_SOL_TLS;
	c->cmsg_type = KTLS_SET_RECORD_TYPE;
	c->cmsg_len = CMSG_LEN(1);
	*CMSG_DATA(c) = r->type;
	struct io_uring_sqe *sqe = ring_sqe(s->env->ring);
	io_uring_prep_sendmsg(sqe, s->fd, &s->ctrl_msg, MSG_NOSIGNAL);
	ring_op_attach(sqe, &s->ctrl_op);
	s->ctrl_posted = true;
	s->inflight++;
	s->env->stats->send_ops++;
}

/* The iovecs for tx[tx_sent, end) with the holes' bytes in their places.
 * false: no hole in that range (a plain send does). */
static bool gather(struct sock *s, size_t end)
{
	struct tx_holes *th = s->holes;
	size_t pos = s->tx_sent;
	int n = 0;

	for (unsigned i = 0; i < th->n && pos < end; i++) {
		size_t at = th->h[i].at, hend = at + th->h[i].len;
		if (hend <= pos)
			continue;
		if (at >= end)
			break;
		if (at > pos)
			th->iov[n++] = (struct iovec){s->wire.tx + pos, at - pos};
		size_t from = pos > at ? pos - at : 0;
		size_t to = (hend < end ? hend : end) - at;
		th->iov[n++] = (struct iovec){(char *)th->h[i].src + from, to - from};
		pos = at + to;
	}
	if (n == 0)
		return false;
	if (pos < end)
		th->iov[n++] = (struct iovec){s->wire.tx + pos, end - pos};
	memset(&th->msg, 0, sizeof(th->msg));
	th->msg.msg_iov = th->iov;
	th->msg.msg_iovlen = (size_t)n;
	return true;
}

bool sock_out_map(struct sock *s, const char *hole, const void *src, size_t len)
{
	struct tx_holes *th = s->holes;
	size_t at = (size_t)(hole - s->wire.tx);

	if (!th || th->n == SOCK_HOLES_MAX || at > s->wire.tx_cap || len > s->wire.tx_cap - at)
		return false;
	unsigned i = th->n;
	while (i > 0 && th->h[i - 1].at > at) {
		th->h[i] = th->h[i - 1];
		i--;
	}
	th->h[i].at = at;
	th->h[i].len = len;
	th->h[i].src = src;
	th->n++;
	return true;
}

bool sock_out_maps_into(const struct sock *s, const char *base, size_t len)
{
	const struct tx_holes *th = s->holes;

	for (unsigned i = 0; th && i < th->n; i++)
		if (th->h[i].at + th->h[i].len > s->tx_sent && th->h[i].src >= base &&
		    th->h[i].src < base + len)
			return true;
	return false;
}

static unsigned map_room(struct sock *s)
{
	if (!s->holes && !(s->holes = calloc(1, sizeof(*s->holes))))
		return 0;
	return SOCK_HOLES_MAX - s->holes->n;
}

unsigned sock_out_map_room(struct sock *s)
{
	/* The kernel reads mapped pages (it fails a send with EFAULT where
	 * the file shrank), or ktlsd's sealer does, under page_guard (seal_tx);
	 * OpenSSL's records are made from bytes a read put in tx. */
	return s->ssl && !s->wire.ktls_tx ? 0 : map_room(s);
}

unsigned sock_out_seal_map_room(struct sock *s)
{
	/* ktlsd's sealer reads them, under page_guard; OpenSSL's records
	 * (--tls-records openssl) are made from the stage, which a read
	 * fills. */
	return s->wire.ktls_tx && s->wire.sealing ? map_room(s) : 0;
}

/* All of tx is out (or sealed): start over at its beginning (control
 * records queued behind it now stand at 0). Not while a read writes at
 * tx + tx_len: what it writes is committed there, after it ends. */
static bool tx_restart(struct sock *s)
{
	struct tls_wire *wi = &s->wire;

	if (wi->tx_fills)
		return false;
	for (struct tls_ctrl_record *r = wi->ctrl; r; r = r->next)
		r->at = 0;
	wi->tx_len = s->tx_sent = 0;
	if (s->holes)
		s->holes->n = 0;
	return true;
}

/* Room in ct for the records of len bytes of plaintext. */
static bool ct_reserve(struct sock *s, size_t len)
{
	size_t want = tls_seal_room(len);

	if (s->ct_cap >= want)
		return true;
	bufpool_put(s->env->bufs, s->ct, s->ct_cap);
	s->ct = bufpool_get(s->env->bufs, want, &s->ct_cap);
	if (!s->ct)
		s->ct_cap = 0;
	return s->ct != NULL;
}

/* One tls_seal, as page_guard_call runs it. */
struct seal_job {
	struct tls_sealer *sealer;
	unsigned char type;
	const struct iovec *iov;
	int iovcnt;
	size_t len;
	unsigned char *out;
	long n;
};

static void seal_job_run(void *arg)
{
	struct seal_job *j = arg;

	j->n = tls_seal(j->sealer, j->type, j->iov, j->iovcnt, j->len, j->out);
}

/* Seals len bytes of iov, of record type, into ct, which is empty. Where some of them are a file's mapped
 * pages (mapped: sock_out_map), the read is guarded: a file that shrank
 * fails the response as a send from its pages does (sock_send_done). */
static bool seal_iov(struct sock *s, unsigned char type, const struct iovec *iov, int iovcnt,
		     size_t len, bool mapped)
{
	struct seal_job j = {s->wire.sealer, type, iov, iovcnt, len, NULL, 0};

	if (!ct_reserve(s, len)) {
		sock_fail(s, "out of memory");
		return false;
	}
	j.out = s->ct;
	if (!mapped) {
		seal_job_run(&j);
	} else if (!page_guard_call(iov, iovcnt, seal_job_run, &j)) {
		/* The sealer stopped inside a record: it cannot go on. */
		s->h->spliced(s->ctx, 0);
		if (!s->closing)
			sock_fail(s, "file shrank under a seal from its pages");
		return false;
	}
	if (j.n < 0) {
		sock_fail(s, "TLS seal failed");
		return false;
	}
	s->ct_len = (size_t)j.n;
	s->ct_sent = 0;
	return true;
}

static bool seal(struct sock *s, unsigned char type, const char *data, size_t len)
{
	struct iovec iov = {(void *)data, len};

	return seal_iov(s, type, &iov, 1, len, false);
}

/* tx[tx_sent, tx_sent + len), with what of it leaves from mapped pages. */
static bool seal_tx(struct sock *s, size_t len)
{
	if (s->holes && gather(s, s->tx_sent + len))
		return seal_iov(s, 23, s->holes->iov, (int)s->holes->msg.msg_iovlen, len, true);
	return seal(s, 23, s->wire.tx + s->tx_sent, len);
}

/* A send that finds the socket full waits inside the ring until the
 * socket takes all of it, holding its buffer all that while: a slow
 * client's socket is full most of the time, and at 10,000 slow downloads
 * the kernel's TCP memory (net.ipv4.tcp_mem) ran out, so the sockets took
 * far less than their room said and each download held up to 256 KiB of
 * sealed records and its next chunk in sends parked in the ring (bench/run
 * --slow 10000: 184 KiB of PSS a download 3 s after the ramp, 263 at its
 * peak, against nginx's 121). So a socket that follows its room sends with
 * MSG_DONTWAIT, which makes the ring complete the send with what the
 * socket took (or -EAGAIN) rather than wait (io_sendmsg_prep sets
 * REQ_F_NOWAIT for it: io_uring/net.c in 6.1, io_uring.c before; tried on
 * 6.18, test_sock_send has the rest), and what it did not take
 * waits for POLLOUT in a buffer no larger than it (sock_send_park).
 * A fast socket, which the kernel drains at once, keeps the parked send:
 * one operation, no poll. */
static int send_nowait(struct sock *s, size_t len)
{
	s->send_len = len;
	s->send_nowait = s->follow_room && s->lowat_set && !s->room_unbounded && !s->ring_waits;
	s->send_promised = s->room >= len;
	return s->send_nowait ? MSG_DONTWAIT : 0;
}

static void post_ct_send(struct sock *s)
{
	struct io_uring_sqe *sqe = ring_sqe(s->env->ring);
	int more = s->wire.tx_len > s->tx_sent || s->wire.ctrl ? MSG_MORE : s->send_flags;
	size_t len = s->ct_len - s->ct_sent;

	io_uring_prep_send(sqe, s->fd, s->ct + s->ct_sent, len,
			   MSG_NOSIGNAL | more | send_nowait(s, len));
	ring_op_attach(sqe, &s->send_op);
	s->send_posted = true;
	s->ct_posted = true;
	s->inflight++;
	s->env->stats->send_ops++;
}

/* ---- hang-up watch (kernel TLS) ---- */

/* A write cannot be trusted to say that the client is gone once the kernel
 * encrypts. Linux 6.1's kTLS (net/tls/tls_sw.c) returns the bytes it took
 * into a record even when pushing that record to TCP fails, and its
 * sk_stream_error() on the way out clears the socket's error when that
 * error is EPIPE, which is what a reset in CLOSE_WAIT leaves: a client that
 * closes with nothing unread sends a FIN, the next data draws its RST, and
 * when the RST lands inside a sendfile the error is gone with it. Every
 * later sendfile or splice into the dead connection then succeeds. In the
 * kTLS guest (tests/uml/guest-tests, section 6) 740 sendfiles put 48 MB into
 * a reset connection once its error had been read; plain TCP fails each
 * with EPIPE. ktlsd paced a 32 MiB download, in 1 to 4 of 40 tries, to a
 * client that had left 8 s before, and logged it complete (nstat:
 * TCPAbortOnData, no TCPAbortOnClose: the FIN first). The socket itself knows: poll says
 * POLLHUP (TCP_CLOSE). So a poll per kTLS connection waits for that; it
 * costs no wakeup while the connection lives (the ring drops a wakeup that
 * carries none of the events asked for). The ring always reports the
 * peer's FIN too (POLLRDHUP), and a poll armed after it would complete at
 * once: from then on each write asks the socket first (sock_ktls_hung_up). */
static void watch_hangup(struct sock *s)
{
	if (s->hup_posted || s->closing)
		return;
	struct io_uring_sqe *sqe = ring_sqe(s->env->ring);
	io_uring_prep_poll_add(sqe, s->fd, POLLERR | POLLHUP);
	ring_op_attach(sqe, &s->hup_op);
	s->hup_posted = true;
	s->inflight++;
}

/* Our FIN (sock_shutdown_write) and then the peer's are a hang-up too: a
 * graceful close, which the reads see. */
static bool hung_up(const struct sock *s, int revents)
{
	return (revents & POLLERR) || ((revents & POLLHUP) && !s->shut_wr);
}

static void fail_hung_up(struct sock *s)
{
	s->env->stats->ktls_hangups++;
	sock_fail(s, "client went away (hang-up)");
}

void sock_hup_done(struct ring_op *op, int res, uint32_t flags)
{
	struct sock *s = container_of(op, struct sock, hup_op);

	(void)flags;
	s->hup_posted = false;
	if (!s->closing && res > 0) {
		if (hung_up(s, res))
			fail_hung_up(s);
		else if (res & POLLRDHUP)
			s->peer_fin = true;
	}
	sock_release(s);
}

bool sock_ktls_hung_up(struct sock *s)
{
	if (!s->peer_fin || s->closing)
		return s->closing;
	struct pollfd p = {.fd = s->fd, .events = 0};
	if (poll(&p, 1, 0) == 1 && hung_up(s, p.revents)) {
		fail_hung_up(s);
		return true;
	}
	return false;
}

/* Posts the next piece of the queue, in order: tx up to the kTLS switch,
 * the switch, tx up to the next control record, the record, the rest.
 * After a switch to ktlsd's sealer, each piece is sealed into ct first. */
void sock_post_next_send(struct sock *s)
{
	struct tls_wire *wi = &s->wire;

	if (s->closing || sock_busy(s) || sock_ktls_hung_up(s))
		return;
	for (;;) {
		size_t end = wi->tx_len;
		if (s->ct_sent < s->ct_len) {
			post_ct_send(s);
			return;
		}
		if (wi->switch_pending) {
			if (s->tx_sent == wi->switch_at) {
				if (ktls_switch_tx(wi) < 0) {
					/* OpenSSL was told kTLS is on: no way back. */
					log_msg(LOG_WARN, "%s: TX keys refused: %s",
						wi->sealing ? "TLS sealer" : "kernel TLS",
						strerror(wi->ktls_error));
					sock_fail(s, "kTLS switch failed");
					return;
				}
				if (!wi->sealing)
					watch_hangup(s);
				continue;
			}
			end = wi->switch_at;
		} else if (wi->ctrl) {
			if (s->tx_sent == wi->ctrl->at) {
				if (!wi->sealer) {
					post_ctrl(s);
					return;
				}
				struct tls_ctrl_record *r = ctrl_pop(wi);
				bool ok = seal(s, r->type, r->data, r->len);
				free(r);
				if (!ok)
					return;
				continue;
			}
			end = wi->ctrl->at;
		}
		if (s->tx_sent < end && wi->sealer && !wi->switch_pending) {
			size_t len = sock_pace_allow(s, end - s->tx_sent < SEAL_MAX ? end - s->tx_sent
									: SEAL_MAX);
			if (len == 0)
				return;
			struct seal_slice *slice = s->env->seal_slice;
			if (slice)
				len = seal_slice_take(slice, len);
			/* Timed only where the slice learns from it, not for
			 * each small response. */
			bool timed = slice && len >= SEAL_SLICE_MIN;
			uint64_t t0 = timed ? clock_ns() : 0;
			if (!seal_tx(s, len))
				return;
			if (timed)
				seal_slice_took(slice, len, clock_ns() - t0);
			s->tx_sent += len;
			if (s->tx_sent == wi->tx_len && tx_restart(s) && s->follow_room)
				sock_release_tx(s); /* idle until the records are out (sock_body_room) */
			continue;
		}
		if (s->tx_sent < end) {
			int more = end == wi->tx_len ? s->send_flags : MSG_MORE;
			size_t n = sock_pace_allow(s, end - s->tx_sent);
			if (n == 0)
				return;
			if (n < end - s->tx_sent) {
				/* Cut by the rate: the cut leaves now, not corked
				 * until the next send a tenth of a second later. */
				end = s->tx_sent + n;
				more = 0;
			}
			struct io_uring_sqe *sqe = ring_sqe(s->env->ring);
			more |= send_nowait(s, end - s->tx_sent);
			if (s->holes && gather(s, end))
				io_uring_prep_sendmsg(sqe, s->fd, &s->holes->msg, MSG_NOSIGNAL | more);
			else
				io_uring_prep_send(sqe, s->fd, wi->tx + s->tx_sent, end - s->tx_sent,
						   MSG_NOSIGNAL | more);
			ring_op_attach(sqe, &s->send_op);
			s->send_posted = true;
			wi->tx_busy = true;
			s->inflight++;
			s->env->stats->send_ops++;
			return;
		}
		if (s->tx_sent == wi->tx_len && wi->tx_len > 0 && tx_restart(s)) {
			if (s->splice_len == 0)
				s->throttled = false;
			continue;
		}
		return;
	}
}

/* After a send, a control record or a wait for tokens: posts what comes
 * next, and lets the protocol move on when nothing is in flight, or only
 * sealed records with tx empty (it may fill tx meanwhile: the next file
 * read). */
void sock_move_on(struct sock *s)
{
	sock_post_next_send(s);
	if (!s->closing && !s->pace_posted &&
	    ((!s->send_posted && !s->ctrl_posted) || (s->ct_posted && s->wire.tx_len == 0)))
		s->h->drive(s->ctx);
}

/* The sealed records a full socket did not take move to a buffer no
 * larger than they need (they can only be sent, never sealed again: their
 * sequence numbers are spent). At most half of ct_cap, they fit a smaller
 * class (bufpool.h), or an allocation of exactly their size. */
static void ct_shrink(struct sock *s)
{
	size_t left = s->ct_len - s->ct_sent, cap;

	if (left == 0 || left > s->ct_cap / 2)
		return;
	unsigned char *ct = bufpool_get(s->env->bufs, left, &cap);
	if (!ct)
		return;
	memcpy(ct, s->ct + s->ct_sent, left);
	bufpool_put(s->env->bufs, s->ct, s->ct_cap);
	s->ct = ct;
	s->ct_cap = cap;
	s->ct_len = left;
	s->ct_sent = 0;
}

/* A send the socket did not take all of (send_nowait): the rest waits
 * for POLLOUT (sock_poll_done posts it again) in as little memory as it
 * needs, and the buffers that hold nothing go back. */
static void sock_send_park(struct sock *s)
{
	s->resend = true;
	ct_shrink(s);
	sock_wait_room(s);
}

void sock_send_done(struct ring_op *op, int res, uint32_t flags)
{
	struct sock *s = container_of(op, struct sock, send_op);
	bool nowait = s->send_nowait, resend = s->resend;

	(void)flags;
	s->send_posted = false;
	s->send_nowait = false;
	s->resend = false;
	s->wire.tx_busy = false;
	if (s->closing) {
		if (res > 0) /* gone to the client: the access log counts it (conn.h's log_cut) */
			sock_account_sent(s, STAT_VIA_SEND, res);
		goto out;
	}
	if (res == -EAGAIN && nowait)
		res = 0;
	if (res == -EFAULT && s->holes) {
		/* Mapped file pages (sock_out_map) past the end of a file that
		 * shrank: told as a splice that found the file short. */
		s->h->spliced(s->ctx, 0);
		if (!s->closing)
			sock_fail(s, "file shrank under a send from its pages");
		goto out;
	}
	if (res < 0) {
		sock_fail(s, res == -EPIPE || res == -ECONNRESET ? "client went away" : "send failed");
		goto out;
	}
	if (s->ct_posted) {
		s->ct_posted = false;
		s->ct_sent += (size_t)res;
		if (s->ct_sent == s->ct_len)
			s->ct_len = s->ct_sent = 0;
	} else {
		s->tx_sent += (size_t)res;
	}
	sock_account_sent(s, STAT_VIA_SEND, res);
	if (res > 0)
		s->ring_waits = false;
	if (nowait && (size_t)res < s->send_len) {
		if (s->send_promised) {
			/* Taken less of than its room said: it takes no more
			 * at once for now; less than half is not the records'
			 * overhead in the kernel's count (an skb's truesize)
			 * but a refusal. */
			s->take = (size_t)res > SOCK_POLLED_ROOM ? (size_t)res : SOCK_POLLED_ROOM;
			if ((size_t)res < s->send_len / 2)
				s->env->stats->refused_sends++;
		}
		if (res == 0 && resend) {
			/* POLLOUT came and still nothing was taken (kTLS needs
			 * TCP memory for a whole record, which plain TCP's
			 * tcp_wmem[0] floor does not give it): waiting for
			 * POLLOUT again would spin, so this send waits in the
			 * ring, holding its buffer, as a fast socket's does. */
			s->ring_waits = true;
			sock_move_on(s);
			goto out;
		}
		sock_send_park(s);
		goto out;
	}
	if (nowait && s->take < SOCK_NOTSENT_LOWAT)
		s->take *= 2;
	sock_move_on(s);
out:
	sock_release(s);
}

void sock_ctrl_done(struct ring_op *op, int res, uint32_t flags)
{
	struct sock *s = container_of(op, struct sock, ctrl_op);

	(void)flags;
	s->ctrl_posted = false;
	free(s->ctrl_rec);
	s->ctrl_rec = NULL;
	if (s->closing)
		goto out;
	if (res < 0) {
		sock_fail(s, res == -EPIPE || res == -ECONNRESET ? "client went away"
							  : "control record send failed");
		goto out;
	}
	sock_move_on(s);
out:
	sock_release(s);
}
