/* Opening files beneath the served root: the kernel, not string checks,
 * guarantees that no path, symlink or race leaves the root. */
#ifndef KTLSD_SERVER_FILE_H
#define KTLSD_SERVER_FILE_H

#include <sys/stat.h>

/* Opens relpath (from path_from_target) beneath root_fd with openat2
 * RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS. Directories are opened too (the
 * caller decides on index.html or a redirect). Returns the fd, or:
 *   -ENOENT  missing (404)
 *   -EACCES  not readable, not a regular file or directory, or resolving
 *            would leave the root (EXDEV from the kernel) (403 / 404)
 *   -ENAMETOOLONG (414), -EMFILE/-ENFILE (503), other -errno (500) */
int file_open_beneath(int root_fd, const char *relpath, struct stat *st);

#endif
