/* A per-session pool for nghttp2's small allocations: a request costs
 * nghttp2 five mallocs and five frees (its stream, the outbound item, the
 * copied header fields, ...), and recycling them per size class is cheaper
 * than glibc's general path. Blocks are kept only while the session is busy
 * (h2_mem_trim gives them back when it goes quiet), and at most
 * H2_MEM_KEEP per class, so the pool bounds what it holds. Sans-I/O. */
#ifndef KTLSD_PROTO_H2_MEM_H
#define KTLSD_PROTO_H2_MEM_H

#include <stddef.h>

#include <nghttp2/nghttp2.h>

#define H2_MEM_CLASSES 32  /* 16-byte classes up to 512 bytes; larger: malloc */
#define H2_MEM_KEEP 32     /* free blocks kept per class */

struct h2_mem_block;

struct h2_mem {
	struct h2_mem_block *free[H2_MEM_CLASSES];
	unsigned nfree[H2_MEM_CLASSES];
};

/* The nghttp2 allocator over pool (which must outlive the session). */
nghttp2_mem h2_mem_allocator(struct h2_mem *pool);

/* Frees the blocks the pool keeps. */
void h2_mem_trim(struct h2_mem *pool);

#endif
