/* The types of a worker (worker.h has its functions; the server state it
 * serves is server-t.h's). Types only, so that the connection code can use
 * a worker's fields without including the worker's API, which includes
 * them: no include circle. */
#ifndef KTLSD_SERVER_WORKER_T_H
#define KTLSD_SERVER_WORKER_T_H

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include <liburing.h>

#include "ktls/tls.h"
#include "server/core/access_log.h"
#include "server/core/bufpool.h"
#include "server/core/clock.h"
#include "server/conf/config.h"
#include "server/core/filecache.h"
#include "server/http/lister.h"
#include "server/core/log.h"
#include "server/core/pipepool.h"
#include "server/core/ring.h"
#include "server/core/rxring.h"
#include "server/conf/server-t.h"
#include "server/conf/site.h"
#include "server/net/seal_slice.h"
#include "server/net/sock.h"
#include "server/core/stats-t.h"

struct conn;
struct addr_limit;
struct addr_rate;
struct worker;

/* What the worker asks of its connections. It makes and ticks them through
 * these, as nginx's event loop calls a listening socket's handler, so that
 * the loop knows no connection's type: conn.c has the one set, main.c hands
 * it to worker_prepare. */
struct worker_conn_ops {
	/* Takes fd, accepted on a listener of the worker (tls, proxy: its
	 * kind). */
	int (*accept)(struct worker *w, int fd, bool tls, bool proxy, const struct sockaddr *peer,
		      socklen_t peerlen);
	/* The worker stops: idle connections close now, busy ones after
	 * their response. */
	void (*shutdown)(struct worker *w);
	/* Every connection is cut now; a response under way is logged as cut
	 * by the shutdown, with why (once its connection is released: conn.h's
	 * log_cut). */
	void (*abort)(struct worker *w, const char *why);
	/* The lines of responses cut by abort whose connections still wait
	 * for operations in flight are written now: the process is about to
	 * exit without them. */
	void (*log_cut)(struct worker *w);
	/* Once a tick: each connection is counted into snap's gauges, then
	 * closed if a deadline of its own passed, or, with cut, cut with
	 * that reason (the shutdown's grace period is over). */
	void (*tick)(struct worker *w, struct worker_snapshot *snap, const char *cut);
};

struct listener {
	int fd;
	bool tls;
	bool inherited;              /* a duplicate of a passed socket (listen_fds.h) */
	bool is_unix;                /* AF_UNIX: no TCP options on its connections */
	bool proxy;                  /* proxy-protocol: a PROXY header comes first */
	bool armed;                  /* an accept (or its retry timer) is in flight */
	bool multishot;
	struct worker *w;
	struct ring_op accept_op, retry_op;
	struct __kernel_timespec retry;
};

#define WORKER_MAX_LISTENERS (2 * CONFIG_MAX_LISTEN)

struct worker {
	unsigned id;
	pthread_t thread;
	const struct server *srv;
	struct io_uring ring;
	struct ring_features feat;
	struct tls_server *tls;
	struct listener listeners[WORKER_MAX_LISTENERS];
	size_t nlisteners;
	int wake_fd;                 /* eventfd: the main thread has news */
	uint64_t wake_value;
	_Atomic(const struct server *) next_srv; /* SIGHUP: the configuration to switch to */
	atomic_bool stop_requested;  /* SIGTERM */
	atomic_bool quit_requested;  /* SIGINT, SIGQUIT */
	atomic_bool finished;        /* the thread is done: worker_join will not wait */
	struct ring_op tick_op, wake_op;
	struct __kernel_timespec tick;
	struct bufpool bufs;         /* I/O buffers of its connections */
	struct rxring rx_ring;       /* where idle connections' recvs land (feat.buf_ring) */
	struct pipepool pipes;       /* pipes for splice, leased a chunk at a time */
	struct filecache files;      /* open files by path, revalidated each second */
	/* --limit-conn's counts, shared by all workers: main.c's, which makes
	 * it before they start and frees it after they are joined. */
	struct addr_limit *conn_limits;
	struct addr_rate *req_rates;   /* --limit-req, the same for every worker */
	struct lister lister;        /* --autoindex: its listing thread, once it lists */
	const struct worker_conn_ops *conn_ops;
	struct conn *conns;          /* list head (conn.c's) */
	unsigned nconns;
	unsigned nconns_high;        /* most connections at once since the heap was last trimmed */
	bool stopping;
	uint64_t stop_deadline_ms;
	uint64_t quit_ms;            /* when SIGINT or SIGQUIT came, or 0 */
	bool accept_paused_logged;
	uint64_t accept_failed_ms;   /* when accept last ran out of fds */
	uint64_t proxy_logged_ms;    /* when a refused PROXY header was last logged at info */
	struct clock clock;          /* read once per loop turn */
	uint64_t boundary_seed;
	struct access_log alog;
	struct worker_stats stats;
	struct sock_env sock_env;    /* what its connections' transports use of it */
	struct seal_slice seal_slice; /* how much its sealer takes at once */
	/* The last snapshot published, for the status listener's thread: a
	 * line of its own, away from what the worker writes all the time. */
	_Alignas(64) _Atomic uint64_t shown[WORKER_SNAPSHOT_WORDS];
	int start_error;             /* set by the thread before it signals ready */
	sem_t ready;
	bool sem_ready;
} __attribute__((aligned(16)));

#endif
