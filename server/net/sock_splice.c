/* The transport's zero-copy paths: file -> socket by one sendfile on the
 * worker for cached bytes, else file -> leased pipe -> socket by two ring
 * splices (sock.h's "splice" and "sendfile" parts). */
#include "server/net/sock-int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ktls/ktls.h"
#include "ktls/tls.h"
#include "server/core/bufpool.h"
#include "server/core/log.h"
#include "server/net/sock.h"

/* ---- splice: file -> leased pipe -> socket ---- */

bool sock_can_splice(const struct sock *s)
{
	return (!s->ssl || sock_ktls_tx(s)) && s->env->feat->splice;
}

void sock_post_splice(struct sock *s, struct ring_op *op, bool in)
{
	struct io_uring_sqe *sqe;

	if (in) {
		size_t n = s->splice_want < s->pipe->size ? s->splice_want : s->pipe->size;
		sqe = ring_sqe(s->env->ring);
		io_uring_prep_splice(sqe, s->splice_fd, (int64_t)s->splice_off, s->pipe->fd[1], -1,
				     (unsigned)n, 0);
	} else {
		if (sock_ktls_hung_up(s))
			return;
		size_t n = sock_pace_allow(s, s->splice_len);
		if (n == 0)
			return; /* pace_done splices on */
		sqe = ring_sqe(s->env->ring);
		io_uring_prep_splice(sqe, s->pipe->fd[0], -1, s->fd, -1, (unsigned)n,
				     s->splice_more && n == s->splice_len ? SPLICE_F_MORE : 0);
	}
	ring_op_attach(sqe, op);
	s->splice_posted = true;
	s->inflight++;
	s->env->stats->splice_ops++;
}

/* sqe goes out as the sock's poll op: the sock is busy until it completes
 * (sock_poll_done). */
static void post_poll_op(struct sock *s, struct io_uring_sqe *sqe)
{
	ring_op_attach(sqe, &s->poll_op);
	s->splice_posted = true;
	s->inflight++;
}

/* Wait for room in the socket (sock_poll_done). */
void sock_poll_out(struct sock *s)
{
	struct io_uring_sqe *sqe = ring_sqe(s->env->ring);
	io_uring_prep_poll_add(sqe, s->fd, POLLOUT);
	post_poll_op(s, sqe);
}

void sock_pipe_ready(struct pipe_waiter *wt, struct pipe_lease *p)
{
	struct sock *s = container_of(wt, struct sock, pipe_wait);

	s->pipe_waiting = false;
	s->pipe = p;
	if (s->closing) {
		sock_release(s); /* the hold taken while waiting */
		return;
	}
	sock_post_splice(s, &s->splice_in_op, true);
	sock_release(s);
}

void sock_splice_file(struct sock *s, int fd, uint64_t off, size_t len, bool more)
{
	if (s->closing || sock_busy(s) || s->splice_len || len == 0)
		return;
	s->splice_fd = fd;
	s->splice_off = off;
	s->splice_want = len < PIPEPOOL_PIPE_SIZE ? len : PIPEPOOL_PIPE_SIZE;
	s->splice_more = more;
	if (!s->pipe) {
		int err;
		s->pipe = pipepool_lease(s->env->pipes, &s->pipe_wait, &err);
		if (!s->pipe && err) {
			log_msg(LOG_WARN, "no pipe for splice: %s", strerror(-err));
			sock_fail(s, "no pipe for splice");
			return;
		}
		if (!s->pipe) {
			/* sock_pipe_ready posts the splice when one comes back. */
			s->pipe_waiting = true;
			sock_hold(s);
			return;
		}
	}
	sock_post_splice(s, &s->splice_in_op, true);
}

/* The pipe is empty: give it back, so a response holds a pipe only while
 * its bytes are in it. */
static void pipe_give_back(struct sock *s)
{
	if (s->pipe && s->splice_len == 0) {
		pipepool_give_back(s->env->pipes, s->pipe);
		s->pipe = NULL;
	}
}

void sock_splice_in_done(struct ring_op *op, int res, uint32_t flags)
{
	struct sock *s = container_of(op, struct sock, splice_in_op);

	(void)flags;
	s->splice_posted = false;
	if (s->closing)
		goto out;
	s->splice_want = 0;
	s->h->spliced(s->ctx, res);
	if (s->closing)
		goto out;
	if (res <= 0) {
		pipe_give_back(s);
		if (res < 0) {
			if (res != -EPIPE && res != -ECONNRESET)
				log_msg(LOG_WARN, "splice from a file: %s", strerror(-res));
			sock_fail(s, "splice failed");
			goto out;
		}
		s->h->drive(s->ctx);
		goto out;
	}
	s->splice_len = (size_t)res;
	sock_post_splice(s, &s->splice_out_op, false);
out:
	sock_release(s);
}

/* A splice into a full nonblocking socket fails with EAGAIN instead of
 * waiting (io_uring runs splice on an io-wq thread and does not poll for
 * it): wait for room with a poll, then splice again. Blocking sockets would
 * park an io-wq thread per slow client instead. */
