/* A file's mapped pages as a source of bytes to send: which of them are in
 * memory. A send (the kernel's copy, or ktlsd's sealer) from a page that is
 * not would wait for the disk on the worker's thread, stalling every
 * connection it serves; the caller reads such bytes through the ring. */
#ifndef KTLSD_SERVER_FILE_MAP_H
#define KTLSD_SERVER_FILE_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether [off, off + len) of map (a mapping of size bytes) is in memory.
 * *resident_to says how far it is known to be: one mincore looks 4 MiB
 * ahead (a mincore per batch was a third of the system calls of an HTTP/2
 * download), so most calls make none. */
bool file_map_resident(const void *map, uint64_t size, uint64_t off, size_t len,
		       uint64_t *resident_to);

#endif
