#include "server/core/fd_write.h"

#include <errno.h>
#include <unistd.h>

int fd_write_all(int fd, const void *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}
