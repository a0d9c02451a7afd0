/* A worker's listing thread: see server/http/lister.h for why and how. */
#include "server/http/lister.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/core/fd_write.h"
#include "server/core/file.h"
#include "server/core/log.h"

/* The rendering is written to the memfd in pieces of about this size, so
 * the listing is never held twice in memory. */
#define FLUSH_AT (256 * 1024)
/* Below serving: a listing takes what CPU the workers leave. */
#define LISTER_NICE 10

/* ---- on the listing thread ---- */

struct listing {
	struct autoindex_entry *e;
	size_t n, cap;
};

static void listing_free(struct listing *ls)
{
	for (size_t i = 0; i < ls->n; i++)
		free((char *)ls->e[i].name);
	free(ls->e);
}

/* A symlink is listed as what serving it would give: opened beneath the
 * root as a request for it would be (RESOLVE_BENEATH, no magic links), a
 * regular file or folder there, described by the target's stat. One that
 * leaves the root, dangles or loops is left out, so a listing never shows
 * more than serving would (nor where a link points). */
static bool follow(const struct lister_job *j, const char *name, struct stat *st)
{
	char path[PATH_MAX];
	bool root = strcmp(j->rel, ".") == 0;
	int n = root ? snprintf(path, sizeof(path), "%s", name)
	             : snprintf(path, sizeof(path), "%s/%s", j->rel, name);

	if (n < 0 || (size_t)n >= sizeof(path))
		return false;
	int fd = file_open_beneath(j->root_fd, path, st);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static int add(struct listing *ls, const char *name, const struct stat *st)
{
	if (ls->n == ls->cap) {
		size_t cap = ls->cap ? ls->cap * 2 : 256;
		struct autoindex_entry *e = realloc(ls->e, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		ls->e = e;
		ls->cap = cap;
	}
	size_t len = strlen(name);
	char *copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, name, len + 1);
	ls->e[ls->n++] = (struct autoindex_entry){
	    .name = copy,
	    .name_len = len,
	    .is_dir = S_ISDIR(st->st_mode),
	    .size = S_ISDIR(st->st_mode) ? 0 : (uint64_t)st->st_size,
	    .mtime = st->st_mtim.tv_sec,
	};
	return 0;
}

/* The entries a listing shows: what serving would serve. Names starting
 * with '.' only with --dotfiles (path.c's rule: a dot segment is a
 * dotfile), regular files and folders only (sockets, FIFOs and devices are
 * refused by file.c), symlinks as follow() says. */
/* The remembered slot of the folder st is, as it is now, when it was over
 * a limit of max_entries or more (it has more than that many); else NULL. */
static struct lister_too_big *too_big_find(struct lister *l, const struct stat *st,
					   unsigned max_entries, bool dotfiles)
{
	for (size_t i = 0; i < LISTER_TOO_BIG_SLOTS; i++) {
		struct lister_too_big *t = &l->too_big[i];
		if (t->ino == (uint64_t)st->st_ino && t->dev == (uint64_t)st->st_dev &&
		    t->mtime_sec == st->st_mtim.tv_sec && t->mtime_nsec == st->st_mtim.tv_nsec &&
		    t->max_entries && max_entries <= t->max_entries && t->dotfiles == dotfiles)
			return t;
	}
	return NULL;
}

static void too_big_remember(struct lister *l, const struct stat *st, unsigned max_entries,
			     bool dotfiles)
{
	struct lister_too_big *t = &l->too_big[l->too_big_next++ % LISTER_TOO_BIG_SLOTS];

	*t = (struct lister_too_big){.dev = (uint64_t)st->st_dev, .ino = (uint64_t)st->st_ino,
				     .mtime_sec = st->st_mtim.tv_sec,
				     .mtime_nsec = st->st_mtim.tv_nsec,
				     .max_entries = max_entries, .dotfiles = dotfiles};
}

static int read_dir(struct lister *l, const struct lister_job *j, struct listing *ls)
{
	struct stat dir, st;
	int rc = 0;
	int fd = file_open_beneath(j->root_fd, j->rel, &dir);

	if (fd < 0)
		return fd;
	if (!S_ISDIR(dir.st_mode)) {
		close(fd);
		return -ENOENT; /* replaced by a file since it was resolved */
	}
	/* Read once and found too big: as long as it has not changed, it
	 * still is, and reading it again (0.34 s for 250,000 entries) would
	 * let a client keep the thread busy for nothing. */
	struct lister_too_big *known = too_big_find(l, &dir, j->max_entries, j->dotfiles);
	if (known) {
		close(fd);
		return -E2BIG;
	}
	DIR *d = fdopendir(fd);
	if (!d) {
		rc = -errno;
		close(fd);
		return rc;
	}
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(d);
		if (!de) {
			rc = -errno;
			break;
		}
		const char *name = de->d_name;
		if (atomic_load_explicit(&j->cancelled, memory_order_relaxed)) {
			rc = -ECANCELED;
			break;
		}
		if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
			continue;
		if (name[0] == '.' && !j->dotfiles)
			continue;
		if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* gone since getdents */
		if (S_ISLNK(st.st_mode) && !follow(j, name, &st))
			continue;
		if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
			continue;
		if (ls->n == j->max_entries) {
			too_big_remember(l, &dir, j->max_entries, j->dotfiles);
			rc = -EFBIG;
			break;
		}
		rc = add(ls, name, &st);
		if (rc < 0)
			break;
	}
	closedir(d);
	return rc;
}

