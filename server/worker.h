/* A worker: one thread pinned to one core, with its own io_uring ring, its
 * own SO_REUSEPORT listening sockets, its own TLS context and its own
 * connections. Workers share nothing mutable, so the request path takes no
 * lock. */
#ifndef KTLSD_SERVER_WORKER_H
#define KTLSD_SERVER_WORKER_H

#include "server/http/worker-t.h"

/* Creates the listening sockets of worker id (bind errors are reported here,
 * before any thread starts), holding a reference to srv until it is
 * joined or unprepared; its connections are made and ticked through ops.
 * 0 or -errno with a logged reason. */
int worker_prepare(struct worker *w, unsigned id, const struct server *srv,
		   const struct worker_conn_ops *ops);

/* Undoes worker_prepare (also a partial one) for a worker never started. */
void worker_unprepare(struct worker *w);

/* Workers to run when --workers is 0: one per CPU this process may run on
 * (sched_getaffinity), not one per CPU the machine has. */
unsigned worker_default_count(void);

/* Runs the worker on its own thread, pinned to one of the allowed CPUs and
 * named "ktlsd-wID". */
int worker_start(struct worker *w);

/* Asks the worker to stop accepting and finish (from the main thread). */
void worker_request_stop(struct worker *w);

/* Asks the worker to stop now (from the main thread): its connections are
 * aborted, the responses under way logged as cut by the shutdown, and its
 * access log written out; then its thread ends. */
void worker_request_quit(struct worker *w);

/* How long SIGINT and SIGQUIT wait for the workers' last log lines
 * (signals.c): a worker stuck writing to a log reader that stopped reading
 * must not hold the exit. */
#define WORKER_QUIT_WAIT_S 2

/* The worker's thread has ended (worker_join will not wait). */
bool worker_finished(struct worker *w);

/* Waits for the worker's thread to end, until deadline (CLOCK_REALTIME):
 * true if it did (it is joined then: only _exit may follow). */
bool worker_wait_until(struct worker *w, const struct timespec *deadline);

/* Hands the worker a new configuration (from the main thread, SIGHUP): it
 * builds its own TLS context from it and uses both for new connections;
 * connections in flight finish with what they started with. The worker
 * takes its own reference to next (server.h). */
void worker_request_reload(struct worker *w, const struct server *next);

void worker_join(struct worker *w);

/* The status listener's reader (status_read_fn, status_listen.h): the last
 * snapshot worker i of the array workers published (any thread). */
void worker_read_stats(void *workers, unsigned i, struct worker_snapshot *snap);

#endif
