/* A per-worker cache of open files (fd and stat by path beneath the root),
 * like nginx's open_file_cache or h2o's filecache: a file served again
 * costs no syscall at all. Responses borrow the cache's own fd (a lease,
 * given back with filecache_release; an entry dropped while lent keeps its
 * fd open until its last lease ends), and a small file's bytes, once a
 * response has read them, are kept with the entry so the next response
 * copies them instead of reading.
 *
 * Folders are kept too (a request for "/" opens "." before index.html),
 * and so are missing files (negative entries, as nginx's
 * open_file_cache_errors: a missing precompressed sidecar, a favicon), in a
 * list of their own so that requests for names that do not exist cannot
 * push out the files that do. What responses make of a file that depends
 * on it alone (ETag, Last-Modified, MIME type: proto/static_file.h's
 * struct static_memo) is kept with its entry, as h2o's filecache keeps
 * them, so a cached file costs no formatting either.
 *
 * Semantics, as nginx's open_file_cache_valid: an entry is trusted for
 * FILECACHE_VALID_MS, then revalidated with one stat by path (same device,
 * inode, size, mtime and ctime, or it is reopened through openat2; a
 * missing file that the stat still misses stays missing, one that it finds
 * is opened, so a file created after a 404 is served within that time). A file
 * replaced by rename is served as the old one, with the old one's
 * validators, for at most that long: never new bytes under old validators
 * or the reverse, since each response reads the inode whose stat made its
 * head. A response that finds its file shorter than its stat said (it was
 * truncated in place) closes as it always did, and forgets the entry, so
 * the next request opens the file afresh. Worker-local: no lock.
 *
 * Kept bytes follow the same rule: they are the bytes of the inode and
 * stat the entry holds. They are taken only from a read of the whole file
 * whose fstat afterwards still matches the entry (a write during the read
 * changes mtime first), and only from a file whose mtime is at least
 * FILECACHE_SETTLED_S old: a write in the same coarse timestamp tick as
 * the last one would leave mtime unchanged ("racy git"), so a file still
 * being written is read each time. */
#ifndef KTLSD_SERVER_FILECACHE_H
#define KTLSD_SERVER_FILECACHE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/static_target.h"
#include "server/core/clock.h"
#include "server/core/file.h"

#define FILECACHE_VALID_MS 1000
#define FILECACHE_MAX 1024  /* entries per worker, fewer when fds are few */
/* Missing files kept, per worker, apart from the open ones: about 350
 * bytes each with its name, no fd. */
#define FILECACHE_MISSING_MAX 1024
#define FILECACHE_BUCKETS 2048
#define FILECACHE_MEM_FILE_MAX (16 * 1024)   /* bytes kept for files up to this size ... */
#define FILECACHE_MEM_MAX (4u * 1024 * 1024) /* ... up to this much per worker */
#define FILECACHE_SETTLED_S 2

struct filecache_entry;

struct filecache_lru {
	struct filecache_entry *head, *tail; /* head: most recently used */
};

struct filecache {
	struct filecache_entry *buckets[FILECACHE_BUCKETS];
	struct filecache_lru lru;     /* entries with an fd: files and folders */
	struct filecache_lru missing; /* negative entries */
	unsigned n, max;              /* of lru */
	unsigned nmissing;
	const struct clock *clock;    /* the worker's */
	/* Leased fds back to their entries: a release needs no search. */
	struct filecache_entry **by_fd;
	unsigned by_fd_cap;
	size_t mem_bytes;
	unsigned open;   /* fds open: entries', lent ones whose entry went, uncached ones */
	uint64_t hits, misses, revalidations, mem_hits;
};

/* max from the open-file limit: the cache holds at most 1/16 of it. clock:
 * the worker's, read for each open (it outlives fc). */
void filecache_init(struct filecache *fc, const struct clock *clock);

/* As file_open_beneath (file.h) beneath root->fd: an fd, with f->st the
 * stat it was opened with, or -errno; through the cache, by root folder
 * (its device and inode, not its fd number) and path. The fd is the
 * caller's until it calls filecache_release, never close. f->mem: the
 * whole file's bytes when the cache keeps them, else NULL; f->memo: the
 * entry's memo, or NULL (not cached); both valid until the release. */
int filecache_open(struct filecache *fc, const struct file_root *root, const char *relpath,
		   struct static_opened *f);

/* A new configuration: the memos' MIME types are looked up again (their
 * tables may be freed now, and a new one made at a freed one's address). */
void filecache_new_config(struct filecache *fc);

/* Gives back an fd filecache_open returned (or closes it, if the cache
 * did not keep it). */
void filecache_release(struct filecache *fc, int fd);

/* Takes fd, opened elsewhere (a listing's memfd), into the count of open
 * fds: filecache_release closes it like an uncached file. */
void filecache_adopt(struct filecache *fc, int fd);

/* A response read the len bytes at buf from fd (from filecache_open) from
 * offset 0: if that is the whole of a small file, settled and unchanged
 * since, keep them for later responses. */
void filecache_learn(struct filecache *fc, int fd, const void *buf, size_t len);

/* A response found the file with inode ino shorter than its stat said:
 * drop the entry, so the next request opens it afresh. */
void filecache_forget(struct filecache *fc, uint64_t ino);

/* Closes every cached fd not lent (worker exit, after its connections). */
void filecache_clear(struct filecache *fc);

#endif
