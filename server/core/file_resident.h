/* Whether a range of a file is in the page cache, so that a synchronous
 * sendfile of it cannot wait for the disk and stall the worker. */
#ifndef KTLSD_SERVER_FILE_RESIDENT_H
#define KTLSD_SERVER_FILE_RESIDENT_H

#include <stdbool.h>
#include <stdint.h>

/* Every page of [off, off + len) of fd is cached. false when a page is not,
 * when the kernel will not tell for this file (only for one the process
 * could write: file_resident.c) or the question fails (no memory for a
 * mapping): the caller takes the ring's path, which waits for the disk off
 * the worker. */
bool file_resident(int fd, uint64_t off, uint64_t len);

/* A *known_to of file_resident_ahead's: the kernel will not tell for this
 * file, so it is not asked again. */
#define FILE_RESIDENT_UNKNOWABLE UINT64_MAX

/* file_resident for [off, off + len) of a body that ends at end, asked
 * ahead bytes at a time: *known_to (0 at first) remembers up to where the
 * file was found cached, so most calls ask the kernel nothing, or that it
 * will never say (FILE_RESIDENT_UNKNOWABLE). When the look ahead finds
 * pages missing, only [off, off + len) is asked. */
bool file_resident_ahead(int fd, uint64_t *known_to, uint64_t off, uint64_t len, uint64_t end,
			 uint64_t ahead);

#endif