static int flush(int fd, struct autoindex_out *o, uint64_t *size)
{
	if (o->failed)
		return -ENOMEM;
	int rc = fd_write_all(fd, o->p, o->len);
	*size += o->len;
	o->len = 0;
	return rc;
}

/* Into a memfd: file-backed memory the worker serves as it serves files
 * (read, splice or map), freed when the response closes it. */
static int render(struct lister_job *j, struct listing *ls)
{
	struct autoindex_out o = {0};
	int rc = 0;
	int fd = memfd_create("ktlsd-listing", MFD_CLOEXEC);

	if (fd < 0)
		return -errno;
	autoindex_sort(ls->e, ls->n);
	autoindex_begin(&o, j->format, j->rel);
	for (size_t i = 0; i < ls->n && rc == 0; i++) {
		autoindex_entry(&o, j->format, &ls->e[i], i);
		if (o.len >= FLUSH_AT || o.failed)
			rc = flush(fd, &o, &j->size);
		if (i % 4096 == 0 && atomic_load_explicit(&j->cancelled, memory_order_relaxed))
			rc = -ECANCELED;
	}
	if (rc == 0) {
		autoindex_end(&o, j->format);
		rc = flush(fd, &o, &j->size);
	}
	autoindex_out_free(&o);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	j->fd = fd;
	return 0;
}

static void run(struct lister *l, struct lister_job *j)
{
	struct listing ls = {0};
	int rc = read_dir(l, j, &ls);

	if (rc == 0)
		rc = render(j, &ls);
	listing_free(&ls);
	switch (rc) {
	case 0:
		j->status = 0;
		return;
	case -ENOENT:
		j->status = 404;
		break;
	case -EACCES:
		j->status = 403;
		break;
	case -EFBIG:
		/* A limit of the server's, not the client's doing: 5xx, as a
		 * monitor should see it (403 read as a permission problem). */
		log_msg(LOG_WARN,
			"/%s: more than %u entries (--autoindex-max-entries); not listed (500); "
			"asked again while it is unchanged, it is answered so without a read "
			"or a line",
			j->rel, j->max_entries);
		j->status = 500;
		break;
	case -E2BIG:
		j->status = 500; /* known too big, said already */
		break;
	case -EMFILE:
	case -ENFILE:
		j->status = 503;
		break;
	case -ECANCELED:
		j->status = 500; /* nobody reads it */
		break;
	default:
		log_msg(LOG_ERROR, "/%s: listing failed: %s", j->rel, strerror(-rc));
		j->status = 500;
		break;
	}
	j->size = 0;
}

