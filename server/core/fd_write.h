/* Writing a whole buffer to a blocking fd (a memfd, a file, a socket pair
 * to the privileged helper): write(2) may write less than asked, and a
 * signal may interrupt it before it writes anything. */
#ifndef KTLSD_SERVER_FD_WRITE_H
#define KTLSD_SERVER_FD_WRITE_H

#include <stddef.h>

/* Writes all of p[0, n) to fd: 0, or -errno of the write that failed
 * (-EIO for a write that wrote nothing). EINTR is retried. */
int fd_write_all(int fd, const void *p, size_t n);

#endif
