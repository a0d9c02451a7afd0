#include "server/core/filecache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/core/file.h"

struct filecache_entry {
	struct filecache_entry *hnext;             /* bucket chain */
	struct filecache_entry *lru_prev, *lru_next;
	uint32_t hash;
	uint64_t root_dev, root_ino;               /* the root folder's (file.h) */
	int fd;                                    /* the cache's own, lent to responses; -1: missing */
	unsigned leases;
	bool listed;                               /* in the table (else freed at its last release) */
	struct stat st;                            /* what it was opened with (not if missing) */
	uint64_t checked_ms;
	unsigned char *mem;                        /* the file's bytes, when kept */
	struct static_memo memo;                   /* what responses made of it */
	char rel[];
};

static uint32_t hash_of(const struct file_root *root, const char *rel)
{
	uint32_t h = 2166136261u ^ (uint32_t)(root->ino ^ root->dev); /* FNV-1a */
	for (const unsigned char *p = (const unsigned char *)rel; *p; p++)
		h = (h ^ *p) * 16777619u;
	return h;
}

void filecache_init(struct filecache *fc, const struct clock *clock)
{
	struct rlimit rl;

	memset(fc, 0, sizeof(*fc));
	fc->clock = clock;
	fc->max = FILECACHE_MAX;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur / 16 < fc->max)
		fc->max = (unsigned)(rl.rlim_cur / 16);
}

/* The list e is on: missing files have their own. */
static struct filecache_lru *lru_of(struct filecache *fc, const struct filecache_entry *e)
{
	return e->fd < 0 ? &fc->missing : &fc->lru;
}

static void lru_unlink(struct filecache_lru *l, struct filecache_entry *e)
{
	if (e->lru_prev)
		e->lru_prev->lru_next = e->lru_next;
	else
		l->head = e->lru_next;
	if (e->lru_next)
		e->lru_next->lru_prev = e->lru_prev;
	else
		l->tail = e->lru_prev;
	e->lru_prev = e->lru_next = NULL;
}

static void lru_push(struct filecache_lru *l, struct filecache_entry *e)
{
	e->lru_prev = NULL;
	e->lru_next = l->head;
	if (l->head)
		l->head->lru_prev = e;
	l->head = e;
	if (!l->tail)
		l->tail = e;
}

static void entry_free(struct filecache *fc, struct filecache_entry *e)
{
	if (e->fd >= 0) {
		if ((unsigned)e->fd < fc->by_fd_cap)
			fc->by_fd[e->fd] = NULL;
		close(e->fd);
		fc->open--;
	}
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
	lru_unlink(lru_of(fc, e), e);
	e->listed = false;
	if (e->fd < 0)
		fc->nmissing--;
	else
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
static int lend(struct filecache_entry *e, struct static_opened *f)
{
	e->leases++;
	f->st = e->st;
	f->mem = e->mem;
	f->memo = &e->memo;
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

/* e still tells the truth about its path: trusted for FILECACHE_VALID_MS,
 * then one stat by path says. The stat only compares: on any difference
 * the path is opened again through openat2, whose rules (RESOLVE_BENEATH)
 * decide what may be served. */
static bool still_true(struct filecache *fc, const struct file_root *root,
		       struct filecache_entry *e)
{
	uint64_t now_ms = fc->clock->now_ms;
	struct stat now;

	if (now_ms - e->checked_ms < FILECACHE_VALID_MS)
		return true;
	int rc = fstatat(root->fd, e->rel, &now, 0);
	if (e->fd < 0 ? !(rc < 0 && (errno == ENOENT || errno == ENOTDIR))
		      : !(rc == 0 && same_file(&now, &e->st)))
		return false;
	fc->revalidations++;
	e->checked_ms = now_ms;
	return true;
}

/* A new entry for rel (h its hash): fd (-1: missing) opened with st. */
static struct filecache_entry *entry_new(struct filecache *fc, const struct file_root *root,
					 const char *rel, uint32_t h, int fd, const struct stat *st)
{
	size_t len = strlen(rel);
	struct filecache_entry *e = calloc(1, sizeof(*e) + len + 1);

	if (!e)
		return NULL;
	if (fd < 0 ? fc->nmissing >= FILECACHE_MISSING_MAX : fc->n >= fc->max)
		drop(fc, fd < 0 ? fc->missing.tail : fc->lru.tail);
	memcpy(e->rel, rel, len + 1);
	e->hash = h;
	e->root_dev = root->dev;
	e->root_ino = root->ino;
	e->fd = fd;
	e->listed = true;
	if (st)
		e->st = *st;
	e->checked_ms = fc->clock->now_ms;
	e->hnext = fc->buckets[h % FILECACHE_BUCKETS];
	fc->buckets[h % FILECACHE_BUCKETS] = e;
	lru_push(lru_of(fc, e), e);
	if (fd < 0) {
		fc->nmissing++;
	} else {
		fc->by_fd[fd] = e;
		fc->n++;
	}
	return e;
}

int filecache_open(struct filecache *fc, const struct file_root *root, const char *rel,
		   struct static_opened *f)
{
	uint32_t h = hash_of(root, rel);
	struct filecache_entry *e = fc->max ? find(fc, root, rel, h) : NULL;

	f->mem = NULL;
	f->memo = NULL;
	if (e && !still_true(fc, root, e)) {
		drop(fc, e);
		e = NULL;
	}
	if (e) {
		lru_unlink(lru_of(fc, e), e);
		lru_push(lru_of(fc, e), e);
		fc->hits++;
		if (e->fd < 0)
			return -ENOENT;
		if (e->mem)
			fc->mem_hits++;
		return lend(e, f);
	}
	fc->misses++;
	int fd = file_open_beneath(root->fd, rel, &f->st);
	if (fd == -ENOENT && fc->max)
		entry_new(fc, root, rel, h, -1, NULL);
	if (fd < 0)
		return fd;
	fc->open++;
	if (fc->max == 0 || !by_fd_fits(fc, fd) || !(e = entry_new(fc, root, rel, h, fd, &f->st)))
		return fd;
	return lend(e, f);
}

void filecache_new_config(struct filecache *fc)
{
	for (struct filecache_entry *e = fc->lru.head; e; e = e->lru_next) {
		e->memo.types = NULL;
		e->memo.content_type = NULL;
	}
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
	struct stat st;

	if (!e || !e->listed || e->mem || len == 0 || len > FILECACHE_MEM_FILE_MAX ||
	    (uint64_t)e->st.st_size != len || fc->mem_bytes + len > FILECACHE_MEM_MAX)
		return;
	if (fc->clock->now_sec - e->st.st_mtim.tv_sec < FILECACHE_SETTLED_S)
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
	for (struct filecache_entry *e = fc->lru.head, *next; e; e = next) {
		next = e->lru_next;
		if ((uint64_t)e->st.st_ino == ino)
			drop(fc, e);
	}
}

void filecache_clear(struct filecache *fc)
{
	while (fc->lru.head)
		drop(fc, fc->lru.head);
	while (fc->missing.head)
		drop(fc, fc->missing.head);
	free(fc->by_fd);
	fc->by_fd = NULL;
	fc->by_fd_cap = 0;
}
