/* Reading the files a configuration names: the config file, certificates
 * and keys, session-ticket keys, the MIME types. A path there may name
 * anything, by mistake or by someone's design: a FIFO would block open(2)
 * until a writer comes, a device would be read for ever. So each is opened
 * without blocking (O_NONBLOCK), looked at (fstat) and read only if it is a
 * regular file of at most FILE_READ_MAX bytes; a symbolic link to one is
 * followed (certbot's live/ folder is links). */
#ifndef KTLSD_SERVER_FILE_READ_H
#define KTLSD_SERVER_FILE_READ_H

#include <stddef.h>

/* Far above any real configuration, chain, key or mime.types (Debian's is
 * 65 KB): a path that names a disk image is refused instead of read whole. */
#define FILE_READ_MAX (1024 * 1024)

/* path's bytes (NUL-terminated, the NUL not counted in *len) in *out, which
 * the caller frees: 0, or -errno: -EISDIR a folder, -EINVAL anything else
 * that is not a regular file (a FIFO, a socket, a device), -EFBIG larger
 * than FILE_READ_MAX; open(2)'s own errors as they are. Never blocks on
 * what the path names (a file on a hung network mount aside). */
int file_read_whole(const char *path, char **out, size_t *len);

/* A reason of file_read_whole (or conf_files_read) in words, for a line
 * that names the file: "not a regular file", "larger than 1 MiB",
 * "No such file or directory". */
const char *file_read_error(int e);

#endif
