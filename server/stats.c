#include "server/stats.h"

uint64_t stats_sum(const uint64_t *v, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += v[i];
	return s;
}
