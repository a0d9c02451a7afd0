/* The files ktlsd writes: the error and access logs and the pid file. They
 * are made by root, before --user takes effect or, later, by the privileged
 * helper (privsep.h), often in a folder someone else can write to. Whoever
 * can write there could leave a link at the name: access.log ->
 * /etc/ld.so.preload, and root would append to it at the next start
 * (CVE-2016-1247's shape). So the file is opened relative to its folder,
 * without following a symbolic link at its own name (O_NOFOLLOW), without
 * blocking (a FIFO there answers at once), and kept only if it is a regular
 * file with no other name (st_nlink 1: a hard link to a file of root's is
 * refused too). A link in the folders above is followed: those are the
 * operator's layout (/var/run -> /run). */
#ifndef KTLSD_SERVER_FILE_CREATE_H
#define KTLSD_SERVER_FILE_CREATE_H

#include <stdbool.h>
#include <stdint.h>

/* Which file was made: a later removal removes that one, not whatever
 * someone put at its name since. */
struct file_id {
	uint64_t dev, ino;
	bool valid;
};

/* Opens path to append to (created 0644 if absent): the fd, or -errno:
 * -ELOOP a symbolic link, -EMLINK a file with other hard links, -EINVAL not
 * a regular file, open(2)'s own errors. id (may be NULL) gets the file's. */
int file_create_log(const char *path, struct file_id *id);

/* Writes pid as one line to path (created 0644, or emptied: only once it
 * has passed the checks above). 0 or -errno as file_create_log. */
int file_create_pid(const char *path, long pid, struct file_id *id);

/* Removes path if it is still the file id names (neither replaced nor
 * renamed away): 0, -ESTALE when it is another, or -errno. */
int file_remove_if_same(const char *path, const struct file_id *id);

/* A reason of the above in words, for the line that names the file: "a
 * symbolic link; not following it". */
const char *file_create_error(int e);

#endif
