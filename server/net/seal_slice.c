#include "server/net/seal_slice.h"

void seal_slice_init(struct seal_slice *sl)
{
	sl->ps_per_byte = 0;
	sl->cap = SEAL_MAX;
}

void seal_slice_took(struct seal_slice *sl, size_t len, uint64_t ns)
{
	/* A seal shorter than a record (a response's last bytes) is mostly
	 * its fixed cost: it says little of the speed. */
	if (len < SEAL_SLICE_MIN)
		return;
	uint64_t ns_max = UINT64_MAX / 1000;
	uint64_t ps = (ns < ns_max ? ns : ns_max) * 1000 / len;
	if (ps == 0)
		ps = 1;
	/* A quarter of each new seal: a seal a few times slower than the
	 * rest (an interrupt, a fault) moves the size little, a run of slow
	 * ones cuts it within a few seals. A stall of milliseconds inside
	 * one (a preemption) cuts it too, down to a record, for some ten
	 * seals (~1 MiB): a few more sends, no more. */
	if (sl->ps_per_byte == 0)
		sl->ps_per_byte = ps;
	else if (ps > sl->ps_per_byte)
		sl->ps_per_byte += (ps - sl->ps_per_byte + 3) / 4;
	else
		sl->ps_per_byte -= (sl->ps_per_byte - ps) / 4;
	uint64_t fits = (uint64_t)SEAL_SLICE_NS * 1000 / sl->ps_per_byte;
	if (fits >= SEAL_MAX) {
		sl->cap = SEAL_MAX;
		return;
	}
	fits -= fits % SEAL_SLICE_MIN;
	sl->cap = fits < SEAL_SLICE_MIN ? SEAL_SLICE_MIN : (size_t)fits;
}
