#include "server/bufpool.h"

#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

/* The debug build (KTLSD_DEBUG) poisons a buffer as it goes back: its
 * bytes become POISON, so that stale bytes a response sends without
 * having written them show on the wire (tests/integration/bytecheck.c
 * finds them), and under ASan every byte past the free-list link is
 * unreadable until bufpool_get hands the buffer out again. */
#define POISON 0xa5

static void poison(struct bufpool_free *f, size_t cap)
{
#ifdef KTLSD_DEBUG
	memset(f, POISON, cap);
#if defined(__SANITIZE_ADDRESS__)
	ASAN_POISON_MEMORY_REGION(f + 1, cap - sizeof(*f));
#endif
#else
	(void)f;
	(void)cap;
#endif
}

static void unpoison(struct bufpool_free *f, size_t cap)
{
#if defined(KTLSD_DEBUG) && defined(__SANITIZE_ADDRESS__)
	ASAN_UNPOISON_MEMORY_REGION(f + 1, cap - sizeof(*f));
#else
	(void)f;
	(void)cap;
#endif
}

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
		unpoison(f, *cap);
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
	poison(f, cap);
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
			unpoison(f, (size_t)BUFPOOL_MIN << i);
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
			unpoison(f, (size_t)BUFPOOL_MIN << i);
			free(f);
		}
		p->nfree[i] = 0;
	}
}
