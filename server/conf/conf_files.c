#include "server/conf/conf_files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/core/fd_write.h"
#include "server/conf/file_read.h"

void conf_files_init(struct conf_files *cf)
{
	memset(cf, 0, sizeof(*cf));
}

void conf_files_free(struct conf_files *cf)
{
	for (size_t i = 0; i < cf->n; i++) {
		struct conf_file *f = &cf->v[i];
		if (f->fd >= 0)
			close(f->fd);
		if (f->data)
			explicit_bzero(f->data, f->len);
		free(f->data);
		free(f->path);
	}
	free(cf->v);
	conf_files_init(cf);
}

static struct conf_file *find(struct conf_files *cf, const char *path, bool dir)
{
	for (size_t i = 0; i < cf->n; i++)
		if (cf->v[i].dir == dir && strcmp(cf->v[i].path, path) == 0)
			return &cf->v[i];
	return NULL;
}

/* A new entry for path, fd -1: NULL when out of memory. */
static struct conf_file *add(struct conf_files *cf, const char *path, bool dir)
{
	if (cf->n == cf->cap) {
		size_t cap = cf->cap ? cf->cap * 2 : 16;
		struct conf_file *v = realloc(cf->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		cf->v = v;
		cf->cap = cap;
	}
	struct conf_file *f = &cf->v[cf->n];
	*f = (struct conf_file){.path = strdup(path), .dir = dir, .fd = -1};
	if (!f->path)
		return NULL;
	cf->n++;
	return f;
}

int conf_files_read(struct conf_files *cf, const char *path, char **out, size_t *len)
{
	struct conf_file *f = cf ? find(cf, path, false) : NULL;

	if (!cf)
		return file_read_whole(path, out, len);
	if (!f && cf->received)
		return -ENOMSG;
	if (!f) {
		if (!(f = add(cf, path, false)))
			return -ENOMEM;
		f->err = file_read_whole(path, &f->data, &f->len);
	}
	if (f->err)
		return f->err;
	*out = malloc(f->len + 1);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, f->data, f->len + 1);
	*len = f->len;
	return 0;
}

int conf_files_open_dir(struct conf_files *cf, const char *path)
{
	struct conf_file *f = cf ? find(cf, path, true) : NULL;

	if (!cf) {
		int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	if (!f && cf->received)
		return -ENOMSG;
	if (!f) {
		if (!(f = add(cf, path, true)))
			return -ENOMEM;
		f->fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		f->err = f->fd < 0 ? -errno : 0;
	}
	if (f->err)
		return f->err;
	int fd = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
	return fd < 0 ? -errno : fd;
}

/* ---- over the helper's socket ----
 *
 * The memfd holds, for each entry: its header (struct packed), its path
 * and a file's bytes. A root's fd travels beside it (SCM_RIGHTS), in the
 * order of the entries. */

struct packed {
	uint32_t path_len;
	uint32_t data_len;
	int32_t err;
	uint32_t dir;
};

int conf_files_pack(const struct conf_files *cf, int *memfd, int *fds, size_t *nfds)
{
	int fd = memfd_create("ktlsd-conf", MFD_CLOEXEC), rc = 0;

	*nfds = 0;
	if (fd < 0)
		return -errno;
	for (size_t i = 0; rc == 0 && i < cf->n; i++) {
		const struct conf_file *f = &cf->v[i];
		size_t plen = strlen(f->path);
		struct packed h = {.path_len = (uint32_t)plen,
		                   .data_len = (uint32_t)(f->data ? f->len : 0),
		                   .err = f->err,
		                   .dir = f->dir};

		if (f->dir && f->err == 0) {
			if (*nfds == CONF_FILES_MAX_DIRS) {
				rc = -E2BIG;
				break;
			}
			fds[(*nfds)++] = f->fd;
		}
		rc = fd_write_all(fd, &h, sizeof(h));
		if (rc == 0)
			rc = fd_write_all(fd, f->path, plen);
		if (rc == 0 && h.data_len)
			rc = fd_write_all(fd, f->data, h.data_len);
	}
	if (rc < 0) {
		close(fd);
		return rc;
	}
	*memfd = fd;
	return 0;
}

/* The entries of the n bytes at p into cf: 0 or -EBADMSG, -ENOMEM. */
static int unpack_bytes(struct conf_files *cf, const char *p, size_t n, const int *fds, size_t nfds)
{
	size_t off = 0, used = 0;

	while (off < n) {
		struct packed h;
		if (n - off < sizeof(h))
			return -EBADMSG;
		memcpy(&h, p + off, sizeof(h));
		off += sizeof(h);
		if (h.path_len == 0 || h.path_len >= PATH_MAX || h.path_len > n - off ||
		    h.data_len > n - off - h.path_len || h.data_len > FILE_READ_MAX || h.err > 0 ||
		    (h.dir && h.err == 0 && used == nfds))
			return -EBADMSG;
		char path[h.path_len + 1];
		memcpy(path, p + off, h.path_len);
		path[h.path_len] = '\0';
		off += h.path_len;
		struct conf_file *f = add(cf, path, h.dir);
		if (!f)
			return -ENOMEM;
		f->err = h.err;
		if (h.dir && h.err == 0)
			f->fd = fds[used++];
		if (!h.dir && h.err == 0) {
			f->data = malloc(h.data_len + 1);
			if (!f->data)
				return -ENOMEM;
			memcpy(f->data, p + off, h.data_len);
			f->data[h.data_len] = '\0';
			f->len = h.data_len;
		}
		off += h.data_len;
	}
	return used == nfds ? 0 : -EBADMSG;
}

int conf_files_unpack(struct conf_files *cf, int memfd, const int *fds, size_t nfds)
{
	struct stat st;
	int rc;

	conf_files_init(cf);
	cf->received = true;
	if (fstat(memfd, &st) < 0) {
		rc = -errno;
	} else if (st.st_size == 0) {
		rc = unpack_bytes(cf, "", 0, fds, nfds);
	} else {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, memfd, 0);
		rc = p == MAP_FAILED ? -errno : unpack_bytes(cf, p, (size_t)st.st_size, fds, nfds);
		if (p != MAP_FAILED)
			munmap(p, (size_t)st.st_size);
	}
	close(memfd);
	/* The fds not handed to an entry (a message that did not parse). */
	for (size_t i = 0; i < nfds; i++) {
		bool owned = false;
		for (size_t j = 0; j < cf->n && !owned; j++)
			owned = cf->v[j].fd == fds[i];
		if (!owned)
			close(fds[i]);
	}
	return rc;
}
