#include "server/core/bufpool.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

/* Whether class i's buffers are mappings of the pool's own, of exactly
 * their class's size, so that the trim can give back buffers that lie
 * side by side with one munmap (give_back_sorted). */
static bool mapped(int i)
{
	return BUFPOOL_OWN_MAPS && ((size_t)BUFPOOL_MIN << i) >= BUFPOOL_MAP_MIN;
}

static void *buf_alloc(int i)
{
	size_t size = (size_t)BUFPOOL_MIN << i;

	if (!mapped(i))
		return malloc(size);
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* n buffers of class i from p on: one, or (mapped ones) a run of them. */
static void buf_free(int i, void *p, unsigned n)
{
	if (mapped(i))
		munmap(p, n * ((size_t)BUFPOOL_MIN << i));
	else
		free(p);
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
	struct bufpool_free *f = p->free[i];
	if (f) {
		p->free[i] = f->next;
		p->nfree[i]--;
		if (p->nfree[i] < p->minfree[i])
			p->minfree[i] = p->nfree[i];
		p->hits++;
		unpoison(f, *cap);
	} else if (!(f = buf_alloc(i))) {
		return NULL;
	}
	if (++p->nout[i] > p->maxout[i])
		p->maxout[i] = p->nout[i];
	return f;
}

void bufpool_put(struct bufpool *p, void *buf, size_t cap)
{
	int i = class_of(cap);

	if (!buf)
		return;
	if (i < 0 || ((size_t)BUFPOOL_MIN << i) != cap) {
		free(buf);
		return;
	}
	if (p->nout[i])
		p->nout[i]--;
	struct bufpool_free *f = buf;
	poison(f, cap);
	f->next = p->free[i];
	p->free[i] = f;
	p->nfree[i]++;
}

/* The most class i had in use at once in the last BUFPOOL_HOLD_TICKS
 * ticks (bufpool_trim records each tick's maxout). */
static unsigned recent_most(const struct bufpool *p, int i)
{
	unsigned most = 0;

	for (int t = 0; t < BUFPOOL_HOLD_TICKS; t++)
		if (p->tick_maxout[i][t] > most)
			most = p->tick_maxout[i][t];
	return most;
}

/* How many of class i's buffers to keep this tick (bufpool_trim); takes
 * what it keeps beyond the peak out of *hold. */
static unsigned class_keep(struct bufpool *p, int i, size_t *hold)
{
	size_t size = (size_t)BUFPOOL_MIN << i;
	unsigned peak = p->peak[i] - (p->peak[i] + BUFPOOL_DECAY - 1) / BUFPOOL_DECAY;

	if (p->maxout[i] > peak)
		peak = p->maxout[i];
	p->peak[i] = peak;
	unsigned keep = p->maxout[i] ? peak + peak / BUFPOOL_SPARE_DIV : 0;
	p->tick_maxout[i][p->tick % BUFPOOL_HOLD_TICKS] = p->maxout[i];
	unsigned most = recent_most(p, i);
	if (most > keep) {
		size_t more = most - keep;
		if (more > *hold / size)
			more = *hold / size;
		keep += (unsigned)more;
		*hold -= more * size;
	}
	return keep;
}

static int by_address(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;

	return (x > y) - (x < y);
}

/* Class i's free list, lowest address first, into v (nfree[i] slots). */
static void take_sorted(struct bufpool *p, int i, void **v)
{
	unsigned n = 0;

	for (struct bufpool_free *f = p->free[i]; f; f = f->next)
		v[n++] = f;
	qsort(v, n, sizeof(*v), by_address);
}

/* Gives back the last of v[0..n) (class i, sorted), the highest first and
 * mapped neighbours in one munmap, while *calls and *bytes allow; returns
 * how many went (the last ones). */
static unsigned give_back_sorted(int i, void **v, unsigned n, unsigned *calls, size_t *bytes)
{
	size_t size = (size_t)BUFPOOL_MIN << i;
	unsigned gone = 0;

	while (gone < n && *calls > 0 && *bytes >= size) {
		unsigned end = n - gone, run = 1;
		while (mapped(i) && run < end && (size_t)(run + 1) * size <= *bytes &&
		       (char *)v[end - run - 1] + size == (char *)v[end - run])
			run++;
		for (unsigned k = end - run; k < end; k++)
			unpoison(v[k], size);
		buf_free(i, v[end - run], run);
		gone += run;
		*bytes -= run * size;
		(*calls)--;
	}
	return gone;
}

/* Gives back excess of class i's free buffers, those of the highest
 * addresses: a taker gets the lowest first (the list is rebuilt in that
 * order), so those in use gather at the low end and the free ones lie
 * side by side at the high end, where one munmap takes a run of them. */
static void trim_class(struct bufpool *p, int i, unsigned excess, unsigned *calls, size_t *bytes)
{
	unsigned n = p->nfree[i];
	void **v = malloc(n * sizeof(*v));

	if (!v)
		return; /* the next tick tries again */
	take_sorted(p, i, v);
	unsigned keep = n - excess;
	unsigned gone = give_back_sorted(i, v + keep, excess, calls, bytes);
	/* What stays, lowest address first: the kept ones, and those the
	 * bounds left for the next tick. */
	p->free[i] = NULL;
	for (unsigned k = n - gone; k-- > 0;) {
		struct bufpool_free *f = v[k];
		f->next = p->free[i];
		p->free[i] = f;
	}
	p->nfree[i] = n - gone;
	free(v);
}

void bufpool_trim(struct bufpool *p, size_t hold)
{
	unsigned excess[BUFPOOL_CLASSES];

	for (int i = 0; i < BUFPOOL_CLASSES; i++) {
		unsigned keep = class_keep(p, i, &hold);
		unsigned held = p->nout[i] + p->nfree[i];
		unsigned n = held > keep ? held - keep : 0;
		excess[i] = n < p->minfree[i] ? n : p->minfree[i];
	}
	/* The largest first: the bounds count calls and bytes, and a big
	 * buffer gives the system the most for its munmap. */
	unsigned calls = BUFPOOL_TRIM_MAX;
	size_t bytes = BUFPOOL_TRIM_BYTES;
	for (int i = BUFPOOL_CLASSES - 1; i >= 0; i--) {
		if (excess[i] > 0 && calls > 0)
			trim_class(p, i, excess[i], &calls, &bytes);
		p->minfree[i] = p->nfree[i];
		p->maxout[i] = p->nout[i];
	}
	p->tick++;
}

void bufpool_bytes(const struct bufpool *p, size_t *out, size_t *kept)
{
	*out = *kept = 0;
	for (int i = 0; i < BUFPOOL_CLASSES; i++) {
		*out += (size_t)p->nout[i] * ((size_t)BUFPOOL_MIN << i);
		*kept += (size_t)p->nfree[i] * ((size_t)BUFPOOL_MIN << i);
	}
}

void bufpool_drain(struct bufpool *p)
{
	for (int i = 0; i < BUFPOOL_CLASSES; i++) {
		while (p->free[i]) {
			struct bufpool_free *f = p->free[i];
			p->free[i] = f->next;
			unpoison(f, (size_t)BUFPOOL_MIN << i);
			buf_free(i, f, 1);
		}
		p->nfree[i] = p->minfree[i] = 0;
	}
}
