#include "server/core/file_resident.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* cachestat(2), Linux 6.5: one call, no mapping. Debian 12's headers
 * predate it, hence the number and the structs. Its kernel (6.1) answers
 * ENOSYS, and ktlsd.service's seccomp filter EPERM (systemd 252 cannot
 * name the call): then mincore over a mapping of the range answers. */
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif

struct cachestat_range {
	uint64_t off;
	uint64_t len;
};

struct cachestat {
	uint64_t nr_cache;
	uint64_t nr_dirty;
	uint64_t nr_writeback;
	uint64_t nr_evicted;
	uint64_t nr_recently_evicted;
};

/* cachestat was refused for a file it may be asked about: it will be
 * again (every worker learns the same answer, so a race only costs a
 * second refusal). */
static atomic_bool no_cachestat;

/* mincore reads one byte per page into a vector on the stack: probe at
 * most this much at a time. */
#define MINCORE_SPAN (4u << 20)

static long page_size(void)
{
	static atomic_long page;
	long p = atomic_load_explicit(&page, memory_order_relaxed);
	if (!p) {
		p = sysconf(_SC_PAGESIZE);
		atomic_store_explicit(&page, p, memory_order_relaxed);
	}
	return p;
}

static bool resident_by_mincore(int fd, uint64_t off, uint64_t len)
{
	long page = page_size();
	unsigned char vec[MINCORE_SPAN / 4096 + 1];

	while (len > 0) {
		uint64_t start = off & ~(uint64_t)(page - 1);
		uint64_t span = off + len - start;
		if (span > MINCORE_SPAN)
			span = MINCORE_SPAN;
		size_t pages = (size_t)((span + (uint64_t)page - 1) / (uint64_t)page);
		if (pages > sizeof(vec))
			return false; /* pages smaller than 4 KiB: not here */
		void *m = mmap(NULL, (size_t)span, PROT_READ, MAP_SHARED, fd, (off_t)start);
		if (m == MAP_FAILED)
			return false;
		int rc = mincore(m, (size_t)span, vec);
		munmap(m, (size_t)span);
		if (rc < 0)
			return false;
		for (size_t i = 0; i < pages; i++)
			if (!(vec[i] & 1))
				return false;
		uint64_t done = start + span - off;
		if (done >= len)
			break;
		off += done;
		len -= done;
	}
	return true;
}

/* The kernel says whether a file's pages are cached only to a process
 * that could write the file: its owner, or one that write permission lets
 * in (mm/mincore.c can_do_mincore, and cachestat's check where the kernel
 * has it: 6.6's mm/filemap.c does not; a side channel otherwise). For any
 * other file cachestat answers EPERM (or, without its check, counts) and
 * mincore reports every page resident, which would send cold bytes by a
 * sendfile on the worker, stalling it on the disk: a mirror's files
 * belong to whoever syncs them, not to the user ktlsd serves as, and often
 * sit on a read-only mount. Asked again per question (two system calls
 * per look ahead of 4 MiB or per answer of "unknowable", which the caller
 * keeps). */
static bool may_ask(int fd)
{
	struct stat st;

	if (fstat(fd, &st) == 0 && st.st_uid == geteuid())
		return true;
	return faccessat(fd, "", W_OK, AT_EMPTY_PATH | AT_EACCESS) == 0;
}

enum residency {
	RESIDENT_NO,
	RESIDENT_YES,
	RESIDENT_UNKNOWABLE, /* the kernel will not say, for this file */
};

/* Resident means in the page cache and up to date: a read of it now
 * waits for no disk. cachestat counts every page the cache holds,
 * including those whose read is still in flight (mm/filemap.c,
 * filemap_cachestat: no uptodate test), as a readahead's pages are from
 * the moment it starts: a cold download's own reads put them just ahead
 * of where it reads next, and a fault or a sendfile on them waited for
 * the disk on the worker (user-space turns of up to 26 ms under 8 cold
 * downloads, issue 22). So cachestat answers only "no" (one call, no
 * mapping); mincore, which reports a page only once it is up to date
 * (mm/mincore.c, mincore_page), answers "yes". */
static enum residency residency(int fd, uint64_t off, uint64_t len)
{
	if (len == 0)
		return RESIDENT_YES;
	if (!atomic_load_explicit(&no_cachestat, memory_order_relaxed)) {
		struct cachestat_range range = {.off = off, .len = len};
		struct cachestat cs;
		if (syscall(__NR_cachestat, (unsigned)fd, &range, &cs, 0u) == 0) {
			uint64_t page = (uint64_t)page_size();
			uint64_t pages = (off + len - 1) / page - off / page + 1;
			if (cs.nr_cache < pages)
				return RESIDENT_NO;
			/* A kernel whose cachestat answers for any file
			 * (before its permission check was added) would
			 * have mincore report a file we may not ask about
			 * all resident: trust the count there, as before. */
			if (!may_ask(fd))
				return RESIDENT_YES;
			return resident_by_mincore(fd, off, len) ? RESIDENT_YES : RESIDENT_NO;
		}
		if (errno == EPERM && !may_ask(fd))
			return RESIDENT_UNKNOWABLE;
		if (errno != ENOSYS && errno != EPERM)
			return RESIDENT_NO;
		/* Not there, or a system call filter's refusal (ktlsd.service
		 * under systemd 252) for a file it could ask about. */
		atomic_store_explicit(&no_cachestat, true, memory_order_relaxed);
	}
	if (!may_ask(fd))
		return RESIDENT_UNKNOWABLE;
	return resident_by_mincore(fd, off, len) ? RESIDENT_YES : RESIDENT_NO;
}

bool file_resident_ahead(int fd, uint64_t *known_to, uint64_t off, uint64_t len, uint64_t end,
			 uint64_t ahead)
{
	if (*known_to == FILE_RESIDENT_UNKNOWABLE)
		return false;
	if (off + len <= *known_to)
		return true;
	if (end - off < ahead)
		ahead = end - off;
	enum residency r = ahead > len ? residency(fd, off, ahead) : RESIDENT_NO;
	if (r == RESIDENT_YES) {
		*known_to = off + ahead;
		return true;
	}
	if (r != RESIDENT_UNKNOWABLE)
		r = residency(fd, off, len);
	switch (r) {
	case RESIDENT_YES:
		*known_to = off + len;
		return true;
	case RESIDENT_UNKNOWABLE:
		*known_to = FILE_RESIDENT_UNKNOWABLE;
		return false;
	case RESIDENT_NO:
		break;
	}
	return false;
}

bool file_resident(int fd, uint64_t off, uint64_t len)
{
	return residency(fd, off, len) == RESIDENT_YES;
}
