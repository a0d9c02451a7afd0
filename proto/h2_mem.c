#include "proto/h2_mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CLASS_SIZE 16
#define LARGE UINT32_MAX /* the class of a block that came from malloc as is */

/* Every block starts with its class, so free needs no size; the header is
 * 16 bytes to keep malloc's alignment for what follows. */
struct h2_mem_block {
	struct h2_mem_block *next; /* while free */
	uint32_t cls;
	uint32_t pad;
	char data[];
};

_Static_assert(sizeof(struct h2_mem_block) == 16, "block header keeps 16-byte alignment");

static uint32_t class_of(size_t n)
{
	if (n == 0)
		n = 1;
	size_t c = (n + CLASS_SIZE - 1) / CLASS_SIZE - 1;
	return c < H2_MEM_CLASSES ? (uint32_t)c : LARGE;
}

static void *pool_malloc(size_t n, void *ud)
{
	struct h2_mem *pool = ud;
	uint32_t c = class_of(n);
	struct h2_mem_block *b;

	if (c != LARGE && pool->free[c]) {
		b = pool->free[c];
		pool->free[c] = b->next;
		pool->nfree[c]--;
	} else {
		size_t size = c == LARGE ? n : (size_t)(c + 1) * CLASS_SIZE;
		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
	}
	b->cls = c;
	return b->data;
}

static void pool_free(void *p, void *ud)
{
	struct h2_mem *pool = ud;
	struct h2_mem_block *b;

	if (!p)
		return;
	b = (struct h2_mem_block *)((char *)p - offsetof(struct h2_mem_block, data));
	uint32_t c = b->cls;
	if (c == LARGE || pool->nfree[c] >= H2_MEM_KEEP) {
		free(b);
		return;
	}
	b->next = pool->free[c];
	pool->free[c] = b;
	pool->nfree[c]++;
}

static void *pool_calloc(size_t nmemb, size_t size, void *ud)
{
	if (size && nmemb > SIZE_MAX / size)
		return NULL;
	void *p = pool_malloc(nmemb * size, ud);
	if (p)
		memset(p, 0, nmemb * size);
	return p;
}

static void *pool_realloc(void *p, size_t n, void *ud)
{
	if (!p)
		return pool_malloc(n, ud);
	struct h2_mem_block *b =
	    (struct h2_mem_block *)((char *)p - offsetof(struct h2_mem_block, data));
	uint32_t c = b->cls;
	if (c == LARGE) {
		struct h2_mem_block *nb = realloc(b, sizeof(*b) + n);
		return nb ? nb->data : NULL;
	}
	size_t have = (size_t)(c + 1) * CLASS_SIZE;
	if (n <= have)
		return p;
	void *q = pool_malloc(n, ud);
	if (!q)
		return NULL;
	memcpy(q, p, have);
	pool_free(p, ud);
	return q;
}

nghttp2_mem h2_mem_allocator(struct h2_mem *pool)
{
	return (nghttp2_mem){pool, pool_malloc, pool_free, pool_calloc, pool_realloc};
}

void h2_mem_trim(struct h2_mem *pool)
{
	for (size_t c = 0; c < H2_MEM_CLASSES; c++) {
		while (pool->free[c]) {
			struct h2_mem_block *b = pool->free[c];
			pool->free[c] = b->next;
			free(b);
		}
		pool->nfree[c] = 0;
	}
}
