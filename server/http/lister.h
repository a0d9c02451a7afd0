/* Directory listings made off the worker's thread (--autoindex).
 *
 * Why a thread: a listing is a getdents walk and an fstatat per entry, then
 * a sort and the rendering; for 100,000 entries that is a few hundred
 * milliseconds of system calls and CPU that the ring cannot do for us
 * (io_uring has no getdents, and 100,000 statx operations would still leave
 * the sort and the rendering on the worker). Slicing the walk on the worker
 * would interleave it with its connections, but the sort needs every entry
 * first, and a directory read in slices can change between them. So each
 * worker has one listing thread, started the first time it lists (a server
 * that never lists has none), which takes jobs from a queue: it opens the
 * folder beneath the root (openat2 RESOLVE_BENEATH, file.c, as serving
 * does), reads, filters, sorts and renders it (proto/autoindex.c) into a
 * memfd, and hands the job back through an eventfd that the worker's ring
 * reads. The worker then serves the memfd like any file, with a
 * Content-Length: HTTP/1.1 by body_send.c, HTTP/2 by the session's DATA
 * path. The request waits meanwhile; the connection's other streams (and
 * the worker's other connections) do not.
 *
 * Ownership: a job is the worker's, lent to the thread between
 * lister_submit and its done callback (on the worker's thread, from the
 * ring). Whoever submits holds its connection (sock_hold) until then, so a
 * connection that goes away meanwhile is freed only after its job came
 * back; lister_cancel makes the thread stop early, and the callback drops
 * the result. The thread runs at a lower priority (nice 10) on any CPU the
 * process may use, so that listings yield to serving.
 *
 * Limits: LISTER_MAX_JOBS jobs per worker queued or running (more: 503),
 * --autoindex-max-entries shown per folder (a larger folder: 500 and a
 * warning in the error log; the thread remembers the LISTER_TOO_BIG_SLOTS
 * last such folders, so that asking again for one that has not changed
 * since reads nothing and logs nothing). */
#ifndef KTLSD_SERVER_LISTER_H
#define KTLSD_SERVER_LISTER_H

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "proto/autoindex.h"
#include "server/core/ring.h"

#define LISTER_MAX_JOBS 16
#define LISTER_TOO_BIG_SLOTS 16

struct lister_job;

struct lister_job {
	struct lister_job *next;
	/* What to list (the submitter's, read by the thread). */
	int root_fd;                 /* the job's own duplicate */
	bool dotfiles;
	unsigned max_entries;        /* --autoindex-max-entries */
	enum autoindex_format format;
	char rel[PATH_MAX];
	/* Whose it is: called on the worker's thread when it is back. */
	void (*done)(struct lister_job *job);
	void *owner, *owner_item;
	atomic_bool cancelled;
	/* The result (the thread's, until done): status 0 and the listing in
	 * fd (size bytes, from offset 0), or an HTTP status and fd -1. */
	int status;
	int fd;
	uint64_t size;
};

/* A folder found to have more entries than a listing shows, as it was
 * then (its mtime changes when an entry comes or goes). */
struct lister_too_big {
	uint64_t dev, ino;
	int64_t mtime_sec, mtime_nsec;
	unsigned max_entries; /* the limit it was over */
	bool dotfiles;        /* counting dotfiles (another count without) */
};

/* A worker's listing thread and its queues. Zeroed memory is a lister not
 * yet set up. */
struct lister {
	struct io_uring *ring;
	cpu_set_t cpus; /* where the thread may run */
	bool have_cpus;
	bool started;
	unsigned jobs; /* the worker's count: submitted, not yet done */
	int event_fd;  /* the thread's "jobs are back" to the ring */
	uint64_t event_value;
	struct ring_op event_op;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* under mu */
	struct lister_job *todo, *todo_tail, *back;
	bool stop;
	/* the thread's own */
	struct lister_too_big too_big[LISTER_TOO_BIG_SLOTS];
	unsigned too_big_next; /* the slot the next one takes */
};

/* On the worker's thread before it pins itself: remembers the CPUs the
 * process may use, for the thread. */
void lister_init(struct lister *l, struct io_uring *ring);

/* A job for folder rel (as static_target gives it) beneath root_fd (the
 * job holds a duplicate of its own), or NULL (no memory, no fd). */
struct lister_job *lister_job_new(int root_fd, const char *rel, bool dotfiles,
                                  unsigned max_entries, enum autoindex_format format);
/* Frees a job (and its fd, if still set) that is not with the thread. */
void lister_job_free(struct lister_job *job);

/* Queues job (its done, owner set), starting the thread if need be. 0, or
 * -EAGAIN (LISTER_MAX_JOBS under way: answer 503) or -errno (no thread: 500);
 * the job is still the caller's then. */
int lister_submit(struct lister *l, struct lister_job *job);

/* The worker no longer wants job's result: the thread stops early. The job
 * still comes back through done. */
void lister_cancel(struct lister_job *job);

/* After the worker's loop ended (every job is back): stops the thread. */
void lister_stop(struct lister *l);

#endif
