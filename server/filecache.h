/* A per-worker cache of open files (fd and stat by path beneath the root),
 * like nginx's open_file_cache or h2o's filecache: a small file served
 * again costs no openat2 path walk and no fstat, only a dup and a close.
 *
 * Semantics, as nginx's open_file_cache_valid: an entry is trusted for
 * FILECACHE_VALID_MS, then revalidated with one stat by path (same device,
 * inode, size, mtime and ctime, or it is reopened through openat2). A file
 * replaced by rename is served as the old one, with the old one's
 * validators, for at most that long: never new bytes under old validators
 * or the reverse, since each response reads the inode whose stat made its
 * head. A response that finds its file shorter than its stat said (it was
 * truncated in place) closes as it always did, and forgets the entry, so
 * the next request opens the file afresh. Worker-local: no lock. */
#ifndef KTLSD_SERVER_FILECACHE_H
#define KTLSD_SERVER_FILECACHE_H

#include <stdint.h>
#include <sys/stat.h>

#define FILECACHE_VALID_MS 1000
#define FILECACHE_MAX 1024  /* entries per worker, fewer when fds are few */
#define FILECACHE_BUCKETS 2048

struct filecache_entry;

struct filecache {
	struct filecache_entry *buckets[FILECACHE_BUCKETS];
	struct filecache_entry *lru_head, *lru_tail; /* head: most recently used */
	unsigned n, max;
	uint64_t hits, misses, revalidations;
};

/* max from the open-file limit: the cache holds at most 1/16 of it. */
void filecache_init(struct filecache *fc);

/* As file_open_beneath (file.h): an fd of the caller's own, and the stat
 * it was opened with; regular files come through the cache. */
int filecache_open(struct filecache *fc, int root_fd, const char *relpath, uint64_t now_ms,
		   struct stat *st);

/* A response found the file with inode ino shorter than its stat said:
 * drop the entry, so the next request opens it afresh. */
void filecache_forget(struct filecache *fc, uint64_t ino);

/* Closes every cached fd (worker exit). */
void filecache_clear(struct filecache *fc);

#endif
