#include "server/filecache.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "server/file.h"

struct filecache_entry {
	struct filecache_entry *hnext;             /* bucket chain */
	struct filecache_entry *lru_prev, *lru_next;
	uint32_t hash;
	uint64_t root_dev, root_ino;               /* the root folder's (file.h) */
	int fd;                                    /* the cache's own, lent to responses */
	unsigned leases;
	bool listed;                               /* in the table (else freed at its last release) */
	struct stat st;
	uint64_t checked_ms;
	unsigned char *mem;                        /* the file's bytes, when kept */
	char rel[];
};

static uint32_t hash_of(const struct file_root *root, const char *rel)
{
	uint32_t h = 2166136261u ^ (uint32_t)(root->ino ^ root->dev); /* FNV-1a */
	for (const unsigned char *p = (const unsigned char *)rel; *p; p++)
		h = (h ^ *p) * 16777619u;
	return h;
}

void filecache_init(struct filecache *fc)
{
	struct rlimit rl;

	memset(fc, 0, sizeof(*fc));
	fc->max = FILECACHE_MAX;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur / 16 < fc->max)
		fc->max = (unsigned)(rl.rlim_cur / 16);
}

static void lru_unlink(struct filecache *fc, struct filecache_entry *e)
{
	if (e->lru_prev)
		e->lru_prev->lru_next = e->lru_next;
	else
		fc->lru_head = e->lru_next;
	if (e->lru_next)
		e->lru_next->lru_prev = e->lru_prev;
	else
		fc->lru_tail = e->lru_prev;
	e->lru_prev = e->lru_next = NULL;
}

static void lru_push(struct filecache *fc, struct filecache_entry *e)
{
	e->lru_prev = NULL;
	e->lru_next = fc->lru_head;
	if (fc->lru_head)
		fc->lru_head->lru_prev = e;
	fc->lru_head = e;
	if (!fc->lru_tail)
		fc->lru_tail = e;
}

static void entry_free(struct filecache *fc, struct filecache_entry *e)
{
	if ((unsigned)e->fd < fc->by_fd_cap)
		fc->by_fd[e->fd] = NULL;
	close(e->fd);
	fc->open--;
	if (e->mem)
		fc->mem_bytes -= (size_t)e->st.st_size;
	free(e->mem);
	free(e);
}

