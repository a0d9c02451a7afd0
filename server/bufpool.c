#include "server/bufpool.h"

#include <stdlib.h>

static int class_of(size_t size)
{
	size_t c = BUFPOOL_MIN;
	for (int i = 0; i < BUFPOOL_CLASSES; i++, c <<= 1)
		if (size <= c)
			return i;
	return -1;
}

void *bufpool_get(struct bufpool *p, size_t want, size_t *cap)
{
	int i = class_of(want);

	p->gets++;
	if (i < 0) {
		*cap = want;
		return malloc(want);
	}
	*cap = (size_t)BUFPOOL_MIN << i;
	if (p->free[i]) {
		struct bufpool_free *f = p->free[i];
		p->free[i] = f->next;
		p->nfree[i]--;
		if (p->nfree[i] < p->minfree[i])
			p->minfree[i] = p->nfree[i];
		p->hits++;
		return f;
	}
	return malloc(*cap);
}

void bufpool_put(struct bufpool *p, void *buf, size_t cap)
{
	int i = class_of(cap);

	if (!buf)
		return;
	if (i < 0 || ((size_t)BUFPOOL_MIN << i) != cap ||
	    (size_t)(p->nfree[i] + 1) * cap > BUFPOOL_KEEP_BYTES) {
		free(buf);
		return;
	}
	struct bufpool_free *f = buf;
	f->next = p->free[i];
	p->free[i] = f;
	p->nfree[i]++;
}

void bufpool_trim(struct bufpool *p)
{
	for (int i = 0; i < BUFPOOL_CLASSES; i++) {
		for (unsigned n = p->minfree[i]; n > 0 && p->free[i]; n--) {
			struct bufpool_free *f = p->free[i];
			p->free[i] = f->next;
			p->nfree[i]--;
			free(f);
		}
		p->minfree[i] = p->nfree[i];
	}
}

void bufpool_drain(struct bufpool *p)
{
	for (int i = 0; i < BUFPOOL_CLASSES; i++) {
		while (p->free[i]) {
			struct bufpool_free *f = p->free[i];
			p->free[i] = f->next;
			free(f);
		}
		p->nfree[i] = 0;
	}
}
