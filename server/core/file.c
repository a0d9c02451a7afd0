#include "server/core/file.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

int file_open_beneath(int root_fd, const char *relpath, struct stat *st)
{
	/* O_NONBLOCK: a FIFO planted in the root must not block the worker in
	 * open; it is refused below anyway. Regular-file reads ignore it. */
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
	};
	int fd;

	do {
		fd = (int)syscall(SYS_openat2, root_fd, relpath, &how, sizeof(how));
	} while (fd < 0 && (errno == EINTR || errno == EAGAIN));
	if (fd < 0) {
		switch (errno) {
		case ENOENT:
		case ENOTDIR:
			return -ENOENT;
		case EXDEV:  /* would leave the root */
		case ELOOP:
		case EACCES:
		case EPERM:
			return -EACCES;
		default:
			return -errno;
		}
	}
	if (fstat(fd, st) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode)) {
		close(fd);
		return -EACCES;
	}
	return fd;
}