void sock_splice_out_done(struct ring_op *op, int res, uint32_t flags)
{
	struct sock *s = container_of(op, struct sock, splice_out_op);

	(void)flags;
	s->splice_posted = false;
	if (s->closing) {
		if (res > 0) /* as sock_send_done's */
			sock_account_sent(s, STAT_VIA_SPLICE, res);
		goto out;
	}
	if (res == -EAGAIN) {
		sock_poll_out(s);
		goto out;
	}
	if (res < 0) {
		if (res != -EPIPE && res != -ECONNRESET)
			log_msg(LOG_WARN, "splice to a socket: %s", strerror(-res));
		sock_fail(s, "splice failed");
		goto out;
	}
	s->splice_len -= (size_t)res;
	sock_account_sent(s, STAT_VIA_SPLICE, res);
	if (s->splice_len > 0) {
		sock_post_splice(s, &s->splice_out_op, false);
		goto out;
	}
	if (s->wire.tx_len == s->tx_sent)
		s->throttled = false;
	pipe_give_back(s);
	s->h->drive(s->ctx);
out:
	sock_release(s);
}

/* The socket has room again: splice on what the pipe holds, or let the
 * protocol sendfile on. */
void sock_poll_done(struct ring_op *op, int res, uint32_t flags)
{
	struct sock *s = container_of(op, struct sock, poll_op);

	(void)flags;
	s->splice_posted = false;
	s->turn_posted = false;
	if (s->closing)
		goto out;
	if (res < 0) {
		sock_fail(s, "poll failed");
		goto out;
	}
	if (res & POLLERR) {
		sock_fail(s, "client went away");
		goto out;
	}
	/* The socket said it takes more: the next body chunk goes whatever
	 * the unsent count says (a reset connection keeps its count, and
	 * waiting again would spin on a POLLOUT that never ends).
	 * wait_a_turn's no-op (res 0) says nothing of the socket. */
	if (res > 0)
		s->room_polled = true;
	if (s->splice_len > 0)
		sock_post_splice(s, &s->splice_out_op, false);
	else
		sock_move_on(s);
out:
	sock_release(s);
}

/* ---- sendfile: cached file bytes, on the worker ---- */

/* A sendfile that sent all it was asked: the next waits for the worker's
 * next turn, by a no-op that completes at once and drives the sock as a
 * POLLOUT would (sock_poll_done). A client that keeps up (loopback, a
 * fast line) never fills its socket, and its download went on sendfile
 * after sendfile within one drive, holding every other connection of the
 * worker: 95 ms at a stretch behind eight cold plain downloads, and a
 * probe's 1 KiB request waited p99 10-120 ms (issue 22). nginx bounds the
 * same with sendfile_max_chunk and posts the rest for later. A POLLOUT
 * there instead waits until the socket has a third of its buffer free: a
 * single cached plain download then cost 0.76 CPU-s per GB against 0.69
 * before (medians of 8, alternating), where with the no-op it cost 0.60
 * against 0.70 (medians of 5). */
static void wait_a_turn(struct sock *s)
{
	struct io_uring_sqe *sqe = ring_sqe(s->env->ring);
	io_uring_prep_nop(sqe);
	post_poll_op(s, sqe);
	s->turn_posted = true;
}

/* nginx's pattern (a nonblocking socket, a poll for room when it is full):
 * one system call moves what the socket takes, where the ring needs two
 * splices through a pipe, each a hop to an io-wq thread and back. */
enum sock_sendfile_result sock_sendfile(struct sock *s, int fd, uint64_t off, size_t len,
					size_t *sent)
{
	*sent = 0;
	if (s->closing)
		return SOCK_SENDFILE_FAILED;
	if (sock_busy(s) || len == 0)
		return SOCK_SENDFILE_WAIT;
	if (sock_ktls_hung_up(s))
		return SOCK_SENDFILE_FAILED;
	if (len > SOCK_SENDFILE_MAX)
		len = SOCK_SENDFILE_MAX;
	size_t n = sock_pace_allow(s, len);
	if (n == 0)
		return SOCK_SENDFILE_WAIT; /* pace_done drives on */
	off_t pos = (off_t)off;
	ssize_t r = sendfile(s->fd, fd, &pos, n);
	s->env->stats->sendfile_calls++;
	if (r > 0) {
		sock_account_sent(s, STAT_VIA_SPLICE, (int)r);
		*sent = (size_t)r;
		/* Short: the socket is full (or the file ends, which the next
		 * call finds). Wait for room rather than try at once. */
		if ((size_t)r < n)
			sock_poll_out(s);
		else
			wait_a_turn(s);
		return SOCK_SENDFILE_SENT;
	}
	if (r == 0)
		return SOCK_SENDFILE_EOF;
	if (errno == EAGAIN) {
		sock_poll_out(s);
		return SOCK_SENDFILE_WAIT;
	}
	if (errno != EPIPE && errno != ECONNRESET)
		log_msg(LOG_WARN, "sendfile: %s", strerror(errno));
	sock_fail(s, "sendfile failed");
	return SOCK_SENDFILE_FAILED;
}
