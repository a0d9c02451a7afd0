#include "server/conf/file_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int file_read_whole(const char *path, char **out, size_t *len)
{
	/* O_NONBLOCK: open(2) of a FIFO for reading returns at once (no writer
	 * is waited for), of a device without waiting for a carrier; O_NOCTTY:
	 * a terminal never becomes ours. For a regular file it changes nothing. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	char *buf;
	size_t n = 0;

	if (fd < 0)
		return -errno;
	int e = fstat(fd, &st) < 0           ? errno
	        : S_ISDIR(st.st_mode)        ? EISDIR
	        : !S_ISREG(st.st_mode)       ? EINVAL
	        : st.st_size > FILE_READ_MAX ? EFBIG
	                                     : 0;
	if (e) {
		close(fd);
		return -e;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (n < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break; /* shorter than its stat: take what is there */
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

const char *file_read_error(int e)
{
	switch (e) {
	case -EISDIR:
	case -EINVAL:
		return "not a regular file";
	case -EFBIG:
		return "larger than 1 MiB";
	case -ENOMSG:
		/* conf_files.h: a reload's files come from the privileged
		 * helper, which read what the configuration it loaded names. */
		return "not among the files the privileged helper read";
	default:
		return strerror(-e);
	}
}
