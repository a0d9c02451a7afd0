#include "server/core/rxring.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#define BUFS_LEN ((size_t)RXRING_ENTRIES * RXRING_BUF_SIZE)

int rxring_init(struct rxring *r, struct io_uring *ring)
{
	struct io_uring_buf_reg reg;
	void *br, *bufs;
	int rc;

	memset(r, 0, sizeof(*r));
	/* The kernel wants the ring page-aligned: its own mapping. The
	 * buffers get one too, so that pages no recv wrote stay unbacked. */
	r->br_len = RXRING_ENTRIES * sizeof(struct io_uring_buf);
	br = mmap(NULL, r->br_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (br == MAP_FAILED)
		return -errno;
	bufs = mmap(NULL, BUFS_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (bufs == MAP_FAILED) {
		rc = -errno;
		munmap(br, r->br_len);
		return rc;
	}
	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (unsigned long)br;
	reg.ring_entries = RXRING_ENTRIES;
	reg.bgid = RXRING_BGID;
	rc = io_uring_register_buf_ring(ring, &reg, 0);
	if (rc < 0) {
		munmap(bufs, BUFS_LEN);
		munmap(br, r->br_len);
		return rc;
	}
	r->br = br;
	r->bufs = bufs;
	io_uring_buf_ring_init(r->br);
	rxring_grow(r);
	return 0;
}

char *rxring_buf(struct rxring *r, unsigned bid)
{
	return r->bufs + (size_t)bid * RXRING_BUF_SIZE;
}

void rxring_put(struct rxring *r, unsigned bid)
{
	io_uring_buf_ring_add(r->br, rxring_buf(r, bid), RXRING_BUF_SIZE, (unsigned short)bid,
			      io_uring_buf_ring_mask(RXRING_ENTRIES), 0);
	io_uring_buf_ring_advance(r->br, 1);
}

void rxring_grow(struct rxring *r)
{
	for (unsigned n = 0; n < RXRING_START && r->handed < RXRING_ENTRIES; n++)
		rxring_put(r, r->handed++);
}

void rxring_free(struct rxring *r)
{
	if (!r->br)
		return;
	munmap(r->bufs, BUFS_LEN);
	munmap(r->br, r->br_len);
	r->br = NULL;
	r->bufs = NULL;
}