static void *lister_main(void *arg)
{
	struct lister *l = arg;
	uint64_t one = 1;

	pthread_setname_np(pthread_self(), "ktlsd-lister");
	/* Linux nice is per thread: this one only, relative to the worker's
	 * (a server run under nice stays below it). */
	id_t tid = (id_t)gettid();
	errno = 0;
	int prio = getpriority(PRIO_PROCESS, tid);
	if (errno == 0 &&
	    setpriority(PRIO_PROCESS, tid, prio + LISTER_NICE > 19 ? 19 : prio + LISTER_NICE) < 0)
		log_msg(LOG_DEBUG, "listing thread: setpriority: %s", strerror(errno));
	pthread_mutex_lock(&l->mu);
	for (;;) {
		while (!l->todo && !l->stop)
			pthread_cond_wait(&l->cv, &l->mu);
		if (!l->todo)
			break;
		struct lister_job *j = l->todo;
		l->todo = j->next;
		if (!l->todo)
			l->todo_tail = NULL;
		pthread_mutex_unlock(&l->mu);

		run(l, j);

		pthread_mutex_lock(&l->mu);
		j->next = l->back;
		l->back = j;
		/* Under the lock: the worker's read of the eventfd and its
		 * take of the list cannot miss this one. */
		if (write(l->event_fd, &one, sizeof(one)) < 0)
			log_msg(LOG_ERROR, "listing thread: eventfd: %s", strerror(errno));
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

/* ---- on the worker's thread ---- */

static void arm(struct lister *l);

/* The thread has handed jobs back: their owners take them, oldest first. */
static void on_back(struct ring_op *op, int res, uint32_t flags)
{
	struct lister *l = container_of(op, struct lister, event_op);
	struct lister_job *list, *fifo = NULL;

	(void)res;
	(void)flags;
	pthread_mutex_lock(&l->mu);
	list = l->back;
	l->back = NULL;
	pthread_mutex_unlock(&l->mu);
	while (list) {
		struct lister_job *next = list->next;
		list->next = fifo;
		fifo = list;
		list = next;
	}
	arm(l);
	while (fifo) {
		struct lister_job *j = fifo;
		fifo = j->next;
		l->jobs--;
		j->done(j);
	}
}

static void arm(struct lister *l)
{
	struct io_uring_sqe *sqe = ring_sqe(l->ring);

	io_uring_prep_read(sqe, l->event_fd, &l->event_value, sizeof(l->event_value), 0);
	ring_op_attach(sqe, &l->event_op);
}

void lister_init(struct lister *l, struct io_uring *ring)
{
	l->ring = ring;
	l->event_fd = -1;
	l->event_op.complete = on_back;
	l->have_cpus = sched_getaffinity(0, sizeof(l->cpus), &l->cpus) == 0;
}

static int start(struct lister *l)
{
	pthread_attr_t attr;
	int rc;

	l->event_fd = eventfd(0, EFD_CLOEXEC);
	if (l->event_fd < 0)
		return -errno;
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->cv, NULL);
	pthread_attr_init(&attr);
	/* Not the worker's one CPU, which it inherits otherwise. */
	if (l->have_cpus)
		pthread_attr_setaffinity_np(&attr, sizeof(l->cpus), &l->cpus);
	rc = pthread_create(&l->thread, &attr, lister_main, l);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		log_msg(LOG_ERROR, "listing thread: %s", strerror(rc));
		pthread_mutex_destroy(&l->mu);
		pthread_cond_destroy(&l->cv);
		close(l->event_fd);
		l->event_fd = -1;
		return -rc;
	}
	l->started = true;
	arm(l);
	return 0;
}

struct lister_job *lister_job_new(int root_fd, const char *rel, bool dotfiles,
                                  unsigned max_entries, enum autoindex_format format)
{
	struct lister_job *j = calloc(1, sizeof(*j));
	size_t len = strlen(rel);

	if (!j || len >= sizeof(j->rel)) {
		free(j);
		return NULL;
	}
	/* The job's own: a connection that goes away leaves its job running
	 * on the thread, and the root it came from may be closed (a reload's
	 * old configuration, freed) and its number reused meanwhile. */
	j->root_fd = fcntl(root_fd, F_DUPFD_CLOEXEC, 0);
	if (j->root_fd < 0) {
		free(j);
		return NULL;
	}
	j->dotfiles = dotfiles;
	j->max_entries = max_entries;
	j->format = format;
	memcpy(j->rel, rel, len + 1);
	j->fd = -1;
	return j;
}

void lister_job_free(struct lister_job *job)
{
	if (!job)
		return;
	if (job->fd >= 0)
		close(job->fd);
	close(job->root_fd);
	free(job);
}

int lister_submit(struct lister *l, struct lister_job *job)
{
	if (l->jobs >= LISTER_MAX_JOBS)
		return -EAGAIN;
	if (!l->started) {
		int rc = start(l);
		if (rc < 0)
			return rc;
	}
	job->next = NULL;
	pthread_mutex_lock(&l->mu);
	if (l->todo_tail)
		l->todo_tail->next = job;
	else
		l->todo = job;
	l->todo_tail = job;
	pthread_cond_signal(&l->cv);
	pthread_mutex_unlock(&l->mu);
	l->jobs++;
	return 0;
}

void lister_cancel(struct lister_job *job)
{
	atomic_store_explicit(&job->cancelled, true, memory_order_relaxed);
}

void lister_stop(struct lister *l)
{
	if (!l->started)
		return;
	pthread_mutex_lock(&l->mu);
	l->stop = true;
	pthread_cond_signal(&l->cv);
	pthread_mutex_unlock(&l->mu);
	pthread_join(l->thread, NULL);
	/* Jobs back but never taken (the worker's loop ended first; it waits
	 * for its connections, which hold theirs, so none in practice). */
	while (l->back) {
		struct lister_job *j = l->back;
		l->back = j->next;
		lister_job_free(j);
	}
	pthread_mutex_destroy(&l->mu);
	pthread_cond_destroy(&l->cv);
	close(l->event_fd);
	l->event_fd = -1;
	l->started = false;
}
