/* --status-listen: the metrics endpoint. A small thread of its own answers
 * GET and HEAD of /metrics (Prometheus text), /status (JSON, /status/
 * too) and /healthz (200 "ok"; 503 once SIGTERM came: a load
 * balancer's health check) over plain HTTP/1.x, one request per connection
 * (Connection: close); anything else is 404, another method 405.
 *
 * It stays off the workers' rings: a scrape reads the snapshots the
 * workers publish each tick anyway (stats.h), so it costs them nothing,
 * and a slow or stuck scraper cannot reach them. It is bounded all the
 * same: at most STATUS_MAX_CLIENTS connections at once (a new one pushes
 * out the oldest that has not finished sending its request, so idle
 * connections cannot lock scrapers out), a request head of at most
 * STATUS_REQUEST_MAX bytes (431 beyond), STATUS_TIMEOUT_MS for the whole
 * exchange. Plain HTTP with no access control: bind it to loopback or a
 * private address. */
#ifndef KTLSD_SERVER_STATUS_LISTEN_H
#define KTLSD_SERVER_STATUS_LISTEN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "server/conf/config-t.h"
#include "server/core/stats-t.h"

#define STATUS_MAX_CLIENTS 16
#define STATUS_REQUEST_MAX 4096
#define STATUS_TIMEOUT_MS 10000

struct status_client;

/* Copies worker i's last published snapshot into snap (stats_read). The
 * caller's: the status listener knows the workers by number only, so it
 * needs none of the worker's types. */
typedef void status_read_fn(void *arg, unsigned i, struct worker_snapshot *snap);

struct status_listen {
	int fd;                      /* the listening socket; -1: off */
	int stop_fd;                 /* eventfd: the thread ends when it is written */
	pthread_t thread;
	bool running;
	status_read_fn *read;        /* how the workers' snapshots are read */
	void *read_arg;
	unsigned nworkers;
	bool kernel_tls;
	double start_time;           /* Unix seconds, when status_listen_open ran */
	uint64_t start_ms;           /* the same moment, monotonic */
	struct status_client *clients; /* STATUS_MAX_CLIENTS of them */
	uint64_t accept_paused_until_ms; /* out of fds: accept again then */
	atomic_bool draining;        /* /healthz says 503 (status_listen_drain) */
};

/* Binds addr (before --user drops root, with the other listeners). 0, or
 * -errno with a logged reason. sl need not be initialised. */
int status_listen_open(struct status_listen *sl, const struct config_listen *addr);

/* Starts the thread ("ktlsd-status") that shows n workers (started, at the
 * address they keep until status_listen_stop), reading each one's snapshot
 * with read(arg, i, ...). 0 or -errno. */
int status_listen_start(struct status_listen *sl, unsigned n, status_read_fn *read, void *arg,
			bool kernel_tls);

/* From now on /healthz answers 503: the node is going away (SIGTERM). */
void status_listen_drain(struct status_listen *sl);

/* Ends the thread (if started) and closes everything: before the workers'
 * memory goes. Safe on a status_listen that is off or failed to open. */
void status_listen_stop(struct status_listen *sl);

#endif
