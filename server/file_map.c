#include "server/file_map.h"

#include <sys/mman.h>
#include <unistd.h>

/* How far one look goes: 4 MiB, 1,024 pages of 4 KiB, one byte each in
 * the vector. */
#define RESIDENT_AHEAD (4u << 20)

static bool all_resident(const void *map, uint64_t off, size_t len)
{
	static long page;
	unsigned char vec[RESIDENT_AHEAD / 4096 + 2]; /* and a partial page each side */

	if (!page)
		page = sysconf(_SC_PAGESIZE);
	uint64_t start = off & ~(uint64_t)(page - 1);
	size_t span = (size_t)(off + len - start);
	size_t pages = (span + (size_t)page - 1) / (size_t)page;
	if (pages > sizeof(vec) || mincore((char *)map + start, span, vec) < 0)
		return false;
	for (size_t i = 0; i < pages; i++)
		if (!(vec[i] & 1))
			return false;
	return true;
}

bool file_map_resident(const void *map, uint64_t size, uint64_t off, size_t len,
		       uint64_t *resident_to)
{
	uint64_t end = off + len;

	if (end <= *resident_to)
		return true;
	uint64_t ahead = off + RESIDENT_AHEAD < size ? off + RESIDENT_AHEAD : size;
	if (ahead >= end && all_resident(map, off, (size_t)(ahead - off)))
		*resident_to = ahead;
	else if (all_resident(map, off, len))
		*resident_to = end;
	else
		return false;
	return true;
}
