/* Per-worker pipes for splice (file -> pipe -> socket), leased for one
 * chunk at a time: a response takes a pipe when it splices file bytes in
 * and gives it back as soon as the socket has taken them all, so thousands
 * of downloads share a few pipes instead of holding one each.
 *
 * An unprivileged user (--user) has a pipe-buffer quota
 * (/proc/sys/fs/pipe-user-pages-soft, 16 MiB by default); past it, new pipes
 * shrink to one page and splices per MiB go from ~3 to ~50. So with --user
 * the pool makes its pipes before privileges are dropped (the quota never
 * applies to them), and a pipe made later that comes out small is not used:
 * the response waits for a full-size one instead. Worker-local: no lock. */
#ifndef KTLSD_SERVER_PIPEPOOL_H
#define KTLSD_SERVER_PIPEPOOL_H

#include <stdbool.h>
#include <stddef.h>

/* 1 MiB per splice pair keeps each ring operation bounded (nginx caps a
 * sendfile call at 2 MiB so one fast client cannot starve the others). */
#define PIPEPOOL_PIPE_SIZE (1024 * 1024)
#define PIPEPOOL_KEEP 16   /* free pipes kept (and made up front with --user) */
#define PIPEPOOL_MAX 256   /* pipes in all, per worker */

struct pipe_lease {
	struct pipe_lease *next; /* on the free list */
	int fd[2];
	size_t size;
};

/* A sock waiting for a pipe: ready() is called once one is leased to it. */
struct pipe_waiter {
	struct pipe_waiter *next;
	void (*ready)(struct pipe_waiter *w, struct pipe_lease *p);
};

struct pipepool {
	struct pipe_lease *free;
	unsigned nfree, total;
	bool no_more;            /* the last pipe made came out small, or failed */
	struct pipe_waiter *waiters, *waiters_tail;
	unsigned long leases, waits;
};

/* Makes n pipes now (n > 0 before --user drops privileges). 0, or -errno
 * when one could not be made. */
int pipepool_init(struct pipepool *p, unsigned n);
void pipepool_close(struct pipepool *p);

/* A pipe, or NULL: then w is queued and ready() runs when one comes back.
 * -1 in *err (and NULL) when there is no pipe and none will come (the
 * worker has none at all and cannot make one). */
struct pipe_lease *pipepool_lease(struct pipepool *p, struct pipe_waiter *w, int *err);

/* Gives back an empty pipe; the first waiter, if any, gets it. */
void pipepool_give_back(struct pipepool *p, struct pipe_lease *l);

/* Gives back a pipe that may still hold bytes (a response cut short):
 * closed, since emptying it could block. */
void pipepool_give_back_dirty(struct pipepool *p, struct pipe_lease *l);

/* w stops waiting (its sock closes). */
void pipepool_cancel(struct pipepool *p, struct pipe_waiter *w);

#endif
