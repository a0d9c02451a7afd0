#include "server/core/file_create.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The folder of path, opened (O_PATH), and its last name in *base: the fd,
 * or -errno. "a/b" is "b" in "a", "b" is "b" in ".", "/b" is "b" in "/". */
static int open_folder(const char *path, char *dir, size_t dirlen, const char **base)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;

	*base = slash ? slash + 1 : path;
	if (!**base || strcmp(*base, ".") == 0 || strcmp(*base, "..") == 0)
		return -EISDIR;
	if (!slash)
		snprintf(dir, dirlen, ".");
	else if (n == 0)
		snprintf(dir, dirlen, "/");
	else if (n < dirlen)
		snprintf(dir, dirlen, "%.*s", (int)n, path);
	else
		return -ENAMETOOLONG;
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Opens path with flags (O_WRONLY and O_CREAT at least) and checks what it
 * got; see file_create.h. */
static int open_checked(const char *path, int flags, struct file_id *id)
{
	char dir[PATH_MAX];
	const char *base;
	struct stat st;
	int dfd = open_folder(path, dir, sizeof(dir), &base), fd, e = 0;

	if (dfd < 0)
		return dfd;
	/* The folder is open: only the last name is left to resolve, and
	 * O_NOFOLLOW refuses it if it is a symbolic link (ELOOP, O_CREAT
	 * or not). O_NONBLOCK: a FIFO without a reader answers ENXIO instead
	 * of waiting for one. */
	fd = openat(dfd, base, flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
	if (fd < 0)
		e = errno == ENXIO ? EINVAL : errno;
	close(dfd);
	if (fd < 0)
		return -e;
	if (fstat(fd, &st) < 0)
		e = errno;
	else if (!S_ISREG(st.st_mode))
		e = EINVAL;
	else if (st.st_nlink > 1)
		e = EMLINK;
	else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
		e = errno;
	if (e) {
		close(fd);
		return -e;
	}
	if (id)
		*id = (struct file_id){.dev = st.st_dev, .ino = st.st_ino, .valid = true};
	return fd;
}

int file_create_log(const char *path, struct file_id *id)
{
	return open_checked(path, O_WRONLY | O_CREAT | O_APPEND, id);
}

int file_create_pid(const char *path, long pid, struct file_id *id)
{
	/* No O_TRUNC: emptied only once it is known to be a file of its own. */
	int fd = open_checked(path, O_WRONLY | O_CREAT, id), rc = 0;
	char line[32];
	int n = snprintf(line, sizeof(line), "%ld\n", pid);

	if (fd < 0)
		return fd;
	errno = 0;
	if (ftruncate(fd, 0) < 0 || write(fd, line, (size_t)n) != n)
		rc = errno ? -errno : -EIO;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

int file_remove_if_same(const char *path, const struct file_id *id)
{
	char dir[PATH_MAX];
	const char *base;
	struct stat st;
	int dfd = open_folder(path, dir, sizeof(dir), &base), rc = 0;

	if (dfd < 0)
		return dfd;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		rc = -errno;
	else if (!id->valid || (uint64_t)st.st_dev != id->dev || (uint64_t)st.st_ino != id->ino)
		rc = -ESTALE;
	else if (unlinkat(dfd, base, 0) < 0)
		rc = -errno;
	close(dfd);
	return rc;
}

const char *file_create_error(int e)
{
	switch (e) {
	case -ELOOP:
		return "a symbolic link; not following it";
	case -EMLINK:
		return "a file with other hard links; not writing to it";
	case -EINVAL:
		return "not a regular file";
	case -EISDIR:
		return "names a folder, not a file";
	default:
		return strerror(-e);
	}
}
