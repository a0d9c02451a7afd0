#include "server/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "server/core/clock.h"
#include "server/conf/server.h"
#include "server/core/stats.h"

#define RING_ENTRIES 1024
#define TICK_MS 250

/* How long after SIGINT a cut response's line may wait for its
 * connection's operations in flight (a read from a slow disk, a listing):
 * half of what the process waits for the workers before it exits, since a
 * tick may come TICK_MS late. */
#define QUIT_LOG_MS (WORKER_QUIT_WAIT_S * 1000 / 2)

#define ACCEPT_RETRY_MS 100

/* A loop turn submits once at its end, unless it has run this long. */
#define FLUSH_AFTER_NS 100000

/* SO_REUSEPORT lets a second server (another ktlsd, a leftover one) bind
 * the same port and silently take half the connections. A socket without
 * it cannot bind a port someone listens on: probe with one first. */
static int port_is_free(const struct config_listen *l)
{
	int one = 1, rc = 0;
	int fd = socket(l->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    (l->addr.ss_family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0) ||
	    bind(fd, (const struct sockaddr *)&l->addr, l->addrlen) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

static int listen_socket(const struct config_listen *l)
{
	int one = 1;
	int fd = socket(l->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* SO_REUSEPORT: every worker has its own socket on the same port and
	 * the kernel spreads connections, so no accept lock or thundering herd. */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
	    (l->addr.ss_family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0) ||
	    bind(fd, (const struct sockaddr *)&l->addr, l->addrlen) < 0 || listen(fd, 4096) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

static void on_accept(struct ring_op *op, int res, uint32_t flags);
static void on_retry(struct ring_op *op, int res, uint32_t flags);
static void on_tick(struct ring_op *op, int res, uint32_t flags);
static void on_wake(struct ring_op *op, int res, uint32_t flags);

int worker_prepare(struct worker *w, unsigned id, const struct server *srv,
		   const struct worker_conn_ops *ops)
{
	const struct config *cfg = srv->cfg;
	char err[512];

	w->id = id;
	w->conn_ops = ops;
	w->srv = server_get(srv);
	w->wake_fd = -1;
	w->alog.fd = -1;
	for (size_t i = 0; i < cfg->nlisten + cfg->nlisten_plain; i++) {
		bool tls = i < cfg->nlisten;
		const struct config_listen *cl = tls ? &cfg->listen[i] : &cfg->listen_plain[i - cfg->nlisten];
		int fd;
		if (cl->fd > 0) {
			/* Passed by the service manager (listen_fds.h), or a
			 * Unix socket bound once before the workers
			 * (listen_unix.h), since SO_REUSEPORT cannot give each
			 * worker one of its own: each accepts through a
			 * duplicate of its own. */
			fd = fcntl(cl->fd, F_DUPFD_CLOEXEC, 0);
			fd = fd < 0 ? -errno : fd;
		} else {
			fd = id == 0 ? port_is_free(cl) : 0;
			if (fd == 0)
				fd = listen_socket(cl);
		}
		if (fd < 0) {
			log_msg(LOG_ERROR, "listen %s: %s", cl->text, strerror(-fd));
			return fd;
		}
		struct listener *l = &w->listeners[w->nlisteners++];
		l->fd = fd;
		l->tls = tls;
		l->inherited = cl->fd > 0 && !cl->bound_here;
		l->is_unix = cl->addr.ss_family == AF_UNIX;
		l->proxy = cl->proxy_protocol;
		l->w = w;
		/* On a socket every worker shares (an inherited one, a Unix one), a
		 * multishot accept would leave the first worker's wait entry
		 * first in the queue for good, and that worker would take
		 * every connection (201 of 201, 2 workers, 8 curls at once).
		 * A one-shot accept re-armed after each connection queues
		 * the worker behind the others: 106 and 101 of 207. */
		l->multishot = cl->fd <= 0;
		l->accept_op.complete = on_accept;
		l->retry_op.complete = on_retry;
	}
	w->tick_op.complete = on_tick;
	w->sock_env = (struct sock_env){.ring = &w->ring,
					.bufs = &w->bufs,
					.rx_ring = &w->rx_ring,
					.pipes = &w->pipes,
					.feat = &w->feat,
					.stats = &w->stats,
					.now_ms = &w->clock.now_ms,
					.seal_slice = &w->seal_slice};
	seal_slice_init(&w->seal_slice);
	filecache_init(&w->files, &w->clock);
	w->wake_op.complete = on_wake;
	/* With --user, the pipes for splice are made now, as root: see
	 * pipepool.h. */
	if (cfg->user && pipepool_init(&w->pipes, PIPEPOOL_KEEP) < 0)
		log_msg(LOG_WARN, "worker %u: pipes for splice: %s; made later instead", id,
			strerror(errno));
	if (cfg->nlisten > 0) {
		int rc = tls_server_new(&w->tls, &srv->tls, err, sizeof(err));
		if (rc < 0) {
			log_msg(LOG_ERROR, "%s", err);
			return rc;
		}
	}
	w->wake_fd = eventfd(0, EFD_CLOEXEC);
	if (w->wake_fd < 0)
		return -errno;
	access_log_init(&w->alog, srv->access_log, cfg->access_log_format);
	w->boundary_seed = ((uint64_t)id << 56) ^ (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)w;
	sem_init(&w->ready, 0, 0);
	w->sem_ready = true;
	return 0;
}

static void arm_accept(struct listener *l)
{
	struct io_uring_sqe *sqe = ring_sqe(&l->w->ring);
	if (l->multishot)
		io_uring_prep_multishot_accept(sqe, l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	else
		io_uring_prep_accept(sqe, l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	ring_op_attach(sqe, &l->accept_op);
	l->armed = true;
}

static void arm_tick(struct worker *w)
{
	struct io_uring_sqe *sqe = ring_sqe(&w->ring);
	w->tick.tv_sec = 0;
	w->tick.tv_nsec = TICK_MS * 1000000L;
	io_uring_prep_timeout(sqe, &w->tick, 0, 0);
	ring_op_attach(sqe, &w->tick_op);
}

static void arm_wake(struct worker *w)
{
	struct io_uring_sqe *sqe = ring_sqe(&w->ring);
	io_uring_prep_read(sqe, w->wake_fd, &w->wake_value, sizeof(w->wake_value), 0);
	ring_op_attach(sqe, &w->wake_op);
}

static void on_accept(struct ring_op *op, int res, uint32_t flags)
{
	struct listener *l = container_of(op, struct listener, accept_op);
	struct worker *w = l->w;

	if (!(flags & IORING_CQE_F_MORE))
		l->armed = false;
	if (res >= 0) {
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		int one = 1;

		w->stats.accepted++;
		if (w->stopping || w->nconns >= w->srv->cfg->max_connections) {
			if (!w->stopping)
				w->stats.limits[STAT_LIMIT_CONNECTIONS]++;
			close(res);
		} else {
			/* Responses leave in large writes; Nagle would only delay
			 * the tail of each one. */
			if (!l->is_unix)
				setsockopt(res, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			if (getpeername(res, (struct sockaddr *)&peer, &plen) < 0) {
				memset(&peer, 0, sizeof(peer));
				plen = sizeof(peer);
			}
			w->conn_ops->accept(w, res, l->tls, l->proxy, (struct sockaddr *)&peer,
					    plen);
		}
	} else if (res == -EINVAL && l->multishot) {
		/* Kernel before 5.19: fall back to one accept per completion. */
		l->multishot = false;
	} else if (res == -EMFILE || res == -ENFILE || res == -ENOBUFS || res == -ENOMEM) {
		if (res == -EMFILE || res == -ENFILE)
			w->stats.limits[STAT_LIMIT_FDS]++;
		if (!w->accept_paused_logged)
			log_msg(LOG_WARN, "worker %u: accept: %s; pausing accepts briefly", w->id,
				strerror(-res));
		w->accept_paused_logged = true;
		w->accept_failed_ms = w->clock.now_ms;
		if (!l->armed && !w->stopping) {
			struct io_uring_sqe *sqe = ring_sqe(&w->ring);
			l->retry.tv_sec = 0;
			l->retry.tv_nsec = ACCEPT_RETRY_MS * 1000000L;
			io_uring_prep_timeout(sqe, &l->retry, 0, 0);
			ring_op_attach(sqe, &l->retry_op);
			l->armed = true; /* the retry timer stands in for the accept */
		}
		return;
	} else if (res == -ECANCELED) {
		return;
	}
	/* One log line per episode: an accept that slips through while fds
	 * are still short (one closed, taken at once) does not end it; a
	 * second without failures does. */
	if (res >= 0 && w->clock.now_ms - w->accept_failed_ms > 1000)
		w->accept_paused_logged = false;
	if (!l->armed && !w->stopping)
		arm_accept(l);
}

static void begin_stop(struct worker *w)
{
	if (w->stopping)
		return;
	w->stopping = true;
	w->stop_deadline_ms = w->clock.now_ms + w->srv->cfg->shutdown_grace_ms;
	for (size_t i = 0; i < w->nlisteners; i++) {
		ring_cancel(&w->ring, &w->listeners[i].accept_op);
		/* Closing our SO_REUSEPORT socket sends new connections to no one:
		 * they are refused, as a stopping server should (a shut Unix
		 * socket refuses them too, for all workers). An inherited
		 * socket is the service manager's too: shut down, it would stop
		 * listening for the next ktlsd as well, so it is left alone and
		 * new connections wait in its backlog for that one. */
		if (!w->listeners[i].inherited)
			shutdown(w->listeners[i].fd, SHUT_RD);
	}
	w->conn_ops->shutdown(w);
}

/* Switches new connections to next, whose reference it takes (and drops
 * the running one's: connections hold their own). Refuses (and keeps the
 * running configuration) a next without TLS while this worker has a TLS
 * listener: its connections would meet a NULL context. main refuses such a
 * reload before it gets here; this is the worker's own guard for that
 * invariant. */
static void apply_reload(struct worker *w, const struct server *next)
{
	struct tls_server *tls = NULL;
	char err[512];

	for (size_t i = 0; i < w->nlisteners; i++) {
		if (w->listeners[i].tls && next->cfg->nlisten == 0) {
			log_msg(LOG_ERROR,
				"worker %u: reload without TLS while a TLS listener is open; "
				"keeping the running configuration",
				w->id);
			server_put(next);
			return;
		}
	}
	if (next->cfg->nlisten > 0 && tls_server_new(&tls, &next->tls, err, sizeof(err)) < 0) {
		log_msg(LOG_ERROR, "worker %u: reload: %s; keeping the running configuration",
			w->id, err);
		server_put(next);
		return;
	}
	tls_server_put(w->tls);
	w->tls = tls;
	server_put(w->srv);
	w->srv = next;
	filecache_new_config(&w->files);
	access_log_set_format(&w->alog, next->cfg->access_log_format);
}

static void on_retry(struct ring_op *op, int res, uint32_t flags)
{
	struct listener *l = container_of(op, struct listener, retry_op);

	(void)res;
	(void)flags;
	l->armed = false;
	if (!l->w->stopping)
		arm_accept(l);
}

/* SIGINT, SIGQUIT: no grace. Every response under way is logged, as cut by
 * the shutdown, and the log written out before the process exits: once
 * the connections are released (the loop ends then), or by the tick at
 * QUIT_LOG_MS. */
static void quit_now(struct worker *w)
{
	begin_stop(w);
	w->quit_ms = w->clock.now_ms;
	w->conn_ops->abort(w, "exiting now");
	access_log_flush(&w->alog);
}

static void on_wake(struct ring_op *op, int res, uint32_t flags)
{
	struct worker *w = container_of(op, struct worker, wake_op);

	(void)res;
	(void)flags;
	const struct server *next = atomic_exchange(&w->next_srv, NULL);
	if (next)
		apply_reload(w, next);
	if (atomic_load(&w->quit_requested))
		quit_now(w);
	else if (atomic_load(&w->stop_requested))
		begin_stop(w);
	/* Armed while stopping too: a SIGINT may cut the grace period short. */
	arm_wake(w);
}

/* Connections that must have closed since the high mark before the heap
 * is trimmed: each left ~14 KiB of OpenSSL state behind in the heap. */
#define TRIM_AFTER_CLOSED 1024

/* glibc gives back only the top of a heap by itself, and the OpenSSL
 * objects of closed connections leave free pages all through it: after a
 * burst, hand those back. Measured: 10,000 idle TLS connections closed
 * left the process at 150 MiB PSS, against 3 MiB before they came; with
 * the trim, 3.9 MiB, for 13 ms of the worker's time. At most once per
 * burst: malloc_trim walks every arena. */
static void trim_heap_after_burst(struct worker *w)
{
	if (w->nconns_high - w->nconns < TRIM_AFTER_CLOSED || w->nconns > w->nconns_high / 2)
		return;
	malloc_trim(0);
	w->nconns_high = w->nconns;
}

/* Hands the status listener this tick's counters and gauges (stats.h);
 * snap holds the connections' tallies. */
static void publish_stats(struct worker *w, struct worker_snapshot *snap)
{
	const struct filecache *fc = &w->files;

	snap->stats = w->stats;
	snap->open_files = fc->open;
	snap->file_cache_entries = fc->n;
	snap->file_cache_hits = fc->hits;
	snap->file_cache_revalidations = fc->revalidations;
	snap->file_cache_misses = fc->misses;
	snap->file_cache_mem_hits = fc->mem_hits;
	size_t used, kept;
	bufpool_bytes(&w->bufs, &used, &kept);
	snap->buffer_bytes_used = used;
	snap->buffer_bytes_kept = kept;
	stats_publish(w->shown, snap);
}

/* What the buffer pool may hold from one wave of sends to the next, per
 * open connection (bufpool.h). At 1,000 HTTP/2 downloads of 64 KiB/s it
 * took the pool's misses in the steady state from 400-600 to 80-190 per
 * 10 s, by hand; nginx holds 121 KiB a download in all (README). */
#define POOL_HOLD_PER_CONN (16 * 1024)

static void on_tick(struct ring_op *op, int res, uint32_t flags)
{
	struct worker *w = container_of(op, struct worker, tick_op);
	struct worker_snapshot snap = {0};

	(void)res;
	(void)flags;
	bool grace_over = w->stopping && w->clock.now_ms >= w->stop_deadline_ms;
	w->conn_ops->tick(w, &snap, grace_over ? "shutdown grace period over" : NULL);
	if (w->quit_ms && w->clock.now_ms - w->quit_ms >= QUIT_LOG_MS)
		w->conn_ops->log_cut(w);
	access_log_flush(&w->alog);
	bufpool_trim(&w->bufs, (size_t)w->nconns * POOL_HOLD_PER_CONN);
	sock_env_tick(&w->sock_env);
	trim_heap_after_burst(w);
	publish_stats(w, &snap);
	arm_tick(w);
}

static void dispatch(struct io_uring_cqe *cqe)
{
	struct ring_op *op = io_uring_cqe_get_data(cqe);

	if (op) /* NULL: taken early (take_receives) */
		op->complete(op, cqe->res, cqe->flags);
}

/* A turn of costly completions (a TLS handshake signs each) sends what it
 * has so far, so the first connections' answers do not wait for the last
 * one's work; cheap turns still submit once. true: submit now (*flushed
 * is now, as of this submit). */
static bool flush_due(struct io_uring *ring, uint64_t *flushed)
{
	uint64_t t = clock_ns();

	if (t - *flushed < FLUSH_AFTER_NS || !io_uring_sq_ready(ring))
		return false;
	*flushed = t;
	return true;
}

/* A turn of the worker's loop: when it last submitted (flush_due), and
 * whether it began with few completions (TURN_FEW). */
struct turn {
	uint64_t flushed;
	bool few;
};

#define TURN_FEW 32

/* A submit mid-turn that also posts what has completed meanwhile. On a
 * DEFER_TASKRUN ring a receive whose bytes came while it waited completes
 * only when the worker runs its deferred work, which a plain submit does
 * not (io_uring_enter without IORING_ENTER_GETEVENTS): a request that came
 * in during a turn was taken only at the turn's end, however often the
 * turn submitted. With the flag and nothing to wait for, the enter runs
 * that work and returns (io_cqring_wait in io_uring/io_uring.c; since
 * Linux 6.13 at most some 20 items a pass, two passes an enter: the rest
 * at the next). A probe's request behind eight cold downloads waited p99
 * 1.7-2.1 ms without it, 0.6-1.0 with it (four runs each, seals already
 * cut to a slice: seal_slice.h; issue 22). */
static void submit_and_post(struct io_uring *ring, const struct turn *t)
{
	/* What it posts waits in the queue beside the turn's own completions,
	 * which are taken off it only at the turn's end. A turn of many
	 * completions is one of cheap ones, where a request waits its turn
	 * among them anyway, and there it cost: with 10,000 slow downloads
	 * the queue overflowed (12,083 io_uring_cqe_overflow in 12 s, an
	 * allocation each, none without the flag), and with the flag only
	 * while at most 256 entries were taken, CPU per GB still read
	 * 0.82-0.85 against 0.78 and 0.79 without it (by hand, 12 s of the
	 * steady state each).
	 * So only in a turn of few completions (TURN_FEW: the cold cell's
	 * eight downloads and a probe make some 10), and while the queue
	 * has room. */
	if (t->few && io_uring_cq_ready(ring) <= *ring->cq.kring_entries / 16)
		io_uring_submit_and_get_events(ring);
	else
		io_uring_submit(ring);
}

/* A client's bytes go first: the receives that took a ring buffer (a
 * request, a handshake's next flight) among the completions [from, to) of
 * the queue, each handled now and marked done in place (user data NULL)
 * for its turn to skip. Its answer is then queued ahead of the turn's
 * other sends, and leaves by the turn's next submit, or at once when it
 * was taken mid-turn (true: one was taken). The turn's own completions
 * are taken so at its start, and those a flush mid-turn posts at that
 * flush (submit_and_post; those the submit after it posts, at the next).
 * One turn's downloads (8 cold ones sent 256 KiB each, sealed and sent
 * inline by the submits) took 5 ms, and a probe's 1 KiB request that
 * came in meanwhile waited for all of it, then for every send before its
 * own in the next (p99 8-13 ms, issue 22). Any
 * order of completions already posted is one the kernel could have
 * posted them in: no operation here is linked or drained
 * (IOSQE_IO_LINK, IOSQE_IO_DRAIN), and a sock has one receive in flight
 * at a time. As in the turn, what costly work has queued is submitted
 * when due (flush_due). */
static bool take_receives(struct io_uring *ring, unsigned from, unsigned to, struct turn *t)
{
	/* The ring has no IORING_SETUP_CQE32: an entry is one struct. */
	unsigned mask = *ring->cq.kring_mask;
	bool took = false;

	for (unsigned i = from; i != to; i++) {
		struct io_uring_cqe *cqe = &ring->cq.cqes[i & mask];
		if (!(cqe->flags & IORING_CQE_F_BUFFER) || !cqe->user_data)
			continue;
		dispatch(cqe);
		cqe->user_data = 0;
		took = true;
		if (flush_due(ring, &t->flushed))
			submit_and_post(ring, t);
	}
	return took;
}

unsigned worker_default_count(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	return online > 0 ? (unsigned)online : 1;
}

/* One worker per core, pinned: its ring, its connections and their cache
 * lines stay on that core. The cores are the ones this process may use
 * (taskset, systemd's CPUAffinity=, a cgroup cpuset), not all the machine
 * has: worker i takes the i-th allowed CPU, wrapping. A thread starts with
 * the mask of the thread that made it, and the main thread is never pinned,
 * so each worker reads the process's set here. */
static void pin_to_cpu(struct worker *w)
{
	cpu_set_t allowed, one;
	int count, nth, cpu;

	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0) {
		log_msg(LOG_WARN, "worker %u: sched_getaffinity: %s; not pinned", w->id,
			strerror(errno));
		return;
	}
	count = CPU_COUNT(&allowed);
	if (count <= 0)
		return;
	nth = (int)(w->id % (unsigned)count);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &allowed) && nth-- == 0)
			break;
	if (cpu == CPU_SETSIZE)
		return;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	int rc = pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
	if (rc != 0)
		log_msg(LOG_WARN, "worker %u: pinning to CPU %d: %s", w->id, cpu, strerror(rc));
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char name[16];

	/* "ktlsd-w3" in top -H, ps -L and /proc/PID/task/TID/comm. */
	snprintf(name, sizeof(name), "ktlsd-w%u", w->id);
	pthread_setname_np(pthread_self(), name);
	lister_init(&w->lister, &w->ring); /* before the pin: the process's CPUs */
	pin_to_cpu(w);

	w->start_error = ring_init(&w->ring, RING_ENTRIES, &w->feat);
	if (w->start_error == 0) {
		/* Splice runs on io-wq threads; a handful per worker is plenty. */
		unsigned iowq[2] = {0, 4};
		io_uring_register_iowq_max_workers(&w->ring, iowq);
		int rc = w->feat.op_recv ? rxring_init(&w->rx_ring, &w->ring) : -EINVAL;
		w->feat.buf_ring = rc == 0;
		/* EINVAL: a kernel before 5.19, which has no buffer rings. */
		if (rc < 0 && rc != -EINVAL)
			log_msg(LOG_WARN, "worker %u: no receive buffer ring (%s): idle "
					  "connections wait with a poll instead",
				w->id, strerror(-rc));
	}
	sem_post(&w->ready);
	if (w->start_error < 0)
		return NULL;

	clock_update(&w->clock);
	for (size_t i = 0; i < w->nlisteners; i++)
		arm_accept(&w->listeners[i]);
	arm_tick(w);
	arm_wake(w);

	while (!(w->stopping && w->nconns == 0)) {
		struct io_uring_cqe *cqe;
		unsigned head, n = 0, todo;
		int rc = io_uring_submit_and_wait(&w->ring, 1);
		if (rc < 0 && rc != -EINTR && rc != -EBUSY && rc != -EAGAIN) {
			log_msg(LOG_ERROR, "worker %u: io_uring: %s", w->id, strerror(-rc));
			break;
		}
		clock_update(&w->clock);
		/* Only the completions there when the turn began (and the
		 * receives its submits post: take_receives). A submit
		 * mid-turn completes cached reads and sends inline, posting
		 * new ones; a turn that took those too could go on for as
		 * long as the downloads do. Before mid-turn submits ran the
		 * ring's deferred work too (submit_and_post), such a turn
		 * never came back to the io_uring_enter above, then the
		 * only call that ran it: every other socket's receive,
		 * every read that waited for the disk. Eight cold downloads
		 * kept a keep-alive client's request unanswered for up to
		 * 1.5 s that way (perf: no io_uring_local_work_run event in
		 * the stall). */
		todo = io_uring_cq_ready(&w->ring);
		struct turn t = {.flushed = clock_ns(), .few = todo <= TURN_FEW};
		unsigned early = *w->ring.cq.khead + todo;
		take_receives(&w->ring, *w->ring.cq.khead, early, &t);
		io_uring_for_each_cqe(&w->ring, head, cqe)
		{
			if (todo-- == 0)
				break;
			dispatch(cqe);
			n++;
			if (flush_due(&w->ring, &t.flushed)) {
				io_uring_cq_advance(&w->ring, n);
				n = 0;
				submit_and_post(&w->ring, &t);
				unsigned tail = io_uring_smp_load_acquire(w->ring.cq.ktail);
				/* Answers taken mid-turn leave at once, not
				 * after the turn's next piece of work. */
				if (take_receives(&w->ring, early, tail, &t))
					io_uring_submit(&w->ring);
				early = tail;
			}
		}
		io_uring_cq_advance(&w->ring, n);
	}
	lister_stop(&w->lister);
	access_log_flush(&w->alog);
	struct worker_snapshot last = {0};
	publish_stats(w, &last); /* what a scrape during the rest of the shutdown sees */
	const struct worker_stats *st = &w->stats;
	log_msg(LOG_INFO,
		"worker %u stats: accepted=%llu requests=%llu bytes_out=%llu ktls_tx=%llu "
		"ktls_off=%llu body_copy=%llu body_splice=%llu send_ops=%llu splice_ops=%llu "
		"read_ops=%llu recv_ops=%llu recv_ring=%llu recv_nobufs=%llu timeouts=%llu "
		"truncated=%llu h2_mapped_bytes=%llu h1_mapped_bytes=%llu sendfile_calls=%llu ktls_hangups=%llu room_waits=%llu slow=%llu "
		"refused_sends=%llu h2_stalls=%llu "
		"file_cache_hits=%llu file_cache_misses=%llu file_cache_mem_hits=%llu "
		"buffer_pool_hits=%lu/%lu",
		w->id, (unsigned long long)st->accepted,
		(unsigned long long)stats_sum(&st->requests[0][0], STAT_PROTOS * STAT_CLASSES),
		(unsigned long long)stats_sum(&st->bytes_out[0][0], STAT_VIAS * STAT_TLS_PATHS),
		(unsigned long long)st->ktls_tx,
		(unsigned long long)st->ktls_off, (unsigned long long)st->body_copy,
		(unsigned long long)st->body_splice, (unsigned long long)st->send_ops,
		(unsigned long long)st->splice_ops, (unsigned long long)st->read_ops,
		(unsigned long long)st->recv_ops, (unsigned long long)st->recv_ring,
		(unsigned long long)st->recv_nobufs,
		(unsigned long long)stats_sum(st->timeouts, STAT_TIMEOUTS),
		(unsigned long long)st->truncated, (unsigned long long)st->h2_mapped_bytes,
		(unsigned long long)st->h1_mapped_bytes,
		(unsigned long long)st->sendfile_calls, (unsigned long long)st->ktls_hangups,
		(unsigned long long)st->room_waits, (unsigned long long)st->slow_socks,
		(unsigned long long)st->refused_sends, (unsigned long long)st->h2_stalls,
		(unsigned long long)w->files.hits,
		(unsigned long long)w->files.misses, (unsigned long long)w->files.mem_hits,
		w->bufs.hits, w->bufs.gets);
	atomic_store(&w->finished, true);
	return NULL;
}

int worker_start(struct worker *w)
{
	int rc = pthread_create(&w->thread, NULL, worker_main, w);
	if (rc != 0)
		return -rc;
	sem_wait(&w->ready);
	if (w->start_error < 0) {
		pthread_join(w->thread, NULL);
		return w->start_error;
	}
	return 0;
}

static void wake(struct worker *w)
{
	uint64_t one = 1;
	ssize_t n = write(w->wake_fd, &one, sizeof(one));
	(void)n;
}

void worker_request_reload(struct worker *w, const struct server *next)
{
	/* Two reloads before the worker woke: it takes the second only. */
	server_put(atomic_exchange(&w->next_srv, server_get(next)));
	wake(w);
}

void worker_request_stop(struct worker *w)
{
	atomic_store(&w->stop_requested, true);
	wake(w);
}

void worker_request_quit(struct worker *w)
{
	atomic_store(&w->quit_requested, true);
	wake(w);
}

bool worker_finished(struct worker *w)
{
	return atomic_load(&w->finished);
}

bool worker_wait_until(struct worker *w, const struct timespec *deadline)
{
	return pthread_timedjoin_np(w->thread, NULL, deadline) == 0;
}

void worker_unprepare(struct worker *w)
{
	for (size_t i = 0; i < w->nlisteners; i++)
		close(w->listeners[i].fd);
	w->nlisteners = 0;
	if (w->wake_fd > 0)
		close(w->wake_fd);
	w->wake_fd = -1;
	access_log_flush(&w->alog);
	w->alog.fd = -1;
	tls_server_put(w->tls);
	w->tls = NULL;
	pipepool_close(&w->pipes);
	bufpool_drain(&w->bufs);
	filecache_clear(&w->files);
	server_put(atomic_exchange(&w->next_srv, NULL));
	server_put(w->srv);
	w->srv = NULL;
	if (w->sem_ready)
		sem_destroy(&w->ready);
	w->sem_ready = false;
}

void worker_join(struct worker *w)
{
	pthread_join(w->thread, NULL);
	io_uring_queue_exit(&w->ring);
	rxring_free(&w->rx_ring);
	worker_unprepare(w);
}

void worker_read_stats(void *workers, unsigned i, struct worker_snapshot *snap)
{
	const struct worker *w = (const struct worker *)workers + i;

	stats_read(w->shown, snap);
}
