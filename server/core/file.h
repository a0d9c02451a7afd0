/* Opening files beneath the served root: the kernel, not string checks,
 * guarantees that no path, symlink or race leaves the root. */
#ifndef KTLSD_SERVER_FILE_H
#define KTLSD_SERVER_FILE_H

#include <stdint.h>
#include <sys/stat.h>

/* A served root: its open folder, and which folder that is. A reload opens
 * the roots again and closes the old ones once no connection uses them, so
 * an fd number may name another folder later: what tells two roots apart
 * (the file cache's key) is the folder's device and inode. */
struct file_root {
	int fd;                 /* O_PATH | O_DIRECTORY */
	uint64_t dev, ino;
};

/* Opens relpath (from path_from_target) beneath root_fd with openat2
 * RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS. Directories are opened too (the
 * caller decides on index.html or a redirect). Returns the fd, or:
 *   -ENOENT  missing (404)
 *   -EACCES  not readable, not a regular file or directory, or resolving
 *            would leave the root (EXDEV from the kernel) (403 / 404)
 *   -ENAMETOOLONG (414), -EMFILE/-ENFILE (503), other -errno (500) */
int file_open_beneath(int root_fd, const char *relpath, struct stat *st);

#endif
