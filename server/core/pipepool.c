#include "server/core/pipepool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

static struct pipe_lease *pipe_make(int *err)
{
	struct pipe_lease *l = malloc(sizeof(*l));

	if (!l) {
		*err = -ENOMEM;
		return NULL;
	}
	if (pipe2(l->fd, O_CLOEXEC) < 0) {
		*err = -errno;
		free(l);
		return NULL;
	}
	int sz = fcntl(l->fd[1], F_SETPIPE_SZ, PIPEPOOL_PIPE_SIZE);
	if (sz < 0)
		sz = fcntl(l->fd[1], F_GETPIPE_SZ);
	l->size = sz > 0 ? (size_t)sz : 65536;
	l->next = NULL;
	return l;
}

static void pipe_close(struct pipepool *p, struct pipe_lease *l)
{
	close(l->fd[0]);
	close(l->fd[1]);
	free(l);
	p->total--;
}

static void push_free(struct pipepool *p, struct pipe_lease *l)
{
	l->next = p->free;
	p->free = l;
	p->nfree++;
}

int pipepool_init(struct pipepool *p, unsigned n)
{
	int err = 0;

	for (unsigned i = 0; i < n; i++) {
		struct pipe_lease *l = pipe_make(&err);
		if (!l)
			return err;
		p->total++;
		push_free(p, l);
	}
	return 0;
}

void pipepool_close(struct pipepool *p)
{
	while (p->free) {
		struct pipe_lease *l = p->free;
		p->free = l->next;
		pipe_close(p, l);
	}
	p->nfree = 0;
}

struct pipe_lease *pipepool_lease(struct pipepool *p, struct pipe_waiter *w, int *err)
{
	struct pipe_lease *l = p->free;

	*err = 0;
	if (l) {
		p->free = l->next;
		p->nfree--;
		p->leases++;
		return l;
	}
	if (p->total < PIPEPOOL_MAX && !p->no_more) {
		l = pipe_make(err);
		/* Over the user's pipe quota (fs.pipe-user-pages-soft, which a
		 * process without CAP_SYS_RESOURCE is held to: pipe(7)) a new
		 * pipe gets one page, and a one-page pipe costs ~50 splices
		 * per MiB; wait for a full one instead, unless this worker has
		 * none: then a small pipe serves, slowly, rather than failing
		 * the response. pipepool_give_back closes it. */
		if (l && (l->size >= PIPEPOOL_PIPE_SIZE || p->total == 0)) {
			p->total++;
			p->leases++;
			if (l->size < PIPEPOOL_PIPE_SIZE)
				p->no_more = true;
			return l;
		}
		if (l) {
			close(l->fd[0]);
			close(l->fd[1]);
			free(l);
		}
		p->no_more = true; /* until a pipe comes back */
	}
	if (p->total == 0) {
		if (!*err)
			*err = -ENFILE;
		return NULL;
	}
	*err = 0;
	p->waits++;
	w->next = NULL;
	if (p->waiters_tail)
		p->waiters_tail->next = w;
	else
		p->waiters = w;
	p->waiters_tail = w;
	return NULL;
}

void pipepool_give_back(struct pipepool *p, struct pipe_lease *l)
{
	struct pipe_waiter *w = p->waiters;

	p->no_more = false;
	if (w) {
		p->waiters = w->next;
		if (!p->waiters)
			p->waiters_tail = NULL;
		p->leases++;
		w->ready(w, l);
		return;
	}
	if (p->nfree < PIPEPOOL_KEEP && l->size >= PIPEPOOL_PIPE_SIZE)
		push_free(p, l);
	else
		pipe_close(p, l);
}

void pipepool_give_back_dirty(struct pipepool *p, struct pipe_lease *l)
{
	pipe_close(p, l);
	p->no_more = false;
}

void pipepool_cancel(struct pipepool *p, struct pipe_waiter *w)
{
	struct pipe_waiter **pp = &p->waiters, *prev = NULL;

	while (*pp && *pp != w) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (!*pp)
		return;
	*pp = w->next;
	if (p->waiters_tail == w)
		p->waiters_tail = prev;
}