/* Out of the table; the fd and bytes live on while responses hold them. */
static void drop(struct filecache *fc, struct filecache_entry *e)
{
	struct filecache_entry **pp = &fc->buckets[e->hash % FILECACHE_BUCKETS];

	while (*pp && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = e->hnext;
	lru_unlink(fc, e);
	e->listed = false;
	fc->n--;
	if (e->leases == 0)
		entry_free(fc, e);
}

static struct filecache_entry *find(struct filecache *fc, const struct file_root *root,
				    const char *rel, uint32_t h)
{
	for (struct filecache_entry *e = fc->buckets[h % FILECACHE_BUCKETS]; e; e = e->hnext)
		if (e->hash == h && e->root_ino == root->ino && e->root_dev == root->dev &&
		    strcmp(e->rel, rel) == 0)
			return e;
	return NULL;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* The cache's own fd, lent: responses read with offsets (ring reads,
 * splice), so a shared file offset is moot. */
static int lend(struct filecache_entry *e, struct stat *st, const void **mem)
{
	e->leases++;
	*st = e->st;
	if (mem)
		*mem = e->mem;
	return e->fd;
}

/* Room in by_fd for fd: the table grows with the highest fd it holds. */
static bool by_fd_fits(struct filecache *fc, int fd)
{
	if ((unsigned)fd < fc->by_fd_cap)
		return true;
	unsigned cap = fc->by_fd_cap ? fc->by_fd_cap : 256;
	while (cap <= (unsigned)fd)
		cap *= 2;
	struct filecache_entry **t = realloc(fc->by_fd, cap * sizeof(*t));
	if (!t)
		return false;
	memset(t + fc->by_fd_cap, 0, (cap - fc->by_fd_cap) * sizeof(*t));
	fc->by_fd = t;
	fc->by_fd_cap = cap;
	return true;
}

int filecache_open(struct filecache *fc, const struct file_root *root, const char *rel,
		   uint64_t now_ms, struct stat *st, const void **mem)
{
	uint32_t h = hash_of(root, rel);
	struct filecache_entry *e = fc->max ? find(fc, root, rel, h) : NULL;

	if (e) {
		struct stat now;
		if (now_ms - e->checked_ms < FILECACHE_VALID_MS) {
			fc->hits++;
		} else if (fstatat(root->fd, rel, &now, 0) == 0 && same_file(&now, &e->st)) {
			/* A stat by path only compares: on any difference the
			 * file is opened again through openat2, whose rules
			 * (RESOLVE_BENEATH) decide what may be served. */
			fc->revalidations++;
			e->checked_ms = now_ms;
		} else {
			drop(fc, e);
			e = NULL;
		}
		if (e) {
			lru_unlink(fc, e);
			lru_push(fc, e);
			if (e->mem)
				fc->mem_hits++;
			return lend(e, st, mem);
		}
	}
	fc->misses++;
	if (mem)
		*mem = NULL;
	int fd = file_open_beneath(root->fd, rel, st);
	if (fd >= 0)
		fc->open++;
	if (fd < 0 || !S_ISREG(st->st_mode) || fc->max == 0 || !by_fd_fits(fc, fd))
		return fd;
	size_t len = strlen(rel);
	e = calloc(1, sizeof(*e) + len + 1);
	if (!e)
		return fd;
	if (fc->n >= fc->max)
		drop(fc, fc->lru_tail);
	memcpy(e->rel, rel, len + 1);
	e->hash = h;
	e->root_dev = root->dev;
	e->root_ino = root->ino;
	e->fd = fd;
	e->listed = true;
	e->st = *st;
	e->checked_ms = now_ms;
	e->hnext = fc->buckets[h % FILECACHE_BUCKETS];
	fc->buckets[h % FILECACHE_BUCKETS] = e;
	fc->by_fd[fd] = e;
	lru_push(fc, e);
	fc->n++;
	return lend(e, st, NULL);
}

static struct filecache_entry *lent(const struct filecache *fc, int fd)
{
	return fd >= 0 && (unsigned)fd < fc->by_fd_cap ? fc->by_fd[fd] : NULL;
}

void filecache_release(struct filecache *fc, int fd)
{
	struct filecache_entry *e = lent(fc, fd);

	if (!e) {
		if (fd >= 0) {
			close(fd);
			fc->open--;
		}
		return;
	}
	if (--e->leases == 0 && !e->listed)
		entry_free(fc, e);
}

void filecache_adopt(struct filecache *fc, int fd)
{
	if (fd >= 0)
		fc->open++;
}

void filecache_learn(struct filecache *fc, int fd, const void *buf, size_t len)
{
	struct filecache_entry *e = lent(fc, fd);
	struct timespec now;
	struct stat st;

	if (!e || !e->listed || e->mem || len == 0 || len > FILECACHE_MEM_FILE_MAX ||
	    (uint64_t)e->st.st_size != len || fc->mem_bytes + len > FILECACHE_MEM_MAX)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	if (now.tv_sec - e->st.st_mtim.tv_sec < FILECACHE_SETTLED_S)
		return;
	if (fstat(fd, &st) < 0 || !same_file(&st, &e->st))
		return;
	e->mem = malloc(len);
	if (!e->mem)
		return;
	memcpy(e->mem, buf, len);
	fc->mem_bytes += len;
}

void filecache_forget(struct filecache *fc, uint64_t ino)
{
	for (struct filecache_entry *e = fc->lru_head, *next; e; e = next) {
		next = e->lru_next;
		if ((uint64_t)e->st.st_ino == ino)
			drop(fc, e);
	}
}

void filecache_clear(struct filecache *fc)
{
	while (fc->lru_head)
		drop(fc, fc->lru_head);
	free(fc->by_fd);
	fc->by_fd = NULL;
	fc->by_fd_cap = 0;
}
